// Axis and shape bookkeeping for the reduction, softmax and normalization kernels (axes.h).
#include "reference_runtime/kernels/axes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>

namespace irm::rt {

StatusOr<int> NormalizeAxis(int64_t axis, const std::vector<int64_t>& shape,
                            std::string_view operand) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t span = rank == 0 ? 1 : rank;
  if (axis < -span || axis >= span) {
    return KernelError(fmt::format("axis {} is out of range for {} of shape {} (valid: {} to {})",
                                   axis, operand, ShapeToString(shape), -span, span - 1));
  }
  if (rank == 0) return 0;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

StridedWalk::StridedWalk(std::vector<int64_t> dims, std::vector<int64_t> strides)
    : dims_(std::move(dims)), strides_(std::move(strides)), index_(dims_.size(), 0) {}

void StridedWalk::Next() {
  for (size_t d = dims_.size(); d-- > 0;) {
    offset_ += strides_[d];
    if (++index_[d] < dims_[d]) return;
    offset_ -= strides_[d] * dims_[d];
    index_[d] = 0;
  }
}

void StridedWalk::Reset() {
  std::fill(index_.begin(), index_.end(), 0);
  offset_ = 0;
}

StridedWalk ReducePlan::BroadcastWalk() const {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  const std::vector<int64_t> out_strides = ContiguousStrides(kept_dims);
  size_t kept = 0;
  size_t red = 0;
  for (bool r : reduced) {
    if (r) {
      dims.push_back(reduced_dims[red++]);
      strides.push_back(0);
    } else {
      dims.push_back(kept_dims[kept]);
      strides.push_back(out_strides[kept]);
      ++kept;
    }
  }
  return StridedWalk(std::move(dims), std::move(strides));
}

StatusOr<ReducePlan> PlanReduce(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes,
                                bool keepdim, bool reduce_all, std::string_view operand) {
  ReducePlan plan;
  const size_t rank = shape.size();
  plan.reduced.assign(rank, axes.empty() || reduce_all);
  std::vector<bool> named(rank == 0 ? 1 : rank, false);
  for (int64_t axis : axes) {
    IRM_ASSIGN_OR_RETURN(const int d, NormalizeAxis(axis, shape, operand));
    if (named[static_cast<size_t>(d)]) {
      return KernelError(fmt::format("axis [{}] names dim {} twice for {} of shape {}",
                                     fmt::join(axes, ", "), d, operand, ShapeToString(shape)));
    }
    named[static_cast<size_t>(d)] = true;
    if (rank > 0) plan.reduced[static_cast<size_t>(d)] = true;
  }
  const std::vector<int64_t> strides = ContiguousStrides(shape);
  for (size_t d = 0; d < rank; ++d) {
    if (plan.reduced[d]) {
      plan.reduced_dims.push_back(shape[d]);
      plan.reduced_strides.push_back(strides[d]);
      plan.reduce_count *= shape[d];
      plan.keep_shape.push_back(1);
    } else {
      plan.kept_dims.push_back(shape[d]);
      plan.kept_strides.push_back(strides[d]);
      plan.out_numel *= shape[d];
      plan.keep_shape.push_back(shape[d]);
      plan.drop_shape.push_back(shape[d]);
    }
  }
  plan.out_shape = keepdim ? plan.keep_shape : plan.drop_shape;
  return plan;
}

Status CheckReducedGradShape(const ReducePlan& plan, const Tensor& out_grad,
                             const std::vector<int64_t>& x_shape) {
  const std::vector<int64_t>& got = out_grad.shape();
  if (got == plan.drop_shape || got == plan.keep_shape) return Status::Ok();
  if (plan.drop_shape.empty() && got == std::vector<int64_t>{1}) return Status::Ok();
  return KernelError(fmt::format("out_grad has shape {}, expected {} (x of shape {} reduced)",
                                 ShapeToString(got), ShapeToString(plan.out_shape),
                                 ShapeToString(x_shape)));
}

AxisSplit SplitAround(const std::vector<int64_t>& shape, int axis) {
  AxisSplit split;
  if (shape.empty()) return split;
  const size_t a = static_cast<size_t>(axis);
  for (size_t d = 0; d < a; ++d) split.outer *= shape[d];
  split.size = shape[a];
  for (size_t d = a + 1; d < shape.size(); ++d) split.inner *= shape[d];
  return split;
}

Status CheckDType(const Tensor& tensor, std::string_view name,
                  std::initializer_list<DType> allowed) {
  for (DType d : allowed) {
    if (tensor.dtype() == d) return Status::Ok();
  }
  std::string expected;
  size_t i = 0;
  for (DType d : allowed) {
    if (i > 0) expected += i + 1 == allowed.size() ? " or " : ", ";
    expected += DTypeName(d);
    ++i;
  }
  return KernelError(
      fmt::format("{} is {}, expected {}", name, DTypeName(tensor.dtype()), expected));
}

Status CheckShape(const Tensor& tensor, std::string_view name, const std::vector<int64_t>& shape,
                  std::string_view why) {
  if (tensor.shape() == shape) return Status::Ok();
  return KernelError(fmt::format("{} has shape {}, expected {} ({})", name,
                                 ShapeToString(tensor.shape()), ShapeToString(shape), why));
}

Status CheckPresent(const KernelCall& call, size_t index, std::string_view name) {
  if (call.has_input(index)) return Status::Ok();
  return KernelError(fmt::format("input '{}' (operand {}) is missing", name, index));
}

}  // namespace irm::rt
