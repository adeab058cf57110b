// The conv-net plans' data_format attribute (conv_net_plan.h).
#include "reference_runtime/kernels/conv_net_plan.h"

#include <fmt/format.h>

#include <string>

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

}  // namespace irm::rt::plan
