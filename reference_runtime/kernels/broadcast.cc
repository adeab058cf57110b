// Broadcast shapes and strides (broadcast.h).
#include "reference_runtime/kernels/broadcast.h"

#include <fmt/format.h>

#include "reference_runtime/kernel.h"

namespace irm::rt {

StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& y,
                                               std::string_view x_name, std::string_view y_name) {
  const size_t rank = std::max(x.size(), y.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dim i counted from the right; a missing dim is 1.
    const int64_t a = i < x.size() ? x[x.size() - 1 - i] : 1;
    const int64_t b = i < y.size() ? y[y.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1) {
      return KernelError(fmt::format("{} {} and {} {} do not broadcast", x_name, ShapeToString(x),
                                     y_name, ShapeToString(y)));
    }
    out[rank - 1 - i] = a == 1 ? b : a;
  }
  return out;
}

bool BroadcastsTo(const std::vector<int64_t>& shape, const std::vector<int64_t>& target) {
  if (shape.size() > target.size()) return false;
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != target[lead + i] && shape[i] != 1) return false;
  }
  return true;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t lead = out_shape.size() - shape.size();
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[lead + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace irm::rt
