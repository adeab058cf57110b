// Whole-program gradient checks on the real kernels: the model zoo's MLP and a 1-layer GPT, built
// by the legacy builder, promoted to float64 (oldir/float64_shadow.h) and run by the
// LegacyExecutor. The parameter gradients append_backward computes must match central finite
// differences of the loss to 1e-6 (normwise, per parameter); then three SGD steps must move each
// parameter by exactly -lr times the gradient the executor reported. Dropout keeps the same mask
// in every evaluation (its draws depend only on seed, op identity and element index), so the loss
// is a smooth function of the parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "oldir/backward.h"
#include "oldir/float64_shadow.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

using testing::ToDoubles;

// The model's main program with backward and fetch ops for the loss and every parameter's
// gradient (no optimizer), and its startup program, both in float64.
struct GradProgram {
  oldir::Program main;
  oldir::Program startup;
  std::vector<oldir::ParamGrad> params;
};

GradProgram WithGradFetches(oldir::models::ModelPrograms& model) {
  StatusOr<std::vector<oldir::ParamGrad>> params = oldir::AppendBackward(model.main, model.loss);
  EXPECT_TRUE(params.ok()) << params.status().ToString();
  oldir::BlockBuilder& root = model.main.root();
  root.CreateTypedVar("fetch", oldir::proto::VarType::FETCH_LIST, /*persistable=*/true);
  std::vector<std::string> fetches = {model.loss};
  for (const oldir::ParamGrad& pg : *params) fetches.push_back(pg.grad);
  for (size_t col = 0; col < fetches.size(); ++col) {
    root.AppendOp("fetch", {{"X", {fetches[col]}}}, {{"Out", {"fetch"}}},
                  {{"col", static_cast<int32_t>(col)}});
  }
  GradProgram out{model.main.Build(), model.startup.Build(), *params};
  oldir::PromoteToFloat64(out.main);
  oldir::PromoteToFloat64(out.startup);
  return out;
}

ExecutorOptions Options(uint64_t seed) {
  ExecutorOptions options;
  options.seed = seed;
  options.gemm = GemmMode::kReference;
  options.file = "model";
  return options;
}

FeedMap RandomFeeds(const Executor& main, int64_t batch) {
  FeedMap feeds;
  for (const FeedSpec& spec : main.FeedSpecs()) feeds[spec.name] = RandomFeed(spec, 5, 1, batch);
  return feeds;
}

double Loss(Executor& main, Scope& scope, const FeedMap& feeds) {
  StatusOr<std::vector<Fetch>> out = main.Run(scope, feeds);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? ToDoubles(out->front().tensor)[0] : NAN;
}

// Checks every parameter's gradient against central differences (at most `per_param` elements
// of each, spread over the tensor), normwise to `tolerance`.
void CheckGradients(oldir::models::ModelPrograms& model, int per_param, double tolerance) {
  GradProgram program = WithGradFetches(model);
  ASSERT_FALSE(program.params.empty());
  LegacyExecutor startup(program.startup, Options(model.seed));
  LegacyExecutor main(program.main, Options(model.seed));
  ASSERT_TRUE(main.plan_status().ok()) << main.plan_status().ToString();
  Scope scope;
  ASSERT_TRUE(startup.Run(scope, {}).ok());
  const FeedMap feeds = RandomFeeds(main, 3);
  StatusOr<std::vector<Fetch>> fetched = main.Run(scope, feeds);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->size(), program.params.size() + 1);
  int vanishing = 0;
  for (size_t p = 0; p < program.params.size(); ++p) {
    const std::string& name = program.params[p].param;
    const std::vector<double> grad = ToDoubles((*fetched)[p + 1].tensor);
    Tensor* param = scope.Find(name);
    ASSERT_NE(param, nullptr) << name;
    ASSERT_EQ(param->dtype(), DType::kFloat64);
    const int64_t n = param->numel();
    const int64_t stride = std::max<int64_t>(1, n / per_param);
    double diff_sq = 0, ref_sq = 0, grad_sq = 0;
    for (int64_t i = 0; i < n; i += stride) {
      double* value = param->data<double>() + i;
      const double saved = *value;
      const double h = 1e-5 * std::max(1.0, std::abs(saved));
      *value = saved + h;
      const double up = Loss(main, scope, feeds);
      *value = saved - h;
      const double down = Loss(main, scope, feeds);
      *value = saved;
      const double numeric = (up - down) / (2 * h);
      diff_sq += (grad[i] - numeric) * (grad[i] - numeric);
      ref_sq += numeric * numeric;
      grad_sq += grad[i] * grad[i];
    }
    // A parameter whose gradient vanishes identically (attention's key bias: adding it shifts
    // every score of a query by the same amount, which softmax ignores) must vanish in both.
    constexpr double kVanishing = 1e-9;
    if (std::sqrt(ref_sq) < kVanishing) {
      EXPECT_LT(std::sqrt(grad_sq), kVanishing) << name;
      ++vanishing;
      continue;
    }
    EXPECT_LE(std::sqrt(diff_sq / ref_sq), tolerance) << name;
  }
  EXPECT_LT(vanishing, 2) << "more than one parameter has no gradient: nothing was checked there";
}

TEST(GradientCheckTest, MlpGradientsMatchFiniteDifferences) {
  for (auto activation : {oldir::models::MlpActivation::kTanh, oldir::models::MlpActivation::kGelu,
                          oldir::models::MlpActivation::kSigmoid}) {
    oldir::models::ModelPrograms mlp;
    ASSERT_TRUE(oldir::models::BuildMlp({.depth = 3,
                                         .in_features = 5,
                                         .width = 6,
                                         .classes = 4,
                                         .activation = activation,
                                         .seed = 7},
                                        &mlp)
                    .ok());
    CheckGradients(mlp, /*per_param=*/40, 1e-6);
  }
  oldir::models::ModelPrograms mse;
  ASSERT_TRUE(
      oldir::models::BuildMlp({.depth = 2, .loss = oldir::models::MlpLoss::kMse, .seed = 3}, &mse)
          .ok());
  CheckGradients(mse, 40, 1e-6);
}

TEST(GradientCheckTest, OneLayerGptGradientsMatchFiniteDifferences) {
  oldir::models::ModelPrograms gpt;
  ASSERT_TRUE(
      oldir::models::BuildGpt(
          {.layers = 1, .hidden = 8, .heads = 2, .vocab = 11, .seq = 4, .dropout = 0.1f, .seed = 5},
          &gpt)
          .ok());
  CheckGradients(gpt, /*per_param=*/12, 1e-6);
}

// Three SGD steps of the float64 MLP: each step moves every parameter by exactly -lr * grad, the
// gradient being the one the same step's backward pass computed (checked above against finite
// differences), and the loss goes down.
TEST(GradientCheckTest, SgdStepsApplyTheCheckedGradients) {
  oldir::models::ModelPrograms mlp;
  ASSERT_TRUE(oldir::models::BuildMlp({.depth = 2, .seed = 11}, &mlp).ok());
  GradProgram grads = WithGradFetches(mlp);
  oldir::models::ModelPrograms train;
  ASSERT_TRUE(oldir::models::BuildMlp({.depth = 2, .seed = 11}, &train).ok());
  const float lr = 0.5f;
  ASSERT_TRUE(
      oldir::models::AddTraining(&train, {.kind = oldir::OptimizerKind::kSgd, .learning_rate = lr})
          .ok());
  oldir::Program train_main = train.main.Build();
  oldir::Program train_startup = train.startup.Build();
  oldir::PromoteToFloat64(train_main);
  oldir::PromoteToFloat64(train_startup);
  LegacyExecutor grad_main(grads.main, Options(11));
  LegacyExecutor startup(train_startup, Options(11));
  LegacyExecutor step(train_main, Options(11));
  Scope scope;
  ASSERT_TRUE(startup.Run(scope, {}).ok());
  const FeedMap feeds = RandomFeeds(step, 4);
  double previous_loss = INFINITY;
  for (int s = 0; s < 3; ++s) {
    StatusOr<std::vector<Fetch>> g = grad_main.Run(scope, feeds);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    std::vector<std::vector<double>> before;
    for (const oldir::ParamGrad& pg : grads.params)
      before.push_back(ToDoubles(*scope.Find(pg.param)));
    const double loss = ToDoubles(g->front().tensor)[0];
    EXPECT_LT(loss, previous_loss);
    previous_loss = loss;
    ASSERT_TRUE(step.Run(scope, feeds).ok());
    for (size_t p = 0; p < grads.params.size(); ++p) {
      const std::vector<double> grad = ToDoubles((*g)[p + 1].tensor);
      const std::vector<double> after = ToDoubles(*scope.Find(grads.params[p].param));
      for (size_t i = 0; i < after.size(); ++i) {
        // The learning rate is the float32 constant the program holds, promoted exactly.
        EXPECT_EQ(after[i], before[p][i] - static_cast<double>(lr) * grad[i])
            << grads.params[p].param << "[" << i << "] step " << s + 1;
      }
    }
  }
}

}  // namespace
}  // namespace irm::rt
