// The CUDA twins of the remaining CPU kernels (logical_kernels.cc, elementwise_more_kernels.cc,
// prod_kernels.cc, gather_kernels.cc, metrics_kernels.cc, matmul_with_flatten_kernels.cc,
// detection_kernels.cc) against float64 references written here from the CPU kernels' documented
// rules (kernels/elementwise.cc, reduction.cc, indexing.cc, set_value.cc, metrics.cc,
// detection.cc), and against the CPU kernels' bits where both compute in the same order. The
// coverage tests need no GPU; every other test is skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "reference_runtime/cuda/gpu_kernel_registry.h"
#include "reference_runtime/cuda/gpu_test_support.h"

namespace irm::rt::cuda {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU tests' helpers (gpu_test_support.h)

// ---- coverage (no GPU needed)
// ----------------------------------------------------------------------

// Every CPU kernel has a device twin except those named here, each for its reason:
// coalesce_tensor (its outputs are views of one buffer, which host staging cannot hand back: a
// copy would make fuse-all-reduce silently wrong) and rpn_target_assign (refused by both
// runtimes). No twin lacks a dtype of its CPU kernel.
TEST(CudaCoverageTest, OnlyTheListedCpuKernelsLackADeviceTwin) {
  const std::set<std::string> allowed = {"coalesce_tensor", "rpn_target_assign"};
  for (const auto& [name, dtype] : GpuCoverage().refused) {
    EXPECT_TRUE(allowed.count(name) == 1) << "no GPU twin for " << name << " " << DTypeName(dtype);
    EXPECT_TRUE(CudaKernelRegistry::Global().DTypesOf(name).empty())
        << name << " has a twin without " << DTypeName(dtype);
  }
}

TEST(CudaCoverageTest, TwinsHaveTheCpuSignatures) {
  for (const char* name :
       {"equal", "logical_not", "elementwise_pow_grad", "prod_grad", "gather", "set_value",
        "set_value_with_tensor_grad", "topk", "accuracy", "smooth_l1_loss", "affine_channel_grad",
        "roi_align", "matmul_with_flatten_grad", "generate_proposals", "divide"}) {
    SCOPED_TRACE(name);
    const std::vector<DType> cpu = KernelRegistry::Global().DTypesOf(name, Device::kCpu);
    EXPECT_EQ(CudaKernelRegistry::Global().DTypesOf(name).size(), cpu.size());
    for (DType dtype : cpu) {
      const CudaKernelEntry* gpu = CudaKernelRegistry::Global().Find(name, dtype);
      ASSERT_NE(gpu, nullptr) << DTypeName(dtype);
      const KernelSignature& want =
          KernelRegistry::Global().Find(name, dtype, Device::kCpu)->signature;
      EXPECT_EQ(gpu->signature.min_inputs, want.min_inputs);
      EXPECT_EQ(gpu->signature.max_inputs, want.max_inputs);
      EXPECT_EQ(gpu->signature.num_outputs, want.num_outputs);
    }
  }
}

// ---- comparisons, logic, arithmetic
// -----------------------------------------------------------------

TEST(GpuLogicalTest, ComparisonsAndLogicBroadcastAsTheCpu) {
  IRM_REQUIRE_GPU();
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32, DType::kInt8}) {
    // Small integers in [-2, 2) so that equal values and zeros occur.
    const Tensor x = RandomTensor(dtype, {2, 3, 4}, 11, -2.0, 2.0);
    const Tensor y = RandomTensor(dtype, {3, 1}, 12, -2.0, 2.0);
    for (const std::string op : {"equal", "not_equal", "less_than", "greater_than", "logical_and",
                                 "logical_or", "logical_xor"}) {
      SCOPED_TRACE(op + " " + DTypeName(dtype));
      const std::vector<Tensor> gpu = RunGpu(op, dtype, {&x, &y}, {}, 1);
      ASSERT_EQ(gpu[0].dtype(), DType::kBool);
      ExpectCpuBits(gpu[0], RunKernel(op, dtype, {&x, &y}, {}, 1)[0], op);
    }
    const std::vector<Tensor> gpu = RunGpu("logical_not", dtype, {&x}, {}, 1);
    ExpectCpuBits(gpu[0], RunKernel("logical_not", dtype, {&x}, {}, 1)[0], "logical_not");
  }
}

TEST(GpuLogicalTest, FloatEqualIsWithin1e8AndNaNEqualsNothing) {
  IRM_REQUIRE_GPU();
  const double nan = std::nan("");
  const double inf = INFINITY;
  const Tensor x = Tensor::FromVector<double>({1.0, 1.0, nan, inf, inf, 0.0}, {6});
  const Tensor y = Tensor::FromVector<double>({1.0 + 5e-9, 1.0 + 2e-8, nan, inf, -inf, -0.0}, {6});
  const std::vector<Tensor> eq = RunGpu("equal", DType::kFloat64, {&x, &y}, {}, 1);
  const std::vector<bool> want = {true, false, false, true, false, true};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(eq[0].data<bool>()[i], want[i]) << i;
  const std::vector<Tensor> ne = RunGpu("not_equal", DType::kFloat64, {&x, &y}, {}, 1);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ne[0].data<bool>()[i], !want[i]) << i;
}

TEST(GpuArithmeticTest, FloorDivideAndRemainderFollowPython) {
  IRM_REQUIRE_GPU();
  // Python: 7 // -2 = -4, 7 % -2 = -1, -7 // 2 = -4, -7 % 2 = 1; INT_MIN // -1 wraps.
  const Tensor x = Tensor::FromVector<int32_t>({7, -7, 7, -7, -2147483647 - 1}, {5});
  const Tensor y = Tensor::FromVector<int32_t>({-2, 2, 2, -2, -1}, {5});
  const std::vector<int32_t> floor_div = {-4, -4, 3, 3, -2147483647 - 1};
  const std::vector<int32_t> rem = {-1, 1, 1, -1, 0};
  // Integer divide truncates (C's /, phi's DivideFunctor); INT_MIN / -1 wraps as the CPU's.
  const std::vector<int32_t> div = {-3, -3, 3, 3, -2147483647 - 1};
  const Tensor got_fd = RunGpu("floor_divide", DType::kInt32, {&x, &y}, {}, 1)[0];
  const Tensor got_rem = RunGpu("remainder", DType::kInt32, {&x, &y}, {}, 1)[0];
  const Tensor got_div = RunGpu("divide", DType::kInt32, {&x, &y}, {}, 1)[0];
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(got_fd.data<int32_t>()[i], floor_div[i]) << i;
    EXPECT_EQ(got_rem.data<int32_t>()[i], rem[i]) << i;
    EXPECT_EQ(got_div.data<int32_t>()[i], div[i]) << i;
  }
  const Tensor big = RandomTensor(DType::kInt64, {3, 4}, 23, -1000, 1000);
  const Tensor divisors = Tensor::FromVector<int64_t>({-7, 3, 1, -1}, {4});
  ExpectCpuBits(RunGpu("divide", DType::kInt64, {&big, &divisors}, {}, 1)[0],
                RunKernel("divide", DType::kInt64, {&big, &divisors}, {}, 1)[0], "divide int64");
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = RandomTensor(dtype, {4, 5}, 21, -5.0, 5.0);
    const Tensor b = RandomTensor(dtype, {5}, 22, 0.5, 3.0);
    for (const std::string op : {"floor_divide", "remainder"}) {
      ExpectCpuBits(RunGpu(op, dtype, {&a, &b}, {}, 1)[0], RunKernel(op, dtype, {&a, &b}, {}, 1)[0],
                    op);
    }
    ExpectCpuBits(RunGpu("floor", dtype, {&a}, {}, 1)[0], RunKernel("floor", dtype, {&a}, {}, 1)[0],
                  "floor");
    const Tensor zeros = RunGpu("floor_grad", dtype, {&a}, {}, 1)[0];
    for (double v : ToDoubles(zeros)) EXPECT_EQ(v, 0.0);
  }
}

TEST(GpuArithmeticTest, AnIntegerZeroDivisorIsAnErrorNamingTheFirstOne) {
  IRM_REQUIRE_GPU();
  const Tensor x = Tensor::FromVector<int64_t>({1, 2, 3, 4}, {2, 2});
  const Tensor y = Tensor::FromVector<int64_t>({1, 0, 5, 0}, {2, 2});
  for (const auto& [op, what] :
       std::vector<std::pair<std::string, std::string>>{{"divide", "division"},
                                                        {"floor_divide", "floor division"},
                                                        {"remainder", "remainder"}}) {
    StatusOr<std::vector<Tensor>> got = TryRunGpu(op, DType::kInt64, {&x, &y}, {}, 1);
    ASSERT_FALSE(got.ok()) << op;
    EXPECT_EQ(got.status().message(), "integer " + what + " by zero: y[0, 1] is 0 (y [2, 2])");
  }
}

TEST(GpuArithmeticTest, PowAndItsGradMatchTheFloat64Reference) {
  IRM_REQUIRE_GPU();
  const std::vector<int64_t> xs{2, 3}, ys{3}, out{2, 3};
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, xs, 31, 0.5, 2.0);
    const Tensor y = RandomTensor(dtype, ys, 32, -1.5, 1.5);
    const Tensor g = RandomTensor(dtype, out, 33);
    const std::vector<double> dx = ToDoubles(x), dy = ToDoubles(y), dg = ToDoubles(g);
    std::vector<double> pow_ref(6), gx(6, 0.0), gy(3, 0.0);
    for (int64_t i = 0; i < 6; ++i) {
      const double a = dx[i], b = dy[i % 3];
      pow_ref[i] = std::pow(a, b);
      gx[i] = dg[i] * b * std::pow(a, b - 1);
      gy[i % 3] += dg[i] * std::log(a) * std::pow(a, b);
    }
    // pow and log are CUDA's (a few ulp from the C library's): the reference's tolerance.
    const double tol = 4 * ToleranceFor(dtype);
    ExpectClose(RunGpu("elementwise_pow", dtype, {&x, &y}, {}, 1)[0], pow_ref, out, tol, "pow");
    const std::vector<Tensor> grads = RunGpu("elementwise_pow_grad", dtype, {&x, &y, &g}, {}, 2);
    ExpectClose(grads[0], gx, xs, tol, "x_grad");
    ExpectClose(grads[1], gy, ys, tol, "y_grad");
  }
  // Integer powers round the double power: exact.
  const Tensor base = Tensor::FromVector<int64_t>({3, -2, 5, 0}, {4});
  const Tensor exponent = Tensor::FromVector<int64_t>({4, 3, 0, 2}, {4});
  const Tensor got = RunGpu("elementwise_pow", DType::kInt64, {&base, &exponent}, {}, 1)[0];
  const std::vector<int64_t> want = {81, -8, 1, 0};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got.data<int64_t>()[i], want[i]) << i;
}

TEST(GpuArithmeticTest, IncrementWrapsIntegersAndChecksTheValue) {
  IRM_REQUIRE_GPU();
  const Tensor x = Tensor::FromVector<int32_t>({2147483647, 5}, {2});
  KernelAttrs attrs;
  attrs.Set("value", 1.0);
  const Tensor got = RunGpu("increment", DType::kInt32, {&x}, attrs, 1)[0];
  EXPECT_EQ(got.data<int32_t>()[0], -2147483647 - 1);
  EXPECT_EQ(got.data<int32_t>()[1], 6);
  attrs.Set("value", 1e10);
  EXPECT_FALSE(TryRunGpu("increment", DType::kInt32, {&x}, attrs, 1).ok());
  const Tensor f = RandomTensor(DType::kFloat32, {7}, 41);
  attrs.Set("value", 0.25);
  ExpectCpuBits(RunGpu("increment", DType::kFloat32, {&f}, attrs, 1)[0],
                RunKernel("increment", DType::kFloat32, {&f}, attrs, 1)[0], "increment");
}

// ---- prod
// ----------------------------------------------------------------------------------------

TEST(GpuProdTest, ProductAndGradAsTheReferenceAndTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 4, 2}, 51, 0.5, 1.5);
    KernelAttrs attrs;
    attrs.Set("axis", std::vector<int64_t>{1});
    const Tensor out = RunGpu("prod", dtype, {&x}, attrs, 1)[0];
    const std::vector<double> dx = ToDoubles(x);
    std::vector<double> want(6, 1.0);
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t b = 0; b < 4; ++b) {
        for (int64_t c = 0; c < 2; ++c) want[a * 2 + c] *= dx[(a * 4 + b) * 2 + c];
      }
    }
    ExpectClose(out, want, {3, 2}, 4 * ToleranceFor(dtype), "prod");
    ExpectCpuBits(out, RunKernel("prod", dtype, {&x}, attrs, 1)[0], "prod");
    const Tensor g = RandomTensor(dtype, {3, 2}, 52);
    const Tensor x_grad = RunGpu("prod_grad", dtype, {&x, &out, &g}, attrs, 1)[0];
    ExpectCpuBits(x_grad, RunKernel("prod_grad", dtype, {&x, &out, &g}, attrs, 1)[0], "prod_grad");
  }
  const Tensor ints = Tensor::FromVector<int32_t>({65536, 65536, 3, -2}, {2, 2});
  KernelAttrs all;
  all.Set("reduce_all", true);
  ExpectCpuBits(RunGpu("prod", DType::kInt32, {&ints}, all, 1)[0],
                RunKernel("prod", DType::kInt32, {&ints}, all, 1)[0], "prod int32 wraps");
}

// ---- gather, shape, copies, set_value
// -------------------------------------------------------------

TEST(GpuGatherTest, GatherAndItsGradAsTheReferenceAndTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {2, 4, 3}, 61);
    const Tensor index = Tensor::FromVector<int64_t>({3, 0, 3, 1, 3}, {5});
    KernelAttrs attrs;
    attrs.Set("axis", int64_t{1});
    const Tensor out = RunGpu("gather", dtype, {&x, &index}, attrs, 1)[0];
    const std::vector<double> dx = ToDoubles(x);
    std::vector<double> want;
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i : {3, 0, 3, 1, 3}) {
        for (int64_t k = 0; k < 3; ++k) want.push_back(dx[(b * 4 + i) * 3 + k]);
      }
    }
    ExpectClose(out, want, {2, 5, 3}, 0.0, "gather");
    const Tensor g = RandomTensor(dtype, {2, 5, 3}, 62);
    const Tensor x_grad = RunGpu("gather_grad", dtype, {&x, &index, &g}, attrs, 1)[0];
    const std::vector<double> dg = ToDoubles(g);
    std::vector<double> grad_ref(24, 0.0);
    const int64_t idx[] = {3, 0, 3, 1, 3};
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i = 0; i < 5; ++i) {
        for (int64_t k = 0; k < 3; ++k)
          grad_ref[(b * 4 + idx[i]) * 3 + k] += dg[(b * 5 + i) * 3 + k];
      }
    }
    ExpectClose(x_grad, grad_ref, {2, 4, 3}, ToleranceFor(dtype), "gather_grad");
    ExpectCpuBits(x_grad, RunKernel("gather_grad", dtype, {&x, &index, &g}, attrs, 1)[0],
                  "gather_grad");
  }
  const Tensor x = RandomTensor(DType::kFloat32, {3}, 63);
  const Tensor bad = Tensor::FromVector<int32_t>({0, 3}, {2});
  StatusOr<std::vector<Tensor>> got = TryRunGpu("gather", DType::kFloat32, {&x, &bad}, {}, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "gather: index[1] = 3 is outside [0, 3), dim 0 of x float32[3]");
}

TEST(GpuGatherTest, ShapeAndCopies) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kInt64, {2, 0, 5}, 71, -9, 9);
  const Tensor shape = RunGpu("shape", DType::kInt64, {&x}, {}, 1)[0];
  ASSERT_EQ(shape.dtype(), DType::kInt32);
  EXPECT_EQ(std::vector<int32_t>(shape.data<int32_t>(), shape.data<int32_t>() + 3),
            (std::vector<int32_t>{2, 0, 5}));
  const Tensor y = RandomTensor(DType::kBFloat16, {3, 2}, 72);
  ExpectCpuBits(RunGpu("share_data", DType::kBFloat16, {&y}, {}, 1)[0], y, "share_data");
  ExpectCpuBits(RunGpu("assign_out", DType::kBFloat16, {&y, &y}, {}, 1)[0], y, "assign_out");
}

TEST(GpuSetValueTest, SlicesWithStepsNegativeStepsAndBroadcastValues) {
  IRM_REQUIRE_GPU();
  KernelAttrs attrs;
  attrs.Set("axes", std::vector<int64_t>{0, 2});
  attrs.Set("starts", std::vector<int64_t>{1, -1});
  attrs.Set("ends", std::vector<int64_t>{3, -5});
  attrs.Set("steps", std::vector<int64_t>{1, -2});
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 2, 4}, 81);
    const Tensor values = RandomTensor(dtype, {2, 1, 2}, 82);  // the slice is [2, 2, 2]
    const Tensor out = RunGpu("set_value_with_tensor", dtype, {&x, &values}, attrs, 1)[0];
    // Reference: rows 1..2, all of dim 1, columns 3 and 1 (in that order) take the values.
    std::vector<double> want = ToDoubles(x);
    const std::vector<double> dv = ToDoubles(values);
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t c = 0; c < 2; ++c) want[((1 + a) * 2 + b) * 4 + (3 - 2 * c)] = dv[a * 2 + c];
      }
    }
    ExpectClose(out, want, {3, 2, 4}, 0.0, "set_value_with_tensor");
    const Tensor g = RandomTensor(dtype, {3, 2, 4}, 83);
    const std::vector<Tensor> grads =
        RunGpu("set_value_with_tensor_grad", dtype, {&values, &g}, attrs, 2);
    const std::vector<Tensor> cpu =
        RunKernel("set_value_with_tensor_grad", dtype, {&values, &g}, attrs, 2);
    ExpectCpuBits(grads[0], cpu[0], "x_grad");
    ExpectCpuBits(grads[1], cpu[1], "values_grad");
    const std::vector<double> dg = ToDoubles(g);
    std::vector<double> values_ref(4, 0.0);
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t c = 0; c < 2; ++c)
          values_ref[a * 2 + c] += dg[((1 + a) * 2 + b) * 4 + (3 - 2 * c)];
      }
    }
    ExpectClose(grads[1], values_ref, {2, 1, 2}, ToleranceFor(dtype), "values_grad");
  }
  const Tensor x = RandomTensor(DType::kInt32, {3, 2, 4}, 84, -50, 50);
  attrs.Set("shape", std::vector<int64_t>{2});
  attrs.Set("values", std::vector<int64_t>{7, -8});
  ExpectCpuBits(RunGpu("set_value", DType::kInt32, {&x}, attrs, 1)[0],
                RunKernel("set_value", DType::kInt32, {&x}, attrs, 1)[0], "set_value");
}

// ---- topk, accuracy
// ------------------------------------------------------------------------------

TEST(GpuMetricsTest, TopkPicksTheCpuElementsWithTiesAndNaN) {
  IRM_REQUIRE_GPU();
  const double nan = std::nan("");
  const Tensor x = Tensor::FromVector<float>(
      {1, 3, 3, static_cast<float>(nan), -1, 2, 2, 2, 0, 5, -5, 5}, {2, 6});
  for (bool largest : {true, false}) {
    KernelAttrs attrs;
    attrs.Set("k", int64_t{4});
    attrs.Set("largest", largest);
    const std::vector<Tensor> gpu = RunGpu("topk", DType::kFloat32, {&x}, attrs, 2);
    const std::vector<Tensor> cpu = RunKernel("topk", DType::kFloat32, {&x}, attrs, 2);
    ExpectCpuBits(gpu[0], cpu[0], "values");
    ExpectCpuBits(gpu[1], cpu[1], "indices");
  }
  // By hand: the largest 4 of row 0 are NaN (index 3), 3 (1), 3 (2), 2 (5).
  KernelAttrs attrs;
  attrs.Set("k", int64_t{4});
  const Tensor indices = RunGpu("topk", DType::kFloat32, {&x}, attrs, 2)[1];
  EXPECT_EQ(std::vector<int64_t>(indices.data<int64_t>(), indices.data<int64_t>() + 4),
            (std::vector<int64_t>{3, 1, 2, 5}));
  for (DType dtype : {DType::kFloat64, DType::kInt32, DType::kInt64, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor r = RandomTensor(dtype, {3, 7, 2}, 91, -4, 4);
    KernelAttrs axis1;
    axis1.Set("k", int64_t{3});
    axis1.Set("axis", int64_t{1});
    const std::vector<Tensor> gpu = RunGpu("topk", dtype, {&r}, axis1, 2);
    const std::vector<Tensor> cpu = RunKernel("topk", dtype, {&r}, axis1, 2);
    ExpectCpuBits(gpu[0], cpu[0], "values");
    ExpectCpuBits(gpu[1], cpu[1], "indices");
    ExpectCpuBits(RunGpu("topk_v1", dtype, {&r}, axis1, 2)[1],
                  RunKernel("topk_v1", dtype, {&r}, axis1, 2)[1], "topk_v1");
  }
}

TEST(GpuMetricsTest, AccuracyCountsRowsHoldingTheirLabel) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {3, 2}, 95);
  const Tensor indices = Tensor::FromVector<int64_t>({4, 1, 0, 2, 7, 7}, {3, 2});
  const Tensor label = Tensor::FromVector<int64_t>({1, 3, 7}, {3, 1});
  const std::vector<Tensor> got =
      RunGpu("accuracy", DType::kFloat32, {&x, &indices, &label}, {}, 3);
  EXPECT_EQ(got[0].data<float>()[0], 2.0f / 3.0f);
  EXPECT_EQ(got[1].data<int32_t>()[0], 2);
  EXPECT_EQ(got[2].data<int32_t>()[0], 3);
  const Tensor negative = Tensor::FromVector<int64_t>({1, -3, 7}, {3, 1});
  StatusOr<std::vector<Tensor>> bad =
      TryRunGpu("accuracy", DType::kFloat32, {&x, &indices, &negative}, {}, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "label[1] is -3, expected >= 0");
}

// ---- matmul_with_flatten
// ---------------------------------------------------------------------------

TEST(GpuMatmulWithFlattenTest, FlattensAndMultipliesAsTheReference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {2, 3, 4}, 101);
    const Tensor y = RandomTensor(dtype, {12, 5}, 102);
    KernelAttrs attrs;
    attrs.Set("x_num_col_dims", int64_t{1});
    const Tensor out = RunGpu("matmul_with_flatten", dtype, {&x, &y}, attrs, 1)[0];
    const std::vector<double> dx = ToDoubles(x), dy = ToDoubles(y);
    std::vector<double> want(10, 0.0);
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 5; ++j) {
        for (int64_t k = 0; k < 12; ++k) want[i * 5 + j] += dx[i * 12 + k] * dy[k * 5 + j];
      }
    }
    ExpectClose(out, want, {2, 5}, 10 * ToleranceFor(dtype), "out");
    const Tensor g = RandomTensor(dtype, {2, 5}, 103);
    const std::vector<Tensor> grads =
        RunGpu("matmul_with_flatten_grad", dtype, {&x, &y, &g}, attrs, 2);
    const std::vector<double> dg = ToDoubles(g);
    std::vector<double> gx(24, 0.0), gy(60, 0.0);
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 5; ++j) {
        for (int64_t k = 0; k < 12; ++k) {
          gx[i * 12 + k] += dg[i * 5 + j] * dy[k * 5 + j];
          gy[k * 5 + j] += dx[i * 12 + k] * dg[i * 5 + j];
        }
      }
    }
    ExpectClose(grads[0], gx, {2, 3, 4}, 10 * ToleranceFor(dtype), "x_grad");
    ExpectClose(grads[1], gy, {12, 5}, 10 * ToleranceFor(dtype), "y_grad");
  }
}

// ---- detection
// ------------------------------------------------------------------------------------

TEST(GpuDetectionTest, LossesMatchTheReferenceAndTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 4}, 111, -2, 2);
    const Tensor y = RandomTensor(dtype, {3, 4}, 112, -2, 2);
    const Tensor inside = RandomTensor(dtype, {3, 4}, 113, 0, 1);
    const Tensor outside = RandomTensor(dtype, {3, 4}, 114, 0, 1);
    KernelAttrs sigma;
    sigma.Set("sigma", 2.0);
    const std::vector<Tensor> gpu =
        RunGpu("smooth_l1_loss", dtype, {&x, &y, &inside, &outside}, sigma, 2);
    const std::vector<Tensor> cpu =
        RunKernel("smooth_l1_loss", dtype, {&x, &y, &inside, &outside}, sigma, 2);
    ExpectCpuBits(gpu[0], cpu[0], "diff");
    ExpectCpuBits(gpu[1], cpu[1], "out");
    // Reference: sigma^2 = 4, f(d) = 2 d^2 when |d| < 1/4, else |d| - 1/8.
    const std::vector<double> dx = ToDoubles(x), dy = ToDoubles(y), di = ToDoubles(inside),
                              dout = ToDoubles(outside);
    std::vector<double> loss(3, 0.0);
    for (int64_t i = 0; i < 12; ++i) {
      const double d = (dx[i] - dy[i]) * di[i];
      loss[i / 4] += dout[i] * (std::fabs(d) < 0.25 ? 2 * d * d : std::fabs(d) - 0.125);
    }
    ExpectClose(gpu[1], loss, {3, 1}, ToleranceFor(dtype), "smooth_l1_loss");
    const Tensor g = RandomTensor(dtype, {3, 1}, 115);
    const std::vector<const Tensor*> grad_in{&inside, &outside, &gpu[0], &g};
    const std::vector<Tensor> ggpu = RunGpu("smooth_l1_loss_grad", dtype, grad_in, sigma, 2);
    const std::vector<Tensor> gcpu = RunKernel("smooth_l1_loss_grad", dtype, grad_in, sigma, 2);
    ExpectCpuBits(ggpu[0], gcpu[0], "x_grad");
    ExpectCpuBits(ggpu[1], gcpu[1], "y_grad");

    const Tensor logits = RandomTensor(dtype, {2, 5}, 116, -3, 3);
    const Tensor labels = RandomTensor(dtype, {2, 5}, 117, 0, 1);
    const Tensor out =
        RunGpu("sigmoid_cross_entropy_with_logits", dtype, {&logits, &labels}, {}, 1)[0];
    const std::vector<double> dl = ToDoubles(logits), dlab = ToDoubles(labels);
    std::vector<double> ce(10);
    for (size_t i = 0; i < 10; ++i) {
      const double p = 1.0 / (1.0 + std::exp(-dl[i]));
      ce[i] = -(dlab[i] * std::log(p) + (1 - dlab[i]) * std::log(1 - p));
    }
    ExpectClose(out, ce, {2, 5}, 4 * ToleranceFor(dtype), "sigmoid_cross_entropy_with_logits");
    const Tensor ce_g = RandomTensor(dtype, {2, 5}, 118);
    KernelAttrs normalize;
    normalize.Set("normalize", true);
    const Tensor dce = RunGpu("sigmoid_cross_entropy_with_logits_grad", dtype,
                              {&logits, &labels, nullptr, &ce_g}, normalize, 1)[0];
    std::vector<double> dce_ref(10);
    for (size_t i = 0; i < 10; ++i) {
      dce_ref[i] = ToDoubles(ce_g)[i] * (1.0 / (1.0 + std::exp(-dl[i])) - dlab[i]) / 10.0;
    }
    ExpectClose(dce, dce_ref, {2, 5}, 4 * ToleranceFor(dtype), "sigmoid ce grad");
  }
}

TEST(GpuDetectionTest, AffineChannelAndItsGradAsTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (const std::string layout : {"NCHW", "NHWC"}) {
    SCOPED_TRACE(layout);
    const Tensor x = RandomTensor(DType::kFloat32, {2, 3, 2, 3}, 121);
    const int64_t c = 3;  // dim 1 (NCHW) and the last dim (channel-last) are both 3
    const Tensor scale = RandomTensor(DType::kFloat32, {c}, 122);
    const Tensor bias = RandomTensor(DType::kFloat32, {c}, 123);
    KernelAttrs attrs;
    attrs.Set("data_layout", layout);
    ExpectCpuBits(RunGpu("affine_channel", DType::kFloat32, {&x, &scale, &bias}, attrs, 1)[0],
                  RunKernel("affine_channel", DType::kFloat32, {&x, &scale, &bias}, attrs, 1)[0],
                  "affine_channel");
    const Tensor g = RandomTensor(DType::kFloat32, {2, 3, 2, 3}, 124);
    const std::vector<Tensor> gpu =
        RunGpu("affine_channel_grad", DType::kFloat32, {&x, &scale, nullptr, &g}, attrs, 3);
    const std::vector<Tensor> cpu =
        RunKernel("affine_channel_grad", DType::kFloat32, {&x, &scale, nullptr, &g}, attrs, 3);
    for (size_t i = 0; i < 3; ++i) ExpectCpuBits(gpu[i], cpu[i], "grad " + std::to_string(i));
  }
}

TEST(GpuDetectionTest, AnchorsAndRoiAlignAsTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor input = RandomTensor(dtype, {1, 2, 3, 4}, 131);
    KernelAttrs anchors;
    anchors.Set("anchor_sizes", std::vector<double>{32.0, 64.0});
    anchors.Set("aspect_ratios", std::vector<double>{0.5, 1.0, 2.0});
    anchors.Set("variances", std::vector<double>{0.1, 0.1, 0.2, 0.2});
    const std::vector<Tensor> gpu = RunGpu("anchor_generator", dtype, {&input}, anchors, 2);
    const std::vector<Tensor> cpu = RunKernel("anchor_generator", dtype, {&input}, anchors, 2);
    ExpectCpuBits(gpu[0], cpu[0], "anchors");
    ExpectCpuBits(gpu[1], cpu[1], "variances");

    const Tensor x = RandomTensor(dtype, {2, 3, 6, 7}, 132);
    const Tensor boxes =
        FromDoubles({0.5, 1.0, 4.5, 5.0, 2.0, 0.0, 6.5, 3.5, -1.0, 1.5, 3.0, 9.0}, {3, 4}, dtype);
    const Tensor boxes_num = Tensor::FromVector<int32_t>({1, 2}, {2});
    for (bool aligned : {false, true}) {
      KernelAttrs roi;
      roi.Set("pooled_height", int64_t{2});
      roi.Set("pooled_width", int64_t{3});
      roi.Set("spatial_scale", 0.9);
      roi.Set("sampling_ratio", aligned ? int64_t{2} : int64_t{-1});
      roi.Set("aligned", aligned);
      const Tensor out = RunGpu("roi_align", dtype, {&x, &boxes, &boxes_num}, roi, 1)[0];
      ExpectCpuBits(out, RunKernel("roi_align", dtype, {&x, &boxes, &boxes_num}, roi, 1)[0],
                    "roi_align");
      const Tensor g = RandomTensor(dtype, {3, 3, 2, 3}, 133);
      ExpectCpuBits(RunGpu("roi_align_grad", dtype, {&x, &boxes, &boxes_num, &g}, roi, 1)[0],
                    RunKernel("roi_align_grad", dtype, {&x, &boxes, &boxes_num, &g}, roi, 1)[0],
                    "roi_align_grad");
    }
  }
}

// generate_proposals' inputs (kernels/detection.cc, after Paddle's generate_proposals_v2): two
// images of 3 anchors on a 3 x 4 map. Scores take five values, so ties are everywhere; anchors
// grow with the anchor index and overlap their neighbours; the second image is small enough that
// boxes get clipped and filtered. `wh_deltas` false zeroes the width and height deltas, so that
// exp sees only 0 (exact in every C library).
struct ProposalInputs {
  Tensor scores, deltas, im_shape, anchors, variances;
};
ProposalInputs MakeProposalInputs(DType dtype, bool wh_deltas) {
  const int64_t n = 2, a = 3, h = 3, w = 4;
  std::vector<double> scores(static_cast<size_t>(n * a * h * w));
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = static_cast<double>((i * 7) % 5) * 0.125;
  std::vector<double> deltas =
      ToDoubles(RandomTensor(DType::kFloat64, {n, 4 * a, h, w}, 141, -0.5, 0.5));
  if (!wh_deltas) {
    for (size_t i = 0; i < deltas.size(); ++i) {
      if ((i / static_cast<size_t>(h * w)) % 4 >= 2) deltas[i] = 0;
    }
  }
  std::vector<double> anchors, variances;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t k = 0; k < a; ++k) {
        const double cx = static_cast<double>(x * 16 + 8), cy = static_cast<double>(y * 16 + 8);
        const double half = static_cast<double>(8 * (k + 1));
        anchors.insert(anchors.end(), {cx - half, cy - half, cx + half - 1, cy + half - 1});
        variances.insert(variances.end(), {0.1, 0.1, 0.2, 0.2});
      }
    }
  }
  return {FromDoubles(scores, {n, a, h, w}, dtype), FromDoubles(deltas, {n, 4 * a, h, w}, dtype),
          FromDoubles({50, 64, 30, 40}, {n, 2}, dtype), FromDoubles(anchors, {h, w, a, 4}, dtype),
          FromDoubles(variances, {h, w, a, 4}, dtype)};
}

KernelAttrs ProposalAttrs(int64_t pre, int64_t post, double nms, double eta, double min_size,
                          bool pixel_offset) {
  KernelAttrs attrs;
  attrs.Set("pre_nms_top_n", pre);
  attrs.Set("post_nms_top_n", post);
  attrs.Set("nms_thresh", nms);
  attrs.Set("eta", eta);
  attrs.Set("min_size", min_size);
  attrs.Set("pixel_offset", pixel_offset);
  return attrs;
}

// Both cuts, no cut with eta shrinking the threshold, no NMS (where the CPU applies no post cut)
// on normalized boxes, and nothing left (one zero box per image).
std::vector<KernelAttrs> ProposalConfigs() {
  return {ProposalAttrs(10, 5, 0.5, 1.0, 0.1, true), ProposalAttrs(-1, -1, 0.7, 0.9, 0.1, true),
          ProposalAttrs(20, 6, 0.0, 1.0, 4.0, false),
          ProposalAttrs(30, 10, 0.5, 1.0, 1000.0, true)};
}

TEST(GpuDetectionTest, GenerateProposalsGivesTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    // float32's exp is the device's float64 exp rounded once, as glibc's expf rounds; float64's
    // exp is the device's own (within an ulp of glibc's): exact inputs only for the bits.
    const ProposalInputs in = MakeProposalInputs(dtype, dtype == DType::kFloat32);
    const std::vector<const Tensor*> inputs = {&in.scores, &in.deltas, &in.im_shape, &in.anchors,
                                               &in.variances};
    int config = 0;
    for (const KernelAttrs& attrs : ProposalConfigs()) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " config " + std::to_string(config++));
      const std::vector<Tensor> gpu = RunGpu("generate_proposals", dtype, inputs, attrs, 3);
      const std::vector<Tensor> cpu = RunKernel("generate_proposals", dtype, inputs, attrs, 3);
      ExpectCpuBits(gpu[0], cpu[0], "rpn_rois");
      ExpectCpuBits(gpu[1], cpu[1], "rpn_roi_probs");
      ExpectCpuBits(gpu[2], cpu[2], "rpn_rois_num");
    }
  }
}

TEST(GpuDetectionTest, GenerateProposalsSelectsAsTheCpuWithAnyDeltas) {
  IRM_REQUIRE_GPU();
  // float64 with width and height deltas: the device's exp may differ from glibc's in the last
  // place, so the boxes are compared within rounding; which proposals (their scores, counts) must
  // be the CPU's exactly.
  const ProposalInputs in = MakeProposalInputs(DType::kFloat64, true);
  const std::vector<const Tensor*> inputs = {&in.scores, &in.deltas, &in.im_shape, &in.anchors,
                                             &in.variances};
  for (const KernelAttrs& attrs : ProposalConfigs()) {
    const std::vector<Tensor> gpu = RunGpu("generate_proposals", DType::kFloat64, inputs, attrs, 3);
    const std::vector<Tensor> cpu =
        RunKernel("generate_proposals", DType::kFloat64, inputs, attrs, 3);
    ExpectCpuBits(gpu[1], cpu[1], "rpn_roi_probs");
    ExpectCpuBits(gpu[2], cpu[2], "rpn_rois_num");
    ExpectClose(gpu[0], ToDoubles(cpu[0]), cpu[0].shape(), 1e-12, "rpn_rois");
  }
}

TEST(GpuDetectionTest, GenerateProposalsKeepsTheLaterOfTiedScoresFirst) {
  IRM_REQUIRE_GPU();
  // By hand: four anchors in a row, zero deltas (each box is its anchor), three overlapping ones
  // tied at 0.5 and a distant one at 0.25. Paddle's NMS (funcs/detection/nms_util.h) takes a
  // stable ascending sort from the back, so of the tied boxes the last (anchor 2) comes first and
  // suppresses the other two (IoU 240 / 272); the distant box stays.
  const Tensor scores = Tensor::FromVector<float>({0.5f, 0.5f, 0.5f, 0.25f}, {1, 1, 1, 4});
  const Tensor deltas = Tensor::ZerosUnchecked(DType::kFloat32, {1, 4, 1, 4});
  const Tensor im_shape = Tensor::FromVector<float>({100, 100}, {1, 2});
  const Tensor anchors = Tensor::FromVector<float>(
      {0, 0, 15, 15, 1, 0, 16, 15, 2, 0, 17, 15, 40, 0, 55, 15}, {1, 4, 1, 4});
  const Tensor variances = FromDoubles(std::vector<double>(16, 1.0), {1, 4, 1, 4}, DType::kFloat32);
  const std::vector<Tensor> got = RunGpu("generate_proposals", DType::kFloat32,
                                         {&scores, &deltas, &im_shape, &anchors, &variances},
                                         ProposalAttrs(-1, -1, 0.5, 1.0, 0.1, true), 3);
  ASSERT_EQ(got[0].shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(ToDoubles(got[0]), (std::vector<double>{2, 0, 17, 15, 40, 0, 55, 15}));
  EXPECT_EQ(ToDoubles(got[1]), (std::vector<double>{0.5, 0.25}));
  ASSERT_EQ(got[2].dtype(), DType::kInt32);
  EXPECT_EQ(got[2].data<int32_t>()[0], 2);
}

TEST(GpuDetectionTest, GenerateProposalsRefusesWhatTheCpuRefuses) {
  IRM_REQUIRE_GPU();
  const ProposalInputs in = MakeProposalInputs(DType::kFloat32, true);
  const Tensor bad_deltas = RandomTensor(DType::kFloat32, {2, 8, 3, 4}, 142);
  const Tensor doubles = RandomTensor(DType::kFloat64, {2, 2}, 143);
  for (const std::vector<const Tensor*>& inputs : std::vector<std::vector<const Tensor*>>{
           {&in.scores, &bad_deltas, &in.im_shape, &in.anchors, &in.variances},
           {&in.scores, &in.deltas, &doubles, &in.anchors, &in.variances},
           {&in.deltas, &in.deltas, &in.im_shape, &in.anchors, &in.variances}}) {
    StatusOr<std::vector<Tensor>> gpu =
        TryRunGpu("generate_proposals", DType::kFloat32, inputs, {}, 3);
    StatusOr<std::vector<Tensor>> cpu =
        rt::testing::TryRunKernel("generate_proposals", DType::kFloat32, inputs, {}, 3);
    ASSERT_FALSE(cpu.ok());
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().message(), cpu.status().message());
  }
}

}  // namespace
}  // namespace irm::rt::cuda
