// The corpus builders: every case writes a bundle that reads back and validates without a
// finding, and each parallelisation put its ops where Paddle's passes put them.
#include "diff_tests/corpus/corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "oldir/bundle.h"

namespace irm::corpus {
namespace {

namespace fs = std::filesystem;
namespace proto = oldir::proto;

std::vector<std::string> OpTypes(const oldir::Program& program, int block = 0) {
  std::vector<std::string> types;
  for (const proto::OpDesc& op : program.desc().blocks(block).ops()) types.push_back(op.type());
  return types;
}

int Count(const std::vector<std::string>& types, const std::string& type) {
  return static_cast<int>(std::count(types.begin(), types.end(), type));
}

const proto::OpDesc::Attr* Attr(const proto::OpDesc& op, const std::string& name) {
  for (const proto::OpDesc::Attr& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

// The ops of `type` in the root block.
std::vector<const proto::OpDesc*> Ops(const oldir::Program& program, const std::string& type) {
  std::vector<const proto::OpDesc*> ops;
  for (const proto::OpDesc& op : program.desc().blocks(0).ops()) {
    if (op.type() == type) ops.push_back(&op);
  }
  return ops;
}

const oldir::Program& Main(const BundleCase& c, int rank) {
  return c.ranks.at(rank).jobs.at("main");
}

TEST(CorpusTest, EveryStandardCaseWritesABundleThatValidates) {
  StatusOr<std::vector<BundleCase>> cases = StandardCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  std::set<std::string> names;
  for (const BundleCase& c : *cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second);
    const std::string dir =
        (fs::path(::testing::TempDir()) / ("irm_corpus_" + std::to_string(::getpid()) + c.name))
            .string();
    fs::remove_all(dir);
    ASSERT_TRUE(WriteBundleCase(c, dir).ok());
    StatusOr<oldir::Bundle> back = oldir::ReadBundle(dir);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->world_size, static_cast<int>(c.ranks.size()));
    oldir::BundleCheck check = oldir::CheckBundle(*back, dir);
    EXPECT_TRUE(check.usable);
    EXPECT_EQ(check.findings.Render(), "");
    fs::remove_all(dir);
  }
}

TEST(CorpusTest, DataParallelSumsAndAveragesEveryGradientBeforeTheUpdate) {
  StatusOr<BundleCase> c = DataParallelMlp(4);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "dp4_mlp");
  ASSERT_EQ(c->ranks.size(), 4u);
  const oldir::Program& main = Main(*c, 0);
  const auto reduces = Ops(main, "c_allreduce_sum");
  const auto updates = Ops(main, "sgd");
  ASSERT_EQ(reduces.size(), 6u);  // 3 layers x (weight, bias)
  ASSERT_EQ(updates.size(), 6u);
  const auto& ops = main.desc().blocks(0).ops();
  for (const proto::OpDesc* reduce : reduces) {
    const std::string grad = reduce->inputs(0).arguments(0);
    EXPECT_EQ(reduce->outputs(0).arguments(0), grad);  // in place
    EXPECT_EQ(Attr(*reduce, "ring_id")->i(), 0);
    // The next op scales the same gradient by 1/4 in place.
    const int at = static_cast<int>(reduce - &ops.Get(0));
    const proto::OpDesc& scale = ops.Get(at + 1);
    EXPECT_EQ(scale.type(), "scale");
    EXPECT_EQ(scale.inputs(0).arguments(0), grad);
    EXPECT_FLOAT_EQ(Attr(scale, "scale")->f(), 0.25f);
  }
  // Every rank runs the very same programs.
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(Main(*c, r).desc().SerializeAsString(), main.desc().SerializeAsString());
  }
  EXPECT_EQ(c->bundle.strategy["dp_degree"], 4);
}

TEST(CorpusTest, TensorParallelShardsTheBlockAndReducesForwardAndBackward) {
  StatusOr<BundleCase> c = TensorParallelMlp(2);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const oldir::Program& main = Main(*c, 0);
  const std::vector<std::string> types = OpTypes(main);
  EXPECT_EQ(Count(types, "c_identity"), 1);
  EXPECT_EQ(Count(types, "c_allreduce_sum"), 2);
  // c_identity's output feeds the column matmul; the row matmul's output feeds the all-reduce.
  const proto::OpDesc* identity = Ops(main, "c_identity").at(0);
  const std::string h0_tp = identity->outputs(0).arguments(0);
  int readers = 0;
  for (const proto::OpDesc& op : main.desc().blocks(0).ops()) {
    for (const auto& slot : op.inputs()) {
      for (const std::string& arg : slot.arguments()) readers += arg == h0_tp;
    }
  }
  EXPECT_EQ(readers, 2);  // matmul_v2 and matmul_v2_grad
  const auto reduces = Ops(main, "c_allreduce_sum");
  EXPECT_EQ(Attr(*reduces[0], "op_role")->i(), 0);
  EXPECT_EQ(reduces[1]->inputs(0).arguments(0), identity->inputs(0).arguments(0) + "@GRAD");
  EXPECT_EQ(Attr(*reduces[1], "op_role")->i(), 1);
  // The shards are [8, 8] and [8, 8] of the 16-wide block, initialised differently per rank.
  auto seeds = [&](int rank) {
    std::vector<int> s;
    for (const proto::OpDesc& op : c->ranks[rank].startup.desc().blocks(0).ops()) {
      if (const auto* seed = Attr(op, "seed")) s.push_back(seed->i());
    }
    return s;
  };
  EXPECT_NE(seeds(0), seeds(1));
  EXPECT_EQ(TensorParallelMlp(3).status().message(),
            "tensor parallelism over 3 ranks: the ranks must be at least 2 and divide the block "
            "width 16");
}

TEST(CorpusTest, PipelineSplitsStagesIntoJobsWithSendRecvAtTheCut) {
  StatusOr<BundleCase> c = PipelineFThenBMlp(4);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->ranks.size(), 2u);
  EXPECT_EQ(c->bundle.micro_batches, 4);
  EXPECT_EQ(c->bundle.feeds.at(0).shape.at(0), 16);  // 4 micro-batches of 4 rows
  const std::vector<oldir::PlanJob> want = {{"forward", 0},  {"forward", 1},  {"forward", 2},
                                            {"forward", 3},  {"backward", 0}, {"backward", 1},
                                            {"backward", 2}, {"backward", 3}, {"optimizer", 0}};
  for (const RankPrograms& rank : c->ranks) EXPECT_EQ(rank.plan, want);

  const auto& s0 = c->ranks[0].jobs;
  const auto& s1 = c->ranks[1].jobs;
  const std::vector<std::string> f0 = OpTypes(s0.at("forward"));
  const std::vector<std::string> f1 = OpTypes(s1.at("forward"));
  const std::vector<std::string> b0 = OpTypes(s0.at("backward"));
  const std::vector<std::string> b1 = OpTypes(s1.at("backward"));
  EXPECT_EQ(f0.back(), "send_v2");
  EXPECT_EQ(Count(f0, "recv_v2"), 0);
  EXPECT_EQ(f1.at(1), "recv_v2");  // after the label's feed
  EXPECT_EQ(f1.back(), "fetch");
  EXPECT_EQ(b0.front(), "recv_v2");
  EXPECT_EQ(Count(b1, "send_v2"), 1);
  EXPECT_EQ(Count(f0, "matmul_v2") + Count(f1, "matmul_v2"), 3);
  EXPECT_EQ(Count(f0, "matmul_v2"), 1);
  // Peers: forward on ring 1 ([0, 1]), backward on ring 2 ([1, 0]).
  const proto::OpDesc* send_act = Ops(s0.at("forward"), "send_v2").at(0);
  EXPECT_EQ(Attr(*send_act, "ring_id")->i(), 1);
  EXPECT_EQ(Attr(*send_act, "peer")->i(), 1);
  const proto::OpDesc* recv_grad = Ops(s0.at("backward"), "recv_v2").at(0);
  EXPECT_EQ(Attr(*recv_grad, "ring_id")->i(), 2);
  EXPECT_EQ(Attr(*recv_grad, "peer")->i(), 0);
  EXPECT_EQ(std::vector<int>(Attr(*recv_grad, "out_shape")->ints().begin(),
                             Attr(*recv_grad, "out_shape")->ints().end()),
            (std::vector<int>{4, 8}));
  // Gradient merge: stage 0 merges its 2 gradients, stage 1 its 4; the optimizer job averages
  // over the 4 micro-batches, applies and resets.
  EXPECT_EQ(Count(b0, "elementwise_add"), 2 + 0);
  const std::vector<std::string> o1 = OpTypes(s1.at("optimizer"));
  EXPECT_EQ(Count(o1, "scale"), 4);
  EXPECT_EQ(Count(o1, "sgd"), 4);
  EXPECT_EQ(Count(o1, "set_value"), 4);
  EXPECT_FLOAT_EQ(Attr(*Ops(s1.at("optimizer"), "scale").at(0), "scale")->f(), 0.25f);
  // Each stage's startup initialises only what its jobs use.
  std::set<std::string> init0;
  for (const proto::OpDesc& op : c->ranks[0].startup.desc().blocks(0).ops()) {
    init0.insert(op.outputs(0).arguments(0));
  }
  EXPECT_TRUE(init0.count("linear_0.w_0"));
  EXPECT_FALSE(init0.count("linear_2.w_0"));
}

TEST(CorpusTest, GradientMergeRunsTheUpdateInAConditionalBlock) {
  StatusOr<BundleCase> c = GradientMergeMlp(2);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const oldir::Program& main = Main(*c, 0);
  ASSERT_EQ(main.num_blocks(), 2);
  const std::vector<std::string> root = OpTypes(main, 0);
  const std::vector<std::string> sub = OpTypes(main, 1);
  EXPECT_EQ(Count(root, "conditional_block"), 1);
  EXPECT_EQ(Count(root, "sgd"), 0);
  EXPECT_EQ(Count(sub, "sgd"), 6);
  EXPECT_EQ(Count(sub, "scale"), 6);
  EXPECT_EQ(Count(sub, "set_value"), 6);
  EXPECT_EQ(Count(root, "increment"), 1);
  EXPECT_EQ(Count(root, "elementwise_mod"), 1);
  EXPECT_EQ(Count(root, "equal"), 1);
  EXPECT_GE(c->bundle.steps, 4);
  const proto::OpDesc* cond = Ops(main, "conditional_block").at(0);
  EXPECT_EQ(cond->inputs(0).parameter(), "Cond");
  EXPECT_EQ(cond->inputs(0).arguments(0), "gradient_merge_cond");
}

TEST(CorpusTest, RejectsImpossibleShapes) {
  EXPECT_EQ(DataParallelMlp(1).status().message(),
            "data parallelism needs at least 2 ranks, not 1");
  EXPECT_EQ(PipelineFThenBMlp(0).status().message(),
            "a pipeline needs at least 1 micro-batch, not 0");
  EXPECT_EQ(GradientMergeMlp(0).status().message(), "gradient merge needs k_steps >= 1, not 0");
}

}  // namespace
}  // namespace irm::corpus
