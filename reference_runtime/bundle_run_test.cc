// What a bundle run refuses before it runs (bundle_run.h, multi_rank_run.h, run.h): feeds that no
// program reads, step counts and batch sizes that make no run, random feeds larger than memory;
// and that a multi-rank run tells a caller whether its ranks loaded before a failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "reference_runtime/bundle_run.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/plan_test_support.h"
#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

Tensor Zeros(std::vector<int64_t> shape) {
  return Tensor::ZerosUnchecked(DType::kFloat32, std::move(shape));
}

TEST(CheckFeedNamesTest, NamesTheUnknownFeedAndListsTheKnownOnes) {
  FeedMap feeds;
  feeds["x"] = Zeros({2, 4});
  EXPECT_TRUE(CheckFeedNames(feeds, {"label", "x"}, "the program").ok());
  EXPECT_TRUE(CheckFeedNames({}, {}, "the program").ok());
  feeds["lable"] = Zeros({2, 3});
  const Status typo = CheckFeedNames(feeds, {"label", "x"}, "the program");
  EXPECT_EQ(typo.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(typo.ToString(),
            "var 'lable': error: 'lable' is not a feed of the program (its feeds: label, x)");
  EXPECT_EQ(CheckFeedNames(feeds, {}, "rank 1 of the bundle").message(),
            "'lable' is not a feed of rank 1 of the bundle, which has none");
}

class BundleRunChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestDir("bundle_run_checks");
    StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(2);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    // One rank, x [-1, 4] and label [-1, 3] split by batch into 2 micro-batches, 2 steps.
    ASSERT_TRUE(testing::WriteGradMergeBundle(*model, testing::FThenBPlan(2), 2, 3, dir_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(BundleRunChecksTest, AFeedNoProgramReadsIsRefused) {
  BundleRunConfig config;
  config.feeds["x"] = Zeros({4, 4});
  config.feeds["labels"] = Zeros({4, 3});
  const Status status = BundleRankRunner::Load(dir_, config).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(), dir_ +
                                   ": var 'labels': error: 'labels' is not a feed of rank 0 of "
                                   "the bundle (its feeds: label, x)");
  // A caller that checks the names itself.
  config.check_feed_names = false;
  StatusOr<BundleRankRunner> runner = BundleRankRunner::Load(dir_, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_EQ(runner->feed_names(), (std::vector<std::string>{"label", "x"}));
}

TEST_F(BundleRunChecksTest, StepsBelowOneAreRefused) {
  BundleRunConfig config;
  config.random_feeds = true;
  config.steps = -1;
  const Status status = BundleRankRunner::Load(dir_, config).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "steps must be at least 1, got -1");
  config.steps = 0;  // the bundle's 2
  StatusOr<BundleRankRunner> runner = BundleRankRunner::Load(dir_, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_EQ(runner->steps(), 2);
}

TEST_F(BundleRunChecksTest, RandomFeedsThatCannotBeDrawnAreRefusedBeforeAnythingRuns) {
  BundleRunConfig config;
  config.random_feeds = true;
  for (int64_t batch : {0, -3}) {
    config.batch_size = batch;
    const Status status = BundleRankRunner::Load(dir_, config).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << batch;
    EXPECT_NE(status.message().find("batch size must be at least 1"), std::string::npos)
        << status.ToString();
  }
  // Far more than any machine's memory: a runtime failure, not an allocation that throws.
  config.batch_size = int64_t{1} << 40;
  const Status huge = BundleRankRunner::Load(dir_, config).status();
  EXPECT_EQ(huge.code(), StatusCode::kInternal) << huge.ToString();
  // With a given feed for both, the batch size draws nothing and does not matter.
  config.batch_size = 0;
  config.feeds["x"] = Zeros({4, 4});
  config.feeds["label"] = Zeros({4, 3});
  EXPECT_TRUE(BundleRankRunner::Load(dir_, config).ok());
}

TEST_F(BundleRunChecksTest, RankRunsCheckFeedNamesAndSayWhenTheRanksHaveLoaded) {
  MultiRankConfig config;
  bool loaded = false;
  config.on_loaded = [&loaded] { loaded = true; };
  config.rank_config.feeds["y"] = Zeros({4, 3});
  Status status = RunBundleRanks(dir_, config).status();
  EXPECT_EQ(status.ToString(),
            dir_ + ": var 'y': error: 'y' is not a feed of the bundle (its feeds: label, x)");
  EXPECT_FALSE(loaded);

  // Loaded, then failing while running: no feed for x.
  config.rank_config.feeds.clear();
  status = RunBundleRanks(dir_, config).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_TRUE(loaded);
}

}  // namespace
}  // namespace irm::rt
