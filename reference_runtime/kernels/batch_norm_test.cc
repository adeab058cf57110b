// batch_norm and batch_norm_grad against a float64 batch normalisation written here from its
// definition (the batch statistics per channel, the running averages with momentum, the inverse
// std Paddle saves; paddle/phi/kernels/cpu/batch_norm_kernel.cc), in training and with global
// statistics, NCHW and NHWC; the grads against central differences of that float64 forward;
// bit-identical reruns; the bad-input errors.
#include <gtest/gtest.h>

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
using testing::TryRunKernel;

constexpr double kMomentum = 0.8;
constexpr double kEpsilon = 1e-3;  // read as a float (the legacy attribute is one)

struct Shape {
  int64_t n, c, s;  // x is [n, c, s] (NCHW) or [n, s, c] (NHWC), s one spatial dim
  bool nhwc;
  int64_t At(int64_t i, int64_t ch, int64_t k) const {
    return nhwc ? (i * s + k) * c + ch : (i * c + ch) * s + k;
  }
  std::vector<int64_t> dims() const {
    return nhwc ? std::vector<int64_t>{n, s, c} : std::vector<int64_t>{n, c, s};
  }
};

struct Forward {
  std::vector<double> y, mean_out, var_out, saved_mean, saved_inv_std;
};

Forward Reference(const Shape& sh, const std::vector<double>& x, const std::vector<double>& mean,
                  const std::vector<double>& var, const std::vector<double>& scale,
                  const std::vector<double>& bias, bool global) {
  const double eps = static_cast<float>(kEpsilon);
  const double mom = static_cast<float>(kMomentum);
  Forward f{std::vector<double>(x.size()), mean, var, std::vector<double>(sh.c, 0.0),
            std::vector<double>(sh.c, 0.0)};
  const double m = double(sh.n * sh.s);
  for (int64_t ch = 0; ch < sh.c; ++ch) {
    double mu = mean[ch], v = var[ch];
    if (!global) {
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < sh.n; ++i)
        for (int64_t k = 0; k < sh.s; ++k) sum += x[sh.At(i, ch, k)];
      mu = sum / m;
      for (int64_t i = 0; i < sh.n; ++i)
        for (int64_t k = 0; k < sh.s; ++k) sq += std::pow(x[sh.At(i, ch, k)] - mu, 2);
      v = sq / m;
      f.mean_out[ch] = mean[ch] * mom + mu * (1 - mom);
      f.var_out[ch] = var[ch] * mom + v * (1 - mom);
      f.saved_mean[ch] = mu;
      f.saved_inv_std[ch] = 1 / std::sqrt(v + eps);
    }
    for (int64_t i = 0; i < sh.n; ++i)
      for (int64_t k = 0; k < sh.s; ++k) {
        const int64_t at = sh.At(i, ch, k);
        f.y[at] = (x[at] - mu) / std::sqrt(v + eps) * scale[ch] + bias[ch];
      }
  }
  return f;
}

KernelAttrs Attrs(bool nhwc, bool is_test, bool use_global) {
  KernelAttrs a;
  a.Set("momentum", kMomentum);
  a.Set("epsilon", static_cast<double>(static_cast<float>(kEpsilon)));
  a.Set("data_format", std::string(nhwc ? "NHWC" : "NCHW"));
  a.Set("is_test", is_test);
  a.Set("use_global_stats", use_global);
  return a;
}

TEST(BatchNormTest, TrainingAndGlobalStatisticsMatchTheFloat64Definition) {
  uint64_t seed = 10;
  for (bool nhwc : {false, true}) {
    for (int mode = 0; mode < 3; ++mode) {  // training, is_test, use_global_stats
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        const bool global = mode != 0;
        const Shape sh{3, 4, 5, nhwc};
        const std::string where = std::string(nhwc ? "NHWC" : "NCHW") + " mode " +
                                  std::to_string(mode) + " " + DTypeName(dtype);
        const Tensor x = RandomTensor(dtype, sh.dims(), ++seed, -2, 3);
        const Tensor mean = RandomTensor(dtype, {sh.c}, ++seed);
        const Tensor var = RandomTensor(dtype, {sh.c}, ++seed, 0.5, 2);
        const Tensor scale = RandomTensor(dtype, {sh.c}, ++seed);
        const Tensor bias = RandomTensor(dtype, {sh.c}, ++seed);
        const Forward want = Reference(sh, ToDoubles(x), ToDoubles(mean), ToDoubles(var),
                                       ToDoubles(scale), ToDoubles(bias), global);
        const KernelAttrs attrs = Attrs(nhwc, mode == 1, mode == 2);
        const std::vector<Tensor> out =
            RunKernel("batch_norm", dtype, {&x, &mean, &var, &scale, &bias}, attrs, 6);
        ASSERT_EQ(out.size(), 6u) << where;
        const double tol = dtype == DType::kFloat32 ? 1e-5 : 1e-11;
        ExpectClose(out[0], want.y, sh.dims(), tol, where + " out");
        ExpectClose(out[1], want.mean_out, {sh.c}, tol, where + " mean_out");
        ExpectClose(out[2], want.var_out, {sh.c}, tol, where + " variance_out");
        ExpectClose(out[3], want.saved_mean, {sh.c}, tol, where + " saved_mean");
        ExpectClose(out[4], want.saved_inv_std, {sh.c}, tol, where + " saved_variance");
        EXPECT_TRUE(RunKernel("batch_norm", dtype, {&x, &mean, &var, &scale, &bias}, attrs, 6)[0]
                        .BitwiseEqual(out[0]))
            << where;

        // Grads: central differences of sum(out * dy) through the float64 forward.
        const Tensor dy = RandomTensor(dtype, sh.dims(), ++seed);
        const std::vector<double> xv = ToDoubles(x), mv = ToDoubles(mean), vv = ToDoubles(var),
                                  sv = ToDoubles(scale), bv = ToDoubles(bias), dyv = ToDoubles(dy);
        auto loss = [&](const std::vector<double>& xx, const std::vector<double>& ss,
                        const std::vector<double>& bb) {
          const std::vector<double> y = Reference(sh, xx, mv, vv, ss, bb, global).y;
          double l = 0;
          for (size_t i = 0; i < y.size(); ++i) l += y[i] * dyv[i];
          return l;
        };
        const std::vector<double> dx =
            NumericGradient([&](const std::vector<double>& v) { return loss(v, sv, bv); }, xv);
        const std::vector<double> dscale =
            NumericGradient([&](const std::vector<double>& v) { return loss(xv, v, bv); }, sv);
        const std::vector<double> dbias =
            NumericGradient([&](const std::vector<double>& v) { return loss(xv, sv, v); }, bv);
        const std::vector<Tensor> grad = RunKernel(
            "batch_norm_grad", dtype,
            {&x, &scale, &bias, &out[1], &out[2], &out[3], &out[4], nullptr, &dy}, attrs, 3);
        ASSERT_EQ(grad.size(), 3u) << where;
        const double gtol = dtype == DType::kFloat32 ? 1e-4 : 1e-6;
        ExpectClose(grad[0], dx, sh.dims(), gtol, where + " x_grad");
        if (!global) {
          ExpectClose(grad[1], dscale, {sh.c}, gtol, where + " scale_grad");
          ExpectClose(grad[2], dbias, {sh.c}, gtol, where + " bias_grad");
        }
      }
    }
  }
}

TEST(BatchNormTest, GlobalStatisticsUseTheRunningVarianceInTheGrad) {
  // With use_global_stats the grad reads mean_out / variance_out: dx = dy * scale / sqrt(v + e).
  const Tensor x = Tensor::FromVector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  const Tensor scale = Tensor::FromVector(std::vector<double>{2, 3}, {2});
  const Tensor mean = Tensor::FromVector(std::vector<double>{0, 0}, {2});
  const Tensor var = Tensor::FromVector(std::vector<double>{3, 8}, {2});
  const Tensor dy = Tensor::FromVector(std::vector<double>{1, 1, 1, 1}, {2, 2});
  KernelAttrs a = Attrs(false, false, true);
  a.Set("epsilon", 1.0);
  const std::vector<Tensor> g =
      RunKernel("batch_norm_grad", DType::kFloat64,
                {&x, &scale, nullptr, &mean, &var, nullptr, nullptr, nullptr, &dy}, a, 3);
  ExpectClose(g[0], {1, 1, 1, 1}, {2, 2}, 1e-15, "x_grad");
}

TEST(BatchNormTest, BadInputsAreErrors) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3, 4}, 1);
  const Tensor mean = RandomTensor(DType::kFloat32, {4}, 2);
  auto r = TryRunKernel("batch_norm", DType::kFloat32, {&x, &mean, &mean, nullptr, nullptr},
                        KernelAttrs(), 6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "mean has shape [4], expected [3] (the channels of x)");
  KernelAttrs a;
  a.Set("data_format", std::string("NCDHW"));
  r = TryRunKernel("batch_norm", DType::kFloat32, {&x, &mean, &mean, nullptr, nullptr}, a, 6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "data_format 'NCDHW' is not one of NCHW, NHWC, AnyLayout (NCHW)");
}

}  // namespace
}  // namespace irm::rt
