// Elementwise forward kernels against float64 references written here (naive broadcasting by
// multi-index), for every registered dtype and broadcast shapes with size-1 and missing dims:
// the arithmetic binary ops (a table, one row per kernel), comparisons and logic, increment and
// scale; then Paddle's edge semantics (remainder's sign, floor_divide's rounding, maximum with NaN,
// float equal's tolerance and not_equal as its negation, integer wrap-around) and every error
// message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/kernels/naive_broadcast_test_support.h"

namespace irm::rt {
namespace {

using testing::FromDoubles;
using testing::NaiveBinary;
using testing::RandomTensor;
using testing::RunKernel;
using testing::Shape;
using testing::ToDoubles;
using testing::TryRunKernel;

struct BroadcastCase {
  Shape x, y, out;
};
const std::vector<BroadcastCase> kCases = {
    {{2, 3}, {2, 3}, {2, 3}},
    {{2, 3}, {3}, {2, 3}},
    {{4, 1, 5}, {3, 1}, {4, 3, 5}},
    {{1}, {2, 1, 3}, {2, 1, 3}},
    {{}, {3}, {3}},
    {{2, 1}, {1, 3}, {2, 3}},
    {{1, 1}, {1, 1}, {1, 1}},
    {{3, 1, 2, 1}, {1, 4, 1, 5}, {3, 4, 2, 5}},
    {{6, 7, 8}, {6, 7, 8}, {6, 7, 8}},
};

const std::vector<DType> kArithmetic = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                        DType::kBFloat16, DType::kInt32,   DType::kInt64};
const std::vector<DType> kNumeric = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                     DType::kBFloat16, DType::kInt8,    DType::kUInt8,
                                     DType::kInt16,    DType::kInt32,   DType::kInt64};

std::string Where(const std::string& op, DType dtype, const BroadcastCase& c) {
  return op + " " + DTypeName(dtype) + " x " + ShapeToString(c.x) + " y " + ShapeToString(c.y);
}

// A divisor without zeros (nor values near zero for floats): |v| >= 0.5, integers != 0.
Tensor NonZero(const Tensor& t) {
  std::vector<double> v = ToDoubles(t);
  for (double& e : v) {
    if (IsFloatingDType(t.dtype())) {
      e = e >= 0 ? e + 0.5 : e - 0.5;
    } else if (e == 0) {
      e = 7;
    }
  }
  return FromDoubles(v, t.shape(), t.dtype());
}

// Python's % on doubles: the remainder with the divisor's sign.
double PyMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// One row per broadcasting binary kernel: its float64 reference and the range its operands are
// drawn from (a new kernel of the family is one row here).
struct BinaryOp {
  std::string name;
  std::function<double(double, double)> f;
  std::function<double(double, double)> f_int;  // integers, when they differ
  double x_low = -20, x_high = 20, y_low = -20, y_high = 20;
};

const std::vector<BinaryOp> kBinaryOps = {
    {"add", [](double a, double b) { return a + b; }, nullptr},
    {"subtract", [](double a, double b) { return a - b; }, nullptr},
    {"multiply", [](double a, double b) { return a * b; }, nullptr},
    {"divide", [](double a, double b) { return a / b; },
     [](double a, double b) { return std::trunc(a / b); }},
    // Python's //: the floor of the exact quotient (float64 holds the quotient of two inputs of
    // these dtypes closely enough that no floor lands on the wrong integer).
    {"floor_divide", [](double a, double b) { return std::floor(a / b); }, nullptr},
    {"maximum", [](double a, double b) { return a > b ? a : b; }, nullptr},
    {"remainder", PyMod, nullptr},
    // phi's ElementwisePowFunctor: integers take the rounded double power. A positive base and a
    // small exponent keep every dtype's result finite and in range.
    {"elementwise_pow", [](double a, double b) { return std::pow(a, b); },
     [](double a, double b) { return std::nearbyint(std::pow(a, b)); }, 1, 5, 0, 4},
};

TEST(ElementwiseTest, BinaryOpsMatchFloat64ForEveryDTypeAndBroadcast) {
  uint64_t seed = 1;
  for (const BinaryOp& op : kBinaryOps) {
    const bool divides = op.name == "divide" || op.name == "floor_divide" || op.name == "remainder";
    for (DType dtype : kArithmetic) {
      for (const BroadcastCase& c : kCases) {
        const Tensor x = RandomTensor(dtype, c.x, ++seed, op.x_low, op.x_high);
        Tensor y = RandomTensor(dtype, c.y, ++seed, op.y_low, op.y_high);
        if (divides) y = NonZero(y);
        const auto& f = IsFloatingDType(dtype) || !op.f_int ? op.f : op.f_int;
        const std::vector<double> expected =
            NaiveBinary(ToDoubles(x), c.x, ToDoubles(y), c.y, c.out, f);
        const std::vector<Tensor> out = RunKernel(op.name, dtype, {&x, &y}, {}, 1);
        ASSERT_EQ(out[0].dtype(), dtype);
        testing::ExpectClose(out[0], expected, c.out, testing::ToleranceFor(dtype),
                             Where(op.name, dtype, c));
      }
    }
  }
}

// Few distinct values, so that equal pairs and zeros occur: multiples of 0.5 in [-2, 2) for
// floats, integers in [-2, 2) ([0, 4) for uint8; false and true for bool).
Tensor FewValues(DType dtype, const Shape& shape, uint64_t seed) {
  std::vector<double> v = ToDoubles(RandomTensor(DType::kFloat64, shape, seed, -2, 2));
  for (double& e : v) {
    if (dtype == DType::kBool) {
      e = e >= 0 ? 1 : 0;
    } else if (IsFloatingDType(dtype)) {
      e = std::floor(e * 2) / 2;
    } else {
      e = std::floor(e) + (dtype == DType::kUInt8 ? 2 : 0);
    }
  }
  return FromDoubles(v, shape, dtype);
}

TEST(ElementwiseTest, ComparisonsAndLogicMatchFloat64ForEveryDType) {
  uint64_t seed = 100;
  std::vector<DType> with_bool = kNumeric;
  with_bool.push_back(DType::kBool);
  for (DType dtype : with_bool) {
    for (const BroadcastCase& c : kCases) {
      const Tensor x = FewValues(dtype, c.x, ++seed);
      const Tensor y = FewValues(dtype, c.y, ++seed);
      const std::vector<double> xs = ToDoubles(x), ys = ToDoubles(y);
      auto check = [&](const std::string& name, const std::function<double(double, double)>& f) {
        const std::vector<Tensor> out = RunKernel(name, dtype, {&x, &y}, {}, 1);
        ASSERT_EQ(out[0].dtype(), DType::kBool) << name;
        testing::ExpectClose(out[0], NaiveBinary(xs, c.x, ys, c.y, c.out, f), c.out, 0,
                             Where(name, dtype, c));
      };
      check("equal", [](double a, double b) { return a == b ? 1.0 : 0.0; });
      check("not_equal", [](double a, double b) { return a != b ? 1.0 : 0.0; });
      check("logical_and", [](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; });
      if (dtype != DType::kBool) {
        check("less_than", [](double a, double b) { return a < b; });
        check("greater_than", [](double a, double b) { return a > b; });
      }
    }
    const Tensor x = FewValues(dtype, {3, 4}, ++seed);
    std::vector<double> expected;
    for (double v : ToDoubles(x)) expected.push_back(v == 0 ? 1.0 : 0.0);
    const std::vector<Tensor> out = RunKernel("logical_not", dtype, {&x}, {}, 1);
    testing::ExpectClose(out[0], expected, {3, 4}, 0,
                         std::string("logical_not ") + DTypeName(dtype));
  }
}

TEST(ElementwiseTest, IncrementAndScaleMatchFloat64) {
  uint64_t seed = 200;
  for (DType dtype : kArithmetic) {
    for (const Shape& shape : std::vector<Shape>{{}, {1}, {3, 1, 4}}) {
      const Tensor x = RandomTensor(dtype, shape, ++seed, -50, 50);
      const std::vector<double> xs = ToDoubles(x);
      const bool is_int = !IsFloatingDType(dtype);
      // Integers take the attribute's integral part (2.5 -> 2, -0.5 -> 0).
      KernelAttrs inc;
      inc.Set("value", 2.5);
      std::vector<double> expected;
      for (double v : xs) expected.push_back(v + (is_int ? 2.0 : 2.5));
      testing::ExpectClose(RunKernel("increment", dtype, {&x}, inc, 1)[0], expected, shape,
                           testing::ToleranceFor(dtype),
                           std::string("increment ") + DTypeName(dtype));
      expected.clear();
      for (double v : xs) expected.push_back(v + 1.0);
      testing::ExpectClose(RunKernel("increment", dtype, {&x}, {}, 1)[0], expected, shape,
                           testing::ToleranceFor(dtype), "increment by default 1");

      for (bool after : {true, false}) {
        KernelAttrs attrs;
        attrs.Set("scale", is_int ? -3.0 : -0.75);
        attrs.Set("bias", is_int ? 4.0 : 0.125);
        attrs.Set("bias_after_scale", after);
        const double s = is_int ? -3.0 : -0.75, b = is_int ? 4.0 : 0.125;
        expected.clear();
        for (double v : xs) expected.push_back(after ? s * v + b : s * (v + b));
        testing::ExpectClose(RunKernel("scale", dtype, {&x}, attrs, 1)[0], expected, shape,
                             testing::ToleranceFor(dtype),
                             std::string("scale ") + DTypeName(dtype) + (after ? " after" : ""));
      }
    }
  }
}

// ---- Paddle's edge semantics
// ---------------------------------------------------------------------

TEST(ElementwiseTest, RemainderTakesTheDivisorsSign) {
  const Tensor xi = Tensor::FromVector<int32_t>({-7, 7, -7, 7, 6}, {5});
  const Tensor yi = Tensor::FromVector<int32_t>({3, -3, -3, 3, -3}, {5});
  EXPECT_EQ(ToDoubles(RunKernel("remainder", DType::kInt32, {&xi, &yi}, {}, 1)[0]),
            (std::vector<double>{2, -2, -1, 1, 0}));
  const Tensor xf = Tensor::FromVector<double>({-7.5, 7.5, -0.0, 5}, {4});
  const Tensor yf = Tensor::FromVector<double>({2, -2, 3, 0}, {4});
  const std::vector<double> out =
      ToDoubles(RunKernel("remainder", DType::kFloat64, {&xf, &yf}, {}, 1)[0]);
  EXPECT_EQ(out[0], 0.5);
  EXPECT_EQ(out[1], -0.5);
  EXPECT_EQ(out[2], 0.0);
  EXPECT_TRUE(std::isnan(out[3]));  // a float divisor of zero is no error
}

// Paddle's FloorDivideFunctor (paddle/phi/kernels/funcs/elementwise_functor.h) is Python's //;
// the expected values are Python's (`7 // -2`, `1.0 // 0.1`, `-1.0 // math.inf`, ...).
TEST(ElementwiseTest, FloorDivideRoundsTowardsMinusInfinityAsPython) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const Tensor xi = Tensor::FromVector<int32_t>({7, -7, 7, -7, 6, -6, 0, kMin, kMin}, {9});
  const Tensor yi = Tensor::FromVector<int32_t>({2, 2, -2, -2, -3, 3, -3, -1, 1}, {9});
  EXPECT_EQ(ToDoubles(RunKernel("floor_divide", DType::kInt32, {&xi, &yi}, {}, 1)[0]),
            (std::vector<double>{3, -4, -4, 3, -2, -2, 0, kMin, kMin}));

  const double inf = std::numeric_limits<double>::infinity();
  const Tensor xf = Tensor::FromVector<double>({7.5, -7.5, 7.5, 1, 0, 0, -1, 1, 1, -1, 0}, {11});
  const Tensor yf = Tensor::FromVector<double>({2, 2, -2, 0.1, 3, -3, inf, inf, 0, 0, 0}, {11});
  const std::vector<double> out =
      ToDoubles(RunKernel("floor_divide", DType::kFloat64, {&xf, &yf}, {}, 1)[0]);
  ASSERT_EQ(out.size(), 11u);
  EXPECT_EQ(out[0], 3.0);
  EXPECT_EQ(out[1], -4.0);
  EXPECT_EQ(out[2], -4.0);
  EXPECT_EQ(out[3], 9.0);  // 0.1 is a little over 1/10: floor(1 / 0.1) would say 10
  EXPECT_EQ(out[4], 0.0);
  EXPECT_FALSE(std::signbit(out[4]));
  EXPECT_EQ(out[5], 0.0);
  EXPECT_TRUE(std::signbit(out[5]));  // 0 // -3 is -0.0
  EXPECT_EQ(out[6], -1.0);
  EXPECT_EQ(out[7], 0.0);
  EXPECT_EQ(out[8], inf);  // a float divisor of zero is no error: IEEE's x / 0
  EXPECT_EQ(out[9], -inf);
  EXPECT_TRUE(std::isnan(out[10]));

  // 16-bit floats divide in float32, as Paddle's float16 specialisation does.
  const Tensor hx = FromDoubles({-7.5, 1}, {2}, DType::kFloat16);
  const Tensor hy = FromDoubles({2, 0.25}, {2}, DType::kFloat16);
  EXPECT_EQ(ToDoubles(RunKernel("floor_divide", DType::kFloat16, {&hx, &hy}, {}, 1)[0]),
            (std::vector<double>{-4, 4}));
}

TEST(ElementwiseTest, MaximumPicksYUnlessXIsGreater) {
  // x > y ? x : y — a NaN in x yields y, a NaN in y yields the NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({nan, 1, -0.0f}, {3});
  const Tensor y = Tensor::FromVector<float>({1, nan, 0.0f}, {3});
  const std::vector<double> out =
      ToDoubles(RunKernel("maximum", DType::kFloat32, {&x, &y}, {}, 1)[0]);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_FALSE(std::signbit(out[2]));
}

TEST(ElementwiseTest, FloatEqualHasPaddlesTolerance) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::FromVector<double>({1, 1, inf, inf, nan, 0}, {6});
  const Tensor y = Tensor::FromVector<double>({1 + 1e-9, 1 + 1e-7, inf, -inf, nan, -0.0}, {6});
  EXPECT_EQ(ToDoubles(RunKernel("equal", DType::kFloat64, {&x, &y}, {}, 1)[0]),
            (std::vector<double>{1, 0, 1, 0, 0, 1}));
  // not_equal is its negation (phi's NotEqualFunctor): a NaN is not equal to itself.
  EXPECT_EQ(ToDoubles(RunKernel("not_equal", DType::kFloat64, {&x, &y}, {}, 1)[0]),
            (std::vector<double>{0, 1, 0, 1, 1, 0}));
  // 16-bit floats compare exactly: 1 and the next float16 (1 + 2^-10) differ.
  const Tensor hx = FromDoubles({1, 1}, {2}, DType::kFloat16);
  const Tensor hy = FromDoubles({1, 1 + 1.0 / 1024}, {2}, DType::kFloat16);
  EXPECT_EQ(ToDoubles(RunKernel("equal", DType::kFloat16, {&hx, &hy}, {}, 1)[0]),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(ToDoubles(RunKernel("not_equal", DType::kFloat16, {&hx, &hy}, {}, 1)[0]),
            (std::vector<double>{0, 1}));
}

TEST(ElementwiseTest, IntegerArithmeticWrapsAround) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const Tensor x = Tensor::FromVector<int32_t>({kMax, kMin, kMin, kMin}, {4});
  const Tensor y = Tensor::FromVector<int32_t>({1, -1, -1, -1}, {4});
  EXPECT_EQ(RunKernel("add", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[0], kMin);
  EXPECT_EQ(RunKernel("subtract", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[0], kMax - 1);
  EXPECT_EQ(RunKernel("divide", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[1], kMin);
  EXPECT_EQ(RunKernel("remainder", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[2], 0);
  EXPECT_EQ(RunKernel("multiply", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[3], kMin);
}

// ---- errors
// ----------------------------------------------------------------------------------------

std::string ErrorOf(const std::string& name, DType dtype, const std::vector<const Tensor*>& inputs,
                    const KernelAttrs& attrs = {}, size_t outputs = 1) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(name, dtype, inputs, attrs, outputs);
  return out.ok() ? "OK" : out.status().message();
}

TEST(ElementwiseTest, ShapesThatDoNotBroadcastAreAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor y = RandomTensor(DType::kFloat32, {4}, 2);
  for (const char* name :
       {"add", "subtract", "multiply", "divide", "floor_divide", "maximum", "remainder", "equal",
        "not_equal", "less_than", "greater_than", "logical_and"}) {
    EXPECT_EQ(ErrorOf(name, DType::kFloat32, {&x, &y}), "x [2, 3] and y [4] do not broadcast")
        << name;
  }
}

TEST(ElementwiseTest, OperandsOfAnotherDTypeAreAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {2}, 1);
  const Tensor y = RandomTensor(DType::kFloat64, {2}, 2);
  EXPECT_EQ(ErrorOf("add", DType::kFloat32, {&x, &y}), "y is float64, not float32");
  EXPECT_EQ(ErrorOf("equal", DType::kFloat64, {&x, &y}), "x is float32, not float64");
  EXPECT_EQ(ErrorOf("logical_not", DType::kFloat64, {&x}), "x is float32, not float64");
  EXPECT_EQ(ErrorOf("increment", DType::kFloat64, {&x}), "x is float32, not float64");
  EXPECT_EQ(ErrorOf("scale", DType::kFloat64, {&x}), "x is float32, not float64");
}

TEST(ElementwiseTest, IntegerDivisionByZeroNamesTheElement) {
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 0}, {2, 3});
  EXPECT_EQ(ErrorOf("divide", DType::kInt32, {&x, &y}),
            "integer division by zero: y[1, 2] is 0 (y [2, 3])");
  const Tensor xl = Tensor::FromVector<int64_t>({1, 2, 3}, {3});
  const Tensor yl = Tensor::FromVector<int64_t>({0}, {});
  EXPECT_EQ(ErrorOf("remainder", DType::kInt64, {&xl, &yl}),
            "integer remainder by zero: y[] is 0 (y [])");
  EXPECT_EQ(ErrorOf("floor_divide", DType::kInt32, {&x, &y}),
            "integer floor division by zero: y[1, 2] is 0 (y [2, 3])");
  // Nothing is divided when the output is empty.
  const Tensor empty = Tensor::ZerosUnchecked(DType::kInt64, {0, 3});
  EXPECT_EQ(ErrorOf("divide", DType::kInt64, {&empty, &yl}), "OK");
}

TEST(ElementwiseTest, AttributesOutOfTheIntegerRangeAreAnError) {
  const Tensor x = Tensor::FromVector<int32_t>({1}, {1});
  KernelAttrs value;
  value.Set("value", 1e20);
  EXPECT_EQ(ErrorOf("increment", DType::kInt32, {&x}, value),
            "attribute 'value' (1e+20) does not fit int32");
  const Tensor xl = Tensor::FromVector<int64_t>({1}, {1});
  KernelAttrs scale;
  scale.Set("scale", 9.3e18);
  EXPECT_EQ(ErrorOf("scale", DType::kInt64, {&xl}, scale),
            "attribute 'scale' (9.3e+18) does not fit int64");
  KernelAttrs bias;
  bias.Set("bias", std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(ErrorOf("scale", DType::kInt64, {&xl}, bias),
            "attribute 'bias' (nan) does not fit int64");
  KernelAttrs wrong_kind;
  wrong_kind.Set("bias_after_scale", int64_t{1});
  EXPECT_EQ(ErrorOf("scale", DType::kInt64, {&xl}, wrong_kind),
            "attribute 'bias_after_scale' is an int, not a bool");
}

}  // namespace
}  // namespace irm::rt
