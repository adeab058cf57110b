// conv2d's plan (conv_plan.h): the attributes resolved as Paddle's conv kernels do
// (paddle/phi/kernels/cpu/conv_util.h, UpdatePaddingAndDilation; conv.cc says how).
#include "reference_runtime/kernels/conv_plan.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/conv_net_plan.h"

namespace irm::rt::plan {
namespace {

std::string PairToString(const HeightWidth& pair) {
  return ShapeToString(std::vector<int64_t>(pair.begin(), pair.end()));
}

}  // namespace

StatusOr<ConvPlan> PlanConv(const Operand& input, const Operand& filter, const KernelAttrs& attrs) {
  ConvPlan p;
  IRM_ASSIGN_OR_RETURN(p.channel_last, ReadChannelLast(attrs));
  if (input.rank() != 4) {
    return KernelError(fmt::format("input has shape {}, expected 4 dims ({})",
                                   ShapeToString(input.shape()), p.channel_last ? "NHWC" : "NCHW"));
  }
  if (filter.rank() != 4) {
    return KernelError(fmt::format("filter has shape {}, expected 4 dims [O, C / groups, KH, KW]",
                                   ShapeToString(filter.shape())));
  }
  const std::vector<int64_t>& in = input.shape();
  p.n = in[0];
  p.c = p.channel_last ? in[3] : in[1];
  p.h = p.channel_last ? in[1] : in[2];
  p.w = p.channel_last ? in[2] : in[3];
  p.o = filter.dim(0);
  p.kh = filter.dim(2);
  p.kw = filter.dim(3);
  IRM_ASSIGN_OR_RETURN(p.groups, attrs.GetOr<int64_t>("groups", 1));
  if (p.groups < 1 || p.c % p.groups != 0 || p.o % p.groups != 0) {
    return KernelError(fmt::format(
        "groups {} must be at least 1 and divide the input channels ({}) and the filter's "
        "output channels ({})",
        p.groups, p.c, p.o));
  }
  if (filter.dim(1) != p.c_per_group()) {
    return KernelError(
        fmt::format("filter has shape {}: dim 1 must be the input channels / groups = {} / {} = {}",
                    ShapeToString(filter.shape()), p.c, p.groups, p.c_per_group()));
  }
  if (p.kh < 1 || p.kw < 1) {
    return KernelError(
        fmt::format("filter has shape {}: an empty kernel window", ShapeToString(filter.shape())));
  }

  IRM_ASSIGN_OR_RETURN(const HeightWidth strides, ReadHeightWidth(attrs, "strides", {1, 1}));
  IRM_ASSIGN_OR_RETURN(HeightWidth dilations, ReadHeightWidth(attrs, "dilations", {1, 1}));
  IRM_ASSIGN_OR_RETURN(const PaddingAttrs padding, ReadPaddingAttrs(attrs));
  for (size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1 || dilations[d] < 1) {
      return KernelError(fmt::format("strides {} and dilations {} must be at least 1",
                                     PairToString(strides), PairToString(dilations)));
    }
  }
  IRM_ASSIGN_OR_RETURN(Paddings pads, ExpandPaddings(padding.paddings));
  const HeightWidth sizes = {p.h, p.w};
  const HeightWidth kernel = {p.kh, p.kw};
  IRM_RETURN_IF_ERROR(ApplyPaddingAlgorithm(padding.algorithm, sizes, strides, kernel, pads));
  if (padding.algorithm == "SAME")
    dilations = {1, 1};  // conv_util.h: SAME forces the dilations to 1
  for (int64_t pad : pads) {
    if (pad < 0)
      return KernelError(
          fmt::format("paddings {} has a negative value", ShapeToString(padding.paddings)));
  }
  HeightWidth outs{};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t window = dilations[d] * (kernel[d] - 1) + 1;
    const int64_t padded = sizes[d] + pads[2 * d] + pads[2 * d + 1];
    outs[d] = padded < window ? 0 : (padded - window) / strides[d] + 1;
    if (outs[d] < 1) {
      return KernelError(fmt::format(
          "the output is empty along {}: input size {} padded by ({}, {}) is smaller than the "
          "dilated kernel ({})",
          d == 0 ? "height" : "width", sizes[d], pads[2 * d], pads[2 * d + 1], window));
    }
  }
  p.dil_h = dilations[0];
  p.dil_w = dilations[1];
  SetOutputPlane(strides, pads, outs, p);
  return p;
}

}  // namespace irm::rt::plan
