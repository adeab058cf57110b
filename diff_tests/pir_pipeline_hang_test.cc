// The hang class of Paddle's PR #70360 (1F1B) and #71104 (VPP) on pir bundles the new IR's
// pipeline split makes (pir_pipeline_bundle.h), with and without the recv_forward /
// send_backward split (docs/reference/pipelines.md §4.3: before the split, a stage ends
// `backward` by sending its gradient while its neighbour ends `forward` by sending the next
// activation — both send first, and a blocking send waits for good).
// - 1F1B pp2: without the split the schedule check names that cycle (stage 0's forward send of
//   micro-batch 1 against stage 1's backward send of micro-batch 0), CheckBundleCommunication
//   refuses the bundle and the run reports the hang with each rank's pending op; with the split
//   the order completes under rendezvous, runs, and computes the unsplit run's numbers (run
//   under the buffer it needs) bit for bit.
// - VPP pp2 v2: without the split the check names the cycle and the run reports it; with the
//   split the order still needs a buffer — the warm-up wraps chunk 0's last stage onto chunk 1's
//   first, where both ranks send first (docs/schedules.md, "Buffer depth each schedule needs":
//   the split fixes the steady phase, not the wrap-around) — and the check says how much; under
//   that depth both forms run and agree bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/corpus/bundle_comm_check.h"
#include "diff_tests/corpus/bundle_comm_program.h"
#include "diff_tests/pir_pipeline_bundle.h"
#include "reference_runtime/multi_rank_run.h"
#include "schedules/simulator.h"

namespace irm::diff {
namespace {

using schedules::P2pModel;

constexpr int kMicroBatches = 4;
constexpr int64_t kMicroRows = 2;

PirPipelineRecipe Recipe(const char* mode, int vpp, bool split) {
  PirPipelineRecipe recipe;
  recipe.model.model = corpus::ZooModel::kMlp;
  recipe.model.mlp.depth = 4;  // pp2 x vpp2 chunks of one linear layer each
  recipe.model.steps = 2;
  recipe.model.batch_size = kMicroRows * kMicroBatches;
  oldir::passes::Strategy strategy;
  strategy.pp_degree = 2;
  strategy.pipeline.enable = true;
  strategy.pipeline.schedule_mode = mode;
  strategy.pipeline.accumulate_steps = kMicroBatches;
  strategy.pipeline.vpp_degree = vpp;
  recipe.model.strategy = strategy;
  recipe.split_recv_send = split;
  return recipe;
}

StatusOr<rt::MultiRankResult> RunUnder(const std::string& dir, P2pModel p2p) {
  rt::MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.p2p = p2p;
  return rt::RunBundleRanks(dir, config);
}

StatusOr<schedules::SimResult> Check(const PirPipelineBundle& made, const std::string& dir,
                                     P2pModel p2p) {
  IRM_ASSIGN_OR_RETURN(const schedules::CommProgram program,
                       corpus::BundleCommProgram(made.bundle, dir));
  return schedules::Simulate(program, p2p);
}

::testing::AssertionResult SameBits(const rt::Tensor& a, const rt::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return ::testing::AssertionFailure() << a.Describe() << " vs " << b.Describe();
  }
  if (a.nbytes() > 0 && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "bits differ";
  }
  return ::testing::AssertionSuccess();
}

// Every fetch of every step and every tensor of every rank's scope, bit for bit.
void ExpectSameBits(const rt::MultiRankResult& a, const rt::MultiRankResult& b) {
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  int compared = 0;
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    ASSERT_EQ(a.ranks[r].steps.size(), b.ranks[r].steps.size());
    for (size_t s = 0; s < a.ranks[r].steps.size(); ++s) {
      const auto& x = a.ranks[r].steps[s].merged;
      const auto& y = b.ranks[r].steps[s].merged;
      ASSERT_EQ(x.size(), y.size());
      for (size_t f = 0; f < x.size(); ++f) {
        EXPECT_TRUE(SameBits(x[f].tensor, y[f].tensor))
            << "rank " << r << ", step " << s + 1 << ", fetch " << f;
        ++compared;
      }
    }
    const std::vector<std::string> names = a.ranks[r].scope->LocalNames();
    EXPECT_EQ(b.ranks[r].scope->LocalNames(), names) << "rank " << r;
    for (const std::string& name : names) {
      const rt::Tensor* x = a.ranks[r].scope->FindLocal(name);
      const rt::Tensor* y = b.ranks[r].scope->FindLocal(name);
      if (x == nullptr || y == nullptr || !x->defined()) continue;
      EXPECT_TRUE(SameBits(*x, *y)) << "rank " << r << ", " << name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 8);
}

// A rank of the cycle: waits in a pd_op.p_send of `job`, micro-batch `micro_batch`, for `peer`.
void ExpectSendWait(const schedules::Wait& wait, int rank, const std::string& job, int micro_batch,
                    int peer) {
  SCOPED_TRACE("rank " + std::to_string(rank));
  EXPECT_EQ(wait.rank, rank);
  EXPECT_EQ(wait.peer, peer);
  EXPECT_EQ(wait.step.kind, schedules::StepKind::kSend);
  EXPECT_EQ(wait.step.job, job);
  EXPECT_EQ(wait.step.micro_batch, micro_batch);
  EXPECT_TRUE(wait.step.op.starts_with("pd_op.p_send, op ")) << wait.step.op;
}

TEST(PirPipelineHangTest, Unsplit1F1BHangsBothSendingFirstAndTheSplitRuns) {
  ScratchDir unsplit_dir("pir_1f1b_unsplit");
  ScratchDir split_dir("pir_1f1b_split");
  StatusOr<PirPipelineBundle> unsplit =
      WritePirPipelineBundle(Recipe("1F1B", 1, false), unsplit_dir.path());
  ASSERT_TRUE(unsplit.ok()) << unsplit.status().ToString();
  StatusOr<PirPipelineBundle> split =
      WritePirPipelineBundle(Recipe("1F1B", 1, true), split_dir.path());
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  // The job lists of test_pir_1f1b_plan.py before and after #70360.
  EXPECT_EQ(unsplit->bundle.ranks[0].programs.count("recv_forward"), 0u);
  EXPECT_EQ(split->bundle.ranks[0].programs.count("recv_forward"), 1u);

  // Without the split: stage 0 sends micro-batch 1's activation at the end of its second
  // forward while stage 1 sends micro-batch 0's gradient at the end of its first backward.
  StatusOr<schedules::SimResult> cycle = Check(*unsplit, unsplit_dir.path(), P2pModel());
  ASSERT_TRUE(cycle.ok()) << cycle.status().ToString();
  ASSERT_EQ(cycle->outcome, schedules::SimOutcome::kDeadlock) << cycle->diagnostic;
  ASSERT_EQ(cycle->waits.size(), 2u) << cycle->diagnostic;
  ExpectSendWait(cycle->waits[0], 0, "forward", 1, 1);
  ExpectSendWait(cycle->waits[1], 1, "backward", 0, 0);
  EXPECT_EQ(unsplit->min_buffer_depth, 1);
  const Status refused =
      corpus::CheckBundleCommunication(unsplit->bundle, unsplit_dir.path(), P2pModel());
  EXPECT_EQ(refused.code(), StatusCode::kInvalid);
  EXPECT_EQ(refused.message(), cycle->diagnostic);

  StatusOr<rt::MultiRankResult> hung = RunUnder(unsplit_dir.path(), P2pModel());
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().code(), StatusCode::kInternal);
  const std::string& hang = hung.status().message();
  EXPECT_TRUE(hang.starts_with("hang: ")) << hang;
  EXPECT_NE(hang.find("rank 0 waits in pd_op.p_send to rank 1 (ring 0, job forward, "
                      "micro-batch 1"),
            std::string::npos)
      << hang;
  EXPECT_NE(hang.find("rank 1 waits in pd_op.p_send to rank 0 (ring 1, job backward, "
                      "micro-batch 0"),
            std::string::npos)
      << hang;

  // With the split: no cycle, no buffer, and the numbers of the unsplit order.
  EXPECT_EQ(split->min_buffer_depth, 0);
  EXPECT_TRUE(corpus::CheckBundleCommunication(split->bundle, split_dir.path(), P2pModel()).ok());
  StatusOr<rt::MultiRankResult> buffered = RunUnder(unsplit_dir.path(), P2pModel::Buffered(1));
  ASSERT_TRUE(buffered.ok()) << buffered.status().ToString();
  StatusOr<rt::MultiRankResult> ran = RunUnder(split_dir.path(), P2pModel());
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  ExpectSameBits(*buffered, *ran);
}

TEST(PirPipelineHangTest, UnsplitVppHangsAndTheSplitSaysHowMuchBufferItNeeds) {
  ScratchDir unsplit_dir("pir_vpp_unsplit");
  ScratchDir split_dir("pir_vpp_split");
  StatusOr<PirPipelineBundle> unsplit =
      WritePirPipelineBundle(Recipe("VPP", 2, false), unsplit_dir.path());
  ASSERT_TRUE(unsplit.ok()) << unsplit.status().ToString();
  StatusOr<PirPipelineBundle> split =
      WritePirPipelineBundle(Recipe("VPP", 2, true), split_dir.path());
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(unsplit->bundle.ranks[0].programs.count("recv_forward1"), 0u);
  EXPECT_EQ(split->bundle.ranks[0].programs.count("recv_forward1"), 1u);

  for (const auto* made : {&*unsplit, &*split}) {
    const std::string& dir = made == &*unsplit ? unsplit_dir.path() : split_dir.path();
    SCOPED_TRACE(dir);
    // The warm-up's wrap-around: stage 0 sends micro-batch 1's chunk-0 activation on while
    // stage 1 sends micro-batch 0's chunk-0 output back to stage 0's chunk 1; both send first.
    StatusOr<schedules::SimResult> cycle = Check(*made, dir, P2pModel());
    ASSERT_TRUE(cycle.ok()) << cycle.status().ToString();
    ASSERT_EQ(cycle->outcome, schedules::SimOutcome::kDeadlock) << cycle->diagnostic;
    ASSERT_EQ(cycle->waits.size(), 2u) << cycle->diagnostic;
    ExpectSendWait(cycle->waits[0], 0, "forward0", 1, 1);
    ExpectSendWait(cycle->waits[1], 1, "forward0", 0, 0);
    // docs/passes.md ("The PIR form"): the mlp's VPP pp2 v2 needs a buffer of 2 in both forms.
    EXPECT_EQ(made->min_buffer_depth, 2);
    const Status refused = corpus::CheckBundleCommunication(made->bundle, dir, P2pModel());
    EXPECT_EQ(refused.code(), StatusCode::kInvalid);
    EXPECT_EQ(refused.message(), cycle->diagnostic);
    ASSERT_EQ(refused.diagnostic().notes.size(), 1u);
    EXPECT_TRUE(refused.diagnostic().notes[0].starts_with("the order needs buffer depth 2"))
        << refused.diagnostic().notes[0];
    EXPECT_TRUE(corpus::CheckBundleCommunication(made->bundle, dir, P2pModel::Buffered(2)).ok());
  }

  StatusOr<rt::MultiRankResult> hung = RunUnder(unsplit_dir.path(), P2pModel());
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().code(), StatusCode::kInternal);
  const std::string& hang = hung.status().message();
  EXPECT_TRUE(hang.starts_with("hang: ")) << hang;
  EXPECT_NE(hang.find("rank 0 waits in pd_op.p_send to rank 1 (ring 0, job forward0, "
                      "micro-batch 1"),
            std::string::npos)
      << hang;
  EXPECT_NE(hang.find("rank 1 waits in pd_op.p_send to rank 0 (ring 1, job forward0, "
                      "micro-batch 0"),
            std::string::npos)
      << hang;

  StatusOr<rt::MultiRankResult> a = RunUnder(unsplit_dir.path(), P2pModel::Buffered(2));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  StatusOr<rt::MultiRankResult> b = RunUnder(split_dir.path(), P2pModel::Buffered(2));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectSameBits(*a, *b);
}

TEST(PirPipelineHangTest, RefusesAStrategyWithoutAPipeline) {
  ScratchDir dir("pir_no_pipeline");
  PirPipelineRecipe recipe = Recipe("1F1B", 1, true);
  recipe.model.strategy->pipeline.enable = false;
  StatusOr<PirPipelineBundle> made = WritePirPipelineBundle(recipe, dir.path());
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace irm::diff
