// The legacy gradient-merge pass (oldir/passes/gradient_merge.h) against the serial run: a zoo
// training program (mlp, gpt with 2 layers; SGD and AdamW) merged over k = 2 and k = 4 steps with
// avg, run k executor steps on micro-batches b_1..b_k, updates the parameters and the optimizer
// state as one serial step on the concatenated batch does, from the same initial parameters,
// within the reordered tier (docs/parity.md); the first k - 1 steps leave them bit for bit as
// they were. Two rounds run, so that the buffers' reset and the counter's wrap are exercised.
//
// The serial loss is the mean over the whole batch; the merged program fetches each micro-batch's
// mean, and Paddle's tests average those themselves (np.mean of the fetched losses in
// test/auto_parallel/gradient_merge_pass_unittest.py and test_dist_gradient_merge*): equal in
// exact arithmetic for micro-batches of equal size.
//
// Where the reordered tier fails, an fp64 shadow of the serial run arbitrates (the noise-floor
// tier of docs/parity.md): gpt's key-projection biases have an exactly zero gradient (softmax
// ignores what a key bias adds to every score of a row), so their fp32 values in both runs are
// rounding noise, which AdamW even scales up to learning-rate size. The noise-floor tier's 2x
// (the merged run's error against the shadow at most twice the serial run's) is a bound on
// rounding noise in a value; AdamW's second moment holds the *square* of such a gradient, whose
// noise ratio is the square: where the shadow shows the serial value to be nothing but noise
// (its error at least half its norm), the factor is squared too. The arbitrated tensors are
// printed and recorded as the test's `noise_floor` property.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "diff_tests/serial_reference_test_support.h"
#include "diff_tests/tensor_compare.h"
#include "oldir/float64_shadow.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/passes/gradient_merge.h"
#include "oldir/validator.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/legacy_executor.h"

namespace irm::diff {
namespace {

using irm::DType;
using rt::FeedMap;
using rt::Scope;
using rt::Tensor;

constexpr int64_t kMicroBatch = 2;
constexpr int kRounds = 2;

using Case = ZooCase;  // degree: k_steps

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return ZooCaseName(info.param, "k");
}

// The serial program's persistable state (parameters, learning rate, optimizer accumulators):
// what the merged run must reproduce. Names of the gradient-merge vars never appear here.
std::map<std::string, Tensor> Snapshot(Scope& scope, const std::vector<std::string>& names) {
  std::map<std::string, Tensor> copy;
  for (const std::string& name : names) {
    const Tensor* t = scope.FindLocal(name);
    if (t != nullptr && t->defined())
      copy.emplace(name, t->Clone());  // not a view: kernels write in place
  }
  return copy;
}

FeedMap WidenFeeds(const FeedMap& feeds) {
  FeedMap wide;
  for (const auto& [name, tensor] : feeds) wide[name] = ToFloat64(tensor);
  return wide;
}

class GradientMergePassTest : public ::testing::TestWithParam<Case> {};

TEST_P(GradientMergePassTest, KMicroStepsMatchOneSerialStepOfTheGlobalBatch) {
  const Case c = GetParam();
  const int k = c.degree;

  oldir::models::ModelPrograms serial_model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &serial_model).ok());
  const oldir::Program serial_main = serial_model.main.Build();
  const oldir::Program serial_startup = serial_model.startup.Build();

  oldir::models::ModelPrograms gm_model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &gm_model).ok());
  oldir::Program gm_main = gm_model.main.Build();
  oldir::Program gm_startup = gm_model.startup.Build();
  oldir::passes::GradientMergeOptions options;
  options.k_steps = k;
  options.avg = true;
  const Status applied = oldir::passes::ApplyGradientMerge(gm_main, gm_startup, options);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  const Diagnostics findings = oldir::ValidateProgram(gm_main);
  ASSERT_FALSE(findings.HasErrors()) << findings.Render();

  oldir::Program shadow_main = serial_main;
  oldir::PromoteToFloat64(shadow_main);

  rt::ExecutorOptions eo;
  eo.seed = static_cast<uint64_t>(serial_model.seed);
  rt::LegacyExecutor serial_init(serial_startup, eo);
  rt::LegacyExecutor serial_step(serial_main, eo);
  rt::LegacyExecutor gm_init(gm_startup, eo);
  rt::LegacyExecutor gm_step(gm_main, eo);
  rt::LegacyExecutor shadow_step(shadow_main, eo);
  for (const rt::LegacyExecutor* e :
       {&serial_init, &serial_step, &gm_init, &gm_step, &shadow_step}) {
    ASSERT_TRUE(e->plan_status().ok()) << e->plan_status().ToString();
  }

  Scope serial_scope, gm_scope;
  ASSERT_TRUE(serial_init.Run(serial_scope, {}).ok());
  ASSERT_TRUE(gm_init.Run(gm_scope, {}).ok());
  const std::vector<std::string> state = serial_scope.LocalNames();
  ASSERT_FALSE(state.empty());
  // Same initial parameters: the pass adds initialisers after the model's, changing none.
  for (const auto& [name, tensor] : Snapshot(serial_scope, state)) {
    ASSERT_NE(gm_scope.FindLocal(name), nullptr) << name;
    ASSERT_TRUE(SameBits(*gm_scope.FindLocal(name), tensor)) << name;
  }

  // The shadow starts from the serial run's initial state, widened.
  Scope shadow_scope;
  for (const auto& [name, tensor] : Snapshot(serial_scope, state)) {
    shadow_scope.Set(name, ToFloat64(tensor));
  }

  FeedValues values(20261127);
  std::set<std::string> arbitrated;
  const std::vector<rt::FeedSpec> specs = serial_step.FeedSpecs();
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round + 1));
    const FeedMap global = GlobalFeedBatch(specs, kMicroBatch * k, values);
    StatusOr<std::vector<rt::Fetch>> serial_fetch = serial_step.Run(serial_scope, global);
    ASSERT_TRUE(serial_fetch.ok()) << serial_fetch.status().ToString();
    StatusOr<std::vector<rt::Fetch>> shadow_fetch =
        shadow_step.Run(shadow_scope, WidenFeeds(global));
    ASSERT_TRUE(shadow_fetch.ok()) << shadow_fetch.status().ToString();

    const std::map<std::string, Tensor> before = Snapshot(gm_scope, state);
    float loss_sum = 0.0f;
    for (int micro = 0; micro < k; ++micro) {
      SCOPED_TRACE("micro-step " + std::to_string(micro + 1));
      StatusOr<std::vector<rt::Fetch>> fetched =
          gm_step.Run(gm_scope, FeedRows(global, micro * kMicroBatch, kMicroBatch));
      ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
      ASSERT_EQ(fetched->size(), 1u);
      loss_sum += Scalar((*fetched)[0].tensor);
      if (micro + 1 == k) break;
      // Before the k-th step the optimizer has not run: nothing it owns moved.
      for (const auto& [name, tensor] : before) {
        EXPECT_TRUE(SameBits(*gm_scope.FindLocal(name), tensor)) << name << " changed early";
      }
    }

    // The loss: the mean of the micro-batches' means against the whole batch's mean.
    const Tensor merged_loss =
        Tensor::FromVector(std::vector<float>{loss_sum * (1.0f / static_cast<float>(k))},
                           (*serial_fetch)[0].tensor.shape());
    const Comparison loss =
        CompareTensors(merged_loss, (*serial_fetch)[0].tensor, Tier::kReordered);
    EXPECT_TRUE(loss.pass) << "loss: " << loss.reason;

    // Every parameter and every piece of optimizer state.
    int moved = 0;
    for (const auto& [name, tensor] : Snapshot(serial_scope, state)) {
      const Tensor* merged = gm_scope.FindLocal(name);
      ASSERT_NE(merged, nullptr) << name;
      const Arbitration verdict = AgainstSerial(*merged, tensor, shadow_scope.FindLocal(name));
      EXPECT_NE(verdict.agreement, Agreement::kMismatch) << name << ": " << verdict.reason;
      if (verdict.agreement == Agreement::kNoiseFloor) arbitrated.insert(name);
      if (verdict.agreement == Agreement::kNoSignal) arbitrated.insert(name + " (all noise)");
      if (!SameBits(*merged, before.at(name))) ++moved;
    }
    EXPECT_GT(moved, 0);  // the k-th step did update

    // The buffers are reset and the counter wrapped to 0.
    for (const std::string& name : gm_scope.LocalNames()) {
      if (name.find(oldir::passes::kGradientMergeSuffix) == std::string::npos) continue;
      const Tensor* buffer = gm_scope.FindLocal(name);
      const Tensor zeros = Tensor::ZerosUnchecked(buffer->dtype(), buffer->shape());
      EXPECT_TRUE(SameBits(*buffer, zeros)) << name << " not reset";
    }
    const Tensor* step = gm_scope.FindLocal(oldir::passes::kGradientMergeStep);
    ASSERT_NE(step, nullptr);
    int32_t counter = -1;
    std::memcpy(&counter, step->raw(), sizeof counter);
    EXPECT_EQ(counter, 0);
  }
  // Only what the shadow explains may need it: gpt's key biases (linear_1 in block 0, linear_7
  // in block 1) and their AdamW moments; never a tensor of the mlp.
  for (const std::string& name : arbitrated) {
    const bool key_bias = name.rfind("linear_1.b_0", 0) == 0 || name.rfind("linear_7.b_0", 0) == 0;
    EXPECT_TRUE(std::string(c.model) == "gpt" && key_bias) << name << " needed arbitration";
  }
  if (!arbitrated.empty()) {
    std::string names;
    for (const std::string& name : arbitrated) names += (names.empty() ? "" : ", ") + name;
    std::cout << "noise-floor arbitration: " << names << "\n";
    RecordProperty("noise_floor", names);
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, GradientMergePassTest, ::testing::ValuesIn(ZooCases({2, 4})),
                         CaseName);

}  // namespace
}  // namespace irm::diff
