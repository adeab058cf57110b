// Tests of cast: every pair of runtime dtypes against a naive float64 statement of the rules in
// convert.h (16-bit targets by searching the nearest of all finite 16-bit values), plus the cases
// the rules single out: double rounding, integer wrap, saturation, NaN, signed zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::FromDoubles;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::TryRunKernel;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

KernelAttrs CastTo(DType dtype) {
  KernelAttrs attrs;
  attrs.Set("dtype", dtype);
  return attrs;
}

Tensor Cast(const Tensor& x, DType to) {
  return std::move(RunKernel("cast", x.dtype(), {&x}, CastTo(to), 1)[0]);
}

// The finite non-negative values of a 16-bit float format, indexed by their bits, decoded here
// from the format's definition (not through half.h).
std::vector<double> Float16Values() {
  std::vector<double> v;
  for (uint32_t bits = 0; bits <= 0x7bff; ++bits) {
    const int e = static_cast<int>(bits >> 10);
    const double m = bits & 0x3ff;
    v.push_back(e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25));
  }
  return v;
}
std::vector<double> BFloat16Values() {
  std::vector<double> v;
  for (uint32_t bits = 0; bits <= 0x7f7f; ++bits) {
    v.push_back(std::bit_cast<float>(bits << 16));
  }
  return v;
}

// Round to nearest, ties to the even bit pattern, by search: overflow past max + half an ulp (a
// tie there goes to the infinity, max's pattern being odd) gives an infinity.
double NearestIn(const std::vector<double>& values, double v) {
  if (std::isnan(v)) return kNaN;
  const double a = std::abs(v);
  const double max = values.back();
  const double threshold = max + (max - values[values.size() - 2]) / 2;
  double r;
  if (a >= threshold) {
    r = kInf;
  } else {
    const size_t hi =
        static_cast<size_t>(std::lower_bound(values.begin(), values.end(), a) - values.begin());
    if (hi == values.size()) {
      r = max;
    } else if (values[hi] == a || hi == 0) {
      r = values[hi];
    } else {
      const double below = a - values[hi - 1];
      const double above = values[hi] - a;
      r = below < above   ? values[hi - 1]
          : above < below ? values[hi]
                          : values[(hi & 1) ? hi - 1 : hi];
    }
  }
  return std::copysign(r, v);
}

bool IsInt(DType d) {
  return d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt16 || d == DType::kInt32 ||
         d == DType::kInt64;
}

// Bits and signedness of an integer dtype.
int Bits(DType d) { return static_cast<int>(DTypeSize(d)) * 8; }
bool Signed(DType d) { return d != DType::kUInt8; }

// The rules of convert.h, stated on float64 values that are exact in the source dtype.
double Expected(double v, DType from, DType to) {
  static const std::vector<double> f16 = Float16Values();
  static const std::vector<double> bf16 = BFloat16Values();
  switch (to) {
    case DType::kBool:
      return (v != 0 || std::isnan(v)) ? 1 : 0;
    case DType::kFloat64:
      return v;
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat16:
      return NearestIn(f16, v);
    case DType::kBFloat16:
      return NearestIn(bf16, v);
    default:
      break;
  }
  const double lo = Signed(to) ? -std::ldexp(1.0, Bits(to) - 1) : 0.0;
  const double hi = std::ldexp(1.0, Bits(to) - (Signed(to) ? 1 : 0)) - 1;
  if (IsInt(from) || from == DType::kBool) {
    // Wrap modulo 2^bits (v is an integer below 2^53 here).
    if (v >= lo && v <= hi) return v;
    const double span = std::ldexp(1.0, Bits(to));
    double w = std::fmod(v, span);
    if (w < 0) w += span;
    if (w > hi) w -= span;
    return w;
  }
  if (std::isnan(v)) return 0;
  return std::clamp(std::trunc(v), lo, hi);
}

// Values of each source dtype worth converting: the limits, the ties of the 16-bit formats, the
// edges of every integer range, and random ones.
std::vector<double> Candidates(DType from) {
  std::vector<double> v;
  switch (from) {
    case DType::kBool:
      return {0, 1, 1, 0};
    case DType::kInt8:
      v = {-128, -1, 0, 1, 127, 100, -100};
      break;
    case DType::kUInt8:
      v = {0, 1, 127, 128, 255, 200};
      break;
    case DType::kInt16:
      v = {-32768, -129, -128, 127, 128, 255, 256, 32767, -1, 2049, 2051};
      break;
    case DType::kInt32:
    case DType::kInt64:
      v = {-2147483648.0, 2147483647, 65504, 65519, 65520, 70000, 16777217,
           33554435,      -32769,     4097,  -1,    0,     300,   -300};
      if (from == DType::kInt64) {
        v.push_back(std::ldexp(1.0, 40) + std::ldexp(1.0, 32) + 1);
        v.push_back(-std::ldexp(1.0, 52) - 3);
      }
      break;
    default:
      v = {0.0,
           -0.0,
           0.5,
           -0.5,
           1.5,
           -2.7,
           127.9,
           128.0,
           -128.0,
           -128.9,
           -129.5,
           255.5,
           256,
           300.25,
           32767.5,
           65504,
           65519,
           65520,
           70000,
           1e10,
           -1e10,
           3e38,
           1e300,
           -1e300,
           1 + std::ldexp(1.0, -11),
           1 + 3 * std::ldexp(1.0, -11),
           1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
           1 + std::ldexp(1.0, -8),
           1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40),
           std::ldexp(1.0, -25),
           std::ldexp(1.0, -25) + std::ldexp(1.0, -60),
           1e-30,
           1e-45,
           kNaN,
           kInf,
           -kInf,
           std::ldexp(1.0, 63),
           -std::ldexp(1.0, 63),
           std::ldexp(1.0, 31),
           -std::ldexp(1.0, 31) - 0.5};
      break;
  }
  const Tensor random = RandomTensor(DType::kFloat64, {24}, 7, -300, 300);
  for (double r : ToDoubles(random)) {
    v.push_back(IsInt(from) && !Signed(from) ? std::floor(std::abs(r)) : std::floor(r));
    if (!IsInt(from)) v.push_back(r);
  }
  if (from == DType::kInt8) {
    for (double& x : v) x = std::clamp(x, -128.0, 127.0);
  }
  if (from == DType::kUInt8) {
    for (double& x : v) x = std::clamp(x, 0.0, 255.0);
  }
  return v;
}

TEST(CastTest, EveryPairOfDTypesFollowsTheRules) {
  for (DType from : data::kEveryDType) {
    const std::vector<double> candidates = Candidates(from);
    const std::vector<int64_t> shape = {static_cast<int64_t>(candidates.size())};
    const Tensor x = FromDoubles(candidates, shape, from);
    const std::vector<double> exact = ToDoubles(x);  // what the source dtype holds
    for (DType to : data::kEveryDType) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
      const Tensor out = Cast(x, to);
      EXPECT_EQ(out.dtype(), to);
      std::vector<double> expected;
      for (double v : exact) expected.push_back(Expected(v, from, to));
      ExpectClose(out, expected, shape, 0.0, "out");
    }
  }
}

TEST(CastTest, KeepsTheShapeIncludingZeroDAndEmpty) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{}, {0}, {2, 0, 3}, {1, 1}, {2, 3, 4}}) {
    const Tensor x = RandomTensor(DType::kFloat32, shape, 3, -5, 5);
    const Tensor out = Cast(x, DType::kInt16);
    std::vector<double> expected;
    for (double v : ToDoubles(x)) expected.push_back(std::trunc(v));
    ExpectClose(out, expected, shape, 0.0, "out");
  }
}

TEST(CastTest, Float64ToSixteenBitsRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the float16 midpoint between 1 and 1 + 2^-10; rounded to
  // float32 first (to nearest) it would become the midpoint and then round down to 1.
  const Tensor x = Tensor::FromVector<double>(
      {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1 + std::ldexp(1.0, -11),
       1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), 1 + std::ldexp(1.0, -8)},
      {4});
  const std::vector<double> f16 = ToDoubles(Cast(x, DType::kFloat16));
  EXPECT_EQ(f16[0], 1 + std::ldexp(1.0, -10));
  EXPECT_EQ(f16[1], 1.0);
  const std::vector<double> bf16 = ToDoubles(Cast(x, DType::kBFloat16));
  EXPECT_EQ(bf16[2], 1 + std::ldexp(1.0, -7));
  EXPECT_EQ(bf16[3], 1.0);
}

TEST(CastTest, Int64ToBFloat16RoundsOnce) {
  // 2^40 + 2^32 + 1 is above the bfloat16 midpoint 2^40 + 2^32; float32 would drop the 1.
  const int64_t big = (int64_t{1} << 40) + (int64_t{1} << 32) + 1;
  const Tensor x = Tensor::FromVector<int64_t>(
      {big, -big, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}, {4});
  const std::vector<double> out = ToDoubles(Cast(x, DType::kBFloat16));
  EXPECT_EQ(out[0], std::ldexp(1.0, 40) + std::ldexp(1.0, 33));
  EXPECT_EQ(out[1], -(std::ldexp(1.0, 40) + std::ldexp(1.0, 33)));
  EXPECT_EQ(out[2], -std::ldexp(1.0, 63));
  EXPECT_EQ(out[3], std::ldexp(1.0, 63));
  EXPECT_TRUE(std::isinf(ToDoubles(Cast(x, DType::kFloat16))[0]));
}

TEST(CastTest, IntegersWrapExactlyAtEveryWidth) {
  const Tensor x = Tensor::FromVector<int64_t>(
      {std::numeric_limits<int64_t>::max(), 300, -1, (int64_t{1} << 32) + 5, -129}, {5});
  const Tensor i32 = Cast(x, DType::kInt32);
  EXPECT_EQ(std::vector<int32_t>(i32.data<int32_t>(), i32.data<int32_t>() + 5),
            (std::vector<int32_t>{-1, 300, -1, 5, -129}));
  const Tensor i8 = Cast(x, DType::kInt8);
  EXPECT_EQ(std::vector<int8_t>(i8.data<int8_t>(), i8.data<int8_t>() + 5),
            (std::vector<int8_t>{-1, 44, -1, 5, 127}));
  const Tensor u8 = Cast(x, DType::kUInt8);
  EXPECT_EQ(std::vector<uint8_t>(u8.data<uint8_t>(), u8.data<uint8_t>() + 5),
            (std::vector<uint8_t>{255, 44, 255, 5, 127}));
}

TEST(CastTest, FloatToInt64TruncatesAndSaturatesExactly) {
  const Tensor x =
      Tensor::FromVector<double>({3e9 + 0.75, -3e9 - 0.75, 9.3e18, -std::ldexp(1.0, 63), -1e19,
                                  kNaN, kInf, -kInf, std::ldexp(1.0, 53) + 2},
                                 {9});
  const Tensor out = Cast(x, DType::kInt64);
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(std::vector<int64_t>(out.data<int64_t>(), out.data<int64_t>() + 9),
            (std::vector<int64_t>{3000000000, -3000000000, max, min, min, 0, max, min,
                                  (int64_t{1} << 53) + 2}));
}

TEST(CastTest, SignedZeroAndNaNSurviveFloatToFloat) {
  const Tensor x = Tensor::FromVector<double>({-0.0, kNaN, -kNaN}, {3});
  const Tensor h = Cast(x, DType::kFloat16);
  EXPECT_EQ(h.data<Float16>()[0].bits, 0x8000);
  EXPECT_TRUE(std::isnan(ToDoubles(h)[1]));
  const Tensor b = Cast(x, DType::kBFloat16);
  EXPECT_EQ(b.data<BFloat16>()[0].bits, 0x8000);
  EXPECT_TRUE(std::isnan(ToDoubles(b)[2]));
  const Tensor f = Cast(x, DType::kFloat32);
  EXPECT_TRUE(std::signbit(f.data<float>()[0]));
  EXPECT_TRUE(std::isnan(f.data<float>()[1]));
}

TEST(CastTest, ToBoolIsNonZeroNotTruncation) {
  const Tensor x = Tensor::FromVector<float>({0.25f, -0.0f, 0.0f, std::nanf("")}, {4});
  const Tensor out = Cast(x, DType::kBool);
  EXPECT_EQ(std::vector<bool>(out.data<bool>(), out.data<bool>() + 4),
            (std::vector<bool>{true, false, false, true}));
}

TEST(CastTest, RejectsAComplexTargetAndAMissingDType) {
  const Tensor x = RandomTensor(DType::kFloat32, {2}, 1);
  auto complex = TryRunKernel("cast", DType::kFloat32, {&x}, CastTo(DType::kComplex64), 1);
  ASSERT_FALSE(complex.ok());
  EXPECT_EQ(complex.status().message(),
            "cast: dtype complex64 is not a dtype the runtime computes with");
  auto missing = TryRunKernel("cast", DType::kFloat32, {&x}, KernelAttrs{}, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "attribute 'dtype' is missing");
}

}  // namespace
}  // namespace irm::rt
