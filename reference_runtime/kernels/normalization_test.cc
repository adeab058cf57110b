// layer_norm and layer_norm_grad against a naive float64 reference written here (with and without
// scale and bias, 16-bit x with float32 or 16-bit parameters), the grads of x, scale and bias
// against central finite differences, and every bad-input message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::NumericGradient;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;

constexpr DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                 DType::kBFloat16};

double GradTolerance(DType dtype) { return std::max(ToleranceFor(dtype), 1e-7); }

// The dtype Paddle keeps the statistics in: float32 for 16-bit x.
DType StatDType(DType x) { return x == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

struct NormCase {
  std::vector<int64_t> shape;
  int64_t begin;
  double epsilon;
};
const std::vector<NormCase> kCases = {
    {{2, 3, 4}, 1, 1e-5}, {{2, 3, 4}, 2, 1e-5}, {{2, 3, 4}, 0, 1e-5},
    {{5, 1}, 1, 1e-5},    {{1, 6}, 1, 1e-5},    {{3, 4}, 1, 0.1},
    {{4}, 0, 1e-5},       {{2, 1, 3}, 2, 1e-5}, {{0, 3}, 1, 1e-5},
};

struct Sizes {
  int64_t rows = 1;
  int64_t n = 1;
};
Sizes SizesOf(const NormCase& c) {
  Sizes s;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    (static_cast<int64_t>(d) < c.begin ? s.rows : s.n) *= c.shape[d];
  }
  return s;
}

struct NaiveNorm {
  std::vector<double> out;
  std::vector<double> mean;
  std::vector<double> variance;
};
// From the definition, in float64; an empty scale or bias is absent.
NaiveNorm NaiveLayerNorm(const NormCase& c, const std::vector<double>& x,
                         const std::vector<double>& scale, const std::vector<double>& bias) {
  const Sizes s = SizesOf(c);
  NaiveNorm r;
  r.out.resize(x.size());
  for (int64_t row = 0; row < s.rows; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < s.n; ++j) sum += x[row * s.n + j];
    const double mean = sum / static_cast<double>(s.n);
    double squares = 0;
    for (int64_t j = 0; j < s.n; ++j) squares += std::pow(x[row * s.n + j] - mean, 2);
    const double variance = squares / static_cast<double>(s.n);
    for (int64_t j = 0; j < s.n; ++j) {
      double v = (x[row * s.n + j] - mean) / std::sqrt(variance + c.epsilon);
      if (!scale.empty()) v *= scale[j];
      if (!bias.empty()) v += bias[j];
      r.out[row * s.n + j] = v;
    }
    r.mean.push_back(mean);
    r.variance.push_back(variance);
  }
  return r;
}

KernelAttrs NormAttrs(const NormCase& c) {
  KernelAttrs attrs;
  attrs.Set("epsilon", c.epsilon);
  attrs.Set("begin_norm_axis", c.begin);
  return attrs;
}

// One test configuration: which parameters exist and their dtype.
struct ParamConfig {
  bool scale;
  bool bias;
  DType dtype;
};
std::vector<ParamConfig> ParamConfigs(DType x) {
  std::vector<DType> dtypes = {x};
  if (x == DType::kFloat16 || x == DType::kBFloat16) dtypes.push_back(DType::kFloat32);
  std::vector<ParamConfig> configs;
  for (DType d : dtypes) {
    for (bool scale : {true, false}) {
      for (bool bias : {true, false}) configs.push_back({scale, bias, d});
    }
  }
  return configs;
}

std::string Describe(DType dtype, const NormCase& c, const ParamConfig& p) {
  return std::string(DTypeName(dtype)) + " shape " + ShapeToString(c.shape) + " begin " +
         std::to_string(c.begin) + (p.scale ? " scale" : "") + (p.bias ? " bias" : "") + " " +
         DTypeName(p.dtype) + " params";
}

struct Inputs {
  Tensor x;
  Tensor scale;  // undefined when absent
  Tensor bias;
  std::vector<double> scale_values;  // empty when absent
  std::vector<double> bias_values;
  std::vector<const Tensor*> forward() const {
    return {&x, scale.defined() ? &scale : nullptr, bias.defined() ? &bias : nullptr};
  }
};
Inputs MakeInputs(DType dtype, const NormCase& c, const ParamConfig& p, uint64_t seed) {
  Inputs in;
  in.x = RandomTensor(dtype, c.shape, seed, -2, 2);
  const int64_t n = SizesOf(c).n;
  if (p.scale) {
    in.scale = RandomTensor(p.dtype, {n}, seed + 1, 0.5, 1.5);
    in.scale_values = ToDoubles(in.scale);
  }
  if (p.bias) {
    in.bias = RandomTensor(p.dtype, {n}, seed + 2);
    in.bias_values = ToDoubles(in.bias);
  }
  return in;
}

TEST(LayerNormTest, MatchesNaiveFloat64) {
  uint64_t seed = 1;
  for (DType dtype : kFloatTypes) {
    for (const NormCase& c : kCases) {
      for (const ParamConfig& p : ParamConfigs(dtype)) {
        SCOPED_TRACE(Describe(dtype, c, p));
        const Inputs in = MakeInputs(dtype, c, p, seed);
        seed += 3;
        const NaiveNorm ref = NaiveLayerNorm(c, ToDoubles(in.x), in.scale_values, in.bias_values);
        const std::vector<Tensor> out =
            RunKernel("layer_norm", dtype, in.forward(), NormAttrs(c), 3);
        const int64_t rows = SizesOf(c).rows;
        ExpectClose(out[0], ref.out, c.shape, ToleranceFor(dtype), "out");
        ExpectClose(out[1], ref.mean, {rows}, ToleranceFor(StatDType(dtype)), "mean");
        ExpectClose(out[2], ref.variance, {rows}, ToleranceFor(StatDType(dtype)), "variance");
        EXPECT_EQ(out[0].dtype(), dtype);
        EXPECT_EQ(out[1].dtype(), StatDType(dtype));
        EXPECT_EQ(out[2].dtype(), StatDType(dtype));
      }
    }
  }
}

// sum(w * out(x, scale, bias)) by central differences in each of x, scale and bias against the
// grad kernel given out_grad = w and the forward kernel's statistics.
TEST(LayerNormTest, GradsMatchFiniteDifferences) {
  uint64_t seed = 1000;
  for (DType dtype : kFloatTypes) {
    for (const NormCase& c : kCases) {
      for (const ParamConfig& p : ParamConfigs(dtype)) {
        SCOPED_TRACE(Describe(dtype, c, p));
        const Inputs in = MakeInputs(dtype, c, p, seed);
        const Tensor w = RandomTensor(dtype, c.shape, seed + 3);
        seed += 4;
        const std::vector<double> wv = ToDoubles(w);
        const std::vector<double> xv = ToDoubles(in.x);
        auto loss = [&](const std::vector<double>& x, const std::vector<double>& scale,
                        const std::vector<double>& bias) {
          const std::vector<double> out = NaiveLayerNorm(c, x, scale, bias).out;
          double l = 0;
          for (size_t k = 0; k < out.size(); ++k) l += wv[k] * out[k];
          return l;
        };
        const std::vector<Tensor> fwd =
            RunKernel("layer_norm", dtype, in.forward(), NormAttrs(c), 3);
        std::vector<const Tensor*> inputs = in.forward();
        inputs.insert(inputs.end(), {&fwd[1], &fwd[2], &w});
        const std::vector<Tensor> grads =
            RunKernel("layer_norm_grad", dtype, inputs, NormAttrs(c), 3);

        ExpectClose(grads[0],
                    NumericGradient(
                        [&](const std::vector<double>& x) {
                          return loss(x, in.scale_values, in.bias_values);
                        },
                        xv),
                    c.shape, GradTolerance(dtype), "x_grad");
        const int64_t n = SizesOf(c).n;
        if (p.scale) {
          ExpectClose(grads[1],
                      NumericGradient(
                          [&](const std::vector<double>& s) { return loss(xv, s, in.bias_values); },
                          in.scale_values),
                      {n}, GradTolerance(p.dtype), "scale_grad");
          EXPECT_EQ(grads[1].dtype(), p.dtype);
        } else {
          EXPECT_FALSE(grads[1].defined());
        }
        if (p.bias) {
          ExpectClose(
              grads[2],
              NumericGradient(
                  [&](const std::vector<double>& b) { return loss(xv, in.scale_values, b); },
                  in.bias_values),
              {n}, GradTolerance(p.dtype), "bias_grad");
          EXPECT_EQ(grads[2].dtype(), p.dtype);
        } else {
          EXPECT_FALSE(grads[2].defined());
        }
      }
    }
  }
}

std::string ErrorOf(const std::string& op, DType dtype, const std::vector<const Tensor*>& inputs,
                    const KernelAttrs& attrs) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(op, dtype, inputs, attrs, 3);
  if (out.ok()) return "(no error)";
  return out.status().message();
}

TEST(LayerNormTest, BadOperandsAreErrors) {
  const NormCase c{{2, 3}, 1, 1e-5};
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 90);
  const Tensor scalar = RandomTensor(DType::kFloat32, {}, 91);
  const Tensor scale = RandomTensor(DType::kFloat32, {3}, 92);
  const Tensor scale4 = RandomTensor(DType::kFloat32, {4}, 93);
  const Tensor scale2d = RandomTensor(DType::kFloat32, {1, 3}, 94);
  const Tensor scale64 = RandomTensor(DType::kFloat64, {3}, 95);
  const Tensor x16 = RandomTensor(DType::kFloat16, {2, 3}, 96);
  const Tensor bias_bf16 = RandomTensor(DType::kBFloat16, {3}, 97);
  const Tensor stats = RandomTensor(DType::kFloat32, {2}, 98, 0.5, 1);
  const Tensor stats3 = RandomTensor(DType::kFloat32, {3}, 99, 0.5, 1);
  const Tensor stats16 = RandomTensor(DType::kFloat16, {2}, 100, 0.5, 1);
  const Tensor grad_t = RandomTensor(DType::kFloat32, {3, 2}, 101);

  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&x, &scale4, nullptr}, NormAttrs(c)),
            "scale has shape [4], expected [3] (the size of x of shape [2, 3] from "
            "begin_norm_axis 1)");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&x, nullptr, &scale2d}, NormAttrs(c)),
            "bias has shape [1, 3], expected [3] (the size of x of shape [2, 3] from "
            "begin_norm_axis 1)");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&x, &scale64, nullptr}, NormAttrs(c)),
            "scale is float64, expected float32");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat16, {&x16, nullptr, &bias_bf16}, NormAttrs(c)),
            "bias is bfloat16, expected float16 or float32");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&x}, NormAttrs({{2, 3}, 2, 1e-5})),
            "begin_norm_axis 2 is out of range for x of shape [2, 3] (valid: 0 to 1)");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&x}, NormAttrs({{2, 3}, -1, 1e-5})),
            "begin_norm_axis -1 is out of range for x of shape [2, 3] (valid: 0 to 1)");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {&scalar}, NormAttrs({{}, 0, 1e-5})),
            "x of shape [] has no dims to normalise");
  EXPECT_EQ(ErrorOf("layer_norm", DType::kFloat32, {nullptr}, NormAttrs(c)),
            "input 'x' (operand 0) is missing");

  const std::string grad = "layer_norm_grad";
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, &scale, nullptr, &stats3, &stats, &x}, NormAttrs(c)),
      "mean has shape [3], expected [2] (one per row of x of shape [2, 3] before "
      "begin_norm_axis 1)");
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, &scale, nullptr, &stats, &stats3, &x}, NormAttrs(c)),
      "variance has shape [3], expected [2] (one per row of x of shape [2, 3] before "
      "begin_norm_axis 1)");
  EXPECT_EQ(ErrorOf(grad, DType::kFloat16, {&x16, nullptr, nullptr, &stats16, &stats, &x16},
                    NormAttrs(c)),
            "mean is float16, expected float32");
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, nullptr, nullptr, &stats, &stats, &grad_t}, NormAttrs(c)),
      "out_grad has shape [3, 2], expected [2, 3] (the shape of x)");
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, nullptr, nullptr, &stats, &stats, &x16}, NormAttrs(c)),
      "out_grad is float16, expected float32");
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, &scale4, nullptr, &stats, &stats, &x}, NormAttrs(c)),
      "scale has shape [4], expected [3] (the size of x of shape [2, 3] from "
      "begin_norm_axis 1)");
  EXPECT_EQ(
      ErrorOf(grad, DType::kFloat32, {&x, nullptr, nullptr, nullptr, &stats, &x}, NormAttrs(c)),
      "input 'mean' (operand 3) is missing");
}

}  // namespace
}  // namespace irm::rt
