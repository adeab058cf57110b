// The legacy pipeline pass on the zoo's mlp (4 linears) and gpt (2 blocks), program by program:
// stages by layer units, reshard's send_v2/recv_v2 at the cuts (reshard.py, Inserter), the job
// programs and plans of the pipeline_scheduler passes (pass_utils.py, pipeline_fthenb.py,
// pipeline_zero_bubble.py), the accumulation of auto_parallel_gradient_merge.py, skip_gc_vars, and
// the PIR passes' recv_forward / send_backward split (pipeline_1f1b.py, pipeline_vpp.py).
#include "oldir/passes/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/pipeline_jobs.h"
#include "oldir/passes/pipeline_stages.h"
#include "oldir/validator.h"
#include "schedules/paddle_schedule.h"

namespace irm::oldir::passes {
namespace {

struct Serial {
  Program startup;
  Program main;
};

Serial Zoo(const std::string& name, OptimizerKind kind = OptimizerKind::kSgd) {
  models::ModelPrograms model;
  if (name == "mlp") {
    models::MlpConfig config;
    config.depth = 4;
    EXPECT_TRUE(models::BuildMlp(config, &model).ok());
  } else {
    models::GptConfig config;
    config.layers = 2;
    config.hidden = 8;
    config.heads = 4;
    config.vocab = 12;
    config.seq = 4;
    config.dropout = 0.0f;
    EXPECT_TRUE(models::BuildGpt(config, &model).ok());
  }
  OptimizerOptions optimizer;
  optimizer.kind = kind;
  EXPECT_TRUE(models::AddTraining(&model, optimizer).ok());
  return {model.startup.Build(), model.main.Build()};
}

Strategy Pipeline(int pp, const std::string& mode, int m, int vpp = 1) {
  Strategy s;
  s.pp_degree = pp;
  s.pipeline.enable = true;
  s.pipeline.schedule_mode = mode;
  s.pipeline.accumulate_steps = m;
  s.pipeline.vpp_degree = vpp;
  return s;
}

// The parameters a stage's startup initialises.
std::set<std::string> StageParams(const Program& startup) {
  std::set<std::string> params;
  for (int i = 0; i < startup.root().num_vars(); ++i) {
    const std::string& name = startup.root().var(i).name();
    if (name.rfind("linear_", 0) == 0 || name.rfind("layer_norm_", 0) == 0 ||
        name.rfind("embedding_", 0) == 0) {
      if (name.find('@') == std::string::npos && name.find("moment") == std::string::npos) {
        params.insert(name);
      }
    }
  }
  return params;
}

std::set<std::string> Layer(const std::string& kind, std::initializer_list<int> ids,
                            bool bias = true) {
  std::set<std::string> names;
  for (int i : ids) {
    names.insert(kind + "_" + std::to_string(i) + ".w_0");
    if (bias) names.insert(kind + "_" + std::to_string(i) + ".b_0");
  }
  return names;
}

std::set<std::string> Union(std::initializer_list<std::set<std::string>> sets) {
  std::set<std::string> all;
  for (const auto& s : sets) all.insert(s.begin(), s.end());
  return all;
}

StatusOr<std::vector<StagePrograms>> Partition(const Serial& serial, int pp, int vpp = 1) {
  PipelinePartitionOptions options;
  options.pp_degree = pp;
  options.vpp_degree = vpp;
  options.micro_batch_size = 2;
  options.ring = [](int from, int to) { return 10 * from + to; };
  return PartitionStages(serial.startup, serial.main, options);
}

// mlp: one unit per linear (oldir/models/mlp.h); pp2 takes two each, in order.
TEST(PipelineStagesTest, MlpUnitsSplitEvenlyAndInOrder) {
  const Serial mlp = Zoo("mlp");
  StatusOr<std::vector<StagePrograms>> pp2 = Partition(mlp, 2);
  ASSERT_TRUE(pp2.ok()) << pp2.status().ToString();
  EXPECT_EQ(StageParams((*pp2)[0].startup), Layer("linear", {0, 1}));
  EXPECT_EQ(StageParams((*pp2)[1].startup), Layer("linear", {2, 3}));
  StatusOr<std::vector<StagePrograms>> pp4 = Partition(mlp, 4);
  ASSERT_TRUE(pp4.ok()) << pp4.status().ToString();
  for (int s = 0; s < 4; ++s) EXPECT_EQ(StageParams((*pp4)[s].startup), Layer("linear", {s}));
  for (const StagePrograms& stage : *pp4) {
    const Diagnostics findings = ValidateProgram(stage.main);
    EXPECT_FALSE(findings.HasErrors()) << findings.Render();
  }
}

// gpt 2 blocks: [embeddings, block 0, block 1, final LayerNorm + head]; a block holds two
// layer_norms and six linears (q, k, v, proj, fc1, fc2: oldir/models/gpt.h).
TEST(PipelineStagesTest, GptUnitsAreEmbeddingsBlocksAndHead) {
  const Serial gpt = Zoo("gpt");
  const std::set<std::string> embeddings = Layer("embedding", {0, 1}, false);
  const std::set<std::string> block0 =
      Union({Layer("layer_norm", {0, 1}), Layer("linear", {0, 1, 2, 3, 4, 5})});
  const std::set<std::string> block1 =
      Union({Layer("layer_norm", {2, 3}), Layer("linear", {6, 7, 8, 9, 10, 11})});
  const std::set<std::string> head = Union({Layer("layer_norm", {4}), {"linear_12.w_0"}});
  StatusOr<std::vector<StagePrograms>> pp2 = Partition(gpt, 2);
  ASSERT_TRUE(pp2.ok()) << pp2.status().ToString();
  EXPECT_EQ(StageParams((*pp2)[0].startup), Union({embeddings, block0}));
  EXPECT_EQ(StageParams((*pp2)[1].startup), Union({block1, head}));
  StatusOr<std::vector<StagePrograms>> pp4 = Partition(gpt, 4);
  ASSERT_TRUE(pp4.ok()) << pp4.status().ToString();
  EXPECT_EQ(StageParams((*pp4)[0].startup), embeddings);
  EXPECT_EQ(StageParams((*pp4)[1].startup), block0);
  EXPECT_EQ(StageParams((*pp4)[2].startup), block1);
  EXPECT_EQ(StageParams((*pp4)[3].startup), head);
  for (const StagePrograms& stage : *pp4) {
    const Diagnostics findings = ValidateProgram(stage.main);
    EXPECT_FALSE(findings.HasErrors()) << findings.Render();
  }
}

// VPP pp2 v2: chunk c on stage c % 2 (local chunk c / 2).
TEST(PipelineStagesTest, VppInterleavesChunksOverStages) {
  StatusOr<std::vector<StagePrograms>> stages = Partition(Zoo("mlp"), 2, 2);
  ASSERT_TRUE(stages.ok()) << stages.status().ToString();
  EXPECT_EQ(StageParams((*stages)[0].startup), Layer("linear", {0, 2}));
  EXPECT_EQ(StageParams((*stages)[1].startup), Layer("linear", {1, 3}));
  const Program& main = (*stages)[1].main;
  for (int i = 0; i < main.root().num_ops(); ++i) {
    const Op op = main.root().op(i);
    if (op.type() != "matmul_v2") continue;
    const std::string y = *op.SingleInput("Y");
    EXPECT_EQ(ChunkOf(op.desc()), y == "linear_1.w_0" ? 0 : 1) << y;
  }
}

struct P2p {
  std::string type;
  std::string var;
  int ring;
  int peer;
  int role;
  bool operator==(const P2p&) const = default;
};

std::vector<P2p> P2pOps(const Program& main) {
  std::vector<P2p> ops;
  for (int i = 0; i < main.root().num_ops(); ++i) {
    const Op op = main.root().op(i);
    if (op.type() != "send_v2" && op.type() != "recv_v2") continue;
    const std::string var = op.type() == "send_v2" ? *op.SingleInput("X") : *op.SingleOutput("Out");
    ops.push_back({op.type(), var, op.AttrOr<int32_t>("ring_id", -1),
                   op.AttrOr<int32_t>("peer", -1), op.role()});
  }
  return ops;
}

// The mlp's cut at pp2 is after linear_1's relu: the activation goes forward on ring (0 -> 1),
// its gradient back on ring (1 -> 0); the sender is peer 1 of [from, to], the receiver peer 0
// (reshard.py: process_group.ranks.index(dst) / index(src)).
TEST(PipelineStagesTest, MlpCutSendsTheActivationAndReceivesItsGradient) {
  StatusOr<std::vector<StagePrograms>> stages = Partition(Zoo("mlp"), 2);
  ASSERT_TRUE(stages.ok()) << stages.status().ToString();
  EXPECT_EQ(P2pOps((*stages)[0].main),
            (std::vector<P2p>{{"send_v2", "relu_1.tmp_0", 1, 1, 0},
                              {"recv_v2", "relu_1.tmp_0@GRAD", 10, 0, 1}}));
  EXPECT_EQ(P2pOps((*stages)[1].main),
            (std::vector<P2p>{{"recv_v2", "relu_1.tmp_0", 1, 0, 0},
                              {"send_v2", "relu_1.tmp_0@GRAD", 10, 1, 1}}));
  for (int s = 0; s < 2; ++s) {
    const Program& main = (*stages)[s].main;
    for (int i = 0; i < main.root().num_ops(); ++i) {
      const Op op = main.root().op(i);
      if (op.type() != "recv_v2" && op.type() != "send_v2") continue;
      EXPECT_FALSE(op.AttrOr<bool>("dynamic_shape", true));
      EXPECT_TRUE(op.AttrOr<bool>("use_calc_stream", false));
      if (op.type() == "recv_v2") {
        EXPECT_EQ(op.AttrOr<std::vector<int32_t>>("out_shape", {}),
                  (std::vector<int32_t>{2, 8}));  // micro-batch rows x width
        EXPECT_EQ(op.AttrOr<int32_t>("dtype", -1), static_cast<int32_t>(proto::VarType::FP32));
      }
    }
  }
}

// gpt at pp4: the causal mask is made with block 0 (stage 1, its first reader) and sent to block
// 1's stage; the labels are fed on the last stage only, the tokens on the first.
TEST(PipelineStagesTest, GptSendsTheMaskAndFeedsWhereRead) {
  StatusOr<std::vector<StagePrograms>> stages = Partition(Zoo("gpt"), 4);
  ASSERT_TRUE(stages.ok()) << stages.status().ToString();
  const std::vector<P2p> stage2 = P2pOps((*stages)[2].main);
  EXPECT_NE(std::find(stage2.begin(), stage2.end(), P2p{"recv_v2", "triu_0.tmp_0", 12, 0, 0}),
            stage2.end());
  std::vector<std::vector<std::string>> fed(4);
  for (int s = 0; s < 4; ++s) {
    const Program& main = (*stages)[s].main;
    for (int i = 0; i < main.root().num_ops(); ++i) {
      if (main.root().op(i).type() == "feed")
        fed[s].push_back(*main.root().op(i).SingleOutput("Out"));
    }
  }
  EXPECT_EQ(fed, (std::vector<std::vector<std::string>>{{"tokens"}, {}, {}, {"labels"}}));
}

std::vector<std::string> Types(const Program& p) {
  std::vector<std::string> types;
  for (int i = 0; i < p.root().num_ops(); ++i) types.push_back(p.root().op(i).type());
  return types;
}

// Stage 0 of the mlp at pp2 under FThenB with m = 4: the forward job ends with the synced send
// (_insert_sync_for_fthenb_1f1b), backward starts with the gradient's recv and accumulates each
// gradient into its @GRAD@MERGE buffer, the optimizer scales by 1/4, updates, and resets.
TEST(PipelineJobsTest, FThenBJobProgramsOfStageZero) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "FThenB", 4), 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const RankPrograms& rank = p->ranks[0];
  ASSERT_EQ(rank.jobs.size(), 3u);
  EXPECT_EQ(Types(rank.jobs.at("forward")),
            (std::vector<std::string>{"feed", "matmul_v2", "elementwise_add", "relu", "matmul_v2",
                                      "elementwise_add", "relu", "c_sync_calc_stream", "send_v2"}));
  const std::vector<std::string> backward = Types(rank.jobs.at("backward"));
  ASSERT_GE(backward.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(backward.begin(), backward.begin() + 4),
            (std::vector<std::string>{"recv_v2", "relu_grad", "elementwise_add_grad",
                                      "elementwise_add"}));
  const Program& optimizer = rank.jobs.at("optimizer");
  EXPECT_EQ(Types(optimizer),
            (std::vector<std::string>{"scale", "scale", "scale", "scale", "sgd", "sgd", "sgd",
                                      "sgd", "set_value", "set_value", "set_value", "set_value"}));
  EXPECT_FLOAT_EQ(optimizer.root().op(0).AttrOr<float>("scale", 0), 0.25f);
  EXPECT_EQ(*optimizer.root().op(4).SingleInput("Grad"), "linear_0.b_0@GRAD@MERGE");
  // Plan: F0..F3, B0..B3, optimizer (pipeline_fthenb.py).
  ASSERT_TRUE(rank.plan.has_value());
  std::vector<PlanJob> expected;
  for (int mb = 0; mb < 4; ++mb) expected.push_back({"forward", mb});
  for (int mb = 0; mb < 4; ++mb) expected.push_back({"backward", mb});
  expected.push_back({"optimizer", 0});
  EXPECT_EQ(*rank.plan, expected);
  // The merge buffers start at zero (startup fill_constant).
  int zero_fills = 0;
  for (int i = 0; i < rank.startup.root().num_ops(); ++i) {
    const Op op = rank.startup.root().op(i);
    zero_fills += op.type() == "fill_constant" &&
                  op.SingleOutput("Out")->find("@GRAD@MERGE") != std::string::npos;
  }
  EXPECT_EQ(zero_fills, 4);
  // skip_gc_vars: the forward keeps what the backward of its micro-batch reads, but not an input
  // backward needs no buffer of (elementwise_add_grad's X); backward keeps nothing.
  StatusOr<std::vector<std::vector<std::string>>> skip =
      PipelineSkipGcVars(rank.jobs, *rank.plan, 4);
  ASSERT_TRUE(skip.ok()) << skip.status().ToString();
  const std::vector<std::string>& forward0 = (*skip)[0];
  EXPECT_NE(std::find(forward0.begin(), forward0.end(), "relu_1.tmp_0"), forward0.end());
  EXPECT_EQ(std::find(forward0.begin(), forward0.end(), "linear_5.tmp_0"), forward0.end());
  EXPECT_TRUE((*skip)[4].empty());
}

// ZBH1: matmul_v2_grad becomes matmul_v2(Out@GRAD, Y^T) in backward_b and matmul_v2(X^T,
// Out@GRAD) in backward_w (split_matmul_grad_to_matmul); `backward` keeps both.
TEST(PipelineJobsTest, ZeroBubbleSplitsMatmulGrad) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p = ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "ZBH1", 4), 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const RankPrograms& rank = p->ranks[1];
  EXPECT_EQ(rank.jobs.size(), 5u);
  for (const auto& [type, program] : rank.jobs) {
    const std::vector<std::string> types = Types(program);
    EXPECT_EQ(std::count(types.begin(), types.end(), "matmul_v2_grad"), 0) << type;
  }
  const auto find_writer = [](const Program& program, const std::string& var) -> std::optional<Op> {
    for (int i = 0; i < program.root().num_ops(); ++i) {
      const Op op = program.root().op(i);
      if (op.SingleOutput("Out") == var) return op;
    }
    return std::nullopt;
  };
  const std::optional<Op> x_grad = find_writer(rank.jobs.at("backward_b"), "relu_2.tmp_0@GRAD");
  ASSERT_TRUE(x_grad.has_value());
  EXPECT_EQ(x_grad->type(), "matmul_v2");
  EXPECT_TRUE(x_grad->AttrOr<bool>("trans_y", false));
  EXPECT_EQ(*x_grad->SingleInput("X"), "linear_7.tmp_0@GRAD");
  const std::optional<Op> y_grad = find_writer(rank.jobs.at("backward_w"), "linear_3.w_0@GRAD");
  ASSERT_TRUE(y_grad.has_value());
  EXPECT_TRUE(y_grad->AttrOr<bool>("trans_x", false));
  EXPECT_EQ(*y_grad->SingleInput("X"), "relu_2.tmp_0");
  EXPECT_FALSE(find_writer(rank.jobs.at("backward_b"), "linear_3.w_0@GRAD").has_value());
  EXPECT_TRUE(find_writer(rank.jobs.at("backward"), "linear_3.w_0@GRAD").has_value());
  // gpt's linears are rank 3: FoldInitDims' reshapes around the weight GEMM.
  const Serial gpt = Zoo("gpt");
  StatusOr<DistributedPrograms> g = ApplyPipeline(gpt.startup, gpt.main, Pipeline(2, "ZBH1", 4), 2);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::optional<Op> head =
      find_writer(g->ranks[1].jobs.at("backward_w"), "linear_12.w_0@GRAD");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->type(), "reshape2");
  EXPECT_EQ(*head->SingleInput("X"), "linear_12.w_0@GRAD@reshape.out");
}

// The PIR split of 1F1B (PR #70360; pipeline_1f1b.py `_partial_pir_programs`): on the mlp's
// second stage at pp2, m = 4, the forward's recv_v2 is recv_forward's only op and the backward's
// send_v2, with the c_sync_calc_stream that waits for its gradient, is send_backward's; forward
// and backward keep no p2p op of their own direction. The first stage receives nothing forward and
// sends nothing back: its recv_forward and send_backward are empty, as Paddle's are. ApplyPipeline
// numbers the rings as a RingRegistry does: 0 for (0 -> 1), 1 for (1 -> 0).
TEST(PipelineJobsTest, PirOneFOneBMovesTheRecvAndTheSendIntoTheirJobs) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "1F1B", 4), 2, schedules::JobListIr::kPir);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const RankPrograms& last = p->ranks[1];
  std::set<std::string> types;
  for (const auto& entry : last.jobs) types.insert(entry.first);
  EXPECT_EQ(types, (std::set<std::string>{"recv_forward", "forward", "backward", "send_backward",
                                          "optimizer"}));
  EXPECT_EQ(P2pOps(last.jobs.at("recv_forward")),
            (std::vector<P2p>{{"recv_v2", "relu_1.tmp_0", 0, 0, 0}}));
  EXPECT_EQ(Types(last.jobs.at("recv_forward")), (std::vector<std::string>{"recv_v2"}));
  EXPECT_EQ(Types(last.jobs.at("send_backward")),
            (std::vector<std::string>{"c_sync_calc_stream", "send_v2"}));
  EXPECT_EQ(P2pOps(last.jobs.at("send_backward")),
            (std::vector<P2p>{{"send_v2", "relu_1.tmp_0@GRAD", 1, 1, 1}}));
  EXPECT_EQ(*last.jobs.at("send_backward").root().op(0).SingleInput("X"), "relu_1.tmp_0@GRAD");
  EXPECT_TRUE(P2pOps(last.jobs.at("forward")).empty());
  EXPECT_TRUE(P2pOps(last.jobs.at("backward")).empty());
  // The backward send's comm-stream wait sits before the first optimizer op, as in the legacy form.
  EXPECT_EQ(Types(last.jobs.at("optimizer")).front(), "c_sync_comm_stream");

  const RankPrograms& first = p->ranks[0];
  EXPECT_EQ(first.jobs.size(), 5u);
  EXPECT_EQ(first.jobs.at("recv_forward").root().num_ops(), 0);
  EXPECT_EQ(first.jobs.at("send_backward").root().num_ops(), 0);
  EXPECT_EQ(P2pOps(first.jobs.at("forward")),
            (std::vector<P2p>{{"send_v2", "relu_1.tmp_0", 0, 1, 0}}));
  EXPECT_EQ(P2pOps(first.jobs.at("backward")),
            (std::vector<P2p>{{"recv_v2", "relu_1.tmp_0@GRAD", 1, 0, 1}}));
}

// The plan: stage 1 of p = 2, m = 4 as _create_job_list_in_pir builds it (warm-up
// [recv_forward, forward] x (p-s), steady [backward, recv_forward, send_backward, forward],
// cool-down [backward, send_backward] x (p-s); test/auto_parallel/pir/test_pir_1f1b_plan.py after
// PR #70360), and every stage's plan is MakeJobList's PIR list.
TEST(PipelineJobsTest, PirOneFOneBPlanIsThePirJobList) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "1F1B", 4), 2, schedules::JobListIr::kPir);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(p->ranks[1].plan.has_value());
  EXPECT_EQ(*p->ranks[1].plan, (std::vector<PlanJob>{{"recv_forward", 0},
                                                     {"forward", 0},
                                                     {"backward", 0},
                                                     {"recv_forward", 1},
                                                     {"send_backward", 0},
                                                     {"forward", 1},
                                                     {"backward", 1},
                                                     {"recv_forward", 2},
                                                     {"send_backward", 1},
                                                     {"forward", 2},
                                                     {"backward", 2},
                                                     {"recv_forward", 3},
                                                     {"send_backward", 2},
                                                     {"forward", 3},
                                                     {"backward", 3},
                                                     {"send_backward", 3},
                                                     {"optimizer", 0}}));
  schedules::PaddleScheduleSpec spec;
  spec.mode = schedules::PaddleMode::k1F1B;
  spec.pp = 2;
  spec.micro_batches = 4;
  spec.ir = schedules::JobListIr::kPir;
  spec.pir_split_recv_send = true;
  for (int s = 0; s < 2; ++s) {
    StatusOr<std::vector<schedules::Job>> jobs = schedules::MakeJobList(spec, s);
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    std::vector<PlanJob> expected;
    for (const schedules::Job& job : *jobs) expected.push_back({job.type, job.micro_batch});
    EXPECT_EQ(*p->ranks[s].plan, expected) << "stage " << s;
  }
  // skip_gc_vars: backward now keeps the gradient send_backward sends; send_backward keeps nothing.
  StatusOr<std::vector<std::vector<std::string>>> skip =
      PipelineSkipGcVars(p->ranks[1].jobs, *p->ranks[1].plan, 4);
  ASSERT_TRUE(skip.ok()) << skip.status().ToString();
  EXPECT_EQ((*skip)[2], (std::vector<std::string>{"relu_1.tmp_0@GRAD"}));  // backward 0
  EXPECT_TRUE((*skip)[4].empty());                                         // send_backward 0
}

// VPP (PR #71104; pipeline_vpp.py): recv_forward<c> and send_backward<c> for each chunk, the
// plan MakeJobList's PIR list. FThenB's PIR jobs are the legacy ones (pipeline_fthenb.py keeps
// forward / backward / optimizer in PIR).
TEST(PipelineJobsTest, PirVppSplitsEveryChunkAndFThenBStaysAsIs) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> v =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "VPP", 4, 2), 2, schedules::JobListIr::kPir);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  std::set<std::string> types;
  for (const auto& entry : v->ranks[0].jobs) types.insert(entry.first);
  EXPECT_EQ(types, (std::set<std::string>{"recv_forward0", "forward0", "recv_forward1", "forward1",
                                          "backward1", "send_backward1", "backward0",
                                          "send_backward0", "optimizer"}));
  // Stage 0's chunk 1 (the mlp's linear_2) receives linear_1's activation from stage 1 and sends
  // its gradient back; its chunk 0 has nothing to receive.
  EXPECT_EQ(Types(v->ranks[0].jobs.at("recv_forward1")), (std::vector<std::string>{"recv_v2"}));
  EXPECT_EQ(Types(v->ranks[0].jobs.at("send_backward1")),
            (std::vector<std::string>{"c_sync_calc_stream", "send_v2"}));
  EXPECT_EQ(v->ranks[0].jobs.at("recv_forward0").root().num_ops(), 0);
  schedules::PaddleScheduleSpec spec;
  spec.mode = schedules::PaddleMode::kVpp;
  spec.pp = 2;
  spec.micro_batches = 4;
  spec.vpp = 2;
  spec.ir = schedules::JobListIr::kPir;
  for (int s = 0; s < 2; ++s) {
    StatusOr<std::vector<schedules::Job>> jobs = schedules::MakeJobList(spec, s);
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    std::vector<PlanJob> expected;
    for (const schedules::Job& job : *jobs) expected.push_back({job.type, job.micro_batch});
    EXPECT_EQ(*v->ranks[s].plan, expected) << "stage " << s;
  }

  StatusOr<DistributedPrograms> pir =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "FThenB", 4), 2, schedules::JobListIr::kPir);
  StatusOr<DistributedPrograms> legacy =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "FThenB", 4), 2);
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(*pir->ranks[s].plan, *legacy->ranks[s].plan);
    ASSERT_EQ(pir->ranks[s].jobs.size(), 3u);
    for (const auto& [type, program] : legacy->ranks[s].jobs) {
      EXPECT_EQ(pir->ranks[s].jobs.at(type).desc().SerializeAsString(),
                program.desc().SerializeAsString())
          << type;
    }
  }
}

// ApplyStrategyOptions::job_lists reaches the job split of a hybrid strategy: dp2 x pp2 1F1B
// gives every rank the PIR programs and plan, the dp all-reduce staying in backward.
TEST(PipelineJobsTest, ApplyStrategyPassesThePirFormDown) {
  const Serial mlp = Zoo("mlp");
  Strategy hybrid = Pipeline(2, "1F1B", 4);
  hybrid.dp_degree = 2;
  ApplyStrategyOptions options;
  options.micro_batch_size = 2;
  options.job_lists = schedules::JobListIr::kPir;
  StatusOr<DistributedPrograms> p = ApplyStrategy(mlp.startup, mlp.main, hybrid, options);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->ranks.size(), 4u);
  for (const RankPrograms& rank : p->ranks) {
    EXPECT_EQ(rank.jobs.size(), 5u);
    ASSERT_TRUE(rank.plan.has_value());
    EXPECT_EQ(rank.plan->front(), (PlanJob{"recv_forward", 0}));
    const std::vector<std::string> backward = Types(rank.jobs.at("backward"));
    EXPECT_NE(std::find(backward.begin(), backward.end(), "c_allreduce_sum"), backward.end());
  }
  options.job_lists = schedules::JobListIr::kLegacy;
  StatusOr<DistributedPrograms> legacy = ApplyStrategy(mlp.startup, mlp.main, hybrid, options);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->ranks[0].jobs.size(), 3u);
}

// Paddle's PIR pipeline pass has FThenB, 1F1B and VPP only (static/pir_pass.py), and its 1F1B and
// VPP passes assert enable_send_recv_overlap is off.
TEST(PipelineErrorsTest, PirRefusesTheModesPaddlesPirPassLacks) {
  const Serial mlp = Zoo("mlp");
  for (const char* mode : {"Eager1F1B", "ZBH1"}) {
    StatusOr<DistributedPrograms> p =
        ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, mode, 4), 2, schedules::JobListIr::kPir);
    ASSERT_FALSE(p.ok()) << mode;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << mode;
    EXPECT_EQ(p.status().location().attr, "schedule_mode") << mode;
    EXPECT_NE(p.status().message().find("has no PIR form"), std::string::npos)
        << p.status().ToString();
  }
  Strategy overlap = Pipeline(2, "1F1B", 4);
  overlap.pipeline.enable_send_recv_overlap = true;
  StatusOr<DistributedPrograms> o =
      ApplyPipeline(mlp.startup, mlp.main, overlap, 2, schedules::JobListIr::kPir);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().location().attr, "enable_send_recv_overlap");
  // The legacy form keeps taking both.
  EXPECT_TRUE(ApplyPipeline(mlp.startup, mlp.main, overlap, 2).ok());
  EXPECT_TRUE(ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "ZBH1", 4), 2).ok());
}

TEST(PipelineErrorsTest, PpAboveTheLayerCount) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(5, "FThenB", 8), 2);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("pp_degree above the layer count"), std::string::npos)
      << p.status().ToString();
  StatusOr<DistributedPrograms> v =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "VPP", 4, 4), 2);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("pp_degree above the layer count"), std::string::npos);
}

TEST(PipelineErrorsTest, VppWithoutTheVppSchedule) {
  const Serial mlp = Zoo("mlp");
  StatusOr<DistributedPrograms> p =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(2, "1F1B", 4, 2), 2);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("needs schedule_mode VPP"), std::string::npos)
      << p.status().ToString();
  // 1F1B asserts m >= p (pipeline_1f1b.py).
  StatusOr<DistributedPrograms> few =
      ApplyPipeline(mlp.startup, mlp.main, Pipeline(4, "1F1B", 2), 2);
  EXPECT_EQ(few.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace irm::oldir::passes
