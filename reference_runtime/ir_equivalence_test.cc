// Legacy programs and their new-IR equivalents, both written by hand (testdata/equivalence: each
// `<case>.prototxt` beside its `<case>.pir`), each run on the real kernels by its own executor —
// LegacyExecutor through the legacy binding table, PirExecutor through the new-IR one — must give
// bit-identical fetches, and bit-identical persistable vars after every run. Nothing here comes
// from the translator: the pairs are written from the legacy ops' semantics and the pd_op
// signatures, so a wrong row in either binding table shows up as a mismatch.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "newir/parser.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt {
namespace {

using testing::FromDoubles;
using testing::RandomTensor;
using testing::ToDoubles;
using Params = std::map<std::string, Tensor>;

std::string Testdata(const std::string& name) {
  StatusOr<std::string> text = ReadFile(std::string(IRM_EQUIVALENCE_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

// What one executor produced over a sequence of runs on one persistent scope.
struct Outcome {
  std::vector<std::vector<Fetch>> fetches;  // per run, in fetch order
  std::vector<Params> persistent;           // per run: the persistent scope after it
};

// Runs `executor` once per feed map, on a scope that starts with copies of `params`.
StatusOr<Outcome> RunAll(Executor& executor, const Params& params,
                         const std::vector<FeedMap>& runs) {
  Scope scope;
  for (const auto& [name, tensor] : params) scope.SetLocal(name, tensor.Clone());
  Outcome outcome;
  for (const FeedMap& feeds : runs) {
    IRM_ASSIGN_OR_RETURN(std::vector<Fetch> fetches, executor.Run(scope, feeds));
    outcome.fetches.push_back(std::move(fetches));
    Params after;
    for (const std::string& name : scope.LocalNames()) after[name] = scope.Find(name)->Clone();
    outcome.persistent.push_back(std::move(after));
  }
  return outcome;
}

// The legacy program `<name>.prototxt` on the LegacyExecutor.
StatusOr<Outcome> RunLegacy(const std::string& name, const Params& params,
                            const std::vector<FeedMap>& runs, uint64_t seed = 0) {
  const std::string file = name + ".prototxt";
  IRM_ASSIGN_OR_RETURN(oldir::Program program,
                       oldir::ParseProgram(Testdata(file), file, oldir::ProgramFormat::kText));
  LegacyExecutor executor(program, {.seed = seed, .file = file});
  IRM_RETURN_IF_ERROR(executor.plan_status());
  return RunAll(executor, params, runs);
}

// A new-IR program in text form, verified, on the PirExecutor.
StatusOr<Outcome> RunPirText(const std::string& text, const std::string& file, const Params& params,
                             const std::vector<FeedMap>& runs, uint64_t seed = 0) {
  IRM_ASSIGN_OR_RETURN(newir::Program program, newir::ParseProgram(text, file));
  IRM_RETURN_IF_ERROR(newir::VerifyProgram(program, {.file = file}));
  PirExecutor executor(program, {.seed = seed, .file = file});
  return RunAll(executor, params, runs);
}

// The new-IR program `<name>.pir` on the PirExecutor.
StatusOr<Outcome> RunPir(const std::string& name, const Params& params,
                         const std::vector<FeedMap>& runs, uint64_t seed = 0) {
  return RunPirText(Testdata(name + ".pir"), name + ".pir", params, runs, seed);
}

// "name: float32[2, 3] vs float32[2, 3], first difference at 4: 0.25 vs 0.5".
std::string Difference(const std::string& name, const Tensor& a, const Tensor& b) {
  std::string text = fmt::format("{}: {} vs {}", name, a.Describe(), b.Describe());
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return text;
  const std::vector<double> x = ToDoubles(a);
  const std::vector<double> y = ToDoubles(b);
  for (size_t i = 0; i < x.size(); ++i) {
    // Bitwise unequal but numerically equal (-0 and 0, NaN payloads) prints as equal values.
    if (x[i] != y[i] || i + 1 == x.size()) {
      return text + fmt::format(", first difference at {}: {} vs {}", i, x[i], y[i]);
    }
  }
  return text;
}

// Every fetch (same names, same order) and every persistable var after every run bit-identical.
::testing::AssertionResult BitIdentical(const Outcome& legacy, const Outcome& pir) {
  if (legacy.fetches.size() != pir.fetches.size()) {
    return ::testing::AssertionFailure()
           << "runs: " << legacy.fetches.size() << " vs " << pir.fetches.size();
  }
  std::vector<std::string> differences;
  for (size_t run = 0; run < legacy.fetches.size(); ++run) {
    const std::vector<Fetch>& a = legacy.fetches[run];
    const std::vector<Fetch>& b = pir.fetches[run];
    if (a.size() != b.size()) {
      differences.push_back(fmt::format("run {}: {} vs {} fetches", run, a.size(), b.size()));
      continue;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].name != b[i].name) {
        differences.push_back(
            fmt::format("run {}: fetch {} is '{}' vs '{}'", run, i, a[i].name, b[i].name));
      } else if (!a[i].tensor.BitwiseEqual(b[i].tensor)) {
        differences.push_back(
            fmt::format("run {}: fetch {}", run, Difference(a[i].name, a[i].tensor, b[i].tensor)));
      }
    }
    const Params& p = legacy.persistent[run];
    const Params& q = pir.persistent[run];
    for (const auto& [name, tensor] : p) {
      auto it = q.find(name);
      if (it == q.end()) {
        differences.push_back(fmt::format("run {}: '{}' only in the legacy scope", run, name));
      } else if (!tensor.BitwiseEqual(it->second)) {
        differences.push_back(
            fmt::format("run {}: persistable {}", run, Difference(name, tensor, it->second)));
      }
    }
    for (const auto& [name, tensor] : q) {
      if (!p.contains(name)) {
        differences.push_back(fmt::format("run {}: '{}' only in the new-IR scope", run, name));
      }
    }
  }
  if (differences.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << fmt::format("{}", fmt::join(differences, "\n"));
}

// Runs the pair `name` on both executors and expects bit-identical outcomes; returns the legacy
// outcome for the test's own checks that the case computes something (empty on an error).
Outcome ExpectEquivalent(const std::string& name, const Params& params,
                         const std::vector<FeedMap>& runs, uint64_t seed = 0) {
  StatusOr<Outcome> legacy = RunLegacy(name, params, runs, seed);
  StatusOr<Outcome> pir = RunPir(name, params, runs, seed);
  EXPECT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_TRUE(pir.ok()) << pir.status().ToString();
  if (!legacy.ok() || !pir.ok()) return Outcome();
  EXPECT_TRUE(BitIdentical(*legacy, *pir)) << name;
  return *legacy;
}

Tensor F32(std::vector<int64_t> shape, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return RandomTensor(DType::kFloat32, std::move(shape), seed, lo, hi);
}

// Class labels in [0, classes).
Tensor Labels(std::vector<int64_t> shape, int64_t classes, uint64_t seed) {
  return RandomTensor(DType::kInt64, std::move(shape), seed, 0.0, static_cast<double>(classes));
}

Params MlpParams() {
  return {{"w1", F32({5, 6}, 11)},
          {"b1", F32({5}, 12)},
          {"w2", F32({5, 5}, 13)},
          {"pos", F32({3}, 14)}};
}

std::vector<FeedMap> MlpFeeds() {
  return {{{"x", F32({2, 3, 6}, 1)}, {"label", Labels({2, 3, 1}, 5, 2)}},
          {{"x", F32({1, 3, 6}, 3)}, {"label", Labels({1, 3, 1}, 5, 4)}}};
}

// matmul_v2 with trans_y is pd_op.matmul with transpose_y; elementwise_add with axis -1 is a
// plain add, and with axis 1 (a [3] bias inside [N, 3, 5]) an explicit reshape to [3, 1] first;
// softmax_with_cross_entropy is cross_entropy_with_softmax; mean is mean_all. Two batches, one
// of a single row.
TEST(IrEquivalenceTest, MlpForwardAndLoss) {
  const Outcome legacy = ExpectEquivalent("mlp_loss", MlpParams(), MlpFeeds());
  ASSERT_EQ(legacy.fetches.size(), 2u);
  EXPECT_EQ(legacy.fetches[0][0].tensor.shape(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_GT(ToDoubles(legacy.fetches[0][1].tensor)[0], 0.0);  // a cross entropy
}

// The comparison can fail: the same pair with w2 transposed on the new-IR side only differs in
// the logits and the loss, and says where.
TEST(IrEquivalenceTest, ADifferentNewIrProgramDoesNotMatch) {
  std::string text = Testdata("mlp_loss.pir");
  const std::string matmul = R"(legacy_var_names:["fc2"],transpose_x:false,transpose_y:false)";
  const size_t at = text.find(matmul);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, matmul.size(), R"(legacy_var_names:["fc2"],transpose_x:false,transpose_y:true)");
  StatusOr<Outcome> legacy = RunLegacy("mlp_loss", MlpParams(), MlpFeeds());
  StatusOr<Outcome> pir = RunPirText(text, "mlp_loss.pir", MlpParams(), MlpFeeds());
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  const ::testing::AssertionResult same = BitIdentical(*legacy, *pir);
  ASSERT_FALSE(same);
  EXPECT_NE(std::string(same.message())
                .find("run 0: fetch logits: float32[2, 3, 5] vs "
                      "float32[2, 3, 5], first difference at 0"),
            std::string::npos)
      << same.message();
  EXPECT_NE(std::string(same.message()).find("run 1: fetch loss: float32[] vs float32[]"),
            std::string::npos)
      << same.message();
}

// One hand-written training step of a linear classifier — forward, mean_grad,
// softmax_with_cross_entropy_grad, elementwise_add_grad, matmul_v2_grad (without X@GRAD) and sgd
// in place on w and b — three times: the loss and the parameters after every step.
TEST(IrEquivalenceTest, LinearLayerSgdSteps) {
  const Params params = {{"w", F32({3, 5}, 21)},
                         {"b", F32({5}, 22)},
                         {"lr", FromDoubles({0.5}, {1}, DType::kFloat32)}};
  std::vector<FeedMap> steps;
  for (uint64_t s = 0; s < 3; ++s) {
    steps.push_back({{"x", F32({4, 3}, 30 + s)}, {"label", Labels({4, 1}, 5, 40 + s)}});
  }
  const Outcome legacy = ExpectEquivalent("linear_sgd", params, steps);
  ASSERT_EQ(legacy.persistent.size(), 3u);
  // Every step moves both parameters; the learning rate stays.
  for (const std::string name : {"w", "b"}) {
    EXPECT_FALSE(legacy.persistent[0].at(name).BitwiseEqual(params.at(name))) << name;
    EXPECT_FALSE(legacy.persistent[2].at(name).BitwiseEqual(legacy.persistent[1].at(name))) << name;
  }
  EXPECT_TRUE(legacy.persistent[2].at("lr").BitwiseEqual(params.at("lr")));
}

// AdamW (decay on, lr_ratio 0.5, beta1/beta2/epsilon as attributes on the legacy side and
// float32 pd_op.full operands on the new-IR side) on one parameter, three steps with fed
// gradients: parameter, moments and beta powers after every step, in float32 and float64.
TEST(IrEquivalenceTest, AdamwSteps) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Params params = {
        {"w", RandomTensor(dtype, {4, 3}, 51)},
        {"lr", FromDoubles({0.01}, {1}, dtype)},
        {"m1", RandomTensor(dtype, {4, 3}, 52, -0.1, 0.1)},
        {"m2", RandomTensor(dtype, {4, 3}, 53, 0.0, 0.1)},
        {"b1p", FromDoubles({0.8}, {1}, dtype)},
        {"b2p", FromDoubles({0.95}, {1}, dtype)},
    };
    std::vector<FeedMap> steps;
    for (uint64_t s = 0; s < 3; ++s)
      steps.push_back({{"w@GRAD", RandomTensor(dtype, {4, 3}, 60 + s)}});
    const std::string name = dtype == DType::kFloat32 ? "adamw_fp32" : "adamw_fp64";
    const Outcome legacy = ExpectEquivalent(name, params, steps);
    ASSERT_EQ(legacy.persistent.size(), 3u);
    for (const std::string var : {"w", "m1", "m2", "b1p", "b2p"}) {
      EXPECT_FALSE(legacy.persistent[2].at(var).BitwiseEqual(legacy.persistent[1].at(var))) << var;
    }
    // beta1_pow after three steps: 0.8 * beta1^3, beta1 being the float attribute 0.8f.
    const double beta1 = static_cast<double>(0.8f);
    EXPECT_NEAR(ToDoubles(legacy.persistent[2].at("b1p"))[0], 0.8 * beta1 * beta1 * beta1, 1e-6);
  }
}

// Dropout in training with seed 0 takes the program seed (ExecutorOptions.seed), and its random
// stream is keyed by the op's logical name: the legacy op's first output and the new-IR op's
// first legacy_var_names entry, both "drop". Same mask, same output, same sum.
TEST(IrEquivalenceTest, DropoutThenSumDrawTheSameMask) {
  const std::vector<FeedMap> runs = {{{"x", F32({4, 8}, 71)}}, {{"x", F32({1, 8}, 72)}}};
  const Outcome legacy = ExpectEquivalent("dropout_sum", {}, runs, /*seed=*/5);
  ASSERT_EQ(legacy.fetches.size(), 2u);
  const std::vector<double> mask = ToDoubles(legacy.fetches[0][1].tensor);
  size_t kept = 0;
  for (double m : mask) kept += m != 0.0;
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, mask.size());
  // Another program seed draws another mask, on both sides alike.
  const Outcome reseeded = ExpectEquivalent("dropout_sum", {}, runs, /*seed=*/6);
  ASSERT_EQ(reseeded.fetches.size(), 2u);
  EXPECT_FALSE(reseeded.fetches[0][1].tensor.BitwiseEqual(legacy.fetches[0][1].tensor));
}

// The op identity matters: a new-IR dropout recording another legacy name draws another mask.
TEST(IrEquivalenceTest, DropoutUnderAnotherNameDrawsAnotherMask) {
  std::string text = Testdata("dropout_sum.pir");
  const std::string names = R"(legacy_var_names:["drop","mask"])";
  const size_t at = text.find(names);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, names.size(), R"(legacy_var_names:["drop2","mask"])");
  const std::vector<FeedMap> runs = {{{"x", F32({4, 8}, 71)}}};
  StatusOr<Outcome> legacy = RunLegacy("dropout_sum", {}, runs, 5);
  StatusOr<Outcome> pir = RunPirText(text, "dropout_sum.pir", {}, runs, 5);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  EXPECT_FALSE(BitIdentical(*legacy, *pir));
}

// conditional_block (its sub-block writing the outer y in place, its own t vanishing) and its
// pd_op.if (the true region yields y + tanh(x), the false region y as it was): the block taken
// in one run and skipped in the other.
TEST(IrEquivalenceTest, ConditionalBlockAndIfTakeTheSameBranch) {
  const Tensor x = F32({2, 3}, 81);
  const std::vector<FeedMap> runs = {
      {{"x", x}, {"c", FromDoubles({1}, {1}, DType::kBool)}},
      {{"x", x}, {"c", FromDoubles({0}, {1}, DType::kBool)}},
  };
  const Outcome legacy = ExpectEquivalent("cond", {}, runs);
  ASSERT_EQ(legacy.fetches.size(), 2u);
  // Taken and not taken differ.
  EXPECT_FALSE(legacy.fetches[0][0].tensor.BitwiseEqual(legacy.fetches[1][0].tensor));
}

// A while loop of 5 iterations (acc = 0.5 * acc + x; i = i + 1 while i < 5) and its pd_op.while
// carrying acc and i: the accumulated tensor and the counter.
TEST(IrEquivalenceTest, WhileLoopAndPdWhileAccumulateAlike) {
  const Outcome legacy = ExpectEquivalent("while_loop", {}, {{{"x", F32({2, 3}, 91)}}});
  ASSERT_EQ(legacy.fetches.size(), 1u);
  EXPECT_EQ(ToDoubles(legacy.fetches[0][1].tensor), (std::vector<double>{5}));
}

// reshape2, transpose2, split (sections), concat, slice, cast (to float64 and float16) and
// fill_constant (float64 from its str_value) against pd_op.reshape, transpose, split +
// builtin.split, builtin.combine + concat, slice, cast and full: every result fetched.
TEST(IrEquivalenceTest, DataMovementOps) {
  const Outcome legacy = ExpectEquivalent("data_movement", {}, {{{"x", F32({2, 3, 4}, 101)}}});
  ASSERT_EQ(legacy.fetches.size(), 1u);
  ASSERT_EQ(legacy.fetches[0].size(), 9u);
  // The float64 constant is 0.1 at full precision, not the float attribute 0.1f.
  EXPECT_EQ(ToDoubles(legacy.fetches[0][8].tensor), std::vector<double>(6, 0.1));
}

// set_value with a ValueTensor (in place, a backward strided walk), with fp32_values from a
// StartsTensorList and decrease_axes, with an int64 value and none_axes, and set_value_grad,
// against pd_op.set_value_with_tensor_, set_value (builtin.combine for the list) and
// set_value_with_tensor_grad.
TEST(IrEquivalenceTest, SetValueForms) {
  std::vector<double> iota(12);
  for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<double>(i);
  const Tensor x = FromDoubles(iota, {3, 4}, DType::kFloat32);
  const Tensor v = FromDoubles({10, 20}, {2}, DType::kFloat32);
  const Outcome legacy = ExpectEquivalent("set_value", {}, {{{"x", x}, {"v", v}, {"g", x}}});
  ASSERT_EQ(legacy.fetches.size(), 1u);
  const std::vector<Fetch>& f = legacy.fetches[0];
  ASSERT_EQ(f.size(), 5u);
  // Columns 3 and 1 get v[0] and v[1]; then row 1 the constants; then rows 0 and 2 the 7.
  EXPECT_EQ(ToDoubles(f[0].tensor),
            (std::vector<double>{0, 20, 2, 10, 4, 20, 6, 10, 8, 20, 10, 10}));
  EXPECT_EQ(ToDoubles(f[1].tensor),
            (std::vector<double>{0, 20, 2, 10, 1.5, -2, 3.25, 0.5, 8, 20, 10, 10}));
  EXPECT_EQ(ToDoubles(f[2].tensor),
            (std::vector<double>{7, 7, 7, 7, 1.5, -2, 3.25, 0.5, 7, 7, 7, 7}));
  EXPECT_EQ(ToDoubles(f[3].tensor), (std::vector<double>{0, 0, 2, 0, 4, 0, 6, 0, 8, 0, 10, 0}));
  EXPECT_EQ(ToDoubles(f[4].tensor), (std::vector<double>{3 + 7 + 11, 1 + 5 + 9}));
}

}  // namespace
}  // namespace irm::rt
