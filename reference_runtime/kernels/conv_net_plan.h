// What the plans of the conv-net kernels (pool_plan.h, batch_norm_plan.h; conv2d's reads the same
// data_format) share, for the CPU and CUDA kernels alike: the data_format attribute and the checks
// of x.
//
// CheckPresent and CheckDType are each device's own (kernels/axes.h for Tensor and KernelCall,
// cuda/cuda_kernel.h for DeviceTensor and CudaKernelCall; same wording), found by
// argument-dependent lookup.
#pragma once

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"

namespace irm::rt::plan {

// data_format NCHW (the default), NHWC or AnyLayout (read as NCHW): whether the channels are last,
// or the error "data_format 'X' is not one of NCHW, NHWC, AnyLayout (NCHW)".
StatusOr<bool> ReadChannelLast(const KernelAttrs& attrs);

// x (input 0) is present and of `dtype`.
template <typename Call>
Status CheckConvNetX(const Call& call, DType dtype) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  return CheckDType(call.input(0), "x", {dtype});
}

}  // namespace irm::rt::plan
