// softmax, softmax_grad, cross_entropy_with_softmax and its grad against naive float64
// references written here (hard and soft labels, with and without use_softmax, ignore_index), the
// grads against central finite differences, and every bad-input message.
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
using testing::FromDoubles;
using testing::NumericGradient;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;

constexpr DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                 DType::kBFloat16};

double GradTolerance(DType dtype) { return std::max(ToleranceFor(dtype), 1e-7); }

// The positions of a shape around `axis`: element (o, j, i) at (o * n + j) * inner + i.
struct Lines {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  int64_t At(int64_t o, int64_t j, int64_t i) const { return (o * n + j) * inner + i; }
};
Lines LinesOf(const std::vector<int64_t>& shape, int64_t axis) {
  Lines l;
  if (shape.empty()) return l;
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) l.outer *= shape[d];
    if (d == axis) l.n = shape[d];
    if (d > axis) l.inner *= shape[d];
  }
  return l;
}

// log softmax in float64, from the definition (with the max subtracted so that the reference
// itself stays finite on large logits).
std::vector<double> NaiveLogSoftmax(const std::vector<double>& x, const std::vector<int64_t>& shape,
                                    int64_t axis) {
  const Lines l = LinesOf(shape, axis);
  std::vector<double> out(x.size());
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < l.n; ++j) max = std::max(max, x[l.At(o, j, i)]);
      double sum = 0;
      for (int64_t j = 0; j < l.n; ++j) sum += std::exp(x[l.At(o, j, i)] - max);
      for (int64_t j = 0; j < l.n; ++j) out[l.At(o, j, i)] = x[l.At(o, j, i)] - max - std::log(sum);
    }
  }
  return out;
}
std::vector<double> NaiveSoftmax(const std::vector<double>& x, const std::vector<int64_t>& shape,
                                 int64_t axis) {
  std::vector<double> out = NaiveLogSoftmax(x, shape, axis);
  for (double& v : out) v = std::exp(v);
  return out;
}

struct AxisCase {
  std::vector<int64_t> shape;
  int64_t axis;
};
const std::vector<AxisCase> kSoftmaxCases = {
    {{2, 3, 4}, 0}, {{2, 3, 4}, 1}, {{2, 3, 4}, 2}, {{2, 3, 4}, -1}, {{1}, 0},
    {{}, -1},       {{3, 1}, 1},    {{1, 5}, 0},    {{1, 5}, -1},    {{0, 3}, 1},
};

std::string Describe(DType dtype, const AxisCase& c) {
  return std::string(DTypeName(dtype)) + " shape " + ShapeToString(c.shape) + " axis " +
         std::to_string(c.axis);
}

KernelAttrs AxisAttr(int64_t axis) {
  KernelAttrs attrs;
  attrs.Set("axis", axis);
  return attrs;
}

TEST(SoftmaxTest, MatchesNaiveFloat64) {
  uint64_t seed = 1;
  for (DType dtype : kFloatTypes) {
    for (const AxisCase& c : kSoftmaxCases) {
      SCOPED_TRACE(Describe(dtype, c));
      const Tensor x = RandomTensor(dtype, c.shape, seed++, -3, 3);
      ExpectClose(RunKernel("softmax", dtype, {&x}, AxisAttr(c.axis), 1)[0],
                  NaiveSoftmax(ToDoubles(x), c.shape, c.axis), c.shape, ToleranceFor(dtype),
                  "softmax");
    }
  }
}

// Logits far beyond exp's range: the max is subtracted first.
TEST(SoftmaxTest, LargeLogitsStayFinite) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 7}, 50, 500, 1000);
    ExpectClose(RunKernel("softmax", dtype, {&x}, AxisAttr(1), 1)[0],
                NaiveSoftmax(ToDoubles(x), {3, 7}, 1), {3, 7}, ToleranceFor(dtype), "softmax");
    const Tensor negative = RandomTensor(dtype, {3, 7}, 51, -1000, -500);
    ExpectClose(RunKernel("softmax", dtype, {&negative}, AxisAttr(1), 1)[0],
                NaiveSoftmax(ToDoubles(negative), {3, 7}, 1), {3, 7}, ToleranceFor(dtype),
                "softmax");
  }
}

TEST(SoftmaxTest, GradMatchesFiniteDifferences) {
  uint64_t seed = 100;
  for (DType dtype : kFloatTypes) {
    for (const AxisCase& c : kSoftmaxCases) {
      SCOPED_TRACE(Describe(dtype, c));
      const Tensor x = RandomTensor(dtype, c.shape, seed++, -2, 2);
      const Tensor w = RandomTensor(dtype, c.shape, seed++);
      const std::vector<double> wv = ToDoubles(w);
      auto loss = [&](const std::vector<double>& xv) {
        const std::vector<double> y = NaiveSoftmax(xv, c.shape, c.axis);
        double l = 0;
        for (size_t k = 0; k < y.size(); ++k) l += wv[k] * y[k];
        return l;
      };
      const Tensor out = RunKernel("softmax", dtype, {&x}, AxisAttr(c.axis), 1)[0];
      ExpectClose(RunKernel("softmax_grad", dtype, {&out, &w}, AxisAttr(c.axis), 1)[0],
                  NumericGradient(loss, ToDoubles(x)), c.shape, GradTolerance(dtype),
                  "softmax_grad");
    }
  }
}

// ---- cross entropy --------------------------------------------------------------------------

struct CeConfig {
  bool soft_label;
  bool use_softmax;
  int64_t ignore_index;
};
const CeConfig kCeConfigs[] = {
    {false, true, -100}, {false, true, 1},    {false, false, -100},
    {true, true, -100},  {true, false, -100},
};
const std::vector<AxisCase> kCeCases = {
    {{4, 5}, -1}, {{4, 5}, 1},  {{2, 3, 4}, 1}, {{2, 3, 4}, 0},
    {{5}, 0},     {{3, 1}, -1}, {{1, 1, 6}, 2},
};

KernelAttrs CeAttrs(const CeConfig& cfg, int64_t axis) {
  KernelAttrs attrs;
  attrs.Set("soft_label", cfg.soft_label);
  attrs.Set("use_softmax", cfg.use_softmax);
  attrs.Set("numeric_stable_mode", true);
  attrs.Set("ignore_index", cfg.ignore_index);
  attrs.Set("axis", axis);
  return attrs;
}

std::vector<int64_t> LossShape(const std::vector<int64_t>& shape, int64_t axis) {
  std::vector<int64_t> s = shape;
  s[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis)] = 1;
  return s;
}

// Hard labels: random classes, every third one replaced by ignore_index.
Tensor HardLabels(const CeConfig& cfg, const AxisCase& c, DType dtype, uint64_t seed) {
  const Lines l = LinesOf(c.shape, c.axis);
  const std::vector<int64_t> shape = LossShape(c.shape, c.axis);
  std::vector<double> v =
      ToDoubles(RandomTensor(DType::kInt64, shape, seed, 0, static_cast<double>(l.n)));
  for (size_t k = 0; k < v.size(); k += 3) v[k] = static_cast<double>(cfg.ignore_index);
  return FromDoubles(v, shape, dtype);
}

// The loss per row in float64: -sum_j y_j log p_j, p = softmax(x) or x itself.
std::vector<double> NaiveCrossEntropy(const CeConfig& cfg, const AxisCase& c,
                                      const std::vector<double>& x,
                                      const std::vector<double>& label) {
  const Lines l = LinesOf(c.shape, c.axis);
  std::vector<double> logp = x;
  if (cfg.use_softmax) {
    logp = NaiveLogSoftmax(x, c.shape, c.axis);
  } else {
    for (double& v : logp) v = std::log(v);
  }
  std::vector<double> loss(static_cast<size_t>(l.outer * l.inner), 0.0);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      double& out = loss[static_cast<size_t>(o * l.inner + i)];
      if (cfg.soft_label) {
        for (int64_t j = 0; j < l.n; ++j) out -= label[l.At(o, j, i)] * logp[l.At(o, j, i)];
      } else {
        const int64_t k = static_cast<int64_t>(label[static_cast<size_t>(o * l.inner + i)]);
        if (k != cfg.ignore_index) out = -logp[l.At(o, k, i)];
      }
    }
  }
  return loss;
}

struct CeInputs {
  Tensor input;
  Tensor label;
};
CeInputs MakeCeInputs(const CeConfig& cfg, const AxisCase& c, DType dtype, DType label_dtype,
                      uint64_t seed) {
  CeInputs in;
  // Without use_softmax the input is a probability: kept away from 0 so that log stays tame.
  in.input = cfg.use_softmax ? RandomTensor(dtype, c.shape, seed, -3, 3)
                             : RandomTensor(dtype, c.shape, seed, 0.1, 1);
  in.label = cfg.soft_label ? RandomTensor(dtype, c.shape, seed + 1, 0, 1)
                            : HardLabels(cfg, c, label_dtype, seed + 1);
  return in;
}

std::string Describe(DType dtype, const CeConfig& cfg, const AxisCase& c) {
  return Describe(dtype, c) + (cfg.soft_label ? " soft" : " hard") +
         (cfg.use_softmax ? " use_softmax" : " probabilities") + " ignore_index " +
         std::to_string(cfg.ignore_index);
}

TEST(CrossEntropyWithSoftmaxTest, MatchesNaiveFloat64) {
  uint64_t seed = 1000;
  for (DType dtype : kFloatTypes) {
    for (const CeConfig& cfg : kCeConfigs) {
      for (const AxisCase& c : kCeCases) {
        for (DType label_dtype : {DType::kInt64, DType::kInt32}) {
          if (cfg.soft_label && label_dtype == DType::kInt32) continue;
          SCOPED_TRACE(Describe(dtype, cfg, c) + " label " + DTypeName(label_dtype));
          const CeInputs in = MakeCeInputs(cfg, c, dtype, label_dtype, seed);
          seed += 2;
          const std::vector<double> xv = ToDoubles(in.input);
          const std::vector<Tensor> out = RunKernel(
              "cross_entropy_with_softmax", dtype, {&in.input, &in.label}, CeAttrs(cfg, c.axis), 2);
          ExpectClose(out[0], cfg.use_softmax ? NaiveSoftmax(xv, c.shape, c.axis) : xv, c.shape,
                      ToleranceFor(dtype), "softmax");
          ExpectClose(out[1], NaiveCrossEntropy(cfg, c, xv, ToDoubles(in.label)),
                      LossShape(c.shape, c.axis), ToleranceFor(dtype), "loss");
        }
      }
    }
  }
}

// Rows whose label is ignore_index: loss 0 and no grad, even when ignore_index is a class.
TEST(CrossEntropyWithSoftmaxTest, IgnoredRowsHaveZeroLossAndGrad) {
  const Tensor input = RandomTensor(DType::kFloat64, {3, 4}, 60, -2, 2);
  const Tensor label = Tensor::FromVector<int64_t>({2, 1, 2}, {3, 1});
  const CeConfig cfg{false, true, 2};
  const std::vector<Tensor> out = RunKernel("cross_entropy_with_softmax", DType::kFloat64,
                                            {&input, &label}, CeAttrs(cfg, -1), 2);
  const std::vector<double> loss = ToDoubles(out[1]);
  EXPECT_EQ(loss[0], 0.0);
  EXPECT_GT(loss[1], 0.0);
  EXPECT_EQ(loss[2], 0.0);
  const Tensor ones = Tensor::FromVector<double>({1, 1, 1}, {3, 1});
  const std::vector<double> grad =
      ToDoubles(RunKernel("cross_entropy_with_softmax_grad", DType::kFloat64,
                          {&label, &out[0], &ones}, CeAttrs(cfg, -1), 1)[0]);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(grad[static_cast<size_t>(j)], 0.0) << j;
    EXPECT_EQ(grad[static_cast<size_t>(8 + j)], 0.0) << j;
    EXPECT_NE(grad[static_cast<size_t>(4 + j)], 0.0) << j;
  }
}

// A class whose probability underflows to 0 still has a finite loss: log-probabilities come from
// the shifted logits.
TEST(CrossEntropyWithSoftmaxTest, LossStaysFiniteWhenTheLabelProbabilityUnderflows) {
  const Tensor input = Tensor::FromVector<float>({0.0f, 200.0f}, {1, 2});
  const Tensor label = Tensor::FromVector<int64_t>({0}, {1, 1});
  const std::vector<Tensor> out = RunKernel("cross_entropy_with_softmax", DType::kFloat32,
                                            {&input, &label}, CeAttrs({false, true, -100}, -1), 2);
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
  EXPECT_EQ(out[1].data<float>()[0], 200.0f);
}

TEST(CrossEntropyWithSoftmaxTest, NumericStableModeChangesNothing) {
  const Tensor input = RandomTensor(DType::kFloat32, {4, 5}, 70, -3, 3);
  const Tensor label = RandomTensor(DType::kInt64, {4, 1}, 71, 0, 5);
  KernelAttrs stable = CeAttrs({false, true, -100}, -1);
  KernelAttrs unstable = stable;
  unstable.Set("numeric_stable_mode", false);
  const std::vector<Tensor> a =
      RunKernel("cross_entropy_with_softmax", DType::kFloat32, {&input, &label}, stable, 2);
  const std::vector<Tensor> b =
      RunKernel("cross_entropy_with_softmax", DType::kFloat32, {&input, &label}, unstable, 2);
  EXPECT_TRUE(a[0].BitwiseEqual(b[0]));
  EXPECT_TRUE(a[1].BitwiseEqual(b[1]));
}

// sum(w * loss(input)) by central differences against the grad kernel given loss_grad = w and the
// forward kernel's softmax.
TEST(CrossEntropyWithSoftmaxTest, GradMatchesFiniteDifferences) {
  uint64_t seed = 2000;
  for (DType dtype : kFloatTypes) {
    for (const CeConfig& cfg : kCeConfigs) {
      for (const AxisCase& c : kCeCases) {
        for (DType label_dtype : {DType::kInt64, DType::kInt32}) {
          if (cfg.soft_label && label_dtype == DType::kInt32) continue;
          SCOPED_TRACE(Describe(dtype, cfg, c) + " label " + DTypeName(label_dtype));
          const CeInputs in = MakeCeInputs(cfg, c, dtype, label_dtype, seed);
          seed += 2;
          const std::vector<int64_t> loss_shape = LossShape(c.shape, c.axis);
          const Tensor w = RandomTensor(dtype, loss_shape, seed++);
          const std::vector<double> wv = ToDoubles(w);
          const std::vector<double> label = ToDoubles(in.label);
          auto loss = [&](const std::vector<double>& xv) {
            const std::vector<double> l = NaiveCrossEntropy(cfg, c, xv, label);
            double s = 0;
            for (size_t k = 0; k < l.size(); ++k) s += wv[k] * l[k];
            return s;
          };
          const KernelAttrs attrs = CeAttrs(cfg, c.axis);
          const std::vector<Tensor> fwd =
              RunKernel("cross_entropy_with_softmax", dtype, {&in.input, &in.label}, attrs, 2);
          const std::vector<Tensor> grad = RunKernel("cross_entropy_with_softmax_grad", dtype,
                                                     {&in.label, &fwd[0], &w}, attrs, 1);
          ExpectClose(grad[0], NumericGradient(loss, ToDoubles(in.input)), c.shape,
                      GradTolerance(dtype), "input_grad");
        }
      }
    }
  }
}

std::string ErrorOf(const std::string& op, DType dtype, const std::vector<const Tensor*>& inputs,
                    const KernelAttrs& attrs, size_t num_outputs) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(op, dtype, inputs, attrs, num_outputs);
  if (out.ok()) return "(no error)";
  return out.status().message();
}

TEST(SoftmaxTest, BadOperandsAreErrors) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 80);
  const Tensor g = RandomTensor(DType::kFloat32, {2, 4}, 81);
  const Tensor g64 = RandomTensor(DType::kFloat64, {2, 3}, 82);
  EXPECT_EQ(ErrorOf("softmax", DType::kFloat32, {&x}, AxisAttr(2), 1),
            "axis 2 is out of range for x of shape [2, 3] (valid: -2 to 1)");
  EXPECT_EQ(ErrorOf("softmax_grad", DType::kFloat32, {&x, &x}, AxisAttr(-3), 1),
            "axis -3 is out of range for out of shape [2, 3] (valid: -2 to 1)");
  EXPECT_EQ(ErrorOf("softmax_grad", DType::kFloat32, {&x, &g}, AxisAttr(-1), 1),
            "out_grad has shape [2, 4], expected [2, 3] (the shape of out)");
  EXPECT_EQ(ErrorOf("softmax_grad", DType::kFloat32, {&x, &g64}, AxisAttr(-1), 1),
            "out_grad is float64, expected float32");
  EXPECT_EQ(ErrorOf("softmax", DType::kFloat64, {&x}, AxisAttr(-1), 1),
            "x is float32, expected float64");
}

TEST(CrossEntropyWithSoftmaxTest, BadOperandsAreErrors) {
  const Tensor input = RandomTensor(DType::kFloat32, {4, 5}, 90);
  const Tensor scalar = RandomTensor(DType::kFloat32, {}, 91);
  const Tensor label = Tensor::FromVector<int64_t>({0, 4, 7, 1}, {4, 1});
  const Tensor negative = Tensor::FromVector<int32_t>({0, -1, 2, 1}, {4, 1});
  const Tensor good = Tensor::FromVector<int64_t>({0, 4, 3, 1}, {4, 1});
  const Tensor flat_label = Tensor::FromVector<int64_t>({0, 4, 3, 1}, {4});
  const Tensor float_label = RandomTensor(DType::kFloat32, {4, 1}, 92);
  const Tensor soft_int = RandomTensor(DType::kInt64, {4, 5}, 93, 0, 2);
  const Tensor soft_short = RandomTensor(DType::kFloat32, {4, 1}, 94);
  const Tensor loss_grad = RandomTensor(DType::kFloat32, {4}, 95);
  const CeConfig hard{false, true, -100};
  const CeConfig soft{true, true, -100};
  const std::string fwd = "cross_entropy_with_softmax";
  const std::string bwd = "cross_entropy_with_softmax_grad";
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &label}, CeAttrs(hard, -1), 2),
            "label[2] = 7 is out of range for 5 classes (input of shape [4, 5], ignore_index "
            "-100)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &negative}, CeAttrs(hard, -1), 2),
            "label[1] = -1 is out of range for 5 classes (input of shape [4, 5], ignore_index "
            "-100)");
  EXPECT_EQ(ErrorOf(bwd, DType::kFloat32, {&label, &input, &input}, CeAttrs(hard, -1), 1),
            "loss_grad has shape [4, 5], expected [4, 1] (the shape of loss)");
  EXPECT_EQ(ErrorOf(bwd, DType::kFloat32, {&label, &input, &good}, CeAttrs(hard, -1), 1),
            "loss_grad is int64, expected float32");
  const Tensor ones = Tensor::FromVector<float>({1, 1, 1, 1}, {4, 1});
  EXPECT_EQ(ErrorOf(bwd, DType::kFloat32, {&label, &input, &ones}, CeAttrs(hard, -1), 1),
            "label[2] = 7 is out of range for 5 classes (softmax of shape [4, 5], ignore_index "
            "-100)");
  EXPECT_EQ(ErrorOf(bwd, DType::kFloat32, {&good, &input, &loss_grad}, CeAttrs(hard, -1), 1),
            "loss_grad has shape [4], expected [4, 1] (the shape of loss)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &flat_label}, CeAttrs(hard, -1), 2),
            "label has shape [4], expected [4, 1] (hard labels have the shape of input with the "
            "class axis 1)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &good}, CeAttrs(hard, 0), 2),
            "label has shape [4, 1], expected [1, 5] (hard labels have the shape of input with "
            "the class axis 1)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &float_label}, CeAttrs(hard, -1), 2),
            "label is float32, expected int64 or int32");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &soft_int}, CeAttrs(soft, -1), 2),
            "label is int64, expected float32");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &soft_short}, CeAttrs(soft, -1), 2),
            "label has shape [4, 1], expected [4, 5] (soft labels have the shape of input)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&input, &good}, CeAttrs(hard, 2), 2),
            "axis 2 is out of range for input of shape [4, 5] (valid: -2 to 1)");
  EXPECT_EQ(ErrorOf(fwd, DType::kFloat32, {&scalar, &good}, CeAttrs(hard, -1), 2),
            "input of shape [] has no class axis");
  EXPECT_EQ(ErrorOf(bwd, DType::kFloat32, {&good, &scalar, &good}, CeAttrs(hard, -1), 1),
            "softmax of shape [] has no class axis");
}

}  // namespace
}  // namespace irm::rt
