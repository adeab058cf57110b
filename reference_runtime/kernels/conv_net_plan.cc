// The conv-net plans' data_format, (height, width) pairs and paddings (conv_net_plan.h).
#include "reference_runtime/kernels/conv_net_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

namespace irm::rt::plan {

StatusOr<bool> ReadChannelLast(const KernelAttrs& attrs) {
  // Read without a moved-from copy: g++ 12 warns (falsely) about the short string's bytes.
  const StatusOr<std::string> format_or = attrs.GetOr<std::string>("data_format", "NCHW");
  if (!format_or.ok()) return format_or.status();
  const std::string& format = format_or.value();
  if (format != "NCHW" && format != "NHWC" && format != "AnyLayout") {
    return KernelError(
        fmt::format("data_format '{}' is not one of NCHW, NHWC, AnyLayout (NCHW)", format));
  }
  return format == "NHWC";
}

StatusOr<HeightWidth> ReadHeightWidth(const KernelAttrs& attrs, const char* name,
                                      std::vector<int64_t> fallback) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetOr(name, std::move(fallback)));
  if (v.size() != 2) {
    return KernelError(fmt::format("{} has {} values, expected 2 (height, width)", name, v.size()));
  }
  return HeightWidth{v[0], v[1]};
}

StatusOr<PaddingAttrs> ReadPaddingAttrs(const KernelAttrs& attrs) {
  PaddingAttrs a;
  IRM_ASSIGN_OR_RETURN(a.paddings, attrs.GetOr<std::vector<int64_t>>("paddings", {0, 0}));
  // Read without a moved-from copy, as data_format above.
  const StatusOr<std::string> algorithm_or =
      attrs.GetOr<std::string>("padding_algorithm", "EXPLICIT");
  if (!algorithm_or.ok()) return algorithm_or.status();
  a.algorithm = algorithm_or.value();
  return a;
}

StatusOr<Paddings> ExpandPaddings(const std::vector<int64_t>& paddings) {
  if (paddings.size() == 2) return Paddings{paddings[0], paddings[0], paddings[1], paddings[1]};
  if (paddings.size() == 4) return Paddings{paddings[0], paddings[1], paddings[2], paddings[3]};
  return KernelError(fmt::format("paddings has {} values, expected 2 or 4", paddings.size()));
}

Status ApplyPaddingAlgorithm(std::string_view algorithm, const HeightWidth& sizes,
                             const HeightWidth& strides, const HeightWidth& kernel,
                             Paddings& pads) {
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
  return Status::Ok();
}

}  // namespace irm::rt::plan
