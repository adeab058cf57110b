// batch_norm and batch_norm_grad as phi's CPU kernels define them
// (paddle/phi/kernels/cpu/batch_norm_kernel.cc, batch_norm_grad_kernel.cc; signatures of
// paddle/phi/ops/yaml/inconsistent/static_ops.yaml and static_backward.yaml):
//   batch_norm(x, mean, variance, scale?, bias?) -> (out, mean_out, variance_out, saved_mean,
//              saved_variance, reserve_space)
//   batch_norm_grad(x, scale?, bias?, mean_out?, variance_out?, saved_mean, saved_variance,
//                   reserve_space?, out_grad) -> (x_grad, scale_grad, bias_grad)
// x is [N, C, ...] (NCHW) or [N, ..., C] (NHWC; a rank-2 x is [N, C] either way); statistics are
// per channel over the other dims (m = N * the spatial size).
//
// Training (neither is_test without trainable_statistics, nor use_global_stats): the batch mean
// and the biased batch variance; mean_out = mean * momentum + batch_mean * (1 - momentum), the
// same for the variance (the running statistics, written in place); saved_mean = batch mean,
// saved_variance = 1 / sqrt(batch_var + epsilon) (the inverse std the grad reads). Inference
// (global statistics): normalised by mean and variance, mean_out / variance_out are mean and
// variance unchanged (Paddle shares their memory), saved_mean / saved_variance are zero (Paddle
// leaves them unwritten). out = x * (inv_std * scale) + (bias - mean * inv_std * scale), scale 1
// and bias 0 when absent. m = 1 in training copies x (and the grad copies out_grad), as phi does.
//
// Grad: with s = Σ dy and t = Σ (x - mean) * inv_std * dy per channel, bias_grad = s,
// scale_grad = t, and x_grad = scale * inv_std / m * (m * dy - s - (x - mean) * t * inv_std) in
// training, scale * inv_std * dy with global statistics (mean_out / variance_out's inv std).
//
// Sums run per channel over samples then positions, in index order, in the kernel's dtype
// (float32, float64: phi's CPU registration), so the bits are fixed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference_runtime/kernels/batch_norm_plan.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using plan::BatchNormPlan;

template <typename T>
std::vector<T> ChannelValues(const KernelCall& call, size_t index, int64_t c, T fallback) {
  if (!call.has_input(index)) return std::vector<T>(static_cast<size_t>(c), fallback);
  const T* v = call.input(index).data<T>();
  return std::vector<T>(v, v + c);
}

template <typename T>
Tensor ChannelTensor(const std::vector<T>& values) {
  return Tensor::FromVector(values, {static_cast<int64_t>(values.size())});
}

// batch_norm: inputs x, mean, variance, scale?, bias?.
template <typename T>
struct BatchNormKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const BatchNormPlan p, plan::PlanBatchNormCall(call, DTypeOf<T>()));
    IRM_RETURN_IF_ERROR(plan::CheckBatchNormChannels(call, DTypeOf<T>(), p));
    IRM_ASSIGN_OR_RETURN(const plan::BatchNormMode mode, plan::ReadBatchNormMode(call.attrs));
    const Tensor& xt = call.input(0);
    const T* x = xt.data<T>();
    std::vector<T> running_mean = ChannelValues<T>(call, 1, p.c, T{0});
    std::vector<T> running_var = ChannelValues<T>(call, 2, p.c, T{0});
    const std::vector<T> scale = ChannelValues<T>(call, 3, p.c, T{1});
    const std::vector<T> bias = ChannelValues<T>(call, 4, p.c, T{0});
    const auto c = static_cast<size_t>(p.c);
    std::vector<T> saved_mean(c, T{0}), saved_var(c, T{0}), inv_std(c, T{0});
    const T eps = static_cast<T>(static_cast<float>(mode.epsilon));
    IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<T>(), xt.shape()));
    T* y = out.data<T>();

    if (!mode.global_stats && p.m() == 1) {
      // One element per channel: y = x, the running statistics untouched.
      std::copy(x, x + xt.numel(), y);
    } else {
      const std::vector<T>* mean = &running_mean;
      if (!mode.global_stats) {
        const T m = static_cast<T>(p.m());
        for (int64_t ch = 0; ch < p.c; ++ch) {
          T sum{0};
          for (int64_t i = 0; i < p.n; ++i)
            for (int64_t k = 0; k < p.s; ++k) sum += x[p.At(i, ch, k)];
          saved_mean[ch] = sum / m;
          T sq{0};
          for (int64_t i = 0; i < p.n; ++i) {
            for (int64_t k = 0; k < p.s; ++k) {
              const T d = x[p.At(i, ch, k)] - saved_mean[ch];
              sq += d * d;
            }
          }
          const T batch_var = sq / m;
          const T mom = static_cast<T>(static_cast<float>(mode.momentum));
          running_mean[ch] = running_mean[ch] * mom + saved_mean[ch] * (T{1} - mom);
          running_var[ch] = running_var[ch] * mom + batch_var * (T{1} - mom);
          saved_var[ch] = std::sqrt(T{1} / (batch_var + eps));
          inv_std[ch] = saved_var[ch];
        }
        mean = &saved_mean;
      } else {
        for (size_t ch = 0; ch < c; ++ch) inv_std[ch] = T{1} / std::sqrt(running_var[ch] + eps);
      }
      for (int64_t ch = 0; ch < p.c; ++ch) {
        const T new_scale = inv_std[ch] * scale[ch];
        const T new_bias = bias[ch] - (*mean)[ch] * inv_std[ch] * scale[ch];
        for (int64_t i = 0; i < p.n; ++i) {
          for (int64_t k = 0; k < p.s; ++k) {
            const int64_t at = p.At(i, ch, k);
            y[at] = x[at] * new_scale + new_bias;
          }
        }
      }
    }
    call.SetOutput(0, std::move(out));
    call.SetOutput(1, ChannelTensor(running_mean));
    call.SetOutput(2, ChannelTensor(running_var));
    call.SetOutput(3, ChannelTensor(saved_mean));
    call.SetOutput(4, ChannelTensor(saved_var));
    // reserve_space: cuDNN's workspace; an empty tensor on the CPU.
    IRM_ASSIGN_OR_RETURN(Tensor reserve, Tensor::Zeros(DTypeOf<T>(), {0}));
    call.SetOutput(5, std::move(reserve));
    return Status::Ok();
  }
};

// batch_norm_grad's operands (batch_norm_plan.h).
using plan::kBnMeanOut;
using plan::kBnOutGrad;
using plan::kBnSavedMean;
using plan::kBnSavedVariance;
using plan::kBnScale;
using plan::kBnVarianceOut;
using plan::kBnX;

template <typename T>
struct BatchNormGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const BatchNormPlan p, plan::PlanBatchNormCall(call, DTypeOf<T>()));
    IRM_ASSIGN_OR_RETURN(const plan::BatchNormMode mode, plan::ReadBatchNormMode(call.attrs));
    IRM_RETURN_IF_ERROR(plan::CheckBatchNormGradOperands(call, DTypeOf<T>(), p, mode));
    const Tensor& xt = call.input(kBnX);
    const bool global = mode.global_stats;
    const auto c = static_cast<size_t>(p.c);
    const T* x = xt.data<T>();
    const T* dy = call.input(kBnOutGrad).data<T>();
    const std::vector<T> scale = ChannelValues<T>(call, kBnScale, p.c, T{1});
    std::vector<T> mean(c), inv_std(c);
    if (global) {
      const T eps = static_cast<T>(static_cast<float>(mode.epsilon));
      mean = ChannelValues<T>(call, kBnMeanOut, p.c, T{0});
      const std::vector<T> var = ChannelValues<T>(call, kBnVarianceOut, p.c, T{0});
      for (size_t ch = 0; ch < c; ++ch) inv_std[ch] = T{1} / std::sqrt(var[ch] + eps);
    } else {
      mean = ChannelValues<T>(call, kBnSavedMean, p.c, T{0});
      inv_std = ChannelValues<T>(call, kBnSavedVariance, p.c, T{0});
    }

    IRM_ASSIGN_OR_RETURN(Tensor x_grad, Tensor::Zeros(DTypeOf<T>(), xt.shape()));
    T* dx = x_grad.data<T>();
    std::vector<T> dy_sum(c, T{0}), dy_xhat_sum(c, T{0});
    if (!global && p.m() == 1) {
      std::copy(dy, dy + xt.numel(), dx);
    } else {
      const T m = static_cast<T>(global ? 1 : p.m());
      for (int64_t ch = 0; ch < p.c; ++ch) {
        for (int64_t i = 0; i < p.n; ++i) {
          for (int64_t k = 0; k < p.s; ++k) {
            const int64_t at = p.At(i, ch, k);
            dy_sum[ch] += dy[at];
            dy_xhat_sum[ch] += (x[at] - mean[ch]) * inv_std[ch] * dy[at];
          }
        }
        const T coeff = scale[ch] * inv_std[ch] / m;
        for (int64_t i = 0; i < p.n; ++i) {
          for (int64_t k = 0; k < p.s; ++k) {
            const int64_t at = p.At(i, ch, k);
            dx[at] = global ? coeff * dy[at]
                            : coeff * (dy[at] * m - dy_sum[ch] -
                                       (x[at] - mean[ch]) * dy_xhat_sum[ch] * inv_std[ch]);
          }
        }
      }
    }
    call.SetOutput(0, std::move(x_grad));
    call.SetOutput(1, ChannelTensor(dy_xhat_sum));
    call.SetOutput(2, ChannelTensor(dy_sum));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterBatchNormKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<BatchNormKernel, float, double>(registry, "batch_norm", {3, 5, 6})));
  return RegisterForTypes<BatchNormGradKernel, float, double>(registry, "batch_norm_grad",
                                                              {9, 9, 3});
}

}  // namespace irm::rt
