// Activation kernels against float64 formulas written here, for every floating dtype and several
// shapes; their grads in float64 against central finite differences of sum(w * f(x)), and in
// every dtype against the float64 derivative; Paddle's relu at NaN; the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::FromDoubles;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::TryRunKernel;
using Shape = std::vector<int64_t>;

const std::vector<DType> kFloating = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                      DType::kBFloat16};
const std::vector<Shape> kShapes = {{}, {1}, {7}, {3, 1, 5}, {2, 64}};

double GeluExact(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

struct Activation {
  std::string name;
  bool approximate;  // gelu's attribute
  std::function<double(double)> f;
  double lo, hi;  // input range
};
const std::vector<Activation> kActivations = {
    {"relu", false, [](double x) { return x > 0 ? x : 0.0; }, -3, 3},
    {"gelu", false, GeluExact, -4, 4},
    {"gelu", true, GeluTanh, -4, 4},
    {"tanh", false, [](double x) { return std::tanh(x); }, -3, 3},
    {"sigmoid", false, Sigmoid, -6, 6},
    {"sqrt", false, [](double x) { return std::sqrt(x); }, 0, 9},
};

KernelAttrs AttrsOf(const Activation& a) {
  KernelAttrs attrs;
  if (a.name == "gelu") attrs.Set("approximate", a.approximate);
  return attrs;
}

std::string Where(const Activation& a, DType dtype, const Shape& shape) {
  return a.name + (a.approximate ? " (approximate)" : "") + " " + DTypeName(dtype) + " " +
         ShapeToString(shape);
}

TEST(ActivationTest, ForwardMatchesFloat64ForEveryDType) {
  uint64_t seed = 1;
  for (const Activation& a : kActivations) {
    for (DType dtype : kFloating) {
      for (const Shape& shape : kShapes) {
        const Tensor x = RandomTensor(dtype, shape, ++seed, a.lo, a.hi);
        std::vector<double> expected;
        for (double v : ToDoubles(x)) expected.push_back(a.f(v));
        const std::vector<Tensor> out = RunKernel(a.name, dtype, {&x}, AttrsOf(a), 1);
        ASSERT_EQ(out[0].dtype(), dtype);
        testing::ExpectClose(out[0], expected, shape, testing::ToleranceFor(dtype),
                             Where(a, dtype, shape));
      }
    }
  }
}

TEST(ActivationTest, GeluDefaultsToTheExactForm) {
  const Tensor x = FromDoubles({-1.5, 0.3, 2}, {3}, DType::kFloat64);
  testing::ExpectClose(RunKernel("gelu", DType::kFloat64, {&x}, {}, 1)[0],
                       {GeluExact(-1.5), GeluExact(0.3), GeluExact(2)}, {3}, 1e-15, "gelu");
}

// A grad kernel: which forward it belongs to, and what it reads besides out_grad.
struct GradCase {
  Activation forward;
  bool reads_out;                                 // out (relu, tanh, sigmoid) or x (gelu)
  std::function<double(double, double)> formula;  // (x, out) -> d out / d x
};
const std::vector<GradCase> kGrads = {
    {kActivations[0], true, [](double, double out) { return out > 0 ? 1.0 : 0.0; }},
    {kActivations[1], false,
     [](double x, double) {
       return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) +
              x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
     }},
    {kActivations[2], false,
     [](double x, double) {
       const double a = std::sqrt(2 / M_PI), c = 0.044715;
       const double t = std::tanh(a * (x + c * x * x * x));
       return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * a * (1 + 3 * c * x * x);
     }},
    {kActivations[3], true, [](double, double out) { return 1 - out * out; }},
    {kActivations[4], true, [](double, double out) { return out * (1 - out); }},
};

std::vector<Tensor> RunGrad(const GradCase& g, DType dtype, const Tensor& x, const Tensor& w) {
  std::vector<double> out;
  for (double v : ToDoubles(x)) out.push_back(g.forward.f(v));
  const Tensor out_t = FromDoubles(out, x.shape(), dtype);
  return RunKernel(g.forward.name + "_grad", dtype, {g.reads_out ? &out_t : &x, &w},
                   AttrsOf(g.forward), 1);
}

TEST(ActivationTest, Float64GradsMatchFiniteDifferences) {
  uint64_t seed = 100;
  for (const GradCase& g : kGrads) {
    for (const Shape& shape : kShapes) {
      const Tensor x = RandomTensor(DType::kFloat64, shape, ++seed, g.forward.lo, g.forward.hi);
      const Tensor w = RandomTensor(DType::kFloat64, shape, ++seed);
      const std::vector<double> ws = ToDoubles(w);
      auto loss = [&](const std::vector<double>& xv) {
        double sum = 0;
        for (size_t i = 0; i < xv.size(); ++i) sum += ws[i] * g.forward.f(xv[i]);
        return sum;
      };
      testing::ExpectClose(RunGrad(g, DType::kFloat64, x, w)[0],
                           testing::NumericGradient(loss, ToDoubles(x)), shape, 1e-6,
                           Where(g.forward, DType::kFloat64, shape) + " grad");
    }
  }
}

TEST(ActivationTest, GradsMatchTheFloat64DerivativeForEveryDType) {
  uint64_t seed = 200;
  for (const GradCase& g : kGrads) {
    for (DType dtype : kFloating) {
      for (const Shape& shape : kShapes) {
        const Tensor x = RandomTensor(dtype, shape, ++seed, g.forward.lo, g.forward.hi);
        const Tensor w = RandomTensor(dtype, shape, ++seed);
        // The kernel reads out rounded to the dtype: the reference uses that out too.
        std::vector<double> out;
        for (double v : ToDoubles(x)) out.push_back(g.forward.f(v));
        const std::vector<double> out_rounded = ToDoubles(FromDoubles(out, shape, dtype));
        const std::vector<double> xs = ToDoubles(x), ws = ToDoubles(w);
        std::vector<double> expected;
        for (size_t i = 0; i < xs.size(); ++i) {
          expected.push_back(ws[i] * g.formula(xs[i], out_rounded[i]));
        }
        testing::ExpectClose(RunGrad(g, dtype, x, w)[0], expected, shape,
                             testing::ToleranceFor(dtype),
                             Where(g.forward, dtype, shape) + " grad");
      }
    }
  }
}

TEST(ActivationTest, ReluOfNaNIsZeroAsInPaddlesFunctor) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::FromVector<double>({nan, -0.0, 2}, {3});
  EXPECT_EQ(ToDoubles(RunKernel("relu", DType::kFloat64, {&x}, {}, 1)[0]),
            (std::vector<double>{0, 0, 2}));
  const Tensor g = Tensor::FromVector<double>({5, 6, 7}, {3});
  EXPECT_EQ(ToDoubles(RunKernel("relu_grad", DType::kFloat64, {&x, &g}, {}, 1)[0]),
            (std::vector<double>{0, 0, 7}));
}

std::string ErrorOf(const std::string& name, DType dtype, const std::vector<const Tensor*>& inputs,
                    const KernelAttrs& attrs = {}) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(name, dtype, inputs, attrs, 1);
  return out.ok() ? "OK" : out.status().message();
}

TEST(ActivationTest, InputsThatDisagreeAreAnError) {
  const Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor b = RandomTensor(DType::kFloat32, {3, 2}, 2);
  const Tensor d = RandomTensor(DType::kFloat64, {2, 3}, 3);
  for (const char* name : {"relu_grad", "tanh_grad", "sigmoid_grad"}) {
    EXPECT_EQ(ErrorOf(name, DType::kFloat32, {&a, &b}),
              "out [2, 3] and out_grad [3, 2] differ in shape");
    EXPECT_EQ(ErrorOf(name, DType::kFloat32, {&a, &d}), "out_grad is float64, not float32");
    EXPECT_EQ(ErrorOf(name, DType::kFloat64, {&a, &d}), "out is float32, not float64");
  }
  EXPECT_EQ(ErrorOf("gelu_grad", DType::kFloat32, {&a, &b}),
            "x [2, 3] and out_grad [3, 2] differ in shape");
  for (const char* name : {"relu", "gelu", "tanh", "sigmoid", "sqrt"}) {
    EXPECT_EQ(ErrorOf(name, DType::kFloat64, {&a}), "x is float32, not float64");
  }
  KernelAttrs attrs;
  attrs.Set("approximate", int64_t{1});
  EXPECT_EQ(ErrorOf("gelu", DType::kFloat32, {&a}, attrs),
            "attribute 'approximate' is an int, not a bool");
  EXPECT_EQ(ErrorOf("gelu_grad", DType::kFloat32, {&a, &a}, attrs),
            "attribute 'approximate' is an int, not a bool");
}

}  // namespace
}  // namespace irm::rt
