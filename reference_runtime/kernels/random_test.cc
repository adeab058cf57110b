// Tests of the random kernels (random.cc): each value against the formula evaluated in float64
// on the op's Philox stream, the seed and identity rules, statistics with fixed seeds that a
// broken generator fails (moments, a chi-square over bins, lag-1 correlation), dropout's keep rate
// and scaling, dropout_grad against central differences of sum(w * dropout(x)) with the mask
// fixed (the mask depends on the seed and identity only), and the exact error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::NumericGradient;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;

const DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
const std::vector<std::vector<int64_t>> kShapes = {{3, 5}, {1, 7}, {}, {2, 1, 4}, {0, 3}};

KernelContext Context(uint64_t program_seed, const std::string& name) {
  KernelContext context;
  context.program_seed = program_seed;
  context.op_identity = OpIdentity(name);
  return context;
}

KernelAttrs UniformAttrs(std::vector<int64_t> shape, double min, double max, int64_t seed) {
  KernelAttrs attrs;
  attrs.Set("shape", std::move(shape));
  attrs.Set("min", min);
  attrs.Set("max", max);
  attrs.Set("seed", seed);
  return attrs;
}

KernelAttrs GaussianAttrs(std::vector<int64_t> shape, double mean, double std, int64_t seed) {
  KernelAttrs attrs;
  attrs.Set("shape", std::move(shape));
  attrs.Set("mean", mean);
  attrs.Set("std", std);
  attrs.Set("seed", seed);
  return attrs;
}

KernelAttrs DropoutAttrs(double p, bool is_test, const std::string& mode, int64_t seed = 0,
                         bool fix_seed = false) {
  KernelAttrs attrs;
  attrs.Set("p", p);
  attrs.Set("is_test", is_test);
  attrs.Set("mode", mode);
  attrs.Set("seed", seed);
  attrs.Set("fix_seed", fix_seed);
  return attrs;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Mean, variance, lag-1 correlation and a chi-square over 20 equal bins of (v - lo) / (hi - lo).
struct Stats {
  double mean = 0, variance = 0, lag1 = 0, chi_square = 0;
};
Stats Describe(const std::vector<double>& v, double lo, double hi) {
  Stats s;
  const double n = static_cast<double>(v.size());
  for (double x : v) s.mean += x / n;
  double cov = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    s.variance += (v[i] - s.mean) * (v[i] - s.mean) / n;
    if (i > 0) cov += (v[i] - s.mean) * (v[i - 1] - s.mean) / (n - 1);
  }
  s.lag1 = cov / s.variance;
  constexpr int kBins = 20;
  std::vector<double> counts(kBins, 0.0);
  for (double x : v) {
    const int bin = static_cast<int>((x - lo) / (hi - lo) * kBins);
    if (bin >= 0 && bin < kBins) counts[static_cast<size_t>(bin)] += 1;
  }
  for (double c : counts) s.chi_square += (c - n / kBins) * (c - n / kBins) / (n / kBins);
  return s;
}

// ---- uniform -----------------------------------------------------------------------------------

TEST(UniformKernelTest, EveryValueIsMinPlusRangeTimesTheStreamsUniform) {
  const KernelContext context = Context(5, "uniform_0.tmp_0");
  const PhiloxStream stream(5, context.op_identity);
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      std::vector<double> expected(static_cast<size_t>(Numel(shape)));
      for (size_t i = 0; i < expected.size(); ++i) {
        const double u =
            dtype == DType::kFloat64 ? stream.UniformDouble(i) : double{stream.UniformFloat(i)};
        expected[i] = -2.0 + (3.0 - -2.0) * u;
      }
      const auto out =
          RunKernel("uniform", dtype, {}, UniformAttrs(shape, -2.0, 3.0, 0), 1, context);
      ASSERT_EQ(out[0].dtype(), dtype);
      ExpectClose(out[0], expected, shape, ToleranceFor(dtype),
                  std::string("uniform ") + DTypeName(dtype));
    }
  }
}

TEST(UniformKernelTest, StatisticsOfManyDraws) {
  constexpr int64_t kN = 200000;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const auto out = RunKernel("uniform", dtype, {}, UniformAttrs({kN}, -1.0, 3.0, 1234), 1,
                               Context(0, "fc_0.w_0"));
    const std::vector<double> v = ToDoubles(out[0]);
    for (double x : v) {
      ASSERT_GE(x, -1.0);
      ASSERT_LT(x, 3.0);
    }
    const Stats s = Describe(v, -1.0, 3.0);
    // U(-1, 3): mean 1, variance 16 / 12; the mean's standard error is sqrt(16 / 12 / N) = 0.0026.
    EXPECT_NEAR(s.mean, 1.0, 0.013) << DTypeName(dtype);
    EXPECT_NEAR(s.variance, 16.0 / 12.0, 0.02) << DTypeName(dtype);
    EXPECT_NEAR(s.lag1, 0.0, 0.012) << DTypeName(dtype);
    // 19 degrees of freedom: P(chi2 > 50) < 2e-4.
    EXPECT_LT(s.chi_square, 50.0) << DTypeName(dtype);
  }
}

TEST(UniformKernelTest, SameSeedAndIdentityGiveTheSameBitsAndOthersDiffer) {
  const auto attrs = UniformAttrs({64}, 0.0, 1.0, 0);
  const auto a = RunKernel("uniform", DType::kFloat32, {}, attrs, 1, Context(9, "w_0"));
  const auto b = RunKernel("uniform", DType::kFloat32, {}, attrs, 1, Context(9, "w_0"));
  const auto other_op = RunKernel("uniform", DType::kFloat32, {}, attrs, 1, Context(9, "w_1"));
  const auto other_seed = RunKernel("uniform", DType::kFloat32, {}, attrs, 1, Context(10, "w_0"));
  EXPECT_TRUE(a[0].BitwiseEqual(b[0]));
  EXPECT_FALSE(a[0].BitwiseEqual(other_op[0]));
  EXPECT_FALSE(a[0].BitwiseEqual(other_seed[0]));
  int same = 0;
  const auto x = ToDoubles(a[0]), y = ToDoubles(other_op[0]);
  for (size_t i = 0; i < x.size(); ++i) same += x[i] == y[i];
  EXPECT_LT(same, 3);
}

TEST(UniformKernelTest, NonZeroSeedAttributeWinsOverTheProgramSeed) {
  const auto with_attr =
      RunKernel("uniform", DType::kFloat64, {}, UniformAttrs({16}, 0, 1, 77), 1, Context(3, "w"));
  const auto other_program =
      RunKernel("uniform", DType::kFloat64, {}, UniformAttrs({16}, 0, 1, 77), 1, Context(4, "w"));
  const auto program_77 =
      RunKernel("uniform", DType::kFloat64, {}, UniformAttrs({16}, 0, 1, 0), 1, Context(77, "w"));
  EXPECT_TRUE(with_attr[0].BitwiseEqual(other_program[0]));
  EXPECT_TRUE(with_attr[0].BitwiseEqual(program_77[0]));
}

TEST(UniformKernelTest, NegativeDimIsAnError) {
  const auto r = TryRunKernel("uniform", DType::kFloat32, {}, UniformAttrs({2, -1}, 0, 1, 0), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "uniform: shape [2, -1] has a negative dim");
}

TEST(UniformKernelTest, MissingBoundIsAnError) {
  KernelAttrs attrs;
  attrs.Set("shape", std::vector<int64_t>{2});
  attrs.Set("max", 1.0);
  const auto r = TryRunKernel("uniform", DType::kFloat32, {}, attrs, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "attribute 'min' is missing");
}

// ---- gaussian ----------------------------------------------------------------------------------

TEST(GaussianKernelTest, EveryValueIsMeanPlusStdTimesTheStreamsNormal) {
  const KernelContext context = Context(8, "gaussian_0.tmp_0");
  const PhiloxStream stream(8, context.op_identity);
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      std::vector<double> expected(static_cast<size_t>(Numel(shape)));
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = 0.5 + 2.0 * stream.Normal(i);
      const auto out =
          RunKernel("gaussian", dtype, {}, GaussianAttrs(shape, 0.5, 2.0, 0), 1, context);
      ExpectClose(out[0], expected, shape, ToleranceFor(dtype),
                  std::string("gaussian ") + DTypeName(dtype));
    }
  }
}

TEST(GaussianKernelTest, StatisticsOfManyDraws) {
  constexpr int64_t kN = 200000;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const auto out = RunKernel("gaussian", dtype, {}, GaussianAttrs({kN}, -1.0, 0.5, 99), 1,
                               Context(0, "fc_0.w_0"));
    const std::vector<double> v = ToDoubles(out[0]);
    const Stats s = Describe(v, -3.0, 1.0);  // bins unused here
    // N(-1, 0.25): the mean's standard error is 0.5 / sqrt(N) = 0.0011.
    EXPECT_NEAR(s.mean, -1.0, 0.006) << DTypeName(dtype);
    EXPECT_NEAR(s.variance, 0.25, 0.005) << DTypeName(dtype);
    EXPECT_NEAR(s.lag1, 0.0, 0.012) << DTypeName(dtype);
    double within_one_sigma = 0, within_two_sigma = 0;
    for (double x : v) {
      within_one_sigma += std::abs(x + 1.0) < 0.5;
      within_two_sigma += std::abs(x + 1.0) < 1.0;
    }
    EXPECT_NEAR(within_one_sigma / kN, 0.682689, 0.006) << DTypeName(dtype);
    EXPECT_NEAR(within_two_sigma / kN, 0.954500, 0.004) << DTypeName(dtype);
  }
}

TEST(GaussianKernelTest, SameSeedAndIdentityGiveTheSameBitsAndOthersDiffer) {
  const auto attrs = GaussianAttrs({2, 8}, 0.0, 1.0, 0);
  const auto a = RunKernel("gaussian", DType::kBFloat16, {}, attrs, 1, Context(9, "w_0"));
  const auto b = RunKernel("gaussian", DType::kBFloat16, {}, attrs, 1, Context(9, "w_0"));
  const auto c = RunKernel("gaussian", DType::kBFloat16, {}, attrs, 1, Context(9, "w_1"));
  EXPECT_TRUE(a[0].BitwiseEqual(b[0]));
  EXPECT_FALSE(a[0].BitwiseEqual(c[0]));
}

TEST(GaussianKernelTest, NegativeDimIsAnError) {
  const auto r = TryRunKernel("gaussian", DType::kFloat64, {}, GaussianAttrs({-3}, 0, 1, 0), 1, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "gaussian: shape [-3] has a negative dim");
}

// ---- dropout -----------------------------------------------------------------------------------

// 1 - p as dropout defines it: p is the IR's float32 attribute and 1 - p is taken in float32
// (Paddle's static_cast<T>(1.0f - p)).
double Keep(double p) { return static_cast<double>(1.0f - static_cast<float>(p)); }

// The float64 reference of dropout in training: the mask from the stream, kept values scaled.
struct DropoutReference {
  std::vector<double> out, mask;
};
DropoutReference ReferenceDropout(const std::vector<double>& x, double p, bool upscale,
                                  const PhiloxStream& stream) {
  DropoutReference r;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool kept = stream.UniformFloat(i) >= static_cast<float>(p);
    r.mask.push_back(kept ? 1.0 : 0.0);
    r.out.push_back(kept ? (upscale ? x[i] / Keep(p) : x[i]) : 0.0);
  }
  return r;
}

TEST(DropoutKernelTest, TrainingMatchesTheReferenceForEveryDtypeAndMode) {
  const KernelContext context = Context(21, "dropout_0.tmp_0");
  const PhiloxStream stream(21, context.op_identity);
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      for (const std::string mode : {"upscale_in_train", "downscale_in_infer"}) {
        const Tensor x = RandomTensor(dtype, shape, 3);
        const DropoutReference ref =
            ReferenceDropout(ToDoubles(x), 0.25, mode == "upscale_in_train", stream);
        const auto out =
            RunKernel("dropout", dtype, {&x}, DropoutAttrs(0.25, false, mode), 2, context);
        const std::string what = std::string("dropout ") + DTypeName(dtype) + " " + mode;
        ExpectClose(out[0], ref.out, shape, ToleranceFor(dtype), what);
        ASSERT_EQ(out[1].dtype(), DType::kUInt8);
        ExpectClose(out[1], ref.mask, shape, 0.0, what + " mask");
      }
    }
  }
}

TEST(DropoutKernelTest, KeepRateAndScaling) {
  constexpr int64_t kN = 100000;
  const Tensor x = testing::FromDoubles(std::vector<double>(kN, 2.0), {kN}, DType::kFloat32);
  const auto out = RunKernel("dropout", DType::kFloat32, {&x},
                             DropoutAttrs(0.3, false, "upscale_in_train"), 2, Context(1, "d"));
  const std::vector<double> y = ToDoubles(out[0]), mask = ToDoubles(out[1]);
  double kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    kept += mask[i];
    // Rounding the float64 quotient to float32 is the float32 quotient (double rounding of a
    // division is innocuous from float64 to float32).
    ASSERT_EQ(y[i], mask[i] == 1.0 ? static_cast<float>(2.0 / Keep(0.3)) : 0.0) << i;
  }
  // Binomial(N, 0.7): standard deviation of the rate sqrt(0.21 / N) = 0.00145.
  EXPECT_NEAR(kept / kN, 0.7, 0.007);
}

TEST(DropoutKernelTest, TestModeKeepsEverything) {
  for (DType dtype : kFloatTypes) {
    const Tensor x = RandomTensor(dtype, {4, 3}, 5);
    const auto up = RunKernel("dropout", dtype, {&x}, DropoutAttrs(0.4, true, "upscale_in_train"),
                              2, Context(1, "d"));
    EXPECT_TRUE(up[0].BitwiseEqual(x)) << DTypeName(dtype);
    ExpectClose(up[1], std::vector<double>(12, 1.0), {4, 3}, 0.0, "test mask");
    const auto down = RunKernel("dropout", dtype, {&x},
                                DropoutAttrs(0.4, true, "downscale_in_infer"), 2, Context(1, "d"));
    std::vector<double> expected = ToDoubles(x);
    for (double& v : expected) v *= Keep(0.4);
    ExpectClose(down[0], expected, {4, 3}, ToleranceFor(dtype), "downscale at test");
    // Legacy programs spell the mode "downgrade_in_infer": the same computation.
    for (bool is_test : {false, true}) {
      const auto a =
          RunKernel("dropout", dtype, {&x}, DropoutAttrs(0.4, is_test, "downgrade_in_infer"), 2,
                    Context(1, "d"));
      const auto b =
          RunKernel("dropout", dtype, {&x}, DropoutAttrs(0.4, is_test, "downscale_in_infer"), 2,
                    Context(1, "d"));
      EXPECT_TRUE(a[0].BitwiseEqual(b[0])) << DTypeName(dtype);
    }
  }
}

TEST(DropoutKernelTest, ProbabilityOneDropsEverythingAndZeroNothing) {
  const Tensor x = RandomTensor(DType::kFloat32, {50}, 6);
  const auto all = RunKernel("dropout", DType::kFloat32, {&x},
                             DropoutAttrs(1.0, false, "upscale_in_train"), 2, Context(1, "d"));
  ExpectClose(all[0], std::vector<double>(50, 0.0), {50}, 0.0, "p = 1 out");
  ExpectClose(all[1], std::vector<double>(50, 0.0), {50}, 0.0, "p = 1 mask");
  const auto none = RunKernel("dropout", DType::kFloat32, {&x},
                              DropoutAttrs(0.0, false, "upscale_in_train"), 2, Context(1, "d"));
  EXPECT_TRUE(none[0].BitwiseEqual(x));
  ExpectClose(none[1], std::vector<double>(50, 1.0), {50}, 0.0, "p = 0 mask");
}

TEST(DropoutKernelTest, SeedRules) {
  const Tensor x = RandomTensor(DType::kFloat32, {64}, 7);
  auto mask = [&](const KernelAttrs& attrs, uint64_t program_seed, const Tensor* seed_tensor) {
    std::vector<const Tensor*> inputs = {&x};
    if (seed_tensor != nullptr) inputs.push_back(seed_tensor);
    return RunKernel("dropout", DType::kFloat32, inputs, attrs, 2, Context(program_seed, "d"))[1];
  };
  const auto fixed = DropoutAttrs(0.5, false, "upscale_in_train", 42, true);
  const auto unfixed = DropoutAttrs(0.5, false, "upscale_in_train", 42, false);
  // fix_seed: the seed attribute, whatever the program's.
  EXPECT_TRUE(mask(fixed, 1, nullptr).BitwiseEqual(mask(fixed, 2, nullptr)));
  EXPECT_TRUE(mask(fixed, 1, nullptr).BitwiseEqual(mask(unfixed, 42, nullptr)));
  // No fix_seed: the program's seed, the attribute ignored.
  EXPECT_FALSE(mask(unfixed, 1, nullptr).BitwiseEqual(mask(unfixed, 2, nullptr)));
  // A seed tensor wins over both.
  const Tensor seed32 = Tensor::FromVector<int32_t>({42}, {1});
  const Tensor seed64 = Tensor::FromVector<int64_t>({42}, {1});
  const auto fixed_other = DropoutAttrs(0.5, false, "upscale_in_train", 5, true);
  EXPECT_TRUE(mask(fixed_other, 3, &seed32).BitwiseEqual(mask(fixed, 9, nullptr)));
  EXPECT_TRUE(mask(unfixed, 3, &seed64).BitwiseEqual(mask(fixed, 9, nullptr)));
  // Another op draws another mask.
  const Tensor other_op = RunKernel("dropout", DType::kFloat32, {&x}, fixed, 2, Context(1, "e"))[1];
  EXPECT_FALSE(mask(fixed, 1, nullptr).BitwiseEqual(other_op));
}

TEST(DropoutKernelTest, BadAttributesAndSeedTensorAreErrors) {
  const Tensor x = RandomTensor(DType::kFloat32, {4}, 8);
  auto message = [&](const KernelAttrs& attrs, std::vector<const Tensor*> inputs) {
    const auto r = TryRunKernel("dropout", DType::kFloat32, inputs, attrs, 2);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message(DropoutAttrs(1.5, false, "upscale_in_train"), {&x}),
            "dropout: p is 1.5, not in [0, 1]");
  EXPECT_EQ(message(DropoutAttrs(-0.25, false, "upscale_in_train"), {&x}),
            "dropout: p is -0.25, not in [0, 1]");
  EXPECT_EQ(message(DropoutAttrs(0.5, false, "upscale"), {&x}),
            "dropout: mode is 'upscale', not 'upscale_in_train' or 'downscale_in_infer' (also "
            "spelt 'downgrade_in_infer')");
  const Tensor two_seeds = Tensor::FromVector<int32_t>({1, 2}, {2});
  EXPECT_EQ(message(DropoutAttrs(0.5, false, "upscale_in_train"), {&x, &two_seeds}),
            "dropout: seed_tensor is int32[2], expected one int32 or int64");
  const Tensor float_seed = Tensor::FromVector<float>({1}, {1});
  EXPECT_EQ(message(DropoutAttrs(0.5, false, "upscale_in_train"), {&x, &float_seed}),
            "dropout: seed_tensor is float32[1], expected one int32 or int64");
}

// ---- dropout_grad ------------------------------------------------------------------------------

TEST(DropoutGradKernelTest, MatchesCentralDifferencesWithTheMaskFixed) {
  const KernelContext context = Context(17, "dropout_3.tmp_0");
  for (const auto& shape : std::vector<std::vector<int64_t>>{{3, 4}, {1, 5}, {6}}) {
    for (const std::string mode : {"upscale_in_train", "downscale_in_infer"}) {
      for (bool is_test : {false, true}) {
        const KernelAttrs attrs = DropoutAttrs(0.35, is_test, mode);
        const Tensor x = RandomTensor(DType::kFloat64, shape, 11);
        const Tensor w = RandomTensor(DType::kFloat64, shape, 12);
        const std::vector<double> wv = ToDoubles(w);
        // The mask depends on (seed, identity, index) only, so every evaluation keeps the same
        // elements: the loss is a fixed linear function of x.
        auto loss = [&](const std::vector<double>& xv) {
          const Tensor xt = testing::FromDoubles(xv, shape, DType::kFloat64);
          const std::vector<double> y =
              ToDoubles(RunKernel("dropout", DType::kFloat64, {&xt}, attrs, 2, context)[0]);
          double sum = 0;
          for (size_t i = 0; i < y.size(); ++i) sum += wv[i] * y[i];
          return sum;
        };
        const std::vector<double> numeric = NumericGradient(loss, ToDoubles(x));
        const Tensor mask = RunKernel("dropout", DType::kFloat64, {&x}, attrs, 2, context)[1];
        const auto dx = RunKernel("dropout_grad", DType::kFloat64, {&mask, &w}, attrs, 1);
        ExpectClose(dx[0], numeric, shape, 1e-7,
                    "dropout_grad " + mode + (is_test ? " test" : " train"));
      }
    }
  }
}

TEST(DropoutGradKernelTest, EveryDtypeMatchesTheReference) {
  const std::vector<int64_t> shape = {5, 3};
  const Tensor mask =
      testing::FromDoubles({1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1}, shape, DType::kUInt8);
  for (DType dtype : kFloatTypes) {
    const Tensor dy = RandomTensor(dtype, shape, 13);
    const std::vector<double> g = ToDoubles(dy), m = ToDoubles(mask);
    std::vector<double> up(g.size()), down(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      up[i] = g[i] * m[i] / Keep(0.2);
      down[i] = g[i] * m[i];
    }
    ExpectClose(RunKernel("dropout_grad", dtype, {&mask, &dy},
                          DropoutAttrs(0.2, false, "upscale_in_train"), 1)[0],
                up, shape, ToleranceFor(dtype), std::string("upscale grad ") + DTypeName(dtype));
    ExpectClose(RunKernel("dropout_grad", dtype, {&mask, &dy},
                          DropoutAttrs(0.2, false, "downscale_in_infer"), 1)[0],
                down, shape, ToleranceFor(dtype),
                std::string("downscale grad ") + DTypeName(dtype));
    ExpectClose(RunKernel("dropout_grad", dtype, {&mask, &dy},
                          DropoutAttrs(1.0, false, "upscale_in_train"), 1)[0],
                std::vector<double>(g.size(), 0.0), shape, 0.0, "p = 1 grad");
  }
}

TEST(DropoutGradKernelTest, MaskMismatchIsAnError) {
  const Tensor dy = RandomTensor(DType::kFloat32, {2, 3}, 14);
  const Tensor short_mask = Tensor::ZerosUnchecked(DType::kUInt8, {3, 2});
  const Tensor float_mask = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
  const KernelAttrs attrs = DropoutAttrs(0.5, false, "upscale_in_train");
  auto r = TryRunKernel("dropout_grad", DType::kFloat32, {&short_mask, &dy}, attrs, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "dropout_grad: mask uint8[3, 2] and out_grad float32[2, 3] differ in shape");
  r = TryRunKernel("dropout_grad", DType::kFloat32, {&float_mask, &dy}, attrs, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "dropout_grad: mask is float32[2, 3], expected uint8");
}

}  // namespace
}  // namespace irm::rt
