// The corpus generated from strategies: the documented cases in order, each with the world its
// strategy asks for and that strategy recorded in bundle.json as `build` records it, programs
// that validate, pipelines with Paddle's job lists and the point-to-point model those need.
#include "diff_tests/corpus/corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "oldir/bundle.h"
#include "oldir/validator.h"

namespace irm::corpus {
namespace {

std::vector<oldir::PlanJob> Jobs(const std::vector<std::pair<std::string, int>>& jobs) {
  std::vector<oldir::PlanJob> plan;
  for (const auto& job : jobs) plan.push_back({job.first, job.second});
  return plan;
}

int Count(const oldir::Program& program, const std::string& type) {
  int n = 0;
  for (const oldir::proto::BlockDesc& block : program.desc().blocks()) {
    for (const oldir::proto::OpDesc& op : block.ops()) n += op.type() == type ? 1 : 0;
  }
  return n;
}

TEST(CorpusTest, TheStandardCasesAreTheDocumentedOnesInOrder) {
  StatusOr<std::vector<BundleCase>> cases = StandardCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  std::vector<std::string> names;
  for (const BundleCase& c : *cases) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "dp2_mlp", "dp4_mlp", "tp2_mlp", "pp2_fthenb_mb2_mlp", "pp2_fthenb_mb4_mlp",
                       "dp2_gm2_mlp", "pp2_1f1b_mb2_mlp", "pp2_vpp2_mb4_mlp", "pp2_zbh1_mb2_mlp",
                       "tp2_gpt", "dp2_tp2_mlp", "dp2_pp2_mlp", "dp2_tp2_pp2_gpt"}));
  StatusOr<std::vector<BundleCase>> all = CorpusCases();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), cases->size() + 1);
  EXPECT_EQ(all->back().name, "serial_mlp8");
}

// The world of each case is the product of its strategy's degrees, every rank has its programs,
// and bundle.json's strategy names the axes in use, the model and the optimizer (docs/bundle.md).
TEST(CorpusTest, EveryCaseHasItsStrategysWorldAndRecordsTheStrategy) {
  struct Want {
    std::string name;
    int world;
    std::string kind, model, optimizer;
  };
  const std::vector<Want> wants = {
      {"dp2_mlp", 2, "data_parallel", "mlp", "sgd"},
      {"dp4_mlp", 4, "data_parallel", "mlp", "sgd"},
      {"tp2_mlp", 2, "tensor_parallel", "mlp", "sgd"},
      {"pp2_fthenb_mb4_mlp", 2, "pipeline", "mlp", "sgd"},
      {"tp2_gpt", 2, "tensor_parallel", "gpt", "adamw"},
      {"dp2_pp2_mlp", 4, "data_parallel+pipeline", "mlp", "sgd"},
      {"dp2_tp2_pp2_gpt", 8, "data_parallel+pipeline+tensor_parallel", "gpt", "adamw"},
      {"serial_mlp8", 1, "single", "mlp", "sgd"},
  };
  for (const Want& want : wants) {
    SCOPED_TRACE(want.name);
    StatusOr<BundleCase> c = CaseNamed(want.name);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->bundle.world_size, want.world);
    EXPECT_EQ(c->ranks.size(), static_cast<size_t>(want.world));
    EXPECT_EQ(c->bundle.strategy.value("kind", ""), want.kind);
    EXPECT_EQ(c->bundle.strategy.value("model", ""), want.model);
    EXPECT_EQ(c->bundle.strategy.value("optimizer", ""), want.optimizer);
    if (want.world > 1) {
      EXPECT_EQ(c->bundle.strategy.value("world_size", 0), want.world);
    }
    EXPECT_EQ(c->bundle.seed, 2024);
    EXPECT_EQ(c->bundle.fetches, std::vector<std::string>{"mean_0.tmp_0"});
  }
}

TEST(CorpusTest, EveryCaseWritesABundleThatReadsBackAndValidates) {
  StatusOr<std::vector<BundleCase>> cases = CorpusCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  for (const BundleCase& c : *cases) {
    SCOPED_TRACE(c.name);
    ScratchDir dir("corpus_" + c.name);
    ASSERT_TRUE(WriteBundleCase(c, dir.path()).ok());
    StatusOr<oldir::Bundle> read = oldir::ReadBundle(dir.path());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->world_size, c.bundle.world_size);
    EXPECT_EQ(read->steps, c.recipe.steps);
    ASSERT_EQ(read->ranks.size(), c.ranks.size());
    for (const oldir::passes::RankPrograms& rank : c.ranks) {
      for (const oldir::Program* program : {&rank.startup, &rank.main}) {
        const Diagnostics findings = oldir::ValidateProgram(*program);
        EXPECT_FALSE(findings.HasErrors()) << findings.Render();
      }
    }
  }
}

// Paddle's legacy job lists for p = 2, m = 2 (python/paddle/distributed/passes/
// pipeline_scheduler_pass/pipeline_fthenb.py and pipeline_1f1b.py, `_create_job_list`): FThenB
// runs every forward, then every backward; 1F1B warms up with p - s forwards, then alternates.
// Legacy 1F1B's stage 0 sends micro-batch 1's activation while stage 1 sends micro-batch 0's
// gradient (Paddle PR #70360): its bundle records the buffered model with one message in flight.
TEST(CorpusTest, PipelinesCarryPaddlesJobListsAndThePointToPointModelTheyNeed) {
  ScratchDir fthenb_dir("corpus_fthenb");
  StatusOr<BundleCase> fthenb = CaseNamed("pp2_fthenb_mb2_mlp");
  ASSERT_TRUE(fthenb.ok()) << fthenb.status().ToString();
  ASSERT_TRUE(WriteBundleCase(*fthenb, fthenb_dir.path()).ok());
  StatusOr<oldir::Bundle> read = oldir::ReadBundle(fthenb_dir.path());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->micro_batches, 2);
  EXPECT_FALSE(read->p2p.has_value());
  const std::vector<oldir::PlanJob> all_forwards_first =
      Jobs({{"forward", 0}, {"forward", 1}, {"backward", 0}, {"backward", 1}, {"optimizer", 0}});
  for (const oldir::BundleRank& rank : read->ranks) EXPECT_EQ(rank.plan, all_forwards_first);

  ScratchDir one_f_one_b_dir("corpus_1f1b");
  StatusOr<BundleCase> one_f_one_b = CaseNamed("pp2_1f1b_mb2_mlp");
  ASSERT_TRUE(one_f_one_b.ok()) << one_f_one_b.status().ToString();
  ASSERT_TRUE(WriteBundleCase(*one_f_one_b, one_f_one_b_dir.path()).ok());
  read = oldir::ReadBundle(one_f_one_b_dir.path());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->p2p, schedules::P2pModel::Buffered(1));
  ASSERT_EQ(read->ranks.size(), 2u);
  EXPECT_EQ(read->ranks[0].plan, all_forwards_first);
  EXPECT_EQ(
      read->ranks[1].plan,
      Jobs({{"forward", 0}, {"backward", 0}, {"forward", 1}, {"backward", 1}, {"optimizer", 0}}));
  // The activations and their gradients cross the stages.
  EXPECT_GT(Count(one_f_one_b->ranks[0].jobs.at("forward"), "send_v2"), 0);
  EXPECT_GT(Count(one_f_one_b->ranks[1].jobs.at("forward"), "recv_v2"), 0);
}

// Data parallel: each gradient summed over the replicas (c_allreduce_sum); gradient merge adds the
// conditional block that applies the merged update every k_steps-th step.
TEST(CorpusTest, DataParallelAndGradientMergeCarryTheirCommunicationAndMerge) {
  StatusOr<BundleCase> dp = CaseNamed("dp2_mlp");
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  // 3 linears: a weight and a bias each.
  EXPECT_EQ(Count(dp->ranks[1].main, "c_allreduce_sum"), 6);
  StatusOr<BundleCase> gm = CaseNamed("dp2_gm2_mlp");
  ASSERT_TRUE(gm.ok()) << gm.status().ToString();
  EXPECT_EQ(gm->k_steps, 2);
  EXPECT_EQ(gm->bundle.steps % gm->k_steps, 0);
  EXPECT_EQ(Count(gm->ranks[0].main, "conditional_block"), 1);
  StatusOr<BundleCase> serial = CaseNamed("serial_mlp8");
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_EQ(Count(serial->ranks[0].main, "c_allreduce_sum"), 0);
}

TEST(CorpusTest, AnUnknownCaseIsNotFoundAndTheCasesAreListed) {
  StatusOr<BundleCase> c = CaseNamed("pp3_mlp");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("no corpus case 'pp3_mlp'"), std::string::npos);
  EXPECT_NE(c.status().message().find("dp2_tp2_pp2_gpt, serial_mlp8"), std::string::npos);
}

TEST(CorpusTest, TheNamedBuildersMakeTheCasesOfTheirNames) {
  StatusOr<BundleCase> dp4 = DataParallelMlp(4);
  ASSERT_TRUE(dp4.ok()) << dp4.status().ToString();
  EXPECT_EQ(dp4->name, "dp4_mlp");
  EXPECT_EQ(dp4->ranks.size(), 4u);
  StatusOr<BundleCase> serial = SerialMlp(16);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_EQ(serial->name, "serial_mlp16");
  EXPECT_EQ(serial->ranks.size(), 1u);
  EXPECT_FALSE(serial->recipe.strategy.has_value());
}

}  // namespace
}  // namespace irm::corpus
