// The device-independent half of conv2d and conv2d_grad: read the attributes, check the input and
// filter shapes and resolve groups, strides, dilations and paddings to the output plane, and check
// the grad's out_grad. The CPU kernels (conv.cc, which says how Paddle resolves each attribute) and
// the CUDA kernels (cuda/conv_kernels.cc) both plan with these and only compute their own way, so
// that the two check the same things in the same order with the same words. The plan itself
// (ConvPlan) is in conv_net_geometry.h, where the device code reads it too.
//
// The checks of the call are templates over the call type: CheckPresent, CheckDType and CheckShape
// are each device's own (kernels/axes.h for Tensor and KernelCall, cuda/cuda_kernel.h for
// DeviceTensor and CudaKernelCall; same wording), found by argument-dependent lookup.
#pragma once

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/conv_net_geometry.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// data_format; input and filter of 4 dims; groups against both; then strides, dilations, paddings
// and padding_algorithm resolved to the output plane.
StatusOr<ConvPlan> PlanConv(const Operand& input, const Operand& filter, const KernelAttrs& attrs);

// input and filter (inputs 0, 1): present and of `dtype`; then their plan.
template <typename Call>
StatusOr<ConvPlan> PlanConvCall(const Call& call, DType dtype) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "input"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 1, "filter"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(0), "input", {dtype}));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(1), "filter", {dtype}));
  return PlanConv(call.input(0), call.input(1), call.attrs);
}

// conv2d_grad's out_grad (input 2): present, of `dtype`, of the output's shape.
template <typename Call>
Status CheckConvOutGrad(const Call& call, DType dtype, const ConvPlan& plan) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 2, "out_grad"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(2), "out_grad", {dtype}));
  return CheckShape(call.input(2), "out_grad", plan.out_shape(), "the shape of conv2d's output");
}

}  // namespace irm::rt::plan
