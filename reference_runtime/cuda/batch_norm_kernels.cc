// The CUDA batch_norm family, host side: batch_norm and batch_norm_grad with the CPU kernels'
// names, signatures, attributes, dtypes (float32, float64) and errors (kernels/batch_norm.cc, which
// says what each output holds in training and with global statistics). The per-channel sums run
// one thread per channel over samples then positions in index order, the CPU's sequential order,
// and every other value repeats the CPU's expression (conv.cu, no fused multiply-add): the CPU's
// bits, running statistics included.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"

namespace irm::rt::cuda {
namespace {

StatusOr<BatchNormGeometry> PlanBatchNorm(const DeviceTensor& x, const KernelAttrs& attrs) {
  const StatusOr<std::string> format_or = attrs.GetOr<std::string>("data_format", "NCHW");
  if (!format_or.ok()) return format_or.status();
  const std::string& format = format_or.value();
  if (format != "NCHW" && format != "NHWC" && format != "AnyLayout") {
    return KernelError(
        fmt::format("data_format '{}' is not one of NCHW, NHWC, AnyLayout (NCHW)", format));
  }
  if (x.rank() < 2 || x.rank() > 5) {
    return KernelError(
        fmt::format("x has shape {}, expected 2 to 5 dims", ShapeToString(x.shape())));
  }
  BatchNormGeometry g;
  g.channel_last = format == "NHWC";
  g.n = x.shape()[0];
  g.c = g.channel_last ? x.shape().back() : x.shape()[1];
  g.s = g.n * g.c == 0 ? 0 : x.numel() / g.n / g.c;
  return g;
}

// A per-channel vector: present (when required), of x's dtype, of shape [C].
Status CheckChannelVector(const CudaKernelCall& call, size_t index, const char* name, DType dtype,
                          int64_t c, bool required) {
  if (!call.has_input(index)) {
    if (required) return CheckPresent(call, index, name);
    return Status::Ok();
  }
  IRM_RETURN_IF_ERROR(CheckDType(call.input(index), name, {dtype}));
  return CheckShape(call.input(index), name, {c}, "the channels of x");
}

const void* OptionalData(const CudaKernelCall& call, size_t index) {
  return call.has_input(index) ? call.input(index).raw() : nullptr;
}

struct Mode {
  bool global_stats = false;
  double momentum = 0.9;  // rounded through float, as the CPU kernel reads it
  double epsilon = 1e-5;  // likewise
};

StatusOr<Mode> ReadMode(const KernelAttrs& attrs) {
  Mode mode;
  IRM_ASSIGN_OR_RETURN(const bool is_test, attrs.GetOr<bool>("is_test", false));
  IRM_ASSIGN_OR_RETURN(const bool use_global, attrs.GetOr<bool>("use_global_stats", false));
  IRM_ASSIGN_OR_RETURN(const bool trainable, attrs.GetOr<bool>("trainable_statistics", false));
  // Paddle's batch_norm_kernel.cc: test_mode = is_test && !trainable_statistics.
  mode.global_stats = (is_test && !trainable) || use_global;
  IRM_ASSIGN_OR_RETURN(const double momentum, attrs.GetOr<double>("momentum", 0.9));
  IRM_ASSIGN_OR_RETURN(const double epsilon, attrs.GetOr<double>("epsilon", 1e-5));
  mode.momentum = static_cast<float>(momentum);
  mode.epsilon = static_cast<float>(epsilon);
  return mode;
}

// batch_norm: (x, mean, variance, scale?, bias?) -> (out, mean_out, variance_out, saved_mean,
// saved_variance, reserve_space).
template <DType kDType>
Status RunBatchNorm(CudaKernelCall& call) {
  constexpr std::string_view kOp = "batch_norm";
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const DeviceTensor& x = call.input(0);
  IRM_RETURN_IF_ERROR(CheckDType(x, "x", {kDType}));
  IRM_ASSIGN_OR_RETURN(const BatchNormGeometry g, PlanBatchNorm(x, call.attrs));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 1, "mean", kDType, g.c, true));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 2, "variance", kDType, g.c, true));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 3, "scale", kDType, g.c, false));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 4, "bias", kDType, g.c, false));
  IRM_ASSIGN_OR_RETURN(const Mode mode, ReadMode(call.attrs));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const DeviceTensor& running_mean = call.input(1);
  const DeviceTensor& running_var = call.input(2);
  IRM_ASSIGN_OR_RETURN(DeviceTensor saved_mean, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  IRM_ASSIGN_OR_RETURN(DeviceTensor saved_var, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  DeviceTensor out, mean_out, variance_out;
  if (!mode.global_stats && g.n * g.s == 1) {
    // One element per channel: out = x, the running statistics untouched.
    IRM_ASSIGN_OR_RETURN(out, CopyOf(x, kOp));
    IRM_ASSIGN_OR_RETURN(mean_out, CopyOf(running_mean, kOp));
    IRM_ASSIGN_OR_RETURN(variance_out, CopyOf(running_var, kOp));
  } else {
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Uninitialized(kDType, x.shape(), kOp));
    const void* mean = running_mean.raw();
    const void* inv_std = running_var.raw();
    if (mode.global_stats) {
      IRM_ASSIGN_OR_RETURN(mean_out, CopyOf(running_mean, kOp));
      IRM_ASSIGN_OR_RETURN(variance_out, CopyOf(running_var, kOp));
    } else {
      IRM_ASSIGN_OR_RETURN(mean_out, DeviceTensor::Uninitialized(kDType, {g.c}, kOp));
      IRM_ASSIGN_OR_RETURN(variance_out, DeviceTensor::Uninitialized(kDType, {g.c}, kOp));
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchBatchNormStats(elem, g, mode.momentum, mode.epsilon, x.raw(), running_mean.raw(),
                               running_var.raw(), mean_out.raw(), variance_out.raw(),
                               saved_mean.raw(), saved_var.raw(), Stream()),
          kOp));
      mean = saved_mean.raw();
      inv_std = saved_var.raw();
    }
    IRM_RETURN_IF_ERROR(LaunchStatus(
        LaunchBatchNormApply(elem, g, mode.global_stats, mode.epsilon, x.raw(), mean, inv_std,
                             OptionalData(call, 3), OptionalData(call, 4), out.raw(), Stream()),
        kOp));
  }
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, std::move(mean_out));
  call.SetOutput(2, std::move(variance_out));
  call.SetOutput(3, std::move(saved_mean));
  call.SetOutput(4, std::move(saved_var));
  // reserve_space: cuDNN's workspace in Paddle; empty, as on the CPU.
  IRM_ASSIGN_OR_RETURN(DeviceTensor reserve, DeviceTensor::Zeros(kDType, {0}, kOp));
  call.SetOutput(5, std::move(reserve));
  return Status::Ok();
}

// batch_norm_grad's operands, in backward.yaml order.
enum BnGradIn : size_t {
  kX,
  kScale,
  kBias,
  kMeanOut,
  kVarianceOut,
  kSavedMean,
  kSavedVariance,
  kReserveSpace,
  kOutGrad,
};

// (x, scale?, bias?, mean_out?, variance_out?, saved_mean?, saved_variance?, reserve_space?,
// out_grad) -> (x_grad, scale_grad, bias_grad).
template <DType kDType>
Status RunBatchNormGrad(CudaKernelCall& call) {
  constexpr std::string_view kOp = "batch_norm_grad";
  IRM_RETURN_IF_ERROR(CheckPresent(call, kX, "x"));
  const DeviceTensor& x = call.input(kX);
  IRM_RETURN_IF_ERROR(CheckDType(x, "x", {kDType}));
  IRM_ASSIGN_OR_RETURN(const BatchNormGeometry g, PlanBatchNorm(x, call.attrs));
  IRM_ASSIGN_OR_RETURN(const Mode mode, ReadMode(call.attrs));
  IRM_RETURN_IF_ERROR(CheckPresent(call, kOutGrad, "out_grad"));
  const DeviceTensor& out_grad = call.input(kOutGrad);
  IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {kDType}));
  IRM_RETURN_IF_ERROR(CheckShape(out_grad, "out_grad", x.shape(), "x's shape"));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kScale, "scale", kDType, g.c, false));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kBias, "bias", kDType, g.c, false));
  const bool global = mode.global_stats;
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kMeanOut, "mean_out", kDType, g.c, global));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kVarianceOut, "variance_out", kDType, g.c, global));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kSavedMean, "saved_mean", kDType, g.c, !global));
  IRM_RETURN_IF_ERROR(
      CheckChannelVector(call, kSavedVariance, "saved_variance", kDType, g.c, !global));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  IRM_ASSIGN_OR_RETURN(DeviceTensor dy_xhat_sum, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  IRM_ASSIGN_OR_RETURN(DeviceTensor dy_sum, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  DeviceTensor x_grad;
  if (!global && g.n * g.s == 1) {
    // One element per channel: x_grad = out_grad, the sums stay zero (as the CPU's).
    IRM_ASSIGN_OR_RETURN(x_grad, CopyOf(out_grad, kOp));
  } else {
    IRM_ASSIGN_OR_RETURN(x_grad, DeviceTensor::Uninitialized(kDType, x.shape(), kOp));
    // Global statistics: mean_out and variance_out's inverse std; training: the saved ones.
    const void* mean = global ? call.input(kMeanOut).raw() : call.input(kSavedMean).raw();
    const void* inv_std =
        global ? call.input(kVarianceOut).raw() : call.input(kSavedVariance).raw();
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchBatchNormGrad(elem, g, global, mode.epsilon, x.raw(), mean, inv_std,
                                         OptionalData(call, kScale), out_grad.raw(), x_grad.raw(),
                                         dy_xhat_sum.raw(), dy_sum.raw(), Stream()),
                     kOp));
  }
  call.SetOutput(0, std::move(x_grad));
  call.SetOutput(1, std::move(dy_xhat_sum));
  call.SetOutput(2, std::move(dy_sum));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaBatchNormKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm", DType::kFloat32,
                                        {&RunBatchNorm<DType::kFloat32>, {3, 5, 6}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm", DType::kFloat64,
                                        {&RunBatchNorm<DType::kFloat64>, {3, 5, 6}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm_grad", DType::kFloat32,
                                        {&RunBatchNormGrad<DType::kFloat32>, {9, 9, 3}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm_grad", DType::kFloat64,
                                        {&RunBatchNormGrad<DType::kFloat64>, {9, 9, 3}}));
  // As the CPU kernel: scale, bias, the running and the saved statistics and reserve_space may be
  // absent (the kernel checks that the mode's statistics are there).
  registry.AllowAbsentInputs("batch_norm_grad", {1, 2, 3, 4, 5, 6, 7});
  return Status::Ok();
}

}  // namespace irm::rt::cuda
