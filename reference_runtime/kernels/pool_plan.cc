// pool2d's plan (pool_plan.h): the attributes resolved as Paddle's Pool2DInferMeta and
// UpdatePadding / UpdateKernelSize do (pool.cc says how).
#include "reference_runtime/kernels/pool_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "reference_runtime/kernels/conv_net_plan.h"

namespace irm::rt::plan {
namespace {

// Height and width.
using Pair = std::array<int64_t, 2>;

StatusOr<Pair> PairOf(const KernelAttrs& attrs, const char* name, std::vector<int64_t> fallback) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetOr(name, std::move(fallback)));
  if (v.size() != 2) {
    return KernelError(fmt::format("{} has {} values, expected 2 (height, width)", name, v.size()));
  }
  return Pair{v[0], v[1]};
}

}  // namespace

std::vector<int64_t> PoolPlan::out_shape() const {
  return channel_last ? std::vector<int64_t>{n, oh, ow, c} : std::vector<int64_t>{n, c, oh, ow};
}

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

  IRM_ASSIGN_OR_RETURN(Pair kernel, PairOf(attrs, "kernel_size", {}));
  IRM_ASSIGN_OR_RETURN(const Pair strides, PairOf(attrs, "strides", {1, 1}));
  IRM_ASSIGN_OR_RETURN(const std::vector<int64_t> paddings,
                       attrs.GetOr<std::vector<int64_t>>("paddings", {0, 0}));
  const StatusOr<std::string> algorithm_or =
      attrs.GetOr<std::string>("padding_algorithm", "EXPLICIT");
  if (!algorithm_or.ok()) return algorithm_or.status();
  const std::string& algorithm = algorithm_or.value();
  std::array<int64_t, 4> pads{};  // top, bottom, left, right
  if (paddings.size() == 2) {
    pads = {paddings[0], paddings[0], paddings[1], paddings[1]};
  } else if (paddings.size() == 4) {
    pads = {paddings[0], paddings[1], paddings[2], paddings[3]};
  } else {
    return KernelError(fmt::format("paddings has {} values, expected 2 or 4", paddings.size()));
  }
  const std::array<int64_t, 2> sizes = {p.h, p.w};
  for (size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1) {
      return KernelError(
          fmt::format("strides [{}, {}] must be at least 1", strides[0], strides[1]));
    }
  }
  if (algorithm == "SAME") {
    for (size_t d = 0; d < 2; ++d) {
      const int64_t out = (sizes[d] + strides[d] - 1) / strides[d];
      const int64_t sum = std::max<int64_t>((out - 1) * strides[d] + kernel[d] - sizes[d], 0);
      pads[2 * d] = sum / 2;
      pads[2 * d + 1] = sum - sum / 2;
    }
  } else if (algorithm == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (algorithm != "EXPLICIT") {
    return KernelError(
        fmt::format("padding_algorithm '{}' is not one of EXPLICIT, SAME, VALID", algorithm));
  }
  if (global || p.adaptive) pads = {0, 0, 0, 0};
  if (global) kernel = sizes;
  for (int64_t pad : pads) {
    if (pad < 0) return KernelError("paddings has a negative value");
  }
  std::array<int64_t, 2> outs{};
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
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  p.pad_top = pads[0];
  p.pad_left = pads[2];
  p.oh = outs[0];
  p.ow = outs[1];
  return p;
}

}  // namespace irm::rt::plan
