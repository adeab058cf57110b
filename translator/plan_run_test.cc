// A legacy bundle whose rank runs a pipeline plan (forward, backward and optimizer jobs of a
// gradient-merge model over 2 and 4 micro-batches) and its translation run on their own executors
// (reference_runtime/bundle_run.h): every step's fetches per micro-batch and every parameter after
// training are bit-identical. The translated jobs hand values on through builtin.shadow_output and
// pd_op.data, the legacy ones through the vars of the micro-batch scope.
#include <gtest/gtest.h>

#include <filesystem>

#include "reference_runtime/bundle_run.h"
#include "reference_runtime/plan_test_support.h"
#include "translator/bundle_translate.h"

namespace irm::translator {
namespace {

namespace fs = std::filesystem;

struct RankRun {
  rt::Scope root;
  std::vector<rt::PlanStepResult> steps;
  bool new_ir = false;
};

void RunRank(const std::string& dir, RankRun* out) {
  rt::BundleRunConfig config;
  config.random_feeds = true;
  config.batch_size = 8;
  StatusOr<rt::BundleRankRunner> runner = rt::BundleRankRunner::Load(dir, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  out->new_ir = runner->new_ir();
  StatusOr<std::vector<rt::PlanStepResult>> steps = runner->Run(out->root);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  out->steps = std::move(steps).value();
}

class PlanRunTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { dir_ = rt::testing::TestDir("plan_run"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_P(PlanRunTest, LegacyAndTranslatedPlansRunBitIdentically) {
  const int m = GetParam();
  StatusOr<rt::testing::GradMergeModel> model = rt::testing::BuildGradMergeModel(m);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::string legacy = dir_ + "/legacy", pir = dir_ + "/pir";
  ASSERT_TRUE(
      rt::testing::WriteGradMergeBundle(*model, rt::testing::FThenBPlan(m), 3, 17, legacy).ok());
  StatusOr<BundleTranslation> translated = TranslateBundle(legacy, pir);
  ASSERT_TRUE(translated.ok()) << translated.status().ToString();

  RankRun old_run, new_run;
  RunRank(legacy, &old_run);
  RunRank(pir, &new_run);
  EXPECT_FALSE(old_run.new_ir);
  EXPECT_TRUE(new_run.new_ir);
  ASSERT_EQ(old_run.steps.size(), 3u);
  ASSERT_EQ(new_run.steps.size(), 3u);
  for (size_t s = 0; s < old_run.steps.size(); ++s) {
    SCOPED_TRACE(s);
    const rt::PlanStepResult& a = old_run.steps[s];
    const rt::PlanStepResult& b = new_run.steps[s];
    ASSERT_EQ(a.merged.size(), 1u);
    ASSERT_EQ(b.merged.size(), 1u);
    EXPECT_EQ(a.merged[0].name, model->loss);
    EXPECT_EQ(b.merged[0].name, model->loss);
    EXPECT_EQ(a.merged[0].tensor.shape(), (std::vector<int64_t>{m}));
    EXPECT_TRUE(a.merged[0].tensor.BitwiseEqual(b.merged[0].tensor));
  }
  for (const oldir::ParamGrad& pg : model->params_grads) {
    SCOPED_TRACE(pg.param);
    const rt::Tensor* a = old_run.root.Find(pg.param);
    const rt::Tensor* b = new_run.root.Find(pg.param);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(a->BitwiseEqual(*b));
  }
  // The losses moved with training: the runs did not compare constant values.
  EXPECT_FALSE(old_run.steps[0].merged[0].tensor.BitwiseEqual(old_run.steps[2].merged[0].tensor));
}

INSTANTIATE_TEST_SUITE_P(MicroBatches, PlanRunTest, ::testing::Values(2, 4));

}  // namespace
}  // namespace irm::translator
