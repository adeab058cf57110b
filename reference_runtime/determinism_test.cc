// Determinism of whole training runs (docs/architecture.md, invariant 2): a 2-layer GPT trained
// with AdamW for 3 steps (float32, attention dropout on, OpenBLAS GEMMs) gives bit-identical
// fetches and persistable vars run after run, at 1 and 2 BLAS threads; the reference GEMM likewise.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "oldir/models/gpt.h"
#include "oldir/models/training.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

struct RunOutcome {
  std::vector<Tensor> losses;
  std::map<std::string, Tensor> persistables;
};

RunOutcome TrainGpt(GemmMode gemm) {
  oldir::models::ModelPrograms gpt;
  EXPECT_TRUE(oldir::models::BuildGpt(
                  {.layers = 2, .hidden = 32, .heads = 4, .vocab = 64, .seq = 8, .seed = 3}, &gpt)
                  .ok());
  oldir::OptimizerOptions adamw;
  adamw.kind = oldir::OptimizerKind::kAdamW;
  EXPECT_TRUE(oldir::models::AddTraining(&gpt, adamw).ok());
  ExecutorOptions options;
  options.gemm = gemm;
  options.seed = 3;
  LegacyExecutor startup(gpt.startup.Build(), options);
  LegacyExecutor main(gpt.main.Build(), options);
  Scope scope;
  TrainingConfig config;
  config.steps = 3;
  config.random_feeds = true;
  config.seed = 9;
  // 160 x 8 = 1280 token rows: the projections' GEMMs span two 1024-row blocks, so the run at 2
  // BLAS threads really splits them (with fewer rows it would be one block, one thread).
  config.batch_size = 160;
  StatusOr<std::vector<StepResult>> steps = RunTraining(&startup, main, scope, config);
  EXPECT_TRUE(steps.ok()) << steps.status().ToString();
  RunOutcome outcome;
  if (!steps.ok()) return outcome;
  for (const StepResult& step : *steps) outcome.losses.push_back(step.fetches.at(0).tensor);
  for (const std::string& name : scope.LocalNames()) {
    outcome.persistables[name] = scope.Find(name)->Clone();
  }
  return outcome;
}

void ExpectBitIdentical(const RunOutcome& a, const RunOutcome& b, const std::string& what) {
  ASSERT_EQ(a.losses.size(), b.losses.size()) << what;
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_TRUE(a.losses[i].BitwiseEqual(b.losses[i])) << what << ": loss of step " << i + 1;
  }
  ASSERT_EQ(a.persistables.size(), b.persistables.size()) << what;
  for (const auto& [name, tensor] : a.persistables) {
    EXPECT_TRUE(tensor.BitwiseEqual(b.persistables.at(name))) << what << ": " << name;
  }
}

TEST(DeterminismTest, TrainingIsBitIdenticalRunAfterRunAndAtAnyBlasThreadCount) {
  const int threads = BlasThreads();
  const RunOutcome first = TrainGpt(GemmMode::kBlas);
  ASSERT_EQ(first.losses.size(), 3u);
  EXPECT_GT(first.persistables.size(), 20u);  // parameters, moments, beta powers, lr
  ExpectBitIdentical(first, TrainGpt(GemmMode::kBlas), "a second run");
  SetBlasThreads(2);
  ExpectBitIdentical(first, TrainGpt(GemmMode::kBlas), "2 BLAS threads");
  SetBlasThreads(threads);
  const RunOutcome reference = TrainGpt(GemmMode::kReference);
  ExpectBitIdentical(reference, TrainGpt(GemmMode::kReference), "the reference GEMM twice");
  // The two GEMMs are different computations of the same thing: close; and the loss falls.
  EXPECT_NEAR(testing::ToDoubles(reference.losses[0])[0], testing::ToDoubles(first.losses[0])[0],
              1e-4);
  EXPECT_LT(testing::ToDoubles(first.losses[2])[0], testing::ToDoubles(first.losses[0])[0]);
}

}  // namespace
}  // namespace irm::rt
