// The device-independent half of pool2d and pool2d_grad: read the attributes, resolve kernel size,
// strides and paddings against x's plane, and check the grad's out and out_grad. The CPU kernels
// (pool.cc, which says how Paddle resolves each attribute and lays the windows out) and the CUDA
// kernels (cuda/pool_kernels.cc) both plan with these and only pool their own way, so that the two
// check the same things in the same order with the same words.
//
// The checks of the call are templates over the call type: CheckPresent, CheckDType and CheckShape
// are each device's own (kernels/axes.h for Tensor and KernelCall, cuda/cuda_kernel.h for
// DeviceTensor and CudaKernelCall; same wording), found by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/conv_net_geometry.h"
#include "reference_runtime/kernels/conv_net_plan.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// data_format, pooling_type, exclusive, adaptive, global_pooling, ceil_mode; x of 4 dims; then
// kernel_size, strides, paddings and padding_algorithm resolved to the output plane.
StatusOr<PoolPlan> PlanPool(const Operand& x, const KernelAttrs& attrs);

// x (input 0): present and of `dtype`; then its plan.
template <typename Call>
StatusOr<PoolPlan> PlanPoolCall(const Call& call, DType dtype) {
  IRM_RETURN_IF_ERROR(CheckConvNetX(call, dtype));
  return PlanPool(call.input(0), call.attrs);
}

// pool2d_grad's out (input 1) and out_grad (input 2): present, of `dtype`, of the output's shape.
template <typename Call>
Status CheckPoolGradOperands(const Call& call, DType dtype, const PoolPlan& plan) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 1, "out"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 2, "out_grad"));
  const std::vector<int64_t> out_shape = plan.out_shape();
  for (size_t k = 1; k < 3; ++k) {
    const std::string_view name = k == 1 ? "out" : "out_grad";
    IRM_RETURN_IF_ERROR(CheckDType(call.input(k), name, {dtype}));
    IRM_RETURN_IF_ERROR(CheckShape(call.input(k), name, out_shape, "the shape of pool2d's output"));
  }
  return Status::Ok();
}

}  // namespace irm::rt::plan
