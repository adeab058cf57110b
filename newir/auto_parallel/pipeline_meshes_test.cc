// Pipeline stages as process meshes (pipeline_meshes.h) on the zoo mlp of 4 linears, translated
// (testdata/pipeline_mlp4_*.pir; regenerate: `ir-migrate build mlp --depth 4 --in-features 4
// --width 8 --classes 3 -o S && ir-migrate translate S -o P && ir-migrate dump
// P/rank0/main.json`, and the same for startup.json): the stage rule of the legacy partition
// (oldir/passes/pipeline_stages.h: units split evenly over pp * vpp chunks, chunk c on stage
// c % pp), the cross-mesh reads lowered to send_v2/recv_v2 pairs in the reader's role with
// Paddle's chunk rule (same_status_reshard_func.py), each rank keeping its stage, and the PIR
// accumulation (auto_parallel_gradient_merge.py `_pir_parse_program`). The runs against the
// serial program are the Engine's (diff_tests/engine_flow_test.cc, engine_matrix_test.cc).
#include "newir/auto_parallel/pipeline_meshes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "newir/auto_parallel/pipeline_accumulation.h"
#include "newir/parser.h"

namespace irm::newir {
namespace {

Program Fixture(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::filesystem::path root =
      dir != nullptr && *dir != '\0' ? std::filesystem::path(dir) : std::filesystem::current_path();
  StatusOr<std::string> text =
      ReadFile((root / "newir" / "auto_parallel" / "testdata" / name).string());
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  StatusOr<Program> program = ParseProgram(text.ok() ? *text : "");
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return Program();
  return std::move(*program);
}

PipelineMeshOptions Mlp4(int pp, int vpp = 1, int micro_batches = 1) {
  PipelineMeshOptions options;
  options.pp_degree = pp;
  options.vpp_degree = vpp;
  options.unit_count = 4;
  for (int i = 0; i < 4; ++i) {
    options.unit_of_param["linear_" + std::to_string(i) + ".w_0"] = i;
    options.unit_of_param["linear_" + std::to_string(i) + ".b_0"] = i;
  }
  options.micro_batch_size = 2;
  options.micro_batches = micro_batches;
  return options;
}

std::string ParameterOf(const Operation& op) {
  for (size_t i = 0; i < op.num_operands(); ++i) {
    const Value* v = op.operand(i);
    const Operation* producer = v == nullptr ? nullptr : v->defining_op();
    if (producer != nullptr && producer->name() == "dist_op.shard_tensor") {
      producer = producer->operand(0)->defining_op();
    }
    if (producer == nullptr || producer->name() != "builtin.parameter") continue;
    const std::string_view* name = producer->attribute("parameter_name").AsString();
    if (name != nullptr && name->starts_with("linear_")) return std::string(*name);
  }
  return "";
}

int32_t IntAttr(const Operation& op, std::string_view name) {
  const int32_t* v = op.attribute(name).AsInt32();
  return v != nullptr ? *v : -100;
}

int64_t MeshRank(const Operation& op) {
  const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist();
  return dist != nullptr && dist->mesh.process_ids.size() == 1 ? dist->mesh.process_ids[0] : -1;
}

std::vector<const Operation*> OpsNamed(const Program& program, std::string_view name) {
  std::vector<const Operation*> ops;
  for (const Operation* op : program.block().ops()) {
    if (op->name() == name) ops.push_back(op);
  }
  return ops;
}

TEST(PipelineMeshesTest, OpsGoToTheStageOfTheirLayerAsTheLegacyPartitionPutsThem) {
  Program main = Fixture("pipeline_mlp4_main.pir");
  StatusOr<size_t> placed = AnnotatePipelineStages(main, Mlp4(2));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  // linear_0 and linear_1 on stage 0, linear_2 and linear_3 on stage 1; forward, backward and
  // optimizer of a layer alike.
  int checked = 0;
  for (const char* name : {"pd_op.matmul", "pd_op.matmul_grad", "pd_op.sgd_"}) {
    for (const Operation* op : OpsNamed(main, name)) {
      const std::string param = ParameterOf(*op);
      ASSERT_FALSE(param.empty()) << name;
      const int unit = param[7] - '0';
      EXPECT_EQ(MeshRank(*op), unit < 2 ? 0 : 1) << name << " of " << param;
      EXPECT_EQ(IntAttr(*op, "chunk_id"), 0) << name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 + 4 + 8);
  // The loss and its gradient's seed reader on the last stage; the relu between linear_1 and
  // linear_2 with linear_1 (its producer's chunk), its grad with it.
  EXPECT_EQ(MeshRank(*OpsNamed(main, "pd_op.mean_all")[0]), 1);
  EXPECT_EQ(MeshRank(*OpsNamed(main, "pd_op.mean_all_grad")[0]), 1);
  EXPECT_EQ(MeshRank(*OpsNamed(main, "pd_op.relu")[1]), 0);
  EXPECT_EQ(MeshRank(*OpsNamed(main, "pd_op.relu_grad")[1]), 0);
  // The stage parameters and the feeds are annotated on their stage's mesh.
  EXPECT_EQ(OpsNamed(main, "dist_op.shard_tensor").size(), 8u + 2u);
}

TEST(PipelineMeshesTest, VirtualStagesInterleaveChunksOverTheStages) {
  Program main = Fixture("pipeline_mlp4_main.pir");
  ASSERT_TRUE(AnnotatePipelineStages(main, Mlp4(2, 2)).ok());
  // Four chunks of one linear each: chunk c on stage c % 2 with local chunk_id c / 2.
  for (const Operation* op : OpsNamed(main, "pd_op.matmul")) {
    const int unit = ParameterOf(*op)[7] - '0';
    EXPECT_EQ(MeshRank(*op), unit % 2) << unit;
    EXPECT_EQ(IntAttr(*op, "chunk_id"), unit / 2) << unit;
  }
}

TEST(PipelineMeshesTest, CrossStageReadsBecomeSendRecvPairsInTheReadersRole) {
  StatusOr<ParallelPrograms> made = ParallelizePipeline(
      Fixture("pipeline_mlp4_main.pir"), Fixture("pipeline_mlp4_startup.pir"), Mlp4(2));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_EQ(made->world_size, 2);
  ASSERT_EQ(made->ranks.size(), 2u);
  // Stage 0 sends the forward activation and receives its gradient; stage 1 the reverse. One
  // two-rank group per direction.
  struct Comm {
    std::string name;
    int32_t role;
    int32_t ring;
  };
  std::vector<Comm> comm[2];
  for (int rank = 0; rank < 2; ++rank) {
    const Program& main = made->ranks[rank].main;
    for (const Operation* op : main.block().ops()) {
      EXPECT_FALSE(op->name().starts_with("dist_op.")) << op->name();
      EXPECT_FALSE(op->HasAttribute("op_dist_attr")) << op->name();
      if (op->name() == "pd_op.send_v2" || op->name() == "pd_op.recv_v2") {
        comm[rank].push_back(
            {std::string(op->name()), IntAttr(*op, "op_role"), IntAttr(*op, "ring_id")});
      }
      if (op->name() == "pd_op.recv_v2") {
        // A micro-batch's rows: Paddle's same-status reshard needs static shapes.
        const AttributeSpan* shape = op->attribute("out_shape").AsArray();
        ASSERT_NE(shape, nullptr);
        EXPECT_EQ(*(*shape)[0].AsInt64(), 2);
      }
    }
  }
  ASSERT_EQ(comm[0].size(), 2u);
  ASSERT_EQ(comm[1].size(), 2u);
  EXPECT_EQ(comm[0][0].name, "pd_op.send_v2");
  EXPECT_EQ(comm[0][0].role, 0);
  EXPECT_EQ(comm[0][1].name, "pd_op.recv_v2");
  EXPECT_EQ(comm[0][1].role, 1);
  EXPECT_EQ(comm[1][0].name, "pd_op.recv_v2");
  EXPECT_EQ(comm[1][0].role, 0);
  EXPECT_EQ(comm[1][1].name, "pd_op.send_v2");
  EXPECT_EQ(comm[1][1].role, 1);
  EXPECT_EQ(comm[0][0].ring, comm[1][0].ring);
  EXPECT_EQ(comm[0][1].ring, comm[1][1].ring);
  EXPECT_EQ(made->process_groups.at(comm[0][0].ring), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(made->process_groups.at(comm[0][1].ring), (std::vector<int64_t>{1, 0}));
  // Each rank keeps its own layers' parameters, in main and in startup.
  for (int rank = 0; rank < 2; ++rank) {
    std::set<std::string> main_params;
    for (const Operation* op : OpsNamed(made->ranks[rank].main, "builtin.parameter")) {
      main_params.insert(std::string(*op->attribute("parameter_name").AsString()));
    }
    std::set<std::string> set;
    for (const Operation* op : OpsNamed(made->ranks[rank].startup, "builtin.set_parameter")) {
      set.insert(std::string(*op->attribute("parameter_name").AsString()));
    }
    const std::string own = rank == 0 ? "linear_1.w_0" : "linear_2.w_0";
    const std::string other = rank == 0 ? "linear_2.w_0" : "linear_1.w_0";
    EXPECT_EQ(main_params.count(own), 1u) << rank;
    EXPECT_EQ(main_params.count(other), 0u) << rank;
    EXPECT_EQ(set.count(own), 1u) << rank;
    EXPECT_EQ(set.count(other), 0u) << rank;
    EXPECT_EQ(set.count("learning_rate_0"), 1u) << rank;
    EXPECT_EQ(OpsNamed(made->ranks[rank].main, "pd_op.sgd_").size(), 4u) << rank;
  }
}

TEST(PipelineMeshesTest, VirtualStagesSendFromTheProducersChunkAndReceiveInTheReaders) {
  StatusOr<ParallelPrograms> made = ParallelizePipeline(
      Fixture("pipeline_mlp4_main.pir"), Fixture("pipeline_mlp4_startup.pir"), Mlp4(2, 2));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  // Rank 0 holds chunks 0 and 2 (local 0 and 1): it sends chunk 0's output, receives chunk 2's
  // input from chunk 1 in local chunk 1, and in the backward the reverse.
  std::vector<std::pair<std::string, int32_t>> forward;
  for (const Operation* op : made->ranks[0].main.block().ops()) {
    if (IntAttr(*op, "op_role") != 0) continue;
    if (op->name() == "pd_op.send_v2" || op->name() == "pd_op.recv_v2") {
      forward.emplace_back(std::string(op->name()), IntAttr(*op, "chunk_id"));
    }
  }
  const std::vector<std::pair<std::string, int32_t>> want = {
      {"pd_op.send_v2", 0}, {"pd_op.recv_v2", 1}, {"pd_op.send_v2", 1}};
  EXPECT_EQ(forward, want);
}

TEST(PipelineMeshesTest, MicroBatchesAccumulateInPaddlesPirForm) {
  StatusOr<ParallelPrograms> made = ParallelizePipeline(
      Fixture("pipeline_mlp4_main.pir"), Fixture("pipeline_mlp4_startup.pir"), Mlp4(2, 1, 4));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const Program& main = made->ranks[0].main;
  // Per gradient a buffer added in place in the backward, 1/4 before each sgd_ reading it, the
  // buffers zeroed after the optimizer; no pd_op.if (the plan gates the optimizer job).
  EXPECT_EQ(OpsNamed(main, "pd_op.if").size(), 0u);
  const std::vector<const Operation*> adds = OpsNamed(main, "pd_op.add_");
  ASSERT_EQ(adds.size(), 4u);
  for (const Operation* add : adds) {
    EXPECT_EQ(IntAttr(*add, "op_role"), 1);
    EXPECT_EQ(*add->attribute("grad_merge_add").AsBool(), true);
    const Operation* buffer = add->operand(0)->defining_op();
    ASSERT_EQ(buffer->name(), "builtin.parameter");
    EXPECT_TRUE(buffer->attribute("parameter_name").AsString()->ends_with("@GRAD@MERGE"));
    EXPECT_EQ(add->prev(), add->operand(1)->defining_op()) << "right after the producer";
  }
  const std::vector<const Operation*> sgd = OpsNamed(main, "pd_op.sgd_");
  ASSERT_EQ(sgd.size(), 4u);
  for (const Operation* op : sgd) {
    const Operation* scale = op->operand(2)->defining_op();
    ASSERT_EQ(scale->name(), "pd_op.scale_");
    EXPECT_EQ(*scale->operand(1)->defining_op()->attribute("value").AsDouble(), 0.25);
    EXPECT_EQ(scale->operand(0)->defining_op()->name(), "pd_op.add_");
  }
  EXPECT_EQ(OpsNamed(main, "pd_op.set_value_with_tensor_").size(), 4u);
  int buffers = 0;
  for (const Operation* op : OpsNamed(made->ranks[0].startup, "builtin.set_parameter")) {
    buffers += op->attribute("parameter_name").AsString()->ends_with("@GRAD@MERGE") ? 1 : 0;
  }
  EXPECT_EQ(buffers, 4);
}

TEST(PipelineMeshesTest, OneMicroBatchAccumulatesNothing) {
  Program main = Fixture("pipeline_mlp4_main.pir");
  StatusOr<size_t> buffers = AppendPipelineAccumulation(main, 1, true);
  ASSERT_TRUE(buffers.ok()) << buffers.status().ToString();
  EXPECT_EQ(*buffers, 0u);
  EXPECT_EQ(OpsNamed(main, "pd_op.add_").size(), 0u);
  EXPECT_EQ(AppendPipelineAccumulation(main, 0, true).status().code(),
            StatusCode::kInvalidArgument);
}

// dp2 x pp2: stage s on the mesh of ranks s and 2 + s (Paddle's hybrid topology, dp outermost:
// rank = d * pp + s); ranks at one mesh position pair up across the stages, the feed's rows split
// over each stage's replicas, and the weight gradients all-reduced over the replicas in the
// optimizer's role before their optimizer op reads them.
TEST(PipelineMeshesTest, DataParallelStagesPairTheirReplicasAcrossStages) {
  PipelineMeshOptions options = Mlp4(2, 1, 2);
  options.dp_degree = 2;
  options.batch_feeds = {"x", "label"};
  StatusOr<ParallelPrograms> made = ParallelizePipeline(
      Fixture("pipeline_mlp4_main.pir"), Fixture("pipeline_mlp4_startup.pir"), options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_EQ(made->world_size, 4);
  for (int rank = 0; rank < 4; ++rank) {
    const Program& main = made->ranks[rank].main;
    const std::vector<const Operation*> sends = OpsNamed(main, "pd_op.send_v2");
    ASSERT_EQ(sends.size(), 1u) << rank;
    const std::vector<int64_t>& group = made->process_groups.at(IntAttr(*sends[0], "ring_id"));
    // Stage 0 sends forward to its replica's stage 1 rank; stage 1 sends the gradient back.
    const int64_t peer = rank % 2 == 0 ? rank + 1 : rank - 1;
    EXPECT_EQ(group, (std::vector<int64_t>{rank, peer})) << rank;
    EXPECT_EQ(IntAttr(*sends[0], "op_role"), rank % 2 == 0 ? 0 : 1) << rank;
    for (const Operation* reduce : OpsNamed(main, "pd_op.all_reduce")) {
      if (IntAttr(*reduce, "op_role") != 2) continue;
      const std::vector<int64_t>& replicas = made->process_groups.at(IntAttr(*reduce, "ring_id"));
      EXPECT_EQ(replicas, (std::vector<int64_t>{rank % 2, rank % 2 + 2})) << rank;
    }
    EXPECT_EQ(OpsNamed(main, "pd_op.sgd_").size(), 4u) << rank;
    int reduced = 0;
    for (const Operation* op : OpsNamed(main, "pd_op.sgd_")) {
      reduced += op->operand(2)->defining_op()->name() == "pd_op.all_reduce" ? 1 : 0;
    }
    EXPECT_EQ(reduced, 4) << rank;
  }
}

// Megatron's pairs over the 4 linears: column-parallel then row-parallel (mp_layers.py).
std::map<std::string, std::vector<int64_t>> MegatronMlp4() {
  std::map<std::string, std::vector<int64_t>> placements;
  for (int i = 0; i < 4; ++i) {
    const std::string linear = "linear_" + std::to_string(i);
    if (i % 2 == 0) {
      placements[linear + ".w_0"] = {-1, 0};  // ColumnParallelLinear: the weight by columns
      placements[linear + ".b_0"] = {0};      // and its bias with it
    } else {
      placements[linear + ".w_0"] = {0, -1};  // RowParallelLinear: the weight by rows
      placements[linear + ".b_0"] = {-1};     // the bias added once, after the sum
    }
  }
  return placements;
}

TEST(PipelineMeshesTest, TensorParallelStagesShardTheirLinearsAndPairRanksByMeshPosition) {
  PipelineMeshOptions options = Mlp4(2, 1, 2);
  options.mp_degree = 2;
  options.mp_placements = MegatronMlp4();
  StatusOr<ParallelPrograms> made = ParallelizePipeline(
      Fixture("pipeline_mlp4_main.pir"), Fixture("pipeline_mlp4_startup.pir"), options);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  // Paddle's hybrid topology: stage s holds ranks s * mp + m.
  ASSERT_EQ(made->world_size, 4);
  for (int rank = 0; rank < 4; ++rank) {
    const int stage = rank / 2;
    const int m = rank % 2;
    const RankPrograms& programs = made->ranks[rank];
    // The rank's pieces of its stage's linears, and nothing of the other stage's.
    const std::string column = stage == 0 ? "linear_0.w_0" : "linear_2.w_0";
    const std::string row = stage == 0 ? "linear_1.w_0" : "linear_3.w_0";
    ASSERT_EQ(programs.shards.count(column), 1u) << rank;
    ASSERT_EQ(programs.shards.count(row), 1u) << rank;
    EXPECT_EQ(programs.shards.count(stage == 0 ? "linear_2.w_0" : "linear_0.w_0"), 0u) << rank;
    EXPECT_EQ(programs.shards.at(column).offsets, (std::vector<int64_t>{0, 4 * m})) << rank;
    EXPECT_EQ(programs.shards.at(row).offsets, (std::vector<int64_t>{4 * m, 0})) << rank;
    // The startup makes the rank's piece: linear_0.w_0 is [4, 8], its column half [4, 4].
    if (stage == 0) {
      bool localised = false;
      for (const Operation* op : OpsNamed(programs.startup, "builtin.set_parameter")) {
        const std::string_view* name = op->attribute("parameter_name").AsString();
        if (name == nullptr || *name != "linear_0.w_0") continue;
        EXPECT_EQ(op->operand(0)->type().dims(), (std::vector<int64_t>{4, 4})) << rank;
        localised = true;
      }
      EXPECT_TRUE(localised) << rank;
    }
    // The stage boundary pairs the ranks at the same mesh position: m of stage 0 and m of
    // stage 1, forward one way and the gradient back.
    const std::vector<const Operation*> sends = OpsNamed(programs.main, "pd_op.send_v2");
    ASSERT_EQ(sends.size(), 1u) << rank;
    const int64_t peer = stage == 0 ? 2 + m : m;
    EXPECT_EQ(made->process_groups.at(IntAttr(*sends[0], "ring_id")),
              (std::vector<int64_t>{rank, peer}))
        << rank;
    // The row-parallel linear's partial product is summed over the stage's mp ranks in the
    // forward role.
    int forward_sums = 0;
    for (const Operation* reduce : OpsNamed(programs.main, "pd_op.all_reduce")) {
      if (IntAttr(*reduce, "op_role") != 0) continue;
      EXPECT_EQ(made->process_groups.at(IntAttr(*reduce, "ring_id")),
                (std::vector<int64_t>{2 * stage, 2 * stage + 1}))
          << rank;
      ++forward_sums;
    }
    EXPECT_GE(forward_sums, 1) << rank;
  }
}

TEST(PipelineMeshesTest, MoreChunksThanLayersIsRefusedAsTheLegacyPassRefusesIt) {
  Program main = Fixture("pipeline_mlp4_main.pir");
  const Status refused = AnnotatePipelineStages(main, Mlp4(4, 2)).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("pp_degree above the layer count"), std::string::npos)
      << refused.ToString();
}

}  // namespace
}  // namespace irm::newir
