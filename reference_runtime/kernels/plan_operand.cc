// The device-independent view of a kernel's operand (plan_operand.h).
#include "reference_runtime/kernels/plan_operand.h"

#include <fmt/format.h>

#include "reference_runtime/kernel.h"

namespace irm::rt::plan {

StatusOr<int> NormalizeAxis(int64_t axis, const Operand& t, std::string_view kernel,
                            std::string_view what, std::string_view operand) {
  const int64_t rank = t.rank();
  if (axis < -rank || axis >= rank) {
    return KernelError(fmt::format("{}: {} {} is out of range for {} {}", kernel, what, axis,
                                   operand, t.Describe()));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace irm::rt::plan
