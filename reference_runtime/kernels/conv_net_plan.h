// What the plans of the conv-net kernels (conv_plan.h, pool_plan.h, batch_norm_plan.h) share, for
// the CPU and CUDA kernels alike: the data_format attribute, the (height, width) pairs, the
// paddings as Paddle resolves them for conv2d and pool2d alike, and the checks of x.
//
// CheckPresent and CheckDType are each device's own (kernels/axes.h for Tensor and KernelCall,
// cuda/cuda_kernel.h for DeviceTensor and CudaKernelCall; same wording), found by
// argument-dependent lookup.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"

namespace irm::rt::plan {

// data_format NCHW (the default), NHWC or AnyLayout (read as NCHW): whether the channels are last,
// or the error "data_format 'X' is not one of NCHW, NHWC, AnyLayout (NCHW)".
StatusOr<bool> ReadChannelLast(const KernelAttrs& attrs);

// Height and width.
using HeightWidth = std::array<int64_t, 2>;

// The attribute `name` (default `fallback`) of exactly 2 values, or the error
// "<name> has N values, expected 2 (height, width)".
StatusOr<HeightWidth> ReadHeightWidth(const KernelAttrs& attrs, const char* name,
                                      std::vector<int64_t> fallback);

// Top, bottom, left, right.
using Paddings = std::array<int64_t, 4>;

// The paddings attribute (default [0, 0]) and padding_algorithm (default EXPLICIT), as given.
struct PaddingAttrs {
  std::vector<int64_t> paddings;
  std::string algorithm;
};
StatusOr<PaddingAttrs> ReadPaddingAttrs(const KernelAttrs& attrs);

// The paddings attribute as [top, bottom, left, right]: 2 values are each repeated (the same
// before and after), 4 are taken as they are (Paddle's UpdatePadding / UpdatePaddingAndDilation,
// paddle/phi/kernels/funcs/pooling.h and cpu/conv_util.h); else the error
// "paddings has N values, expected 2 or 4".
StatusOr<Paddings> ExpandPaddings(const std::vector<int64_t>& paddings);

// padding_algorithm applied to `pads` (strides already checked to be at least 1): SAME pads the
// plane `sizes` to an output of ceil(size / stride) for a window of `kernel`, the low side getting
// the smaller half; VALID pads nothing; EXPLICIT keeps them; anything else is the error
// "padding_algorithm 'X' is not one of EXPLICIT, SAME, VALID". (conv2d also forces its dilations
// to 1 under SAME; that is the caller's.)
Status ApplyPaddingAlgorithm(std::string_view algorithm, const HeightWidth& sizes,
                             const HeightWidth& strides, const HeightWidth& kernel, Paddings& pads);

// The resolved strides, top and left paddings (bottom and right only shape the output) and
// output plane into a plan (ConvPlan, PoolPlan).
template <typename Plan>
void SetOutputPlane(const HeightWidth& strides, const Paddings& pads, const HeightWidth& outs,
                    Plan& p) {
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  p.pad_top = pads[0];
  p.pad_left = pads[2];
  p.oh = outs[0];
  p.ow = outs[1];
}

// x (input 0) is present and of `dtype`.
template <typename Call>
Status CheckConvNetX(const Call& call, DType dtype) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  return CheckDType(call.input(0), "x", {dtype});
}

}  // namespace irm::rt::plan
