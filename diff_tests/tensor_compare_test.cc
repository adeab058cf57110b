// Tensor comparison against hand-computed values: each metric, each tier just inside and just
// outside its bound, NaN/Inf positions, ULP distances across the sign boundary, float16/bfloat16,
// integers, and dtype or shape mismatches.
#include "diff_tests/tensor_compare.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff {
namespace {

using rt::Tensor;
using rt::testing::FromDoubles;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor F32(const std::vector<double>& v) {
  return FromDoubles(v, {static_cast<int64_t>(v.size())}, DType::kFloat32);
}
Tensor Of(DType dtype, const std::vector<double>& v) {
  return FromDoubles(v, {static_cast<int64_t>(v.size())}, dtype);
}

// The largest float f with f - 1 <= d (in double), and the float after it.
std::pair<float, float> AroundOnePlus(double d) {
  float f = static_cast<float>(1.0 + d);
  while (static_cast<double>(f) - 1.0 > d) f = std::nextafter(f, 0.0f);
  while (static_cast<double>(std::nextafter(f, 2.0f)) - 1.0 <= d) f = std::nextafter(f, 2.0f);
  return {f, std::nextafter(f, 2.0f)};
}

TEST(TensorCompareTest, MetricsOfASmallFloat32Pair) {
  // a - b = [0, -0.5, 0, 2].
  const Comparison c = CompareTensors(F32({1, 2, 3, 4}), F32({1, 2.5, 3, 2}), Tier::kExact);
  const TensorMetrics& m = c.metrics;
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.reason, "bits differ at 2 of 4 elements");
  EXPECT_EQ(m.numel, 4);
  EXPECT_FALSE(m.bits_equal);
  EXPECT_EQ(m.max_abs_diff, 2.0);
  EXPECT_EQ(m.max_abs_index, 3);
  EXPECT_EQ(m.max_rel_diff, 1.0);  // 2 / |2|; the other is 0.5 / 2.5 = 0.2
  EXPECT_EQ(m.max_rel_index, 3);
  EXPECT_DOUBLE_EQ(m.normwise, std::sqrt(0.25 + 4.0) / std::sqrt(1 + 6.25 + 9 + 4));
  EXPECT_EQ(m.mismatch_count, 2);
  EXPECT_EQ(m.mismatch_percent, 50.0);
  // 2 vs 2.5: 0.5 / 2^-22 = 2^21 ULP; 4 vs 2: the 2^23 floats of [2, 4). Median of {0, 0, 2^21,
  // 2^23} is (0 + 2^21) / 2.
  EXPECT_EQ(m.ulp_max, uint64_t{1} << 23);
  EXPECT_EQ(m.ulp_median, static_cast<double>(uint64_t{1} << 20));
  EXPECT_DOUBLE_EQ(m.cosine, 23.0 / (std::sqrt(30.0) * 4.5));
  EXPECT_EQ(m.nonfinite_mismatches, 0);
}

TEST(TensorCompareTest, EqualTensorsPassEveryTier) {
  for (Tier tier : {Tier::kExact, Tier::kReordered, Tier::kNoiseFloor}) {
    const Comparison c = CompareTensors(F32({1, -2, kNan, kInf}), F32({1, -2, kNan, kInf}), tier);
    EXPECT_TRUE(c.pass) << TierName(tier) << ": " << c.reason;
    EXPECT_TRUE(c.metrics.bits_equal);
    EXPECT_EQ(c.metrics.max_abs_index, -1);
    EXPECT_EQ(c.metrics.mismatch_count, 0);
  }
}

TEST(TensorCompareTest, ExactTierSeesTheSignOfZero) {
  const Comparison c = CompareTensors(F32({0.0, 1}), F32({-0.0, 1}), Tier::kExact);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.metrics.max_abs_diff, 0.0);
  EXPECT_EQ(c.metrics.ulp_max, 0u);
  EXPECT_EQ(c.metrics.mismatch_count, 1);
  EXPECT_TRUE(CompareTensors(F32({0.0, 1}), F32({-0.0, 1}), Tier::kReordered).pass);
}

TEST(TensorCompareTest, ReorderedNormwiseBoundJustInsideAndOutside) {
  // One element: normwise = |a - 1|; fp32 R = 1e-5 (the elementwise bound 1.1e-4 is looser).
  const auto [inside, outside] = AroundOnePlus(1e-5);
  const Comparison in = CompareTensors(F32({inside}), F32({1}), Tier::kReordered);
  EXPECT_TRUE(in.pass) << in.reason;
  const Comparison out = CompareTensors(F32({outside}), F32({1}), Tier::kReordered);
  EXPECT_FALSE(out.pass);
  EXPECT_EQ(out.reason.rfind("normwise ", 0), 0u) << out.reason;
  EXPECT_NE(out.reason.find("> 1e-05"), std::string::npos) << out.reason;
}

TEST(TensorCompareTest, ReorderedElementwiseBoundJustInsideAndOutside) {
  // 10000 ones with one element off by d: normwise d / 100 stays far below R, and the element's
  // bound is 1e-5 * max|b| + 1e-4 * |b| = 1.1e-4.
  const auto [inside, outside] = AroundOnePlus(1.1e-4);
  std::vector<double> b(10000, 1.0);
  std::vector<double> a = b;
  a[7] = inside;
  EXPECT_TRUE(CompareTensors(F32(a), F32(b), Tier::kReordered).pass);
  a[7] = outside;
  const Comparison c = CompareTensors(F32(a), F32(b), Tier::kReordered);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.reason, "1 element beyond 1e-05 x max|b| + 0.0001 x |b|");
  EXPECT_EQ(c.metrics.mismatch_count, 1);
  EXPECT_EQ(c.metrics.max_abs_index, 7);
}

TEST(TensorCompareTest, NanAndInfMustMatchByPosition) {
  const Comparison c =
      CompareTensors(F32({1, kNan, kInf, 4}), F32({1, 2, -kInf, kNan}), Tier::kReordered);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.reason, "NaN/Inf differ at 3 positions, first at 1");
  EXPECT_EQ(c.metrics.nonfinite_mismatches, 3);
  EXPECT_EQ(c.metrics.first_nonfinite_mismatch, 1);
  // The finite pair (1, 1) is all the numeric metrics see.
  EXPECT_EQ(c.metrics.max_abs_diff, 0.0);
}

TEST(TensorCompareTest, UlpDistanceAcrossTheSignBoundary) {
  EXPECT_EQ(UlpDistance(DType::kFloat32, 0x00000000, 0x80000000), 0u);  // +0, -0
  EXPECT_EQ(UlpDistance(DType::kFloat32, 0x00000001, 0x80000001), 2u);  // +-smallest subnormal
  EXPECT_EQ(UlpDistance(DType::kFloat32, 0x3f800000, 0xbf800000), 2u * 0x3f800000u);  // 1, -1
  EXPECT_EQ(UlpDistance(DType::kFloat32, 0x3f800000, 0x3f800001), 1u);
  EXPECT_EQ(UlpDistance(DType::kFloat16, 0x0001, 0x8001), 2u);
  EXPECT_EQ(UlpDistance(DType::kFloat16, 0x3c00, 0x3c01), 1u);
  EXPECT_EQ(UlpDistance(DType::kBFloat16, 0x3f80, 0xbf80), 2u * 0x3f80u);
  // The largest finite doubles of both signs: the distance still fits 64 bits.
  EXPECT_EQ(UlpDistance(DType::kFloat64, 0x7fefffffffffffffull, 0xffefffffffffffffull),
            2 * 0x7fefffffffffffffull);
  EXPECT_EQ(UlpDistance(DType::kInt32, 1, 5), 0u);
  // Through a comparison: 1 vs -1 in float16.
  const Comparison c =
      CompareTensors(Of(DType::kFloat16, {1}), Of(DType::kFloat16, {-1}), Tier::kExact);
  EXPECT_EQ(c.metrics.ulp_max, 2u * 0x3c00u);
}

TEST(TensorCompareTest, Float16AndBFloat16ReorderedBounds) {
  // bfloat16 R = 1.6e-2: 1 + 2^-7 is inside, 1 + 3 * 2^-7 outside.
  EXPECT_TRUE(
      CompareTensors(Of(DType::kBFloat16, {1.0078125}), Of(DType::kBFloat16, {1}), Tier::kReordered)
          .pass);
  EXPECT_FALSE(
      CompareTensors(Of(DType::kBFloat16, {1.0234375}), Of(DType::kBFloat16, {1}), Tier::kReordered)
          .pass);
  // float16 R = 2e-3: 1 + 2^-10 inside, 1 + 3 * 2^-10 outside.
  EXPECT_TRUE(CompareTensors(Of(DType::kFloat16, {1.0 + 1.0 / 1024}), Of(DType::kFloat16, {1}),
                             Tier::kReordered)
                  .pass);
  EXPECT_FALSE(CompareTensors(Of(DType::kFloat16, {1.0 + 3.0 / 1024}), Of(DType::kFloat16, {1}),
                              Tier::kReordered)
                   .pass);
  EXPECT_EQ(ReorderedBoundsFor(DType::kFloat64).normwise, 1e-12);
  EXPECT_EQ(ReorderedBoundsFor(DType::kBFloat16).rel, 1.6e-2);
}

TEST(TensorCompareTest, NoiseFloorJustInsideAndOutside) {
  // Shadow [1, 2]; the reference errs by 0.5, so the candidate may err by 2 x 0.5 = 1.
  const Tensor shadow = Of(DType::kFloat64, {1, 2});
  const Tensor reference = F32({1, 2.5});
  const Comparison in = CompareTensors(F32({1, 3}), reference, Tier::kNoiseFloor, &shadow);
  EXPECT_TRUE(in.pass) << in.reason;
  EXPECT_FALSE(CompareTensors(F32({1, 3}), reference, Tier::kReordered).pass);
  const Comparison out =
      CompareTensors(F32({1, std::nextafter(3.0f, 4.0f)}), reference, Tier::kNoiseFloor, &shadow);
  EXPECT_FALSE(out.pass);
  EXPECT_EQ(out.reason.rfind("error against the float64 shadow", 0), 0u) << out.reason;
  // float16: 3 x. 3.5 errs by 1.5 = 3 x 0.5; the next float16 (3.5 + 2^-9) does not pass.
  const Tensor half_ref = Of(DType::kFloat16, {1, 2.5});
  EXPECT_TRUE(
      CompareTensors(Of(DType::kFloat16, {1, 3.5}), half_ref, Tier::kNoiseFloor, &shadow).pass);
  EXPECT_FALSE(CompareTensors(Of(DType::kFloat16, {1, 3.5 + 1.0 / 512}), half_ref,
                              Tier::kNoiseFloor, &shadow)
                   .pass);
  // Without a shadow the tier falls back to reordered.
  EXPECT_FALSE(CompareTensors(F32({1, 3}), reference, Tier::kNoiseFloor).pass);
}

TEST(TensorCompareTest, IntegersAndBoolsAreExactInEveryTier) {
  const Comparison c =
      CompareTensors(Of(DType::kInt64, {1, 2, 3}), Of(DType::kInt64, {1, 2, 4}), Tier::kReordered);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.reason, "bits differ at 1 of 3 elements");
  EXPECT_EQ(c.metrics.max_abs_diff, 1.0);
  EXPECT_EQ(c.metrics.ulp_max, 0u);  // no ULPs for integers
  EXPECT_FALSE(
      CompareTensors(Of(DType::kBool, {1, 0}), Of(DType::kBool, {1, 1}), Tier::kNoiseFloor).pass);
  EXPECT_TRUE(
      CompareTensors(Of(DType::kInt32, {7, -7}), Of(DType::kInt32, {7, -7}), Tier::kReordered)
          .pass);
}

TEST(TensorCompareTest, DtypeOrShapeMismatchIsAMismatchWithAReason) {
  const Comparison dtype = CompareTensors(F32({1}), Of(DType::kFloat64, {1}), Tier::kReordered);
  EXPECT_FALSE(dtype.pass);
  EXPECT_EQ(dtype.reason, "dtype float32 vs float64");
  const Comparison shape =
      CompareTensors(FromDoubles({1, 2}, {1, 2}, DType::kFloat32), F32({1, 2}), Tier::kExact);
  EXPECT_FALSE(shape.pass);
  EXPECT_EQ(shape.reason, "shape [1, 2] vs [2]");
  EXPECT_EQ(CompareTensors(Tensor(), F32({1}), Tier::kExact).reason, "the candidate has no tensor");
  EXPECT_EQ(CompareTensors(F32({1}), Tensor(), Tier::kExact).reason, "the reference has no tensor");
  const Tensor shadow = Of(DType::kFloat64, {1, 2, 3});
  EXPECT_EQ(CompareTensors(F32({1, 2}), F32({1, 3}), Tier::kNoiseFloor, &shadow).reason,
            "the float64 shadow is [3], the reference [2]");
}

TEST(TensorCompareTest, RelativeDiffAndCosineAtZero) {
  const Comparison c = CompareTensors(F32({0, 1}), F32({0, 0}), Tier::kReordered);
  EXPECT_EQ(c.metrics.max_rel_diff, kInf);
  EXPECT_EQ(c.metrics.max_rel_index, 1);
  EXPECT_EQ(c.metrics.normwise, kInf);
  EXPECT_EQ(c.metrics.cosine, 0.0);
  EXPECT_EQ(CompareTensors(F32({0, 0}), F32({0, 0}), Tier::kExact).metrics.cosine, 1.0);
  EXPECT_EQ(TierFromName("reordered"), Tier::kReordered);
  EXPECT_EQ(TierFromName("loose"), std::nullopt);
}

}  // namespace
}  // namespace irm::diff
