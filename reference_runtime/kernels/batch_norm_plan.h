// The device-independent half of batch_norm and batch_norm_grad: x seen as [n, c, s] around its
// channel dim, the mode (training or global statistics, momentum, epsilon) and the checks of the
// per-channel vectors and out_grad. The CPU kernels (batch_norm.cc, which says what each output
// holds) and the CUDA kernels (cuda/batch_norm_kernels.cc) both plan with these and only compute
// their own way, so that the two check the same things in the same order with the same words.
//
// The checks of the call are templates over the call type: CheckPresent, CheckDType and CheckShape
// are each device's own (kernels/axes.h for Tensor and KernelCall, cuda/cuda_kernel.h for
// DeviceTensor and CudaKernelCall; same wording), found by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/conv_net_geometry.h"
#include "reference_runtime/kernels/conv_net_plan.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// BatchNormPlan (x viewed as [n, c, s] around its channel dim) is in conv_net_geometry.h.

// data_format, then x of 2 to 5 dims.
StatusOr<BatchNormPlan> PlanBatchNorm(const Operand& x, const KernelAttrs& attrs);

// x (input 0): present and of `dtype`; then its plan.
template <typename Call>
StatusOr<BatchNormPlan> PlanBatchNormCall(const Call& call, DType dtype) {
  IRM_RETURN_IF_ERROR(CheckConvNetX(call, dtype));
  return PlanBatchNorm(call.input(0), call.attrs);
}

// The attributes as read (momentum and epsilon as given: each kernel rounds them through float).
struct BatchNormMode {
  bool global_stats = false;  // normalise by the running statistics, leave them unchanged
  double momentum = 0.9;
  double epsilon = 1e-5;
};
StatusOr<BatchNormMode> ReadBatchNormMode(const KernelAttrs& attrs);

// A per-channel vector (input `index`): present when `required`, and when present of `dtype` and
// of shape [c].
template <typename Call>
Status CheckChannelVector(const Call& call, size_t index, std::string_view name, DType dtype,
                          int64_t c, bool required) {
  if (!call.has_input(index)) {
    if (required) return CheckPresent(call, index, name);
    return Status::Ok();
  }
  IRM_RETURN_IF_ERROR(CheckDType(call.input(index), name, {dtype}));
  return CheckShape(call.input(index), name, {c}, "the channels of x");
}

// batch_norm's mean and variance (inputs 1, 2) and scale and bias (3, 4, optional).
template <typename Call>
Status CheckBatchNormChannels(const Call& call, DType dtype, const BatchNormPlan& plan) {
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 1, "mean", dtype, plan.c, true));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 2, "variance", dtype, plan.c, true));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, 3, "scale", dtype, plan.c, false));
  return CheckChannelVector(call, 4, "bias", dtype, plan.c, false);
}

// batch_norm_grad's operands, in backward.yaml order.
enum BatchNormGradIn : size_t {
  kBnX,
  kBnScale,
  kBnBias,
  kBnMeanOut,
  kBnVarianceOut,
  kBnSavedMean,
  kBnSavedVariance,
  kBnReserveSpace,
  kBnOutGrad,
};

// batch_norm_grad's out_grad (x's dtype and shape), scale and bias, and the statistics its mode
// reads: mean_out and variance_out with global statistics, saved_mean and saved_variance in
// training (the others may be absent).
template <typename Call>
Status CheckBatchNormGradOperands(const Call& call, DType dtype, const BatchNormPlan& plan,
                                  const BatchNormMode& mode) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, kBnOutGrad, "out_grad"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(kBnOutGrad), "out_grad", {dtype}));
  IRM_RETURN_IF_ERROR(
      CheckShape(call.input(kBnOutGrad), "out_grad", call.input(kBnX).shape(), "x's shape"));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kBnScale, "scale", dtype, plan.c, false));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kBnBias, "bias", dtype, plan.c, false));
  const bool global = mode.global_stats;
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kBnMeanOut, "mean_out", dtype, plan.c, global));
  IRM_RETURN_IF_ERROR(
      CheckChannelVector(call, kBnVarianceOut, "variance_out", dtype, plan.c, global));
  IRM_RETURN_IF_ERROR(CheckChannelVector(call, kBnSavedMean, "saved_mean", dtype, plan.c, !global));
  return CheckChannelVector(call, kBnSavedVariance, "saved_variance", dtype, plan.c, !global);
}

}  // namespace irm::rt::plan
