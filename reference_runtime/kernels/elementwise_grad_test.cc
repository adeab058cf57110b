// Grads of the broadcasting binary ops (add, subtract, multiply, divide, elementwise_pow; a table,
// one row per grad kernel): in float64 against
// central finite differences of sum(w * f(x, y)); in every floating dtype against the float64
// formula summed back by a naive reference; float32 bit for bit against a float32 sum taken in
// increasing output index (the documented order); outputs nobody wants; every error message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/kernels/naive_broadcast_test_support.h"

namespace irm::rt {
namespace {

using testing::FromDoubles;
using testing::NaiveOperandIndex;
using testing::NaiveSumTo;
using testing::NumelOf;
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
    {{3, 1, 2}, {1, 4, 1}, {3, 4, 2}},
};
const std::vector<DType> kFloating = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                      DType::kBFloat16};

// The op, its partial derivatives in float64 and the range x is drawn from (one row per grad
// kernel of the family).
struct GradOp {
  std::string name;
  std::function<double(double, double)> f, dfdx, dfdy;
  double x_low = -1, x_high = 1;
};
const std::vector<GradOp> kOps = {
    {"add", [](double a, double b) { return a + b; }, [](double, double) { return 1.0; },
     [](double, double) { return 1.0; }},
    {"subtract", [](double a, double b) { return a - b; }, [](double, double) { return 1.0; },
     [](double, double) { return -1.0; }},
    {"multiply", [](double a, double b) { return a * b; }, [](double, double b) { return b; },
     [](double a, double) { return a; }},
    {"divide", [](double a, double b) { return a / b; }, [](double, double b) { return 1 / b; },
     [](double a, double b) { return -a / (b * b); }},
    // PowGradDX / PowGradDY (impl/elementwise_grad_kernel_impl.h); a positive base for log(x).
    {"elementwise_pow", [](double a, double b) { return std::pow(a, b); },
     [](double a, double b) { return b * std::pow(a, b - 1); },
     [](double a, double b) { return std::log(a) * std::pow(a, b); }, 0.5, 2},
};

std::string Where(const std::string& op, DType dtype, const BroadcastCase& c) {
  return op + "_grad " + DTypeName(dtype) + " x " + ShapeToString(c.x) + " y " + ShapeToString(c.y);
}

// y away from zero (|y| >= 0.5) so that divide's grads are tame.
Tensor Divisor(DType dtype, const Shape& shape, uint64_t seed) {
  std::vector<double> v = ToDoubles(RandomTensor(DType::kFloat64, shape, seed));
  for (double& e : v) e = e >= 0 ? e + 0.5 : e - 0.5;
  return FromDoubles(v, shape, dtype);
}

// Runs op_grad with out_grad = w; divide_grad also gets out = x / y (computed in float64 and
// stored in the dtype, as a forward kernel would hand it over).
std::vector<Tensor> RunGrad(const GradOp& op, DType dtype, const Tensor& x, const Tensor& y,
                            const Tensor& w, const Shape& out_shape) {
  if (op.name != "divide") return RunKernel(op.name + "_grad", dtype, {&x, &y, &w}, {}, 2);
  const std::vector<double> out =
      testing::NaiveBinary(ToDoubles(x), x.shape(), ToDoubles(y), y.shape(), out_shape, op.f);
  const Tensor out_t = FromDoubles(out, out_shape, dtype);
  return RunKernel("divide_grad", dtype, {&x, &y, &out_t, &w}, {}, 2);
}

TEST(ElementwiseGradTest, Float64GradsMatchFiniteDifferences) {
  uint64_t seed = 1;
  for (const GradOp& op : kOps) {
    for (const BroadcastCase& c : kCases) {
      const Tensor x = RandomTensor(DType::kFloat64, c.x, ++seed, op.x_low, op.x_high);
      const Tensor y = op.name == "divide" ? Divisor(DType::kFloat64, c.y, ++seed)
                                           : RandomTensor(DType::kFloat64, c.y, ++seed);
      const Tensor w = RandomTensor(DType::kFloat64, c.out, ++seed);
      const std::vector<double> xs = ToDoubles(x), ys = ToDoubles(y), ws = ToDoubles(w);
      auto loss = [&](const std::vector<double>& xv, const std::vector<double>& yv) {
        const std::vector<double> out = testing::NaiveBinary(xv, c.x, yv, c.y, c.out, op.f);
        double sum = 0;
        for (size_t i = 0; i < out.size(); ++i) sum += ws[i] * out[i];
        return sum;
      };
      const std::vector<Tensor> grads = RunGrad(op, DType::kFloat64, x, y, w, c.out);
      testing::ExpectClose(
          grads[0],
          testing::NumericGradient([&](const std::vector<double>& v) { return loss(v, ys); }, xs),
          c.x, 1e-6, Where(op.name, DType::kFloat64, c) + " x_grad");
      testing::ExpectClose(
          grads[1],
          testing::NumericGradient([&](const std::vector<double>& v) { return loss(xs, v); }, ys),
          c.y, 1e-6, Where(op.name, DType::kFloat64, c) + " y_grad");
    }
  }
}

TEST(ElementwiseGradTest, EveryFloatingDTypeMatchesTheFloat64Formula) {
  uint64_t seed = 100;
  for (const GradOp& op : kOps) {
    for (DType dtype : kFloating) {
      for (const BroadcastCase& c : kCases) {
        const Tensor x = RandomTensor(dtype, c.x, ++seed, op.x_low, op.x_high);
        const Tensor y =
            op.name == "divide" ? Divisor(dtype, c.y, ++seed) : RandomTensor(dtype, c.y, ++seed);
        const Tensor w = RandomTensor(dtype, c.out, ++seed);
        const std::vector<double> xs = ToDoubles(x), ys = ToDoubles(y), ws = ToDoubles(w);
        auto at_x = [&](int64_t i) { return xs[NaiveOperandIndex(i, c.out, c.x)]; };
        auto at_y = [&](int64_t i) { return ys[NaiveOperandIndex(i, c.out, c.y)]; };
        const std::vector<double> x_grad =
            NaiveSumTo(c.out, c.x, [&](int64_t i) { return ws[i] * op.dfdx(at_x(i), at_y(i)); });
        const std::vector<double> y_grad =
            NaiveSumTo(c.out, c.y, [&](int64_t i) { return ws[i] * op.dfdy(at_x(i), at_y(i)); });
        const std::vector<Tensor> grads = RunGrad(op, dtype, x, y, w, c.out);
        // divide_grad reads out rounded to the dtype: allow for that rounding too.
        const double tol = testing::ToleranceFor(dtype) * (op.name == "divide" ? 4 : 1);
        testing::ExpectClose(grads[0], x_grad, c.x, tol, Where(op.name, dtype, c) + " x_grad");
        testing::ExpectClose(grads[1], y_grad, c.y, tol, Where(op.name, dtype, c) + " y_grad");
      }
    }
  }
}

TEST(ElementwiseGradTest, Float32SumsRunInIncreasingOutputIndex) {
  // x [5, 1, 7] * y [9, 1]: out [5, 9, 7]; y_grad[j] sums 35 float32 products.
  const Shape xs = {5, 1, 7}, ys = {9, 1}, out = {5, 9, 7};
  const Tensor x = RandomTensor(DType::kFloat32, xs, 7, -100, 100);
  const Tensor y = RandomTensor(DType::kFloat32, ys, 8, -100, 100);
  const Tensor w = RandomTensor(DType::kFloat32, out, 9, -100, 100);
  std::vector<float> expected(9, 0.0f);
  for (int64_t i = 0; i < NumelOf(out); ++i) {
    expected[NaiveOperandIndex(i, out, ys)] +=
        w.data<float>()[i] * x.data<float>()[NaiveOperandIndex(i, out, xs)];
  }
  const std::vector<Tensor> grads =
      RunKernel("multiply_grad", DType::kFloat32, {&x, &y, &w}, {}, 2);
  ASSERT_EQ(grads[1].numel(), 9);
  EXPECT_EQ(std::memcmp(grads[1].data<float>(), expected.data(), 9 * sizeof(float)), 0);
}

TEST(ElementwiseGradTest, OnlyWantedOutputsAreProduced) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor y = RandomTensor(DType::kFloat32, {3}, 2);
  const Tensor w = RandomTensor(DType::kFloat32, {2, 3}, 3);
  for (int wanted : {0, 1}) {
    Tensor grad;
    KernelCall call{
        .inputs = {&x, &y, &w}, .outputs = {nullptr, nullptr}, .attrs = {}, .context = {}};
    call.outputs[static_cast<size_t>(wanted)] = &grad;
    ASSERT_TRUE(KernelRegistry::Global().Run("multiply_grad", DType::kFloat32, call).ok());
    EXPECT_EQ(grad.shape(), wanted == 0 ? x.shape() : y.shape());
  }
}

std::string ErrorOf(const std::string& name, const std::vector<const Tensor*>& inputs) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(name, DType::kFloat32, inputs, {}, 2);
  return out.ok() ? "OK" : out.status().message();
}

TEST(ElementwiseGradTest, InputsThatDisagreeAreAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor y = RandomTensor(DType::kFloat32, {3}, 2);
  const Tensor y4 = RandomTensor(DType::kFloat32, {4}, 2);
  const Tensor g = RandomTensor(DType::kFloat32, {2, 3}, 3);
  const Tensor g22 = RandomTensor(DType::kFloat32, {2, 2}, 4);
  const Tensor g64 = RandomTensor(DType::kFloat64, {2, 3}, 5);
  for (const char* name : {"add_grad", "subtract_grad", "multiply_grad"}) {
    EXPECT_EQ(ErrorOf(name, {&x, &y, &g22}),
              "out_grad [2, 2] is not the broadcast shape [2, 3] of x [2, 3] and y [3]")
        << name;
    EXPECT_EQ(ErrorOf(name, {&x, &y4, &g}), "x [2, 3] and y [4] do not broadcast") << name;
    EXPECT_EQ(ErrorOf(name, {&x, &y, &g64}), "out_grad is float64, not float32") << name;
  }
  EXPECT_EQ(ErrorOf("divide_grad", {&x, &y, &y, &g}),
            "out [3] and out_grad [2, 3] differ in shape");
  EXPECT_EQ(ErrorOf("divide_grad", {&x, &y, &g64, &g}), "out is float64, not float32");
  EXPECT_EQ(ErrorOf("divide_grad", {&x, &y, &g, &g22}),
            "out_grad [2, 2] is not the broadcast shape [2, 3] of x [2, 3] and y [3]");
}

}  // namespace
}  // namespace irm::rt
