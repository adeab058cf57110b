// The first CUDA kernels against the float64 references their CPU twins are tested against
// (kernels/*_test.cc), and against the CPU kernels' bits where both sum in the same order
// (elementwise ops, their grads, cast, full). Every test is skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "reference_runtime/cuda/gpu_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt::cuda {
namespace {

using rt::testing::ExpectClose;
using rt::testing::RandomTensor;
using rt::testing::RunKernel;
using rt::testing::ToDoubles;
using rt::testing::ToleranceFor;
using testing::RunGpu;

constexpr DType kFloating[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

// The flat index into a C-order operand of `shape` read by output index `i` of `out` (NumPy
// broadcasting), written independently of the kernels' walks.
int64_t BroadcastIndex(int64_t i, const std::vector<int64_t>& out,
                       const std::vector<int64_t>& shape) {
  int64_t index = 0;
  int64_t stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const int64_t coord = i % out[d];
    i /= out[d];
    if (k < shape.size()) {
      const int64_t size = shape[shape.size() - 1 - k];
      if (size != 1) index += coord * stride;
      stride *= size;
    }
  }
  return index;
}

int64_t NumelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double Apply(const std::string& op, double a, double b) {
  if (op == "add") return a + b;
  if (op == "subtract") return a - b;
  if (op == "multiply") return a * b;
  return a / b;
}

TEST(GpuElementwiseTest, BinaryOpsBroadcastLikeTheReferenceAndTheCpuBits) {
  IRM_REQUIRE_GPU();
  const std::vector<int64_t> xs{2, 3, 4}, ys{3, 1}, out{2, 3, 4};
  for (DType dtype : kFloating) {
    for (const std::string op : {"add", "subtract", "multiply", "divide"}) {
      SCOPED_TRACE(op + " " + DTypeName(dtype));
      const Tensor x = RandomTensor(dtype, xs, 1);
      const Tensor y = RandomTensor(dtype, ys, 2, 0.5, 2.0);
      const std::vector<Tensor> gpu = RunGpu(op, dtype, {&x, &y}, {}, 1);
      const std::vector<double> dx = ToDoubles(x), dy = ToDoubles(y);
      std::vector<double> expected(static_cast<size_t>(NumelOf(out)));
      for (int64_t i = 0; i < NumelOf(out); ++i) {
        expected[i] = Apply(op, dx[BroadcastIndex(i, out, xs)], dy[BroadcastIndex(i, out, ys)]);
      }
      ExpectClose(gpu[0], expected, out, ToleranceFor(dtype), op);
      const std::vector<Tensor> cpu = RunKernel(op, dtype, {&x, &y}, {}, 1);
      EXPECT_TRUE(gpu[0].BitwiseEqual(cpu[0])) << "differs from the CPU kernel's bits";
    }
  }
}

TEST(GpuElementwiseTest, IntegerArithmeticWrapsAsTheCpu) {
  IRM_REQUIRE_GPU();
  const Tensor x = Tensor::FromVector<int32_t>({2147483647, -2147483647 - 1, 7, -9}, {4});
  const Tensor y = Tensor::FromVector<int32_t>({1, -1, 65536, 3}, {4});
  for (const std::string op : {"add", "subtract", "multiply"}) {
    SCOPED_TRACE(op);
    const std::vector<Tensor> gpu = RunGpu(op, DType::kInt32, {&x, &y}, {}, 1);
    const std::vector<Tensor> cpu = RunKernel(op, DType::kInt32, {&x, &y}, {}, 1);
    EXPECT_TRUE(gpu[0].BitwiseEqual(cpu[0]));
  }
  // INT32_MAX + 1 wraps to INT32_MIN.
  EXPECT_EQ(RunGpu("add", DType::kInt32, {&x, &y}, {}, 1)[0].data<int32_t>()[0], -2147483647 - 1);
}

TEST(GpuElementwiseTest, GradsSumBroadcastDimsLikeTheReferenceAndTheCpuBits) {
  IRM_REQUIRE_GPU();
  const std::vector<int64_t> xs{2, 3, 4}, ys{3, 1}, out{2, 3, 4};
  for (DType dtype : kFloating) {
    for (const std::string op : {"add", "subtract", "multiply", "divide"}) {
      SCOPED_TRACE(op + "_grad " + DTypeName(dtype));
      const Tensor x = RandomTensor(dtype, xs, 3);
      const Tensor y = RandomTensor(dtype, ys, 4, 0.5, 2.0);
      const Tensor g = RandomTensor(dtype, out, 5);
      std::vector<const Tensor*> inputs{&x, &y, &g};
      Tensor forward;
      if (op == "divide") {
        forward = RunKernel("divide", dtype, {&x, &y}, {}, 1)[0];
        inputs = {&x, &y, &forward, &g};
      }
      const std::vector<Tensor> gpu = RunGpu(op + "_grad", dtype, inputs, {}, 2);
      const std::vector<double> dx = ToDoubles(x), dy = ToDoubles(y), dg = ToDoubles(g);
      std::vector<double> ex(static_cast<size_t>(NumelOf(xs)), 0.0);
      std::vector<double> ey(static_cast<size_t>(NumelOf(ys)), 0.0);
      for (int64_t i = 0; i < NumelOf(out); ++i) {
        const int64_t xi = BroadcastIndex(i, out, xs), yi = BroadcastIndex(i, out, ys);
        const double a = dx[xi], b = dy[yi], gi = dg[i];
        if (op == "add") {
          ex[xi] += gi, ey[yi] += gi;
        } else if (op == "subtract") {
          ex[xi] += gi, ey[yi] -= gi;
        } else if (op == "multiply") {
          ex[xi] += gi * b, ey[yi] += gi * a;
        } else {
          ex[xi] += gi / b, ey[yi] -= gi * a / (b * b);
        }
      }
      // The y grad sums 8 terms; 16-bit inputs round once more through `forward`.
      const double tol = 8 * ToleranceFor(dtype);
      ExpectClose(gpu[0], ex, xs, tol, "x_grad");
      ExpectClose(gpu[1], ey, ys, tol, "y_grad");
      const std::vector<Tensor> cpu = RunKernel(op + "_grad", dtype, inputs, {}, 2);
      EXPECT_TRUE(gpu[0].BitwiseEqual(cpu[0])) << "x_grad differs from the CPU kernel's bits";
      EXPECT_TRUE(gpu[1].BitwiseEqual(cpu[1])) << "y_grad differs from the CPU kernel's bits";
    }
  }
}

TEST(GpuElementwiseTest, Scale) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    for (bool after : {true, false}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + (after ? " after" : " before"));
      const Tensor x = RandomTensor(dtype, {5, 7}, 6);
      KernelAttrs attrs;
      attrs.Set("scale", 2.5);
      attrs.Set("bias", -0.75);
      attrs.Set("bias_after_scale", after);
      const std::vector<Tensor> gpu = RunGpu("scale", dtype, {&x}, attrs, 1);
      std::vector<double> expected;
      for (double v : ToDoubles(x)) expected.push_back(after ? 2.5 * v - 0.75 : 2.5 * (v - 0.75));
      ExpectClose(gpu[0], expected, {5, 7}, ToleranceFor(dtype), "scale");
    }
  }
}

TEST(GpuCreationTest, FullAndFullLikeHoldTheCpuValues) {
  IRM_REQUIRE_GPU();
  for (DType dtype :
       {DType::kBool, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32, DType::kInt64,
        DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    KernelAttrs attrs;
    attrs.Set("shape", std::vector<int64_t>{3, 4});
    attrs.Set("value", 300.7);
    attrs.Set("dtype", dtype);
    const std::vector<Tensor> gpu = RunGpu("full", dtype, {}, attrs, 1);
    const std::vector<Tensor> cpu = RunKernel("full", dtype, {}, attrs, 1);
    EXPECT_TRUE(gpu[0].BitwiseEqual(cpu[0]));
    const Tensor x = RandomTensor(dtype, {2, 5}, 8);
    KernelAttrs like;
    like.Set("value", int64_t{-3});
    const std::vector<Tensor> gpu_like = RunGpu("full_like", dtype, {&x}, like, 1);
    const std::vector<Tensor> cpu_like = RunKernel("full_like", dtype, {&x}, like, 1);
    EXPECT_TRUE(gpu_like[0].BitwiseEqual(cpu_like[0]));
  }
  KernelAttrs wrong;
  wrong.Set("shape", std::vector<int64_t>{2});
  wrong.Set("value", 1.0);
  wrong.Set("dtype", DType::kInt32);
  StatusOr<std::vector<Tensor>> status = testing::TryRunGpu("full", DType::kFloat32, {}, wrong, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().message(),
            "full: the dtype attribute says int32 but the float32 kernel was called");
}

// Same value, or both NaN.
void ExpectSameValues(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<double> da = ToDoubles(a), db = ToDoubles(b);
  for (size_t i = 0; i < da.size(); ++i) {
    if (std::isnan(da[i]) && std::isnan(db[i])) continue;
    ASSERT_EQ(da[i], db[i]) << "element " << i;
  }
}

TEST(GpuCastTest, EveryPairFollowsTheCpuRules) {
  IRM_REQUIRE_GPU();
  const std::vector<double> values{
      0.0,     -0.0,     1.5,       -1.5,      2.5,   300.7, -300.7,
      70000.0, 1e10,     -1e10,     1.0000001, 65504, 1e-8,  3.14159265358979,
      NAN,     INFINITY, -INFINITY, 127.5};
  const DType all[] = {DType::kBool,    DType::kInt8,   DType::kUInt8,   DType::kInt16,
                       DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                       DType::kFloat32, DType::kFloat64};
  const Tensor source = Tensor::FromVector<double>(values, {static_cast<int64_t>(values.size())});
  for (DType from : all) {
    KernelAttrs to_from;
    to_from.Set("dtype", from);
    const Tensor x = RunKernel("cast", DType::kFloat64, {&source}, to_from, 1)[0];
    for (DType to : all) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
      KernelAttrs attrs;
      attrs.Set("dtype", to);
      const std::vector<Tensor> gpu = RunGpu("cast", from, {&x}, attrs, 1);
      const std::vector<Tensor> cpu = RunKernel("cast", from, {&x}, attrs, 1);
      ASSERT_EQ(gpu[0].dtype(), to);
      ExpectSameValues(gpu[0], cpu[0]);
    }
  }
}

// sum / mean over `axes` of x, in float64.
std::vector<double> ReferenceReduce(const std::vector<double>& x, const std::vector<int64_t>& shape,
                                    const std::vector<bool>& reduced, bool mean,
                                    std::vector<int64_t>* out_shape) {
  out_shape->clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) out_shape->push_back(shape[d]);
  }
  std::vector<double> sums(static_cast<size_t>(NumelOf(*out_shape)), 0.0);
  std::vector<double> counts(sums.size(), 0.0);
  for (int64_t i = 0; i < NumelOf(shape); ++i) {
    int64_t rest = i, out_index = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t coord = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) {
        out_index += coord * stride;
        stride *= shape[d];
      }
    }
    sums[out_index] += x[i];
    counts[out_index] += 1;
  }
  if (mean) {
    for (size_t o = 0; o < sums.size(); ++o) sums[o] /= counts[o];
  }
  return sums;
}

TEST(GpuReductionTest, SumAndMeanOverAxes) {
  IRM_REQUIRE_GPU();
  const std::vector<int64_t> shape{4, 50, 6};
  struct Case {
    std::vector<int64_t> axis;
    std::vector<bool> reduced;
  };
  const Case cases[] = {{{1}, {false, true, false}},
                        {{0, 2}, {true, false, true}},
                        {{-1}, {false, false, true}},
                        {{}, {true, true, true}}};
  for (DType dtype : kFloating) {
    for (const Case& c : cases) {
      for (const std::string op : {"sum", "mean"}) {
        SCOPED_TRACE(op + " " + DTypeName(dtype) + " over " + ShapeToString(c.axis));
        const Tensor x = RandomTensor(dtype, shape, 9);
        KernelAttrs attrs;
        attrs.Set("axis", c.axis);
        attrs.Set("keepdim", false);
        const std::vector<Tensor> gpu = RunGpu(op, dtype, {&x}, attrs, 1);
        std::vector<int64_t> out_shape;
        const std::vector<double> expected =
            ReferenceReduce(ToDoubles(x), shape, c.reduced, op == "mean", &out_shape);
        // The CPU test's tolerance for a sum of up to 1200 terms (kernels/reduction_test.cc
        // holds 16-bit results to their own rounding).
        ExpectClose(gpu[0], expected, out_shape, 10 * ToleranceFor(dtype), op);
      }
    }
  }
}

TEST(GpuReductionTest, LongSumsAreDeterministicAndClose) {
  IRM_REQUIRE_GPU();
  // 2^22 elements: the chunked two-launch path.
  const std::vector<int64_t> shape{int64_t{1} << 22};
  const Tensor x = RandomTensor(DType::kFloat32, shape, 10);
  const std::vector<Tensor> first = RunGpu("sum", DType::kFloat32, {&x}, {}, 1);
  const std::vector<Tensor> second = RunGpu("sum", DType::kFloat32, {&x}, {}, 1);
  EXPECT_TRUE(first[0].BitwiseEqual(second[0]));
  double expected = 0;
  for (double v : ToDoubles(x)) expected += v;
  ASSERT_EQ(first[0].numel(), 1);
  EXPECT_NEAR(first[0].data<float>()[0], expected, 1e-5 * 4096);
}

TEST(GpuReductionTest, IntegerSumsIntoInt64) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kInt32, {3, 100}, 11, -1000, 1000);
  KernelAttrs attrs;
  attrs.Set("axis", std::vector<int64_t>{1});
  const std::vector<Tensor> gpu = RunGpu("sum", DType::kInt32, {&x}, attrs, 1);
  const std::vector<Tensor> cpu = RunKernel("sum", DType::kInt32, {&x}, attrs, 1);
  ASSERT_EQ(gpu[0].dtype(), DType::kInt64);
  EXPECT_TRUE(gpu[0].BitwiseEqual(cpu[0]));
}

TEST(GpuSoftmaxTest, AlongEachAxis) {
  IRM_REQUIRE_GPU();
  const std::vector<int64_t> shape{3, 300, 5};
  for (DType dtype : kFloating) {
    for (int64_t axis : {-1, 1, 0}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
      const Tensor x = RandomTensor(dtype, shape, 12, -5, 5);
      KernelAttrs attrs;
      attrs.Set("axis", axis);
      const std::vector<Tensor> gpu = RunGpu("softmax", dtype, {&x}, attrs, 1);
      const std::vector<double> dx = ToDoubles(x);
      const int a = axis < 0 ? 2 : static_cast<int>(axis);
      int64_t inner = 1;
      for (size_t d = static_cast<size_t>(a) + 1; d < shape.size(); ++d) inner *= shape[d];
      const int64_t size = shape[static_cast<size_t>(a)];
      std::vector<double> expected(dx.size());
      for (int64_t i = 0; i < NumelOf(shape); ++i) {
        const int64_t base = i / (size * inner) * size * inner + i % inner;
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < size; ++j) max = std::max(max, dx[base + j * inner]);
        for (int64_t j = 0; j < size; ++j) sum += std::exp(dx[base + j * inner] - max);
        expected[i] = std::exp(dx[i] - max) / sum;
      }
      ExpectClose(gpu[0], expected, shape, 4 * ToleranceFor(dtype), "softmax");
    }
  }
}

TEST(GpuMatmulTest, ShapesTransposesAndBatchesLikeTheReference) {
  IRM_REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> x, y;
    bool tx, ty;
    std::vector<int64_t> out;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, false, false, {3, 5}},
      {{4, 3}, {4, 5}, true, false, {3, 5}},
      {{3, 4}, {5, 4}, false, true, {3, 5}},
      {{2, 3, 4}, {4, 5}, false, false, {2, 3, 5}},
      {{2, 1, 3, 4}, {3, 4, 5}, false, false, {2, 3, 3, 5}},
      {{4}, {4, 5}, false, false, {5}},
      {{3, 4}, {4}, false, false, {3}},
      {{64, 128}, {128, 96}, false, false, {64, 96}},
  };
  for (DType dtype : kFloating) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(c.x) + " x " +
                   ShapeToString(c.y));
      const Tensor x = RandomTensor(dtype, c.x, 13);
      const Tensor y = RandomTensor(dtype, c.y, 14);
      KernelAttrs attrs;
      attrs.Set("transpose_x", c.tx);
      attrs.Set("transpose_y", c.ty);
      const std::vector<Tensor> gpu = RunGpu("matmul", dtype, {&x, &y}, attrs, 1);
      // The float64 reference: the CPU kernel on float64 copies (itself tested against naive
      // loops in kernels/matmul_test.cc).
      KernelAttrs to64;
      to64.Set("dtype", DType::kFloat64);
      const Tensor x64 = RunKernel("cast", dtype, {&x}, to64, 1)[0];
      const Tensor y64 = RunKernel("cast", dtype, {&y}, to64, 1)[0];
      KernelContext reference;
      reference.gemm = GemmMode::kReference;
      const Tensor expected =
          RunKernel("matmul", DType::kFloat64, {&x64, &y64}, attrs, 1, reference)[0];
      const int64_t k = c.tx ? c.x[c.x.size() - 2] : c.x.back();
      ExpectClose(gpu[0], ToDoubles(expected), c.out, static_cast<double>(k) * ToleranceFor(dtype),
                  "matmul");
    }
  }
}

TEST(GpuMatmulTest, RepeatedProductsAreBitIdentical) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {256, 512}, 15);
  const Tensor y = RandomTensor(DType::kFloat32, {512, 384}, 16);
  const std::vector<Tensor> first = RunGpu("matmul", DType::kFloat32, {&x, &y}, {}, 1);
  const std::vector<Tensor> second = RunGpu("matmul", DType::kFloat32, {&x, &y}, {}, 1);
  EXPECT_TRUE(first[0].BitwiseEqual(second[0]));
}

TEST(GpuMatmulTest, InnerDimMismatchIsAKernelError) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4}, 1);
  const Tensor y = RandomTensor(DType::kFloat32, {5, 6}, 2);
  StatusOr<std::vector<Tensor>> result =
      testing::TryRunGpu("matmul", DType::kFloat32, {&x, &y}, {}, 1);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "x [3, 4] and y [5, 6] do not multiply: inner dims 4 and 5 differ");
}

}  // namespace
}  // namespace irm::rt::cuda
