// pool2d's plan (pool_plan.h): the attributes resolved as Paddle's Pool2DInferMeta and
// UpdatePadding / UpdateKernelSize do (pool.cc says how).
#include "reference_runtime/kernels/pool_plan.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "reference_runtime/kernels/conv_net_plan.h"

namespace irm::rt::plan {

StatusOr<PoolPlan> PlanPool(const Operand& x, const KernelAttrs& attrs) {
  PoolPlan p;
  IRM_ASSIGN_OR_RETURN(p.channel_last, ReadChannelLast(attrs));
  const StatusOr<std::string> type_or = attrs.GetOr<std::string>("pooling_type", "");
  if (!type_or.ok()) return type_or.status();
  const std::string& type = type_or.value();
  if (type != "max" && type != "avg") {
    return KernelError(fmt::format("pooling_type '{}' is not one of max, avg", type));
  }
  p.max = type == "max";
  IRM_ASSIGN_OR_RETURN(p.exclusive, attrs.GetOr<bool>("exclusive", true));
  IRM_ASSIGN_OR_RETURN(p.adaptive, attrs.GetOr<bool>("adaptive", false));
  IRM_ASSIGN_OR_RETURN(const bool global, attrs.GetOr<bool>("global_pooling", false));
  IRM_ASSIGN_OR_RETURN(const bool ceil_mode, attrs.GetOr<bool>("ceil_mode", false));
  if (p.max && p.adaptive) {
    return KernelError(
        "adaptive max pooling is max_pool2d_with_index in Paddle, not pool2d with pooling_type "
        "'max'");
  }
  if (x.rank() != 4) {
    return KernelError(fmt::format("x has shape {}, expected 4 dims ({})", ShapeToString(x.shape()),
                                   p.channel_last ? "NHWC" : "NCHW"));
  }
  const std::vector<int64_t>& in = x.shape();
  p.n = in[0];
  p.c = p.channel_last ? in[3] : in[1];
  p.h = p.channel_last ? in[1] : in[2];
  p.w = p.channel_last ? in[2] : in[3];

  IRM_ASSIGN_OR_RETURN(HeightWidth kernel, ReadHeightWidth(attrs, "kernel_size", {}));
  IRM_ASSIGN_OR_RETURN(const HeightWidth strides, ReadHeightWidth(attrs, "strides", {1, 1}));
  IRM_ASSIGN_OR_RETURN(const PaddingAttrs padding, ReadPaddingAttrs(attrs));
  IRM_ASSIGN_OR_RETURN(Paddings pads, ExpandPaddings(padding.paddings));
  const HeightWidth sizes = {p.h, p.w};
  for (size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1) {
      return KernelError(
          fmt::format("strides [{}, {}] must be at least 1", strides[0], strides[1]));
    }
  }
  IRM_RETURN_IF_ERROR(ApplyPaddingAlgorithm(padding.algorithm, sizes, strides, kernel, pads));
  if (global || p.adaptive) pads = {0, 0, 0, 0};
  if (global) kernel = sizes;
  for (int64_t pad : pads) {
    if (pad < 0) return KernelError("paddings has a negative value");
  }
  HeightWidth outs{};
  for (size_t d = 0; d < 2; ++d) {
    if (kernel[d] < 1) {
      return KernelError(
          fmt::format("kernel_size [{}, {}] must be at least 1", kernel[0], kernel[1]));
    }
    if (p.adaptive) {
      outs[d] = kernel[d];
    } else {
      const int64_t span = sizes[d] - kernel[d] + pads[2 * d] + pads[2 * d + 1];
      outs[d] = (span + (ceil_mode ? strides[d] - 1 : 0)) / strides[d] + 1;
      if (span < 0) outs[d] = 0;
    }
    if (outs[d] < 1) {
      return KernelError(fmt::format(
          "the output is empty along {}: input size {} padded by ({}, {}) is smaller "
          "than the kernel ({})",
          d == 0 ? "height" : "width", sizes[d], pads[2 * d], pads[2 * d + 1], kernel[d]));
    }
  }
  p.kh = kernel[0];
  p.kw = kernel[1];
  SetOutputPlane(strides, pads, outs, p);
  return p;
}

}  // namespace irm::rt::plan
