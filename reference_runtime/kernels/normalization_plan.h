// The device-independent half of layer_norm and layer_norm_grad: x seen as rows × n around
// begin_norm_axis, epsilon, the statistics' dtype, and the checks of scale, bias, mean, variance
// and out_grad. The CPU kernels (normalization.cc, which says how Paddle lays the rows out) and
// the CUDA kernels (cuda/normalization_kernels.cc) both plan with these and only compute their
// own way, so that the two check the same things in the same order with the same words.
//
// The checks are templates over the call and tensor types: CheckPresent, CheckDType and
// CheckShape are each device's own (kernels/axes.h for Tensor and KernelCall, cuda/cuda_kernel.h
// for DeviceTensor and CudaKernelCall; same wording), found by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

struct LayerNormPlan {
  int64_t rows = 1;
  int64_t n = 1;
  std::string why_n;     // how n was found, for messages about scale and bias
  std::string why_rows;  // how rows was found, for messages about mean and variance
  double epsilon = 1e-5;
  DType stat_dtype = DType::kFloat32;  // mean and variance: float64 for float64 x, else float32
};
// begin_norm_axis (default 1) must be a dim of x; then epsilon (default 1e-5).
StatusOr<LayerNormPlan> PlanLayerNorm(const Operand& x, const KernelAttrs& attrs);

// float16 or bfloat16.
bool IsHalfFloat(DType dtype);

// scale (input 1) and bias (input 2), when given: x's dtype (or float32 for 16-bit x), shape [n].
template <typename Call>
Status CheckLayerNormParams(const Call& call, DType x_dtype, const LayerNormPlan& plan) {
  const std::pair<size_t, std::string_view> params[] = {{1, "scale"}, {2, "bias"}};
  for (const auto& param : params) {
    if (!call.has_input(param.first)) continue;
    const auto& p = call.input(param.first);
    if (IsHalfFloat(x_dtype)) {
      IRM_RETURN_IF_ERROR(CheckDType(p, param.second, {x_dtype, DType::kFloat32}));
    } else {
      IRM_RETURN_IF_ERROR(CheckDType(p, param.second, {x_dtype}));
    }
    IRM_RETURN_IF_ERROR(CheckShape(p, param.second, {plan.n}, plan.why_n));
  }
  return Status::Ok();
}

// layer_norm_grad's required inputs: x (0), mean (3), variance (4) and out_grad (5).
template <typename Call>
Status CheckLayerNormGradPresent(const Call& call) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 3, "mean"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 4, "variance"));
  return CheckPresent(call, 5, "out_grad");
}

// layer_norm_grad's mean and variance (the statistics' dtype, shape [rows]) and out_grad (x's
// dtype and shape).
template <typename TensorT>
Status CheckLayerNormGradStats(const TensorT& x, const TensorT& mean, const TensorT& variance,
                               const TensorT& out_grad, const LayerNormPlan& plan) {
  IRM_RETURN_IF_ERROR(CheckDType(mean, "mean", {plan.stat_dtype}));
  IRM_RETURN_IF_ERROR(CheckShape(mean, "mean", {plan.rows}, plan.why_rows));
  IRM_RETURN_IF_ERROR(CheckDType(variance, "variance", {plan.stat_dtype}));
  IRM_RETURN_IF_ERROR(CheckShape(variance, "variance", {plan.rows}, plan.why_rows));
  IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {x.dtype()}));
  return CheckShape(out_grad, "out_grad", x.shape(), "the shape of x");
}

}  // namespace irm::rt::plan
