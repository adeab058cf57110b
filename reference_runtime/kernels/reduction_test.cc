// The reduction kernels (mean, sum, mean_all, squared_l2_norm and their grads) against naive
// float64 references written here, their grads against central finite differences, the
// summation order, and every bad-input message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
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

// Finite differences in float64 are good to about 1e-8, so float64 grads are held to that.
double GradTolerance(DType dtype) { return std::max(ToleranceFor(dtype), 1e-7); }

struct ReduceCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> axis;
};
const std::vector<ReduceCase> kReduceCases = {
    {{2, 3, 4}, {1}},
    {{2, 3, 4}, {-1}},
    {{2, 3, 4}, {0, 2}},
    {{2, 3, 4}, {}},
    {{1, 5, 1}, {0}},
    {{1, 5, 1}, {2, -2}},
    {{3, 1}, {1}},
    {{4}, {0}},
    {{}, {}},
    {{}, {-1}},
    {{2, 0, 3}, {1}},
    {{2, 0, 3}, {0, 2}},
    {{3, 2, 2, 2}, {3, 1}},
};

std::string Describe(const ReduceCase& c, bool keepdim) {
  std::string s = "shape " + ShapeToString(c.shape) + " axis " + ShapeToString(c.axis);
  return s + (keepdim ? " keepdim" : "");
}

KernelAttrs ReduceAttrsOf(const ReduceCase& c, bool keepdim) {
  KernelAttrs attrs;
  attrs.Set("axis", c.axis);
  attrs.Set("keepdim", keepdim);
  return attrs;
}

// The naive reduction: every x element, in flat order, added in float64 into the out element
// its multi-index maps to when the reduced dims are dropped.
struct Naive {
  std::vector<double> sums;
  std::vector<int64_t> counts;
  std::vector<int64_t> shape;
};
Naive NaiveSum(const std::vector<double>& x, const std::vector<int64_t>& shape,
               const std::vector<int64_t>& axis, bool keepdim) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::set<int64_t> reduced;
  for (int64_t a : axis) reduced.insert(a < 0 ? a + std::max<int64_t>(rank, 1) : a);
  if (axis.empty()) {
    for (int64_t d = 0; d < rank; ++d) reduced.insert(d);
  }
  Naive n;
  int64_t out_numel = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.count(d)) {
      n.shape.push_back(shape[d]);
      out_numel *= shape[d];
    } else if (keepdim) {
      n.shape.push_back(1);
    }
  }
  n.sums.assign(static_cast<size_t>(out_numel), 0.0);
  n.counts.assign(static_cast<size_t>(out_numel), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i);
    int64_t out_index = 0;
    int64_t out_stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t idx = rest % shape[d];
      rest /= shape[d];
      if (!reduced.count(d)) {
        out_index += idx * out_stride;
        out_stride *= shape[d];
      }
    }
    n.sums[static_cast<size_t>(out_index)] += x[i];
    n.counts[static_cast<size_t>(out_index)] += 1;
  }
  return n;
}

std::vector<double> NaiveMean(const Naive& n) {
  std::vector<double> means(n.sums.size());
  for (size_t o = 0; o < means.size(); ++o) {
    means[o] = n.counts[o] == 0 ? std::numeric_limits<double>::quiet_NaN()
                                : n.sums[o] / static_cast<double>(n.counts[o]);
  }
  return means;
}

TEST(ReductionTest, MeanMatchesNaiveFloat64) {
  uint64_t seed = 1;
  for (DType dtype : kFloatTypes) {
    for (const ReduceCase& c : kReduceCases) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + Describe(c, keepdim));
        const Tensor x = RandomTensor(dtype, c.shape, seed++);
        const Naive n = NaiveSum(ToDoubles(x), c.shape, c.axis, keepdim);
        const std::vector<Tensor> out =
            RunKernel("mean", dtype, {&x}, ReduceAttrsOf(c, keepdim), 1);
        ExpectClose(out[0], NaiveMean(n), n.shape, ToleranceFor(dtype), "mean");
        EXPECT_EQ(out[0].dtype(), dtype);
      }
    }
  }
}

TEST(ReductionTest, SumMatchesNaiveFloat64) {
  uint64_t seed = 100;
  for (DType dtype : kFloatTypes) {
    for (const ReduceCase& c : kReduceCases) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + Describe(c, keepdim));
        const Tensor x = RandomTensor(dtype, c.shape, seed++);
        const Naive n = NaiveSum(ToDoubles(x), c.shape, c.axis, keepdim);
        const std::vector<Tensor> out = RunKernel("sum", dtype, {&x}, ReduceAttrsOf(c, keepdim), 1);
        ExpectClose(out[0], n.sums, n.shape, ToleranceFor(dtype), "sum");
        EXPECT_EQ(out[0].dtype(), dtype);
      }
    }
  }
}

TEST(ReductionTest, SumOfIntegersAndBoolsIsExactAndWidensLikePaddle) {
  struct IntCase {
    DType x;
    DType out;
    double lo;
    double hi;
  };
  // Without a dtype attribute bool and int32 sum into int64 (Paddle's SumRawInferMeta).
  const IntCase cases[] = {{DType::kInt32, DType::kInt64, -50, 50},
                           {DType::kInt64, DType::kInt64, -1e6, 1e6},
                           {DType::kBool, DType::kInt64, 0, 2}};
  uint64_t seed = 200;
  for (const IntCase& ic : cases) {
    for (const ReduceCase& c : kReduceCases) {
      SCOPED_TRACE(std::string(DTypeName(ic.x)) + " " + Describe(c, false));
      const Tensor x = RandomTensor(ic.x, c.shape, seed++, ic.lo, ic.hi);
      const Naive n = NaiveSum(ToDoubles(x), c.shape, c.axis, false);
      const std::vector<Tensor> out = RunKernel("sum", ic.x, {&x}, ReduceAttrsOf(c, false), 1);
      ExpectClose(out[0], n.sums, n.shape, 0.0, "sum");
      EXPECT_EQ(out[0].dtype(), ic.out);
    }
  }
}

TEST(ReductionTest, SumDTypeAttributePicksTheOutDType) {
  struct DTypeCase {
    DType x;
    DType out;
  };
  const DTypeCase cases[] = {
      {DType::kFloat32, DType::kFloat64}, {DType::kFloat16, DType::kFloat32},
      {DType::kInt64, DType::kInt32},     {DType::kBool, DType::kInt32},
      {DType::kInt32, DType::kFloat32},   {DType::kFloat64, DType::kBFloat16}};
  uint64_t seed = 300;
  for (const DTypeCase& dc : cases) {
    SCOPED_TRACE(std::string(DTypeName(dc.x)) + " -> " + DTypeName(dc.out));
    const bool is_float = IsFloatingDType(dc.x);
    const Tensor x = RandomTensor(dc.x, {3, 5}, seed++, is_float ? -1 : 0, is_float ? 1 : 20);
    KernelAttrs attrs = ReduceAttrsOf({{3, 5}, {1}}, true);
    attrs.Set("dtype", dc.out);
    const Naive n = NaiveSum(ToDoubles(x), {3, 5}, {1}, true);
    const std::vector<Tensor> out = RunKernel("sum", dc.x, {&x}, attrs, 1);
    ExpectClose(out[0], n.sums, n.shape, ToleranceFor(dc.out), "sum");
    EXPECT_EQ(out[0].dtype(), dc.out);
  }
}

// The documented order: out elements in turn, each summing its reduced elements one after the
// other in C order of the reduced dims. [[1e8, 1], [-1e8, 1]] gives 1 in float32 that way
// (1e8 + 1 rounds to 1e8); column order would give 2, pairwise 0.
TEST(ReductionTest, SumsSequentiallyInCOrderOfTheReducedDims) {
  const Tensor x = Tensor::FromVector<float>({1e8f, 1.0f, -1e8f, 1.0f}, {2, 2});
  KernelAttrs all;
  all.Set("axis", std::vector<int64_t>{});
  EXPECT_EQ(RunKernel("sum", DType::kFloat32, {&x}, all, 1)[0].data<float>()[0], 1.0f);
  EXPECT_EQ(RunKernel("mean_all", DType::kFloat32, {&x}, {}, 1)[0].data<float>()[0], 0.25f);
  const Tensor column = Tensor::FromVector<float>({1e8f, 1.0f, -1e8f, 1.0f}, {4, 1});
  KernelAttrs dim0;
  dim0.Set("axis", std::vector<int64_t>{0});
  EXPECT_EQ(RunKernel("sum", DType::kFloat32, {&column}, dim0, 1)[0].data<float>()[0], 1.0f);
}

TEST(ReductionTest, IntegerSumsWrapOnOverflow) {
  const Tensor x = Tensor::FromVector<int32_t>({std::numeric_limits<int32_t>::max(), 1}, {2});
  KernelAttrs attrs;
  attrs.Set("dtype", DType::kInt32);
  const std::vector<Tensor> out = RunKernel("sum", DType::kInt32, {&x}, attrs, 1);
  EXPECT_EQ(out[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

// sum(w * f(x)) by central differences against the grad kernel given out_grad = w.
void CheckReduceGrad(const std::string& op, bool mean) {
  uint64_t seed = mean ? 400 : 500;
  for (DType dtype : kFloatTypes) {
    for (const ReduceCase& c : kReduceCases) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(op + " " + DTypeName(dtype) + " " + Describe(c, keepdim));
        const Tensor x = RandomTensor(dtype, c.shape, seed++);
        const Naive shape_only = NaiveSum(ToDoubles(x), c.shape, c.axis, keepdim);
        const Tensor w = RandomTensor(dtype, shape_only.shape, seed++);
        const std::vector<double> wv = ToDoubles(w);
        auto loss = [&](const std::vector<double>& xv) {
          const Naive n = NaiveSum(xv, c.shape, c.axis, keepdim);
          const std::vector<double> f = mean ? NaiveMean(n) : n.sums;
          double l = 0;
          for (size_t o = 0; o < f.size(); ++o) l += wv[o] * f[o];
          return l;
        };
        const std::vector<Tensor> grad =
            RunKernel(op, dtype, {&x, &w}, ReduceAttrsOf(c, keepdim), 1);
        ExpectClose(grad[0], NumericGradient(loss, ToDoubles(x)), c.shape, GradTolerance(dtype),
                    op);
      }
    }
  }
}

TEST(ReductionTest, MeanGradMatchesFiniteDifferences) { CheckReduceGrad("mean_grad", true); }
TEST(ReductionTest, SumGradMatchesFiniteDifferences) { CheckReduceGrad("sum_grad", false); }

TEST(ReductionTest, ReduceGradTakesEitherOutGradFormAndReduceAll) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 3}, 600);
  const Tensor g_drop = Tensor::FromVector<double>({5.0}, {});
  const Tensor g_one = Tensor::FromVector<double>({5.0}, {1});
  const Tensor g_keep = Tensor::FromVector<double>({5.0}, {1, 1});
  KernelAttrs attrs;
  attrs.Set("axis", std::vector<int64_t>{1});  // reduce_all overrides it
  attrs.Set("reduce_all", true);
  for (const Tensor* g : {&g_drop, &g_one, &g_keep}) {
    SCOPED_TRACE(g->Describe());
    ExpectClose(RunKernel("mean_grad", DType::kFloat64, {&x, g}, attrs, 1)[0],
                std::vector<double>(6, 5.0 / 6), {2, 3}, 0.0, "mean_grad");
    ExpectClose(RunKernel("sum_grad", DType::kFloat64, {&x, g}, attrs, 1)[0],
                std::vector<double>(6, 5.0), {2, 3}, 0.0, "sum_grad");
  }
  // A grad of another float dtype (a sum with a dtype attribute) comes back in x's dtype.
  const Tensor x32 = RandomTensor(DType::kFloat32, {2, 3}, 601);
  const Tensor g64 = Tensor::FromVector<double>({1.5, -2.5}, {2});
  KernelAttrs axis1;
  axis1.Set("axis", std::vector<int64_t>{1});
  const Tensor dx = RunKernel("sum_grad", DType::kFloat32, {&x32, &g64}, axis1, 1)[0];
  EXPECT_EQ(dx.dtype(), DType::kFloat32);
  ExpectClose(dx, {1.5, 1.5, 1.5, -2.5, -2.5, -2.5}, {2, 3}, 0.0, "sum_grad");
}

TEST(ReductionTest, MeanAllMatchesNaiveFloat64) {
  uint64_t seed = 700;
  for (DType dtype : kFloatTypes) {
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {1}, {7}, {3, 1, 4}, {2, 3, 5}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      const Tensor x = RandomTensor(dtype, shape, seed++);
      const std::vector<double> xv = ToDoubles(x);
      double sum = 0;
      for (double v : xv) sum += v;
      ExpectClose(RunKernel("mean_all", dtype, {&x}, {}, 1)[0],
                  {sum / static_cast<double>(xv.size())}, {}, ToleranceFor(dtype), "mean_all");

      const Tensor w = RandomTensor(dtype, {}, seed++);
      const double wv = ToDoubles(w)[0];
      auto loss = [&](const std::vector<double>& v) {
        double s = 0;
        for (double e : v) s += e;
        return wv * s / static_cast<double>(v.size());
      };
      ExpectClose(RunKernel("mean_all_grad", dtype, {&x, &w}, {}, 1)[0], NumericGradient(loss, xv),
                  shape, GradTolerance(dtype), "mean_all_grad");
    }
  }
}

TEST(ReductionTest, SquaredL2NormMatchesNaiveFloat64) {
  uint64_t seed = 800;
  for (DType dtype : kFloatTypes) {
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {1}, {7}, {3, 1, 4}, {2, 0}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      const Tensor x = RandomTensor(dtype, shape, seed++);
      const std::vector<double> xv = ToDoubles(x);
      auto norm = [](const std::vector<double>& v) {
        double s = 0;
        for (double e : v) s += e * e;
        return s;
      };
      ExpectClose(RunKernel("squared_l2_norm", dtype, {&x}, {}, 1)[0], {norm(xv)}, {1},
                  ToleranceFor(dtype), "squared_l2_norm");

      const Tensor w = RandomTensor(dtype, {1}, seed++);
      const double wv = ToDoubles(w)[0];
      ExpectClose(RunKernel("squared_l2_norm_grad", dtype, {&x, &w}, {}, 1)[0],
                  NumericGradient([&](const std::vector<double>& v) { return wv * norm(v); }, xv),
                  shape, GradTolerance(dtype), "squared_l2_norm_grad");
    }
  }
}

std::string ErrorOf(const std::string& op, DType dtype, const std::vector<const Tensor*>& inputs,
                    const KernelAttrs& attrs) {
  StatusOr<std::vector<Tensor>> out = TryRunKernel(op, dtype, inputs, attrs, 1);
  if (out.ok()) return "(no error)";
  return out.status().message();
}

TEST(ReductionTest, BadAxesAreErrors) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 900);
  const Tensor scalar = RandomTensor(DType::kFloat32, {}, 901);
  KernelAttrs attrs;
  attrs.Set("axis", std::vector<int64_t>{2});
  EXPECT_EQ(ErrorOf("mean", DType::kFloat32, {&x}, attrs),
            "axis 2 is out of range for x of shape [2, 3] (valid: -2 to 1)");
  EXPECT_EQ(ErrorOf("sum_grad", DType::kFloat32, {&x, &x}, attrs),
            "axis 2 is out of range for x of shape [2, 3] (valid: -2 to 1)");
  attrs.Set("axis", std::vector<int64_t>{-3});
  EXPECT_EQ(ErrorOf("sum", DType::kFloat32, {&x}, attrs),
            "axis -3 is out of range for x of shape [2, 3] (valid: -2 to 1)");
  attrs.Set("axis", std::vector<int64_t>{1});
  EXPECT_EQ(ErrorOf("sum", DType::kFloat32, {&scalar}, attrs),
            "axis 1 is out of range for x of shape [] (valid: -1 to 0)");
  attrs.Set("axis", std::vector<int64_t>{1, -1});
  EXPECT_EQ(ErrorOf("mean", DType::kFloat32, {&x}, attrs),
            "axis [1, -1] names dim 1 twice for x of shape [2, 3]");
  attrs.Set("axis", int64_t{1});
  EXPECT_EQ(ErrorOf("mean", DType::kFloat32, {&x}, attrs),
            "attribute 'axis' is an int, not an int array");
}

TEST(ReductionTest, MismatchedOperandsAreErrors) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 902);
  const Tensor g3 = RandomTensor(DType::kFloat32, {3}, 903);
  const Tensor g2 = RandomTensor(DType::kFloat32, {2}, 904);
  const Tensor gi = RandomTensor(DType::kInt32, {2}, 905);
  const Tensor x64 = RandomTensor(DType::kFloat64, {2, 3}, 906);
  KernelAttrs axis1;
  axis1.Set("axis", std::vector<int64_t>{1});
  EXPECT_EQ(ErrorOf("mean_grad", DType::kFloat32, {&x, &g3}, axis1),
            "out_grad has shape [3], expected [2] (x of shape [2, 3] reduced)");
  axis1.Set("keepdim", true);
  EXPECT_EQ(ErrorOf("sum_grad", DType::kFloat32, {&x, &g3}, axis1),
            "out_grad has shape [3], expected [2, 1] (x of shape [2, 3] reduced)");
  EXPECT_EQ(ErrorOf("sum_grad", DType::kFloat32, {&x, &gi}, axis1),
            "out_grad is int32, expected float16, bfloat16, float32 or float64");
  EXPECT_EQ(ErrorOf("mean_all_grad", DType::kFloat32, {&x, &g2}, {}),
            "out_grad has shape [2], expected [] or [1] (the shape of mean_all's out)");
  EXPECT_EQ(ErrorOf("squared_l2_norm_grad", DType::kFloat32, {&x, &g3}, {}),
            "out_grad has shape [3], expected [] or [1] (the shape of squared_l2_norm's out)");
  EXPECT_EQ(ErrorOf("mean", DType::kFloat32, {&x64}, {}), "x is float64, expected float32");
  KernelAttrs to_int;
  to_int.Set("dtype", DType::kInt64);
  EXPECT_EQ(ErrorOf("sum", DType::kFloat32, {&x}, to_int),
            "sum of float32 x into int64 is not supported");
  to_int.Set("dtype", DType::kBool);
  EXPECT_EQ(ErrorOf("sum", DType::kFloat32, {&x}, to_int),
            "sum of float32 x into bool is not supported");
}

}  // namespace
}  // namespace irm::rt
