// The CUDA kernels of a gpt training step (the zoo gpt with AdamW, SGD or momentum) against the
// float64 references their CPU twins are tested against (kernels/*_test.cc), and against the CPU
// kernels' bits wherever the device reproduces the CPU's order: add_n, random ops, optimizers,
// layer_norm, softmax_grad, the cross entropy's grad, embedding and its grad, data movement.
// Every test is skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "reference_runtime/cuda/gpu_test_support.h"
#include "reference_runtime/philox.h"

namespace irm::rt::cuda {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU tests' helpers (gpu_test_support.h)

int64_t NumelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

KernelContext RandomContext(uint64_t seed, std::string_view name) {
  KernelContext context;
  context.program_seed = seed;
  context.op_identity = OpIdentity(name);
  return context;
}

// ---- activations, add_n
// ---------------------------------------------------------------------------

double Phi(double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  const double a = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(a * (x + 0.044715 * x * x * x)));
}

TEST(GpuActivationTest, ForwardMatchesTheFloat64Reference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    const Tensor x = RandomTensor(dtype, {4, 33}, 11, -3.0, 3.0);
    const Tensor positive = RandomTensor(dtype, {4, 33}, 12, 0.01, 4.0);
    const std::vector<double> dx = ToDoubles(x), dp = ToDoubles(positive);
    const double tol = 4 * ToleranceFor(dtype);
    for (const std::string op : {"relu", "gelu", "gelu_tanh", "tanh", "sigmoid", "sqrt"}) {
      SCOPED_TRACE(op + " " + DTypeName(dtype));
      KernelAttrs attrs;
      std::string kernel = op;
      if (op == "gelu_tanh") {
        kernel = "gelu";
        attrs.Set("approximate", true);
      }
      const Tensor& in = op == "sqrt" ? positive : x;
      const std::vector<double>& v = op == "sqrt" ? dp : dx;
      std::vector<double> expected;
      for (double a : v) {
        if (op == "relu") expected.push_back(a > 0 ? a : 0.0);
        if (op == "gelu") expected.push_back(a * Phi(a));
        if (op == "gelu_tanh") expected.push_back(GeluTanh(a));
        if (op == "tanh") expected.push_back(std::tanh(a));
        if (op == "sigmoid") expected.push_back(1.0 / (1.0 + std::exp(-a)));
        if (op == "sqrt") expected.push_back(std::sqrt(a));
      }
      const std::vector<Tensor> gpu = RunGpu(kernel, dtype, {&in}, attrs, 1);
      ExpectClose(gpu[0], expected, {4, 33}, tol, op);
    }
    // relu is a comparison and sqrt correctly rounded on both sides: the CPU's bits.
    ExpectCpuBits(RunGpu("relu", dtype, {&x}, {}, 1), RunKernel("relu", dtype, {&x}, {}, 1),
                  "relu");
    ExpectCpuBits(RunGpu("sqrt", dtype, {&positive}, {}, 1),
                  RunKernel("sqrt", dtype, {&positive}, {}, 1), "sqrt");
  }
}

TEST(GpuActivationTest, GradsMatchTheFloat64Reference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    const Tensor x = RandomTensor(dtype, {3, 17}, 13, -3.0, 3.0);
    const Tensor g = RandomTensor(dtype, {3, 17}, 14);
    const std::vector<double> dx = ToDoubles(x), dg = ToDoubles(g);
    const double tol = 8 * ToleranceFor(dtype);
    for (const std::string op : {"relu", "gelu", "tanh", "sigmoid"}) {
      SCOPED_TRACE(op + "_grad " + DTypeName(dtype));
      // relu, tanh and sigmoid read their forward output (the CPU kernel computes it).
      const Tensor a = op == "gelu" ? x : RunKernel(op, dtype, {&x}, {}, 1)[0];
      const std::vector<double> da = ToDoubles(a);
      std::vector<double> expected;
      for (size_t i = 0; i < da.size(); ++i) {
        const double v = da[i];
        if (op == "relu") expected.push_back(v > 0 ? dg[i] : 0.0);
        if (op == "gelu") {
          expected.push_back(
              dg[i] * (Phi(v) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * std::numbers::pi)));
        }
        if (op == "tanh") expected.push_back(dg[i] * (1 - v * v));
        if (op == "sigmoid") expected.push_back(dg[i] * v * (1 - v));
      }
      const std::vector<Tensor> gpu = RunGpu(op + "_grad", dtype, {&a, &g}, {}, 1);
      ExpectClose(gpu[0], expected, {3, 17}, tol, op + "_grad");
      if (op != "gelu") {  // only + - * : the CPU's bits
        ExpectCpuBits(gpu, RunKernel(op + "_grad", dtype, {&a, &g}, {}, 1), op + "_grad");
      }
    }
  }
}

TEST(GpuActivationTest, GradShapeMismatchIsTheCpuError) {
  IRM_REQUIRE_GPU();
  const Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor g = RandomTensor(DType::kFloat32, {3, 2}, 2);
  StatusOr<std::vector<Tensor>> r = TryRunGpu("tanh_grad", DType::kFloat32, {&a, &g}, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "out [2, 3] and out_grad [3, 2] differ in shape");
}

TEST(GpuAddNTest, AddsInInputOrderAsTheCpu) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                      DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = RandomTensor(dtype, {5, 9}, 21, -100, 100);
    const Tensor b = RandomTensor(dtype, {5, 9}, 22, -100, 100);
    const Tensor c = RandomTensor(dtype, {5, 9}, 23, -100, 100);
    const std::vector<Tensor> gpu = RunGpu("add_n", dtype, {&a, &b, &c}, {}, 1);
    std::vector<double> expected;
    const std::vector<double> da = ToDoubles(a), db = ToDoubles(b), dc = ToDoubles(c);
    for (size_t i = 0; i < da.size(); ++i) expected.push_back(da[i] + db[i] + dc[i]);
    ExpectClose(gpu[0], expected, {5, 9}, 2 * ToleranceFor(dtype), "add_n");
    ExpectCpuBits(gpu, RunKernel("add_n", dtype, {&a, &b, &c}, {}, 1), "add_n");
  }
}

// ---- random ops
// ------------------------------------------------------------------------------------

TEST(GpuRandomTest, UniformDrawsTheCpuBits) {
  IRM_REQUIRE_GPU();
  const KernelContext context = RandomContext(20260131, "linear_0.w_0");
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    KernelAttrs attrs;
    attrs.Set("shape", std::vector<int64_t>{37, 29});
    attrs.Set("min", -0.25);
    attrs.Set("max", 0.75);
    attrs.Set("seed", int64_t{0});
    const std::vector<Tensor> gpu = RunGpu("uniform", dtype, {}, attrs, 1, context);
    ExpectCpuBits(gpu, RunKernel("uniform", dtype, {}, attrs, 1, context), "uniform");
    // The reference: min + (max - min) * u_i of the op's Philox stream (philox.h).
    const PhiloxStream stream(context.program_seed, context.op_identity);
    std::vector<double> expected;
    for (uint64_t i = 0; i < 37 * 29; ++i) {
      expected.push_back(dtype == DType::kFloat64
                             ? -0.25 + 1.0 * stream.UniformDouble(i)
                             : static_cast<double>(-0.25f + 1.0f * stream.UniformFloat(i)));
    }
    ExpectClose(gpu[0], expected, {37, 29}, ToleranceFor(dtype), "uniform");
  }
}

TEST(GpuRandomTest, AShardDrawsTheSerialTensorsNumbers) {
  IRM_REQUIRE_GPU();
  KernelContext serial = RandomContext(7, "embedding_0.w_0");
  KernelAttrs whole;
  whole.Set("shape", std::vector<int64_t>{6, 8});
  whole.Set("min", -1.0);
  whole.Set("max", 1.0);
  const Tensor full = RunKernel("uniform", DType::kFloat32, {}, whole, 1, serial)[0];
  OutputShard shard{{6, 8}, {2, 4}};
  KernelContext sharded = serial;
  sharded.shard = &shard;
  sharded.shard_var = "embedding_0.w_0";
  KernelAttrs part = whole;
  part.Set("shape", std::vector<int64_t>{3, 4});
  const std::vector<Tensor> gpu = RunGpu("uniform", DType::kFloat32, {}, part, 1, sharded);
  ASSERT_EQ(gpu[0].shape(), (std::vector<int64_t>{3, 4}));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(gpu[0].data<float>()[i * 4 + j], full.data<float>()[(2 + i) * 8 + 4 + j])
          << i << ", " << j;
    }
  }
  // A shard reaching past the serial tensor is the CPU's error.
  OutputShard bad{{6, 8}, {4, 4}};
  sharded.shard = &bad;
  StatusOr<std::vector<Tensor>> r = TryRunGpu("uniform", DType::kFloat32, {}, part, 1, sharded);
  ASSERT_FALSE(r.ok());
  StatusOr<std::vector<Tensor>> cpu =
      rt::testing::TryRunKernel("uniform", DType::kFloat32, {}, part, 1, sharded);
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(r.status().message(), cpu.status().message());
}

TEST(GpuRandomTest, GaussianMatchesTheBoxMullerReference) {
  IRM_REQUIRE_GPU();
  const KernelContext context = RandomContext(99, "gaussian_0.tmp_0");
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    KernelAttrs attrs;
    attrs.Set("shape", std::vector<int64_t>{513});
    attrs.Set("mean", 0.5);
    attrs.Set("std", 2.0);
    const std::vector<Tensor> gpu = RunGpu("gaussian", dtype, {}, attrs, 1, context);
    const PhiloxStream stream(context.program_seed, context.op_identity);
    std::vector<double> expected;
    for (uint64_t i = 0; i < 513; ++i) expected.push_back(0.5 + 2.0 * stream.Normal(i));
    ExpectClose(gpu[0], expected, {513}, 2 * ToleranceFor(dtype), "gaussian");
  }
}

TEST(GpuRandomTest, DropoutDrawsTheCpuMaskAndValues) {
  IRM_REQUIRE_GPU();
  const KernelContext context = RandomContext(1234, "dropout_0.tmp_0");
  for (DType dtype : kFloating) {
    const Tensor x = RandomTensor(dtype, {16, 33}, 31);
    for (const std::string mode : {"upscale_in_train", "downgrade_in_infer"}) {
      for (double p : {0.0, 0.1, 0.5, 1.0}) {
        for (bool is_test : {false, true}) {
          SCOPED_TRACE(mode + " p=" + std::to_string(p) + (is_test ? " test " : " train ") +
                       DTypeName(dtype));
          KernelAttrs attrs;
          attrs.Set("p", p);
          attrs.Set("is_test", is_test);
          attrs.Set("mode", mode);
          const std::vector<Tensor> gpu = RunGpu("dropout", dtype, {&x}, attrs, 2, context);
          ExpectCpuBits(gpu, RunKernel("dropout", dtype, {&x}, attrs, 2, context), "dropout");
          if (is_test || p == 1.0) continue;
          // The reference mask: element i is kept when u_i >= p.
          const PhiloxStream stream(context.program_seed, context.op_identity);
          for (int64_t i = 0; i < x.numel(); ++i) {
            ASSERT_EQ(
                gpu[1].data<uint8_t>()[i],
                stream.UniformFloat(static_cast<uint64_t>(i)) >= static_cast<float>(p) ? 1 : 0)
                << i;
          }
          const Tensor g = RandomTensor(dtype, {16, 33}, 32);
          ExpectCpuBits(RunGpu("dropout_grad", dtype, {&gpu[1], &g}, attrs, 1),
                        RunKernel("dropout_grad", dtype, {&gpu[1], &g}, attrs, 1), "dropout_grad");
        }
      }
    }
  }
}

TEST(GpuRandomTest, DropoutSeedTensorWins) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {100}, 41);
  const Tensor seed = Tensor::FromVector<int32_t>({77}, {1});
  KernelAttrs attrs;
  attrs.Set("p", 0.3);
  attrs.Set("fix_seed", true);
  attrs.Set("seed", int64_t{5});
  const KernelContext context = RandomContext(3, "dropout_1.tmp_0");
  ExpectCpuBits(RunGpu("dropout", DType::kFloat32, {&x, &seed}, attrs, 2, context),
                RunKernel("dropout", DType::kFloat32, {&x, &seed}, attrs, 2, context),
                "dropout with a seed tensor");
}

// ---- optimizers
// ------------------------------------------------------------------------------------

TEST(GpuOptimizerTest, SgdAndMomentumGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  const Tensor lr = Tensor::FromVector<float>({0.05f}, {1});
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor p = RandomTensor(dtype, {7, 11}, 51);
    const Tensor g = RandomTensor(dtype, {7, 11}, 52);
    const Tensor v = RandomTensor(dtype, {7, 11}, 53);
    const std::vector<Tensor> sgd = RunGpu("sgd", dtype, {&p, &lr, &g}, {}, 2);
    ExpectCpuBits(sgd, RunKernel("sgd", dtype, {&p, &lr, &g}, {}, 2), "sgd");
    std::vector<double> expected;
    const std::vector<double> dp = ToDoubles(p), dg = ToDoubles(g);
    // The learning rate is the float32 0.05f the tensor holds.
    for (size_t i = 0; i < dp.size(); ++i) expected.push_back(dp[i] - double{0.05f} * dg[i]);
    ExpectClose(sgd[0], expected, {7, 11}, 2 * ToleranceFor(dtype), "sgd");
    for (bool nesterov : {false, true}) {
      KernelAttrs attrs;
      attrs.Set("mu", 0.9);
      attrs.Set("use_nesterov", nesterov);
      attrs.Set("regularization_method", std::string("l2_decay"));
      attrs.Set("regularization_coeff", 1e-3);
      ExpectCpuBits(RunGpu("momentum", dtype, {&p, &g, &v, &lr}, attrs, 3),
                    RunKernel("momentum", dtype, {&p, &g, &v, &lr}, attrs, 3), "momentum");
    }
  }
}

// adam / adamw inputs in pd_op order, absent ones null.
std::vector<const Tensor*> AdamInputs(const Tensor& p, const Tensor& g, const Tensor& lr,
                                      const Tensor& m1, const Tensor& m2, const Tensor* m2_max,
                                      const Tensor& b1, const Tensor& b2, const Tensor* master) {
  return {&p, &g, &lr, &m1, &m2, m2_max, &b1, &b2, master, nullptr};
}

TEST(GpuOptimizerTest, AdamAndAdamwGiveTheCpuBitsAndTheReference) {
  IRM_REQUIRE_GPU();
  const Tensor lr = Tensor::FromVector<float>({0.01f}, {1});
  const Tensor b1 = Tensor::FromVector<float>({0.9f * 0.9f}, {1});
  const Tensor b2 = Tensor::FromVector<float>({0.999f * 0.999f}, {1});
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const Tensor p = RandomTensor(dtype, {9, 13}, 61);
    const Tensor g = RandomTensor(dtype, {9, 13}, 62);
    const Tensor m1 = RandomTensor(dtype, {9, 13}, 63);
    const Tensor m2 = RandomTensor(dtype, {9, 13}, 64, 0.0, 1.0);
    const Tensor m2_max = RandomTensor(dtype, {9, 13}, 65, 0.0, 1.0);
    for (const std::string op : {"adam", "adamw"}) {
      for (bool amsgrad : {false, true}) {
        SCOPED_TRACE(op + (amsgrad ? " amsgrad " : " ") + DTypeName(dtype));
        KernelAttrs attrs;
        attrs.Set("beta1", 0.9);
        attrs.Set("beta2", 0.999);
        attrs.Set("epsilon", 1e-8);
        attrs.Set("amsgrad", amsgrad);
        if (op == "adamw") {
          attrs.Set("with_decay", true);
          attrs.Set("coeff", 0.01);
          attrs.Set("lr_ratio", 1.0);
        }
        const std::vector<const Tensor*> in =
            AdamInputs(p, g, lr, m1, m2, amsgrad ? &m2_max : nullptr, b1, b2, nullptr);
        const std::vector<Tensor> gpu = RunGpu(op, dtype, in, attrs, 7);
        ExpectCpuBits(gpu, RunKernel(op, dtype, in, attrs, 7), op);
        if (amsgrad) continue;
        // The float64 reference of one step (kernels/optimizer.cc's formula).
        const double beta1_pow = 0.9 * 0.9, beta2_pow = 0.999 * 0.999;
        const double lr_t = 0.01 * std::sqrt(1 - beta2_pow) / (1 - beta1_pow);
        const double eps_t = 1e-8 * std::sqrt(1 - beta2_pow);
        const std::vector<double> dp = ToDoubles(p), dg = ToDoubles(g), d1 = ToDoubles(m1),
                                  d2 = ToDoubles(m2);
        std::vector<double> expected;
        for (size_t i = 0; i < dp.size(); ++i) {
          double pi = dp[i];
          if (op == "adamw") pi -= 0.01 * 0.01 * pi;
          const double a = 0.9 * d1[i] + 0.1 * dg[i];
          const double b = 0.999 * d2[i] + 0.001 * dg[i] * dg[i];
          expected.push_back(pi - lr_t * a / (std::sqrt(b) + eps_t));
        }
        ExpectClose(gpu[0], expected, {9, 13}, 1e-4, op + " param_out");
      }
    }
  }
}

TEST(GpuOptimizerTest, MultiPrecisionAdamwUpdatesTheMasterWeight) {
  IRM_REQUIRE_GPU();
  const Tensor lr = Tensor::FromVector<float>({0.01f}, {1});
  const Tensor b1 = Tensor::FromVector<float>({0.9f}, {1});
  const Tensor b2 = Tensor::FromVector<float>({0.999f}, {1});
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor master = RandomTensor(DType::kFloat32, {5, 6}, 71);
    const Tensor p = Tensor::FromVector<float>(
        std::vector<float>(master.data<float>(), master.data<float>() + 30), {5, 6});
    KernelAttrs to_half;
    to_half.Set("dtype", dtype);
    const Tensor p16 = RunKernel("cast", DType::kFloat32, {&p}, to_half, 1)[0];
    const Tensor g = RandomTensor(dtype, {5, 6}, 72);
    const Tensor m1 = RandomTensor(DType::kFloat32, {5, 6}, 73);
    const Tensor m2 = RandomTensor(DType::kFloat32, {5, 6}, 74, 0.0, 1.0);
    KernelAttrs attrs;
    attrs.Set("beta1", 0.9);
    attrs.Set("beta2", 0.999);
    attrs.Set("epsilon", 1e-8);
    attrs.Set("multi_precision", true);
    attrs.Set("with_decay", true);
    const std::vector<const Tensor*> in = AdamInputs(p16, g, lr, m1, m2, nullptr, b1, b2, &master);
    ExpectCpuBits(RunGpu("adamw", dtype, in, attrs, 7), RunKernel("adamw", dtype, in, attrs, 7),
                  "multi-precision adamw");
  }
}

TEST(GpuOptimizerTest, SkipUpdateCopiesEveryInput) {
  IRM_REQUIRE_GPU();
  const Tensor lr = Tensor::FromVector<float>({0.01f}, {1});
  const Tensor b1 = Tensor::FromVector<float>({0.9f}, {1});
  const Tensor b2 = Tensor::FromVector<float>({0.999f}, {1});
  const Tensor p = RandomTensor(DType::kFloat32, {4}, 81);
  const Tensor g = RandomTensor(DType::kFloat32, {4}, 82);
  const Tensor m = RandomTensor(DType::kFloat32, {4}, 83, 0.0, 1.0);
  const Tensor skip = Tensor::FromVector<bool>({true}, {1});
  KernelAttrs attrs;
  attrs.Set("beta1", 0.9);
  attrs.Set("beta2", 0.999);
  attrs.Set("epsilon", 1e-8);
  const std::vector<const Tensor*> in = {&p, &g, &lr, &m, &m, nullptr, &b1, &b2, nullptr, &skip};
  const std::vector<Tensor> gpu = RunGpu("adam", DType::kFloat32, in, attrs, 7);
  EXPECT_TRUE(gpu[0].BitwiseEqual(p));
  EXPECT_TRUE(gpu[4].BitwiseEqual(b1));
  ExpectCpuBits(gpu, RunKernel("adam", DType::kFloat32, in, attrs, 7), "adam skip_update");
}

// ---- layer_norm, softmax_grad, cross entropy, mean_all
// ---------------------------------------------

TEST(GpuLayerNormTest, ForwardAndGradGiveTheCpuBitsAndTheReference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const DType param_dtype =
        dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? DType::kFloat32 : dtype;
    const Tensor x = RandomTensor(dtype, {6, 5, 8}, 91, -2.0, 2.0);
    const Tensor scale = RandomTensor(param_dtype, {8}, 92, 0.5, 1.5);
    const Tensor bias = RandomTensor(param_dtype, {8}, 93);
    KernelAttrs attrs;
    attrs.Set("begin_norm_axis", int64_t{2});
    attrs.Set("epsilon", 1e-5);
    const std::vector<Tensor> gpu = RunGpu("layer_norm", dtype, {&x, &scale, &bias}, attrs, 3);
    const std::vector<Tensor> cpu = RunKernel("layer_norm", dtype, {&x, &scale, &bias}, attrs, 3);
    ExpectCpuBits(gpu, cpu, "layer_norm");
    const std::vector<double> dx = ToDoubles(x), ds = ToDoubles(scale), db = ToDoubles(bias);
    std::vector<double> expected(dx.size());
    for (int64_t r = 0; r < 30; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < 8; ++j) mean += dx[r * 8 + j] / 8;
      for (int64_t j = 0; j < 8; ++j) var += (dx[r * 8 + j] - mean) * (dx[r * 8 + j] - mean) / 8;
      for (int64_t j = 0; j < 8; ++j) {
        expected[r * 8 + j] = (dx[r * 8 + j] - mean) / std::sqrt(var + 1e-5) * ds[j] + db[j];
      }
    }
    ExpectClose(gpu[0], expected, {6, 5, 8}, 8 * ToleranceFor(dtype), "layer_norm out");

    const Tensor dy = RandomTensor(dtype, {6, 5, 8}, 94);
    const std::vector<const Tensor*> grad_in = {&x, &scale, &bias, &cpu[1], &cpu[2], &dy};
    const std::vector<Tensor> gpu_grad = RunGpu("layer_norm_grad", dtype, grad_in, attrs, 3);
    ExpectCpuBits(gpu_grad, RunKernel("layer_norm_grad", dtype, grad_in, attrs, 3),
                  "layer_norm_grad");
    // Without scale and bias (both optional), as the CPU.
    const std::vector<const Tensor*> bare = {&x, nullptr, nullptr, &cpu[1], &cpu[2], &dy};
    ExpectCpuBits(RunGpu("layer_norm_grad", dtype, bare, attrs, 3),
                  RunKernel("layer_norm_grad", dtype, bare, attrs, 3),
                  "layer_norm_grad without scale and bias");
    // bias_grad: the column sums of out_grad.
    const std::vector<double> ddy = ToDoubles(dy);
    std::vector<double> bias_grad(8, 0.0);
    for (size_t i = 0; i < ddy.size(); ++i) bias_grad[i % 8] += ddy[i];
    ExpectClose(gpu_grad[2], bias_grad, {8}, 30 * ToleranceFor(dtype), "bias_grad");
  }
}

TEST(GpuLayerNormTest, BadBeginNormAxisIsTheCpuError) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  KernelAttrs attrs;
  attrs.Set("begin_norm_axis", int64_t{2});
  StatusOr<std::vector<Tensor>> gpu = TryRunGpu("layer_norm", DType::kFloat32, {&x}, attrs, 3);
  StatusOr<std::vector<Tensor>> cpu =
      rt::testing::TryRunKernel("layer_norm", DType::kFloat32, {&x}, attrs, 3);
  ASSERT_FALSE(gpu.ok());
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(gpu.status().message(), cpu.status().message());
}

TEST(GpuSoftmaxTest, SoftmaxGradGivesTheCpuBitsAndTheReference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    for (int64_t axis : {int64_t{-1}, int64_t{1}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
      const Tensor x = RandomTensor(dtype, {3, 7, 5}, 101, -2.0, 2.0);
      KernelAttrs attrs;
      attrs.Set("axis", axis);
      const Tensor out = RunKernel("softmax", dtype, {&x}, attrs, 1)[0];
      const Tensor g = RandomTensor(dtype, {3, 7, 5}, 102);
      const std::vector<Tensor> gpu = RunGpu("softmax_grad", dtype, {&out, &g}, attrs, 1);
      ExpectCpuBits(gpu, RunKernel("softmax_grad", dtype, {&out, &g}, attrs, 1), "softmax_grad");
      const std::vector<double> dy = ToDoubles(out), dg = ToDoubles(g);
      const int64_t size = axis == 1 ? 7 : 5, inner = axis == 1 ? 5 : 1;
      std::vector<double> expected(dy.size());
      for (int64_t o = 0; o < 3 * (axis == 1 ? 1 : 7); ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * size * inner + i;
          double dot = 0;
          for (int64_t j = 0; j < size; ++j) dot += dg[base + j * inner] * dy[base + j * inner];
          for (int64_t j = 0; j < size; ++j) {
            const int64_t k = base + j * inner;
            expected[k] = dy[k] * (dg[k] - dot);
          }
        }
      }
      ExpectClose(gpu[0], expected, {3, 7, 5}, 8 * ToleranceFor(dtype), "softmax_grad");
    }
  }
}

TEST(GpuCrossEntropyTest, HardAndSoftLabelsMatchTheReferenceAndTheCpuGrad) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {4, 6, 10}, 111, -3.0, 3.0);
    std::vector<int64_t> labels;
    for (int64_t i = 0; i < 24; ++i) labels.push_back(i % 5 == 4 ? -100 : (i * 7) % 10);
    const Tensor label = Tensor::FromVector<int64_t>(labels, {4, 6, 1});
    const std::vector<Tensor> gpu =
        RunGpu("cross_entropy_with_softmax", dtype, {&x, &label}, {}, 2);
    const std::vector<double> dx = ToDoubles(x);
    std::vector<double> softmax(dx.size()), loss(24);
    for (int64_t r = 0; r < 24; ++r) {
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < 10; ++j) max = std::max(max, dx[r * 10 + j]);
      for (int64_t j = 0; j < 10; ++j) sum += std::exp(dx[r * 10 + j] - max);
      for (int64_t j = 0; j < 10; ++j) softmax[r * 10 + j] = std::exp(dx[r * 10 + j] - max) / sum;
      loss[r] = labels[r] == -100 ? 0.0 : -(dx[r * 10 + labels[r]] - max - std::log(sum));
    }
    ExpectClose(gpu[0], softmax, {4, 6, 10}, 4 * ToleranceFor(dtype), "softmax");
    ExpectClose(gpu[1], loss, {4, 6, 1}, 4 * ToleranceFor(dtype), "loss");
    // The grad reads the CPU's softmax on both sides: only + - * /, the CPU's bits.
    const Tensor cpu_softmax =
        RunKernel("cross_entropy_with_softmax", dtype, {&x, &label}, {}, 2)[0];
    const Tensor loss_grad = RandomTensor(dtype, {4, 6, 1}, 112);
    const std::vector<const Tensor*> grad_in = {&label, &cpu_softmax, &loss_grad};
    ExpectCpuBits(RunGpu("cross_entropy_with_softmax_grad", dtype, grad_in, {}, 1),
                  RunKernel("cross_entropy_with_softmax_grad", dtype, grad_in, {}, 1),
                  "cross_entropy_with_softmax_grad");
    // Soft labels.
    KernelAttrs soft;
    soft.Set("soft_label", true);
    const Tensor soft_label = RandomTensor(dtype, {4, 6, 10}, 113, 0.0, 0.2);
    const std::vector<Tensor> gpu_soft =
        RunGpu("cross_entropy_with_softmax", dtype, {&x, &soft_label}, soft, 2);
    const std::vector<double> dl = ToDoubles(soft_label);
    std::vector<double> soft_loss(24, 0.0);
    for (int64_t r = 0; r < 24; ++r) {
      for (int64_t j = 0; j < 10; ++j) {
        soft_loss[r] -= dl[r * 10 + j] * std::log(softmax[r * 10 + j]);
      }
    }
    ExpectClose(gpu_soft[1], soft_loss, {4, 6, 1}, 16 * ToleranceFor(dtype), "soft loss");
    const std::vector<const Tensor*> soft_grad_in = {&soft_label, &cpu_softmax, &loss_grad};
    ExpectCpuBits(RunGpu("cross_entropy_with_softmax_grad", dtype, soft_grad_in, soft, 1),
                  RunKernel("cross_entropy_with_softmax_grad", dtype, soft_grad_in, soft, 1),
                  "soft cross_entropy_with_softmax_grad");
  }
}

TEST(GpuCrossEntropyTest, ALabelOutOfRangeIsTheCpuError) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4}, 1);
  const Tensor label = Tensor::FromVector<int64_t>({1, 9, 2}, {3, 1});
  StatusOr<std::vector<Tensor>> gpu =
      TryRunGpu("cross_entropy_with_softmax", DType::kFloat32, {&x, &label}, {}, 2);
  StatusOr<std::vector<Tensor>> cpu =
      rt::testing::TryRunKernel("cross_entropy_with_softmax", DType::kFloat32, {&x, &label}, {}, 2);
  ASSERT_FALSE(gpu.ok());
  ASSERT_FALSE(cpu.ok());
  EXPECT_EQ(gpu.status().message(), cpu.status().message());
}

TEST(GpuMeanAllTest, MeanAndGradMatchTheReference) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4, 5}, {16, 16, 9}}) {
      SCOPED_TRACE(DTypeName(dtype));
      const Tensor x = RandomTensor(dtype, shape, 121);
      const std::vector<Tensor> gpu = RunGpu("mean_all", dtype, {&x}, {}, 1);
      double sum = 0;
      for (double v : ToDoubles(x)) sum += v;
      ExpectClose(gpu[0], {sum / static_cast<double>(x.numel())}, {}, 4 * ToleranceFor(dtype),
                  "mean_all");
      if (x.numel() <= 32) {  // sequential from 0: the CPU's order
        ExpectCpuBits(gpu, RunKernel("mean_all", dtype, {&x}, {}, 1), "mean_all");
      }
      const Tensor g = RandomTensor(dtype, {}, 122);
      ExpectCpuBits(RunGpu("mean_all_grad", dtype, {&x, &g}, {}, 1),
                    RunKernel("mean_all_grad", dtype, {&x, &g}, {}, 1), "mean_all_grad");
    }
  }
}

// ---- embedding, reshape, transpose, tril / triu
// ----------------------------------------------------

TEST(GpuEmbeddingTest, LookupAndGradGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  const Tensor ids = Tensor::FromVector<int64_t>({0, 3, 5, 3, 1, 3, 3, 0, 2, 5}, {2, 5});
  for (DType dtype : kFloating) {
    for (int64_t padding_idx : {int64_t{-1}, int64_t{3}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " padding " + std::to_string(padding_idx));
      const Tensor weight = RandomTensor(dtype, {6, 4}, 131);
      KernelAttrs attrs;
      attrs.Set("padding_idx", padding_idx);
      const std::vector<Tensor> gpu = RunGpu("embedding", dtype, {&ids, &weight}, attrs, 1);
      ExpectCpuBits(gpu, RunKernel("embedding", dtype, {&ids, &weight}, attrs, 1), "embedding");
      const Tensor g = RandomTensor(dtype, {2, 5, 4}, 132);
      const std::vector<const Tensor*> in = {&ids, &weight, &g};
      const std::vector<Tensor> grad = RunGpu("embedding_grad", dtype, in, attrs, 1);
      ExpectCpuBits(grad, RunKernel("embedding_grad", dtype, in, attrs, 1), "embedding_grad");
      const std::vector<double> dg = ToDoubles(g);
      std::vector<double> expected(24, 0.0);
      for (int64_t i = 0; i < 10; ++i) {
        const int64_t id = ids.data<int64_t>()[i];
        if (id == padding_idx) continue;
        for (int64_t j = 0; j < 4; ++j) expected[id * 4 + j] += dg[i * 4 + j];
      }
      ExpectClose(grad[0], expected, {6, 4}, 4 * ToleranceFor(dtype), "embedding_grad");
    }
  }
  const Tensor bad = Tensor::FromVector<int32_t>({1, 7}, {2});
  const Tensor weight = RandomTensor(DType::kFloat32, {6, 4}, 133);
  StatusOr<std::vector<Tensor>> r = TryRunGpu("embedding", DType::kFloat32, {&bad, &weight}, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "embedding: x[1] = 7 is outside [0, 6), the rows of weight float32[6, 4] on gpu");
}

TEST(GpuManipulationTest, ReshapeTransposeAndTheirGradsGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {2, 3, 4, 5}, 141, -50, 50);
    KernelAttrs reshape;
    reshape.Set("shape", std::vector<int64_t>{0, -1, 10});
    const std::vector<Tensor> gpu = RunGpu("reshape", dtype, {&x}, reshape, 2);
    const std::vector<Tensor> cpu = RunKernel("reshape", dtype, {&x}, reshape, 2);
    ExpectCpuBits(gpu, cpu, "reshape");
    EXPECT_EQ(gpu[1].shape(), (std::vector<int64_t>{0, 2, 3, 4, 5}));
    ExpectCpuBits(RunGpu("reshape_grad", dtype, {&gpu[1], &gpu[0]}, {}, 1),
                  RunKernel("reshape_grad", dtype, {&cpu[1], &cpu[0]}, {}, 1), "reshape_grad");
    for (const std::vector<int64_t>& perm :
         {std::vector<int64_t>{0, 2, 1, 3}, {3, 0, 2, 1}, {-1, 0, 1, 2}}) {
      KernelAttrs attrs;
      attrs.Set("perm", perm);
      const std::vector<Tensor> t = RunGpu("transpose", dtype, {&x}, attrs, 1);
      ExpectCpuBits(t, RunKernel("transpose", dtype, {&x}, attrs, 1), "transpose");
      // transpose_grad undoes it.
      const std::vector<Tensor> back = RunGpu("transpose_grad", dtype, {&t[0]}, attrs, 1);
      EXPECT_TRUE(back[0].BitwiseEqual(x));
    }
  }
}

TEST(GpuIndexingTest, TrilAndTriuGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kUInt8}) {
    const Tensor x = RandomTensor(dtype, {2, 5, 7}, 151, 1, 100);
    for (const std::string op : {"tril", "triu", "tril_grad", "triu_grad"}) {
      for (int64_t diagonal : {int64_t{-2}, int64_t{0}, int64_t{3}, int64_t{100}}) {
        SCOPED_TRACE(op + " " + std::to_string(diagonal) + " " + DTypeName(dtype));
        KernelAttrs attrs;
        attrs.Set("diagonal", diagonal);
        const std::vector<Tensor> gpu = RunGpu(op, dtype, {&x}, attrs, 1);
        ExpectCpuBits(gpu, RunKernel(op, dtype, {&x}, attrs, 1), op);
        // The reference: element (i, j) kept when j - i <= diagonal (tril) or >= (triu).
        const bool lower = op.rfind("tril", 0) == 0;
        const std::vector<double> dx = ToDoubles(x);
        std::vector<double> expected(dx.size());
        for (size_t e = 0; e < dx.size(); ++e) {
          const int64_t i = static_cast<int64_t>(e / 7) % 5, j = static_cast<int64_t>(e % 7);
          const bool kept = lower ? j - i <= diagonal : j - i >= diagonal;
          expected[e] = kept ? dx[e] : 0.0;
        }
        ExpectClose(gpu[0], expected, {2, 5, 7}, 0.0, op);
      }
    }
  }
}

// ---- matmul_grad
// -----------------------------------------------------------------------------------

struct MatmulCase {
  std::vector<int64_t> x, y;
  bool transpose_x = false, transpose_y = false;
};

// The float64 grads of x and y (stored layouts) for out_grad g, written from matmul's definition.
void ReferenceMatmulGrad(const MatmulCase& c, const std::vector<double>& x,
                         const std::vector<double>& y, const std::vector<double>& g,
                         std::vector<double>* dx, std::vector<double>* dy) {
  const bool xv = c.x.size() == 1, yv = c.y.size() == 1;
  const bool tx = c.transpose_x && !xv, ty = c.transpose_y && !yv;
  const int64_t xr = xv ? 1 : c.x[c.x.size() - 2], xc = c.x.back();
  const int64_t yr = yv ? c.y[0] : c.y[c.y.size() - 2], yc = yv ? 1 : c.y.back();
  const int64_t m = tx ? xc : xr, k = tx ? xr : xc, n = ty ? yr : yc;
  const std::vector<int64_t> xb(c.x.begin(), c.x.end() - (xv ? 1 : 2));
  const std::vector<int64_t> yb(c.y.begin(), c.y.end() - (yv ? 1 : 2));
  const size_t rank = std::max(xb.size(), yb.size());
  std::vector<int64_t> batch(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = d < rank - xb.size() ? 1 : xb[d - (rank - xb.size())];
    const int64_t b = d < rank - yb.size() ? 1 : yb[d - (rank - yb.size())];
    batch[d] = std::max(a, b);
  }
  // The flat matrix index of an operand with batch dims `dims` read by out batch b.
  auto matrix = [&](int64_t b, const std::vector<int64_t>& dims) {
    int64_t index = 0, stride = 1;
    for (size_t q = 0; q < rank; ++q) {
      const size_t d = rank - 1 - q;
      const int64_t coord = b % batch[d];
      b /= batch[d];
      if (q < dims.size()) {
        const int64_t size = dims[dims.size() - 1 - q];
        if (size != 1) index += coord * stride;
        stride *= size;
      }
    }
    return index;
  };
  dx->assign(x.size(), 0.0);
  dy->assign(y.size(), 0.0);
  for (int64_t b = 0; b < NumelOf(batch); ++b) {
    const int64_t xm = matrix(b, xb), ym = matrix(b, yb);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double gij = g[(b * m + i) * n + j];
        for (int64_t l = 0; l < k; ++l) {
          const int64_t xi = xm * xr * xc + (tx ? l * xc + i : i * xc + l);
          const int64_t yi = ym * yr * yc + (ty ? j * yc + l : l * yc + j);
          (*dx)[xi] += gij * y[yi];
          (*dy)[yi] += gij * x[xi];
        }
      }
    }
  }
}

TEST(GpuMatmulGradTest, EveryLayoutMatchesTheFloat64Reference) {
  IRM_REQUIRE_GPU();
  const MatmulCase cases[] = {
      {{3, 4, 5}, {5, 6}, false, false},        // a linear layer: x stacks
      {{3, 4, 5}, {6, 5}, false, true},         // stacks, y transposed
      {{2, 3, 4}, {2, 4, 5}, false, false},     // equal batches
      {{2, 4, 3}, {2, 5, 4}, true, true},       // equal batches, both transposed
      {{2, 1, 3, 4}, {3, 4, 5}, false, false},  // batches broadcast both ways
      {{4, 3}, {2, 4, 5}, true, false},         // x broadcast over y's batch, transposed
      {{2, 3, 4}, {3, 5}, true, false},         // x transposed: no stacking, y summed
      {{4}, {2, 4, 5}, false, false},           // a vector x
      {{2, 3, 4}, {4}, false, false},           // a vector y
  };
  for (DType dtype : kFloating) {
    for (const MatmulCase& c : cases) {
      SCOPED_TRACE(ShapeToString(c.x) + (c.transpose_x ? "^T " : " ") + ShapeToString(c.y) +
                   (c.transpose_y ? "^T " : " ") + DTypeName(dtype));
      const Tensor x = RandomTensor(dtype, c.x, 161);
      const Tensor y = RandomTensor(dtype, c.y, 162);
      KernelAttrs attrs;
      attrs.Set("transpose_x", c.transpose_x);
      attrs.Set("transpose_y", c.transpose_y);
      const Tensor out = RunKernel("matmul", dtype, {&x, &y}, attrs, 1)[0];
      const Tensor g = RandomTensor(dtype, out.shape(), 163);
      const std::vector<Tensor> gpu = RunGpu("matmul_grad", dtype, {&x, &y, &g}, attrs, 2);
      std::vector<double> ex, ey;
      ReferenceMatmulGrad(c, ToDoubles(x), ToDoubles(y), ToDoubles(g), &ex, &ey);
      const double tol = 16 * ToleranceFor(dtype);
      ExpectClose(gpu[0], ex, c.x, tol, "x_grad");
      ExpectClose(gpu[1], ey, c.y, tol, "y_grad");
    }
  }
}

TEST(GpuMatmulGradTest, OnlyTheWantedGradIsComputed) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4}, 171);
  const Tensor y = RandomTensor(DType::kFloat32, {4, 2}, 172);
  const Tensor g = RandomTensor(DType::kFloat32, {3, 2}, 173);
  DeviceTensor dx_device, dy_device;
  StatusOr<DeviceTensor> xd = DeviceTensor::FromHost(x), yd = DeviceTensor::FromHost(y),
                         gd = DeviceTensor::FromHost(g);
  ASSERT_TRUE(xd.ok() && yd.ok() && gd.ok());
  CudaKernelCall call;
  call.inputs = {&*xd, &*yd, &*gd};
  call.outputs = {nullptr, &dy_device};
  ASSERT_TRUE(CudaKernelRegistry::Global().Run("matmul_grad", DType::kFloat32, call).ok());
  EXPECT_FALSE(dx_device.defined());
  ASSERT_TRUE(dy_device.defined());
  EXPECT_EQ(dy_device.shape(), (std::vector<int64_t>{4, 2}));
}

// ---- reduction grads, gradient clipping's ops
// ------------------------------------------------------

TEST(GpuReductionGradTest, SumAndMeanGradsBroadcastBackAsTheCpu) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + (keepdim ? " keepdim" : ""));
      const Tensor x = RandomTensor(dtype, {3, 4, 5}, 191);
      KernelAttrs attrs;
      attrs.Set("axis", std::vector<int64_t>{0, 2});
      attrs.Set("keepdim", keepdim);
      const std::vector<int64_t> out_shape =
          keepdim ? std::vector<int64_t>{1, 4, 1} : std::vector<int64_t>{4};
      const Tensor g = RandomTensor(dtype, out_shape, 192);
      const std::vector<double> dg = ToDoubles(g);
      for (const std::string op : {"sum_grad", "mean_grad"}) {
        const std::vector<Tensor> gpu = RunGpu(op, dtype, {&x, &g}, attrs, 1);
        ExpectCpuBits(gpu, RunKernel(op, dtype, {&x, &g}, attrs, 1), op);
        std::vector<double> expected;
        for (int64_t i = 0; i < 60; ++i) {
          const double v = dg[static_cast<size_t>((i / 5) % 4)];
          expected.push_back(op == "sum_grad" ? v : v / 15.0);
        }
        ExpectClose(gpu[0], expected, {3, 4, 5}, 2 * ToleranceFor(dtype), op);
      }
    }
  }
}

TEST(GpuClipTest, SquaredL2NormMaximumAndTheirNeighbours) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kFloating) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{5, 6}, {64, 100}}) {
      SCOPED_TRACE(DTypeName(dtype));
      const Tensor x = RandomTensor(dtype, shape, 201);
      const std::vector<Tensor> gpu = RunGpu("squared_l2_norm", dtype, {&x}, {}, 1);
      double sum = 0;
      for (double v : ToDoubles(x)) sum += v * v;
      ExpectClose(gpu[0], {sum}, {1}, 4 * ToleranceFor(dtype), "squared_l2_norm");
      if (x.numel() <= 32) {  // sequential from 0: the CPU's order
        ExpectCpuBits(gpu, RunKernel("squared_l2_norm", dtype, {&x}, {}, 1), "squared_l2_norm");
      }
      const Tensor g = RandomTensor(dtype, {1}, 202);
      ExpectCpuBits(RunGpu("squared_l2_norm_grad", dtype, {&x, &g}, {}, 1),
                    RunKernel("squared_l2_norm_grad", dtype, {&x, &g}, {}, 1),
                    "squared_l2_norm_grad");
    }
    const Tensor a = RandomTensor(dtype, {4, 7}, 203);
    const Tensor b = RandomTensor(dtype, {7}, 204);
    const std::vector<Tensor> max = RunGpu("maximum", dtype, {&a, &b}, {}, 1);
    ExpectCpuBits(max, RunKernel("maximum", dtype, {&a, &b}, {}, 1), "maximum");
    const std::vector<double> da = ToDoubles(a), db = ToDoubles(b);
    std::vector<double> expected;
    for (size_t i = 0; i < da.size(); ++i) expected.push_back(std::max(da[i], db[i % 7]));
    ExpectClose(max[0], expected, {4, 7}, 0.0, "maximum");
  }
}

TEST(GpuManipulationTest, ConcatSplitSliceAndTheirGradsGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  for (DType dtype : {DType::kFloat32, DType::kBFloat16, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = RandomTensor(dtype, {2, 3, 4}, 211, -9, 9);
    const Tensor b = RandomTensor(dtype, {2, 5, 4}, 212, -9, 9);
    KernelAttrs axis1;
    axis1.Set("axis", int64_t{1});
    const std::vector<Tensor> joined = RunGpu("concat", dtype, {&a, &b}, axis1, 1);
    ExpectCpuBits(joined, RunKernel("concat", dtype, {&a, &b}, axis1, 1), "concat");
    // The reference: a's rows then b's, per outer index.
    const std::vector<double> da = ToDoubles(a), db = ToDoubles(b);
    std::vector<double> expected;
    for (int64_t o = 0; o < 2; ++o) {
      expected.insert(expected.end(), da.begin() + o * 12, da.begin() + (o + 1) * 12);
      expected.insert(expected.end(), db.begin() + o * 20, db.begin() + (o + 1) * 20);
    }
    ExpectClose(joined[0], expected, {2, 8, 4}, 0.0, "concat");
    const std::vector<const Tensor*> grad_in = {&a, &b, &joined[0]};
    const std::vector<Tensor> cut = RunGpu("concat_grad", dtype, grad_in, axis1, 2);
    EXPECT_TRUE(cut[0].BitwiseEqual(a));
    EXPECT_TRUE(cut[1].BitwiseEqual(b));
    KernelAttrs split = axis1;
    split.Set("sections", std::vector<int64_t>{3, -1});
    const std::vector<Tensor> pieces = RunGpu("split", dtype, {&joined[0]}, split, 2);
    EXPECT_TRUE(pieces[0].BitwiseEqual(a));
    EXPECT_TRUE(pieces[1].BitwiseEqual(b));
    KernelAttrs halves;
    halves.Set("axis", int64_t{-1});
    halves.Set("num", int64_t{2});
    ExpectCpuBits(RunGpu("split_with_num", dtype, {&a}, halves, 2),
                  RunKernel("split_with_num", dtype, {&a}, halves, 2), "split_with_num");
    KernelAttrs slice;
    slice.Set("axes", std::vector<int64_t>{1, 2});
    slice.Set("starts", std::vector<int64_t>{-4, 1});
    slice.Set("ends", std::vector<int64_t>{100, 2});
    slice.Set("decrease_axis", std::vector<int64_t>{2});
    const std::vector<Tensor> sliced = RunGpu("slice", dtype, {&b}, slice, 1);
    ExpectCpuBits(sliced, RunKernel("slice", dtype, {&b}, slice, 1), "slice");
    EXPECT_EQ(sliced[0].shape(), (std::vector<int64_t>{2, 4}));
    ExpectCpuBits(RunGpu("slice_grad", dtype, {&b, &sliced[0]}, slice, 1),
                  RunKernel("slice_grad", dtype, {&b, &sliced[0]}, slice, 1), "slice_grad");
  }
}

// ---- determinism
// -----------------------------------------------------------------------------------

TEST(GpuDeterminismTest, TwoRunsAreBitIdentical) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {64, 16, 256}, 181);
  const Tensor w = RandomTensor(DType::kFloat32, {256, 512}, 182);
  const Tensor g = RandomTensor(DType::kFloat32, {64, 16, 512}, 183);
  const Tensor scale = RandomTensor(DType::kFloat32, {256}, 184);
  const Tensor bias = RandomTensor(DType::kFloat32, {256}, 185);
  KernelAttrs norm;
  norm.Set("begin_norm_axis", int64_t{2});
  const std::vector<Tensor> ln =
      RunKernel("layer_norm", DType::kFloat32, {&x, &scale, &bias}, norm, 3);
  const Tensor dy = RandomTensor(DType::kFloat32, {64, 16, 256}, 186);
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 4096; ++i) ids.push_back((i * 37) % 100);
  const Tensor id = Tensor::FromVector<int64_t>(ids, {64, 64});
  const Tensor table = RandomTensor(DType::kFloat32, {100, 32}, 187);
  const Tensor eg = RandomTensor(DType::kFloat32, {64, 64, 32}, 188);
  auto twice = [](const std::string& name, const std::vector<const Tensor*>& in,
                  const KernelAttrs& attrs, size_t outputs) {
    const std::vector<Tensor> a = RunGpu(name, DType::kFloat32, in, attrs, outputs);
    const std::vector<Tensor> b = RunGpu(name, DType::kFloat32, in, attrs, outputs);
    for (size_t i = 0; i < outputs; ++i) {
      if (a[i].defined()) {
        EXPECT_TRUE(a[i].BitwiseEqual(b[i])) << name << " output " << i;
      }
    }
  };
  twice("matmul_grad", {&x, &w, &g}, {}, 2);
  twice("layer_norm_grad", {&x, &scale, &bias, &ln[1], &ln[2], &dy}, norm, 3);
  twice("embedding_grad", {&id, &table, &eg}, {}, 1);
  twice("mean_all", {&g}, {}, 1);
}

}  // namespace
}  // namespace irm::rt::cuda
