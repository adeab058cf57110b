// matmul and matmul_grad against a naive float64 paddle.matmul written here (1-D operands
// promoted, transposes, NumPy batch broadcasting), in both GEMM modes and every floating dtype;
// the float64 grads also against central finite differences; outputs nobody wants; the errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/kernels/matmul_plan.h"
#include "reference_runtime/kernels/naive_broadcast_test_support.h"

namespace irm::rt {
namespace {

using testing::NaiveOperandIndex;
using testing::NumelOf;
using testing::RandomTensor;
using testing::RunKernel;
using testing::Shape;
using testing::ToDoubles;
using testing::TryRunKernel;

struct Case {
  Shape x, y;
  bool tx = false, ty = false;
};
const std::vector<Case> kCases = {
    {{3, 4}, {4, 5}},
    {{4, 3}, {4, 5}, true, false},
    {{3, 4}, {5, 4}, false, true},
    {{4, 3}, {5, 4}, true, true},
    {{4}, {4, 5}},
    {{4}, {5, 4}, true, true},  // a 1-D operand's flag is ignored
    {{3, 4}, {4}},
    {{4}, {4}},
    {{2, 3, 4}, {4, 5}},  // x's batches stack into one GEMM
    {{2, 3, 4}, {5, 4}, false, true},
    {{2, 3, 4}, {4}},
    {{2, 4, 3}, {4, 5}, true, false},
    {{2, 3, 4}, {2, 4, 5}},
    {{2, 1, 3, 4}, {5, 4, 6}},  // both broadcast
    {{1, 4, 3}, {2, 4, 5}, true, false},
    {{4}, {2, 4, 5}},
    {{3, 2, 4, 3}, {2, 5, 4}, true, true},
    {{1, 1}, {1, 1}},
    {{3, 0}, {0, 2}},  // k = 0: zeros
    {{0, 3}, {3, 2}},
    {{33, 65}, {65, 17}},
};

// The naive product's layout, planned independently of the kernel.
struct Naive {
  Shape x_batch, y_batch, batch, out;
  int64_t m, n, k, x_cols, y_cols;
  bool tx, ty;

  explicit Naive(const Case& c) {
    const bool xv = c.x.size() == 1, yv = c.y.size() == 1;
    tx = c.tx && !xv;
    ty = c.ty && !yv;
    const int64_t xr = xv ? 1 : c.x[c.x.size() - 2], yr = yv ? c.y[0] : c.y[c.y.size() - 2];
    x_cols = c.x.back();
    y_cols = yv ? 1 : c.y.back();
    m = tx ? x_cols : xr;
    k = tx ? xr : x_cols;
    n = ty ? yr : y_cols;
    x_batch.assign(c.x.begin(), c.x.end() - (xv ? 1 : 2));
    y_batch.assign(c.y.begin(), c.y.end() - (yv ? 1 : 2));
    const size_t rank = std::max(x_batch.size(), y_batch.size());
    for (size_t d = 0; d < rank; ++d) {
      const size_t from_right = rank - 1 - d;
      const int64_t a = from_right < x_batch.size() ? x_batch[x_batch.size() - 1 - from_right] : 1;
      const int64_t b = from_right < y_batch.size() ? y_batch[y_batch.size() - 1 - from_right] : 1;
      batch.push_back(a == 1 ? b : a);
    }
    out = batch;
    if (!xv) out.push_back(m);
    if (!yv) out.push_back(n);
  }
  // Flat indices of op(x)(i, p) and op(y)(p, j) in out batch b.
  int64_t X(int64_t b, int64_t i, int64_t p) const {
    const int64_t base = NaiveOperandIndex(b, batch, x_batch) * m * k;
    return base + (tx ? p * x_cols + i : i * x_cols + p);
  }
  int64_t Y(int64_t b, int64_t p, int64_t j) const {
    const int64_t base = NaiveOperandIndex(b, batch, y_batch) * k * n;
    return base + (ty ? j * y_cols + p : p * y_cols + j);
  }
  std::vector<double> Product(const std::vector<double>& x, const std::vector<double>& y) const {
    std::vector<double> out(static_cast<size_t>(NumelOf(batch) * m * n), 0.0);
    for (int64_t b = 0; b < NumelOf(batch); ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) sum += x[X(b, i, p)] * y[Y(b, p, j)];
          out[(b * m + i) * n + j] = sum;
        }
      }
    }
    return out;
  }
  // d sum(w * out) / dx and / dy.
  void Grads(const std::vector<double>& x, const std::vector<double>& y,
             const std::vector<double>& w, std::vector<double>& dx, std::vector<double>& dy) const {
    dx.assign(x.size(), 0.0);
    dy.assign(y.size(), 0.0);
    for (int64_t b = 0; b < NumelOf(batch); ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t p = 0; p < k; ++p) {
            dx[X(b, i, p)] += w[(b * m + i) * n + j] * y[Y(b, p, j)];
            dy[Y(b, p, j)] += w[(b * m + i) * n + j] * x[X(b, i, p)];
          }
        }
      }
    }
  }
};

KernelAttrs Transposes(const Case& c) {
  KernelAttrs attrs;
  attrs.Set("transpose_x", c.tx);
  attrs.Set("transpose_y", c.ty);
  return attrs;
}

std::string Where(const Case& c, DType dtype, GemmMode mode) {
  return std::string(DTypeName(dtype)) + " " + GemmModeName(mode) + " x " + ShapeToString(c.x) +
         (c.tx ? "^T" : "") + " y " + ShapeToString(c.y) + (c.ty ? "^T" : "");
}

const std::vector<DType> kFloating = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                      DType::kBFloat16};

// A sum of k rounded products: the error of float32 and float64 sums grows with k; a 16-bit
// result's is its final rounding.
double Tolerance(DType dtype, int64_t k) {
  const bool wide = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  return testing::ToleranceFor(dtype) * (wide ? static_cast<double>(std::max<int64_t>(k, 1)) : 1);
}

TEST(MatmulTest, MatchesFloat64ForEveryDTypeModeAndShape) {
  uint64_t seed = 1;
  for (GemmMode mode : {GemmMode::kBlas, GemmMode::kReference}) {
    for (DType dtype : kFloating) {
      for (const Case& c : kCases) {
        const Naive naive(c);
        const Tensor x = RandomTensor(dtype, c.x, ++seed);
        const Tensor y = RandomTensor(dtype, c.y, ++seed);
        const std::vector<Tensor> out =
            RunKernel("matmul", dtype, {&x, &y}, Transposes(c), 1, {.gemm = mode});
        ASSERT_EQ(out[0].dtype(), dtype);
        testing::ExpectClose(out[0], naive.Product(ToDoubles(x), ToDoubles(y)), naive.out,
                             Tolerance(dtype, naive.k), Where(c, dtype, mode));
      }
    }
  }
}

TEST(MatmulTest, DefaultsToNoTransposes) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 3}, 5);
  const Tensor y = RandomTensor(DType::kFloat64, {3, 4}, 6);
  const Naive naive({{2, 3}, {3, 4}});
  testing::ExpectClose(RunKernel("matmul", DType::kFloat64, {&x, &y}, {}, 1)[0],
                       naive.Product(ToDoubles(x), ToDoubles(y)), {2, 4}, 1e-12, "matmul");
}

TEST(MatmulTest, Float64GradsMatchFiniteDifferences) {
  uint64_t seed = 100;
  for (GemmMode mode : {GemmMode::kBlas, GemmMode::kReference}) {
    for (const Case& c : kCases) {
      const Naive naive(c);
      if (NumelOf(c.x) * NumelOf(c.y) > 20000) continue;  // finite differences are quadratic
      const Tensor x = RandomTensor(DType::kFloat64, c.x, ++seed);
      const Tensor y = RandomTensor(DType::kFloat64, c.y, ++seed);
      const Tensor w = RandomTensor(DType::kFloat64, naive.out, ++seed);
      const std::vector<double> xs = ToDoubles(x), ys = ToDoubles(y), ws = ToDoubles(w);
      auto loss = [&](const std::vector<double>& xv, const std::vector<double>& yv) {
        const std::vector<double> out = naive.Product(xv, yv);
        double sum = 0;
        for (size_t i = 0; i < out.size(); ++i) sum += ws[i] * out[i];
        return sum;
      };
      const std::vector<Tensor> grads =
          RunKernel("matmul_grad", DType::kFloat64, {&x, &y, &w}, Transposes(c), 2, {.gemm = mode});
      testing::ExpectClose(
          grads[0],
          testing::NumericGradient([&](const std::vector<double>& v) { return loss(v, ys); }, xs),
          c.x, 1e-6, Where(c, DType::kFloat64, mode) + " x_grad");
      testing::ExpectClose(
          grads[1],
          testing::NumericGradient([&](const std::vector<double>& v) { return loss(xs, v); }, ys),
          c.y, 1e-6, Where(c, DType::kFloat64, mode) + " y_grad");
    }
  }
}

TEST(MatmulTest, GradsMatchFloat64ForEveryDTypeAndMode) {
  uint64_t seed = 200;
  for (GemmMode mode : {GemmMode::kBlas, GemmMode::kReference}) {
    for (DType dtype : kFloating) {
      for (const Case& c : kCases) {
        const Naive naive(c);
        const Tensor x = RandomTensor(dtype, c.x, ++seed);
        const Tensor y = RandomTensor(dtype, c.y, ++seed);
        const Tensor w = RandomTensor(dtype, naive.out, ++seed);
        std::vector<double> dx, dy;
        naive.Grads(ToDoubles(x), ToDoubles(y), ToDoubles(w), dx, dy);
        const std::vector<Tensor> grads =
            RunKernel("matmul_grad", dtype, {&x, &y, &w}, Transposes(c), 2, {.gemm = mode});
        // Each grad element sums (broadcast batches x) n or m products.
        const int64_t terms = NumelOf(naive.batch) * std::max(naive.m, naive.n);
        testing::ExpectClose(grads[0], dx, c.x, Tolerance(dtype, terms),
                             Where(c, dtype, mode) + " x_grad");
        testing::ExpectClose(grads[1], dy, c.y, Tolerance(dtype, terms),
                             Where(c, dtype, mode) + " y_grad");
      }
    }
  }
}

TEST(MatmulTest, ReferenceBitsDoNotDependOnHowBatchesAreGrouped) {
  // x's batches stacked into one GEMM (y shared) give each batch the bits of its own product.
  const Tensor x = RandomTensor(DType::kFloat32, {3, 5, 7}, 11);
  const Tensor y = RandomTensor(DType::kFloat32, {7, 6}, 12);
  const Tensor all =
      RunKernel("matmul", DType::kFloat32, {&x, &y}, {}, 1, {.gemm = GemmMode::kReference})[0];
  for (int64_t b = 0; b < 3; ++b) {
    const Tensor xb = x.Slice(b, b + 1).value().Reshaped({5, 7}).value();
    const Tensor one =
        RunKernel("matmul", DType::kFloat32, {&xb, &y}, {}, 1, {.gemm = GemmMode::kReference})[0];
    EXPECT_TRUE(one.BitwiseEqual(all.Slice(b, b + 1).value().Reshaped({5, 6}).value())) << b;
  }
}

TEST(MatmulTest, OnlyWantedGradsAreProduced) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3, 4}, 1);
  const Tensor y = RandomTensor(DType::kFloat32, {4, 5}, 2);
  const Tensor w = RandomTensor(DType::kFloat32, {2, 3, 5}, 3);
  std::vector<double> dx, dy;
  Naive({{2, 3, 4}, {4, 5}}).Grads(ToDoubles(x), ToDoubles(y), ToDoubles(w), dx, dy);
  for (int wanted : {0, 1}) {
    Tensor grad;
    KernelCall call{
        .inputs = {&x, &y, &w}, .outputs = {nullptr, nullptr}, .attrs = {}, .context = {}};
    call.outputs[static_cast<size_t>(wanted)] = &grad;
    ASSERT_TRUE(KernelRegistry::Global().Run("matmul_grad", DType::kFloat32, call).ok());
    testing::ExpectClose(grad, wanted == 0 ? dx : dy, wanted == 0 ? x.shape() : y.shape(), 1e-5,
                         wanted == 0 ? "x_grad alone" : "y_grad alone");
  }
}

std::string ErrorOf(const std::string& name, const std::vector<const Tensor*>& inputs,
                    const Case& c, DType dtype = DType::kFloat32) {
  StatusOr<std::vector<Tensor>> out =
      TryRunKernel(name, dtype, inputs, Transposes(c), name == "matmul" ? 1 : 2);
  return out.ok() ? "OK" : out.status().message();
}

TEST(MatmulTest, ShapesThatDoNotMultiplyAreAnError) {
  auto t = [](const Shape& s) { return Tensor::ZerosUnchecked(DType::kFloat32, s); };
  const Tensor a23 = t({2, 3}), a45 = t({4, 5}), a32 = t({3, 2}), a234 = t({2, 3, 4}),
               a546 = t({5, 4, 6}), scalar = t({}), a4 = t({4}), a3 = t({3});
  for (const char* name : {"matmul", "matmul_grad"}) {
    const std::vector<const Tensor*> extra = std::string(name) == "matmul"
                                                 ? std::vector<const Tensor*>{}
                                                 : std::vector<const Tensor*>{&a23};
    auto inputs = [&](const Tensor& x, const Tensor& y) {
      std::vector<const Tensor*> in = {&x, &y};
      in.insert(in.end(), extra.begin(), extra.end());
      return in;
    };
    EXPECT_EQ(ErrorOf(name, inputs(a23, a45), {}),
              "x [2, 3] and y [4, 5] do not multiply: inner dims 3 and 4 differ");
    EXPECT_EQ(ErrorOf(name, inputs(a32, a45), {{}, {}, true, false}),
              "x [3, 2] (transposed) and y [4, 5] do not multiply: inner dims 3 and 4 differ");
    EXPECT_EQ(ErrorOf(name, inputs(a23, a45), {{}, {}, false, true}),
              "x [2, 3] and y [4, 5] (transposed) do not multiply: inner dims 3 and 5 differ");
    EXPECT_EQ(ErrorOf(name, inputs(a3, a4), {}),
              "x [3] and y [4] do not multiply: inner dims 3 and 4 differ");
    EXPECT_EQ(ErrorOf(name, inputs(a234, a546), {}),
              "x [2, 3, 4] and y [5, 4, 6]: batch dims [2] and [5] do not broadcast");
    EXPECT_EQ(ErrorOf(name, inputs(scalar, a4), {}), "x is 0-D; matmul needs at least 1 dim");
    EXPECT_EQ(ErrorOf(name, inputs(a4, scalar), {}), "y is 0-D; matmul needs at least 1 dim");
  }
  const Tensor x34 = t({3, 4}), g34 = t({3, 4});
  EXPECT_EQ(ErrorOf("matmul_grad", {&x34, &a45, &g34}, {}),
            "out_grad [3, 4] is not matmul's out shape [3, 5] for x [3, 4] and y [4, 5]");
  const Tensor d45 = Tensor::ZerosUnchecked(DType::kFloat64, {4, 5});
  EXPECT_EQ(ErrorOf("matmul", {&x34, &d45}, {}), "y is float64, not float32");
  EXPECT_EQ(ErrorOf("matmul_grad", {&x34, &a45, &d45}, {}), "out_grad is float64, not float32");
}

// The plan the CPU and CUDA kernels share (matmul_plan.h), read directly: batch dims broadcast
// NumPy's way and a 1-D operand's added dim leaves out (paddle/phi/kernels/impl/
// matmul_kernel_impl.h, MatMulFunction); a 1-D operand's transpose flag is ignored.
TEST(MatmulTest, ThePlanBroadcastsBatchesAndDropsAVectorsDim) {
  const Tensor x = Tensor::ZerosUnchecked(DType::kFloat32, {2, 1, 4, 3});
  const Tensor y = Tensor::ZerosUnchecked(DType::kFloat32, {5, 4, 6});
  const StatusOr<plan::MatmulPlan> p = plan::PlanMatmul(x.shape(), y.shape(), true, false);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->batch, (Shape{2, 5}));
  EXPECT_EQ(p->out, (Shape{2, 5, 3, 6}));
  EXPECT_EQ(p->m, 3);
  EXPECT_EQ(p->n, 6);
  EXPECT_EQ(p->k, 4);
  EXPECT_EQ(p->x_matrices(), 2);
  EXPECT_EQ(p->y_matrices(), 5);
  EXPECT_EQ(p->batch_numel(), 10);
  EXPECT_EQ(p->x_size(), 12);
  EXPECT_EQ(p->y_size(), 24);
  EXPECT_EQ(p->out_size(), 18);

  const Tensor v = Tensor::ZerosUnchecked(DType::kFloat32, {4});
  KernelAttrs both;
  both.Set("transpose_x", true);
  both.Set("transpose_y", true);
  const StatusOr<plan::MatmulPlan> vv = plan::PlanMatmul(v, v, both);
  ASSERT_TRUE(vv.ok()) << vv.status().message();
  EXPECT_FALSE(vv->trans_x);
  EXPECT_FALSE(vv->trans_y);
  EXPECT_EQ(vv->out, Shape{});
  EXPECT_EQ(vv->k, 4);
  const Tensor g = Tensor::ZerosUnchecked(DType::kFloat32, {1});
  EXPECT_EQ(plan::CheckMatmulGradShape(*vv, v, v, g).message(),
            "out_grad [1] is not matmul's out shape [] for x [4] and y [4]");
}

}  // namespace
}  // namespace irm::rt
