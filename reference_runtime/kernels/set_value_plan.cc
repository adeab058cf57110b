// set_value's plan (set_value_plan.h): the slice on Paddle's rules (set_value.cc says which).
#include "reference_runtime/kernels/set_value_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/convert.h"
#include "reference_runtime/kernels/data_kernels.h"

namespace irm::rt::plan {
namespace {

// Paddle's start, end and element count on one axis of size `dim` with step `step` (non-zero).
struct AxisRange {
  int64_t start = 0;
  int64_t count = 0;
};

StatusOr<AxisRange> RangeOnAxis(int64_t dim, int64_t start, int64_t end, int64_t step, int axis,
                                std::string_view kernel) {
  if (dim == 0) return AxisRange{};
  start = std::max<int64_t>(start < 0 ? start + dim : start, 0);
  end = std::min(step > 0 && end < 0 ? end + dim : end, dim);
  if (step > 0) {
    start = std::min(start, dim);
    end = std::max<int64_t>(end, 0);
    if (end < start) {
      return KernelError(fmt::format("{}: on axis {} end {} is before start {} with step {}",
                                     kernel, axis, end, start, step));
    }
    return AxisRange{start, (end - start + step - 1) / step};
  }
  // A backward walk starts at most at the last element; end -1 includes element 0.
  start = std::min(start, dim - 1);
  if (end < -1) end += dim;
  end = std::max<int64_t>(end, -1);
  if (start < end) {
    return KernelError(fmt::format("{}: on axis {} start {} is before end {} with step {}", kernel,
                                   axis, start, end, step));
  }
  return AxisRange{start, (end - start + step + 1) / step};
}

}  // namespace

StatusOr<SetValuePlan> PlanSetValue(const Operand& target, std::string_view operand,
                                    const KernelAttrs& attrs, std::string_view kernel) {
  using Ints = std::vector<int64_t>;
  IRM_ASSIGN_OR_RETURN(Ints axes, attrs.Get<Ints>("axes"));
  IRM_ASSIGN_OR_RETURN(Ints starts, attrs.Get<Ints>("starts"));
  IRM_ASSIGN_OR_RETURN(Ints ends, attrs.Get<Ints>("ends"));
  IRM_ASSIGN_OR_RETURN(Ints steps, attrs.Get<Ints>("steps"));
  IRM_ASSIGN_OR_RETURN(Ints decrease, attrs.GetOr<Ints>("decrease_axes", {}));
  IRM_ASSIGN_OR_RETURN(Ints none, attrs.GetOr<Ints>("none_axes", {}));
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size()) {
    return KernelError(fmt::format("{}: axes {}, starts {}, ends {} and steps {} differ in length",
                                   kernel, ShapeToString(axes), ShapeToString(starts),
                                   ShapeToString(ends), ShapeToString(steps)));
  }
  const size_t rank = static_cast<size_t>(target.rank());
  SetValuePlan plan{.slice_shape = target.shape(),
                    .value_shape = {},
                    .first = Ints(rank, 0),
                    .step = Ints(rank, 1)};
  std::vector<bool> sliced(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(axes[i], target, kernel, "axis", operand));
    const size_t k = static_cast<size_t>(a);
    if (sliced[k]) {
      return KernelError(
          fmt::format("{}: axis {} appears twice in axes {}", kernel, a, ShapeToString(axes)));
    }
    sliced[k] = true;
    if (steps[i] == 0) return KernelError(fmt::format("{}: the step on axis {} is 0", kernel, a));
    IRM_ASSIGN_OR_RETURN(AxisRange range,
                         RangeOnAxis(target.dim(a), starts[i], ends[i], steps[i], a, kernel));
    plan.first[k] = range.start;
    plan.step[k] = steps[i];
    plan.slice_shape[k] = range.count;
  }
  std::vector<bool> removed(rank, false);
  for (int64_t d : decrease) {
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(d, target, kernel, "decrease_axes", operand));
    const size_t k = static_cast<size_t>(a);
    if (plan.slice_shape[k] != 1) {
      return KernelError(
          fmt::format("{}: decrease_axes {} cannot be removed: the slice has {} "
                      "elements there, not 1",
                      kernel, a, plan.slice_shape[k]));
    }
    removed[k] = true;
  }
  // Paddle's order: before slice dim i come the none axes numbered up to i; the rest trail.
  std::sort(none.begin(), none.end());
  size_t next_none = 0;
  for (size_t k = 0; k < rank; ++k) {
    for (; next_none < none.size() && none[next_none] <= static_cast<int64_t>(k); ++next_none) {
      plan.value_shape.push_back(1);
    }
    if (!removed[k]) plan.value_shape.push_back(plan.slice_shape[k]);
  }
  plan.value_shape.insert(plan.value_shape.end(), none.size() - next_none, int64_t{1});
  return plan;
}

Status CheckSetValueValues(const Operand& values, const SetValuePlan& plan,
                           std::string_view kernel) {
  if (BroadcastsTo(values.shape(), plan.value_shape)) return Status::Ok();
  return KernelError(fmt::format("{}: values {} does not broadcast to the slice's shape {}", kernel,
                                 values.Describe(), ShapeToString(plan.value_shape)));
}

StatusOr<Tensor> SetValueAttrValues(const KernelAttrs& attrs, DType dtype) {
  IRM_ASSIGN_OR_RETURN(const std::vector<int64_t> shape,
                       attrs.GetOr<std::vector<int64_t>>("shape", {}));
  IRM_ASSIGN_OR_RETURN(Tensor values, data::MakeOutput("set_value", dtype, shape));
  auto it = attrs.values().find("values");
  const bool ints =
      it != attrs.values().end() && std::holds_alternative<std::vector<int64_t>>(it->second);
  std::vector<int64_t> int_values;
  std::vector<double> float_values;
  if (ints) {
    int_values = std::get<std::vector<int64_t>>(it->second);
  } else {
    IRM_ASSIGN_OR_RETURN(float_values, attrs.Get<std::vector<double>>("values"));
  }
  const size_t count = ints ? int_values.size() : float_values.size();
  if (static_cast<int64_t>(count) != values.numel()) {
    return KernelError(fmt::format("set_value: {} values for shape {} ({} elements)", count,
                                   ShapeToString(shape), values.numel()));
  }
  VisitDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* v = values.data<T>();
    for (size_t i = 0; i < count; ++i) {
      v[i] = ints ? ConvertElement<T>(int_values[i]) : ConvertElement<T>(float_values[i]);
    }
  });
  return values;
}

}  // namespace irm::rt::plan
