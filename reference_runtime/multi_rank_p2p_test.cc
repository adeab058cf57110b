// Every rank of a pipeline bundle under the two point-to-point models: the corpus's 2-stage MLP
// pipeline (2 micro-batches) under the legacy 1F1B plan (pp2_1f1b_mb2_mlp) hangs under rendezvous
// in the pattern of Paddle's 1F1B deadlock (PR #70360) — stage 0 sends micro-batch 1's activation
// while stage 1 sends micro-batch 0's gradient — and runs under buffered, with the FThenB plan's
// losses and parameters bit for bit.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/corpus/corpus.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::rt {
namespace {

using schedules::P2pModel;

std::vector<oldir::PlanJob> Jobs(const std::vector<std::pair<std::string, int>>& jobs) {
  std::vector<oldir::PlanJob> plan;
  for (const auto& [type, micro_batch] : jobs) plan.push_back({type, micro_batch});
  return plan;
}

// The legacy 1F1B job lists for p = 2, m = 2, written by hand from Paddle's old-IR pass
// (python/paddle/distributed/passes/pipeline_scheduler_pass/pipeline_1f1b.py, `_create_job_list`:
// p - s warm-up forwards, [backward, forward] pairs, the remaining backwards, the optimizer with
// micro-batch 0; test/standalone_executor/test_standalone_executor_1f1b_plan.py pins it for p=4).
std::vector<oldir::PlanJob> Legacy1F1B(int stage) {
  if (stage == 0) {
    return Jobs(
        {{"forward", 0}, {"forward", 1}, {"backward", 0}, {"backward", 1}, {"optimizer", 0}});
  }
  return Jobs({{"forward", 0}, {"backward", 0}, {"forward", 1}, {"backward", 1}, {"optimizer", 0}});
}

StatusOr<MultiRankResult> RunUnder(const std::string& dir, P2pModel p2p) {
  MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.p2p = p2p;  // the model under test, not the one bundle.json records
  return RunBundleRanks(dir, config);
}

::testing::AssertionResult SameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return ::testing::AssertionFailure() << a.Describe() << " vs " << b.Describe();
  }
  if (a.nbytes() > 0 && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "bits differ";
  }
  return ::testing::AssertionSuccess();
}

class PipelineP2pTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<corpus::BundleCase> fthenb = corpus::CaseNamed("pp2_fthenb_mb2_mlp");
    ASSERT_TRUE(fthenb.ok()) << fthenb.status().ToString();
    ASSERT_TRUE(corpus::WriteBundleCase(*fthenb, fthenb_.path()).ok());
    StatusOr<corpus::BundleCase> one_f_one_b = corpus::CaseNamed("pp2_1f1b_mb2_mlp");
    ASSERT_TRUE(one_f_one_b.ok()) << one_f_one_b.status().ToString();
    // The pipeline pass wrote Paddle's legacy lists.
    ASSERT_EQ(one_f_one_b->ranks.size(), 2u);
    for (int stage : {0, 1}) {
      ASSERT_EQ(one_f_one_b->ranks[static_cast<size_t>(stage)].plan, Legacy1F1B(stage));
    }
    ASSERT_TRUE(corpus::WriteBundleCase(*one_f_one_b, one_f_one_b_.path()).ok());
  }

  ScratchDir fthenb_{"fthenb"};
  ScratchDir one_f_one_b_{"1f1b"};
};

TEST_F(PipelineP2pTest, Legacy1F1BHangsUnderRendezvousNamingBothSends) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<MultiRankResult> run = RunUnder(one_f_one_b_.path(), P2pModel::Rendezvous());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInternal);
  EXPECT_EQ(run.status().message(),
            "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, job forward, "
            "micro-batch 1, step 1, op 5); rank 1 waits in send_v2 to rank 0 (ring 1, job "
            "backward, micro-batch 0, step 1, op 13)");
}

TEST_F(PipelineP2pTest, Legacy1F1BUnderBufferedEqualsFThenBBitForBit) {
  StatusOr<MultiRankResult> reference = RunUnder(fthenb_.path(), P2pModel::Rendezvous());
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (int depth : {1, 2}) {
    SCOPED_TRACE("buffered=" + std::to_string(depth));
    for (const std::string& dir : {one_f_one_b_.path(), fthenb_.path()}) {
      SCOPED_TRACE(dir);
      StatusOr<MultiRankResult> run = RunUnder(dir, P2pModel::Buffered(depth));
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      int fetched = 0;
      int params = 0;
      for (size_t r = 0; r < 2; ++r) {
        const RankOutcome& a = reference->ranks[r];
        const RankOutcome& b = run->ranks[r];
        ASSERT_EQ(a.steps.size(), b.steps.size());
        for (size_t s = 0; s < a.steps.size(); ++s) {
          ASSERT_EQ(a.steps[s].merged.size(), b.steps[s].merged.size());
          for (size_t f = 0; f < a.steps[s].merged.size(); ++f) {
            EXPECT_TRUE(SameBits(a.steps[s].merged[f].tensor, b.steps[s].merged[f].tensor))
                << "rank " << r << " step " << s << " " << a.steps[s].merged[f].name;
            ++fetched;
          }
        }
        for (const std::string& name : a.scope->LocalNames()) {
          const Tensor* x = a.scope->FindLocal(name);
          const Tensor* y = b.scope->FindLocal(name);
          ASSERT_NE(y, nullptr) << name;
          if (!x->defined()) continue;
          EXPECT_TRUE(SameBits(*x, *y)) << "rank " << r << " " << name;
          ++params;
        }
      }
      EXPECT_GE(fetched, 3);  // the loss of every step, on the last stage
      EXPECT_GE(params, 4);
    }
  }
}

}  // namespace
}  // namespace irm::rt
