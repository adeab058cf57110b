// set_value kernels: writing a value into a strided slice of x (Paddle's tensor[index] = value in
// static graphs). set_value takes the value from attributes (`values` of `shape`, converted to
// x's dtype by cast's rules, convert.h); set_value_with_tensor from its `values` tensor. Both
// follow Paddle's slice rules (phi's CheckAndUpdateSliceAttrs and GetSliceDims): negative starts
// and ends count from the end of the dim, then are clamped; a negative step walks backwards, with
// end -1 meaning "through index 0". The value broadcasts to the slice's shape after
// decrease_axes are removed and none_axes inserted as 1s. The output is a fresh copy of x with
// the slice overwritten (in-place IR ops are the executors' business). set_value_with_tensor_grad
// gives out_grad with the slice zeroed (x_grad) and the slice of out_grad summed back to the
// values' shape (values_grad), in a fixed order.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/convert.h"
#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// Where the value lands in a tensor: the slice's shape (one count per dim), the shape the value
// broadcasts to, and the element offset of every slice element, in C order of the slice.
struct SetValuePlan {
  std::vector<int64_t> slice_shape;
  std::vector<int64_t> value_shape;
  std::vector<int64_t> offsets;
};

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

// The plan for writing into `target` (x, or out_grad for the grad) under the op's attributes.
StatusOr<SetValuePlan> PlanSetValue(const Tensor& target, std::string_view operand,
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
  Ints first(rank, 0), step(rank, 1);
  SetValuePlan plan{.slice_shape = target.shape(), .value_shape = {}, .offsets = {}};
  std::vector<bool> sliced(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(int a, data::NormalizeAxis(axes[i], target, kernel, "axis", operand));
    const size_t k = static_cast<size_t>(a);
    if (sliced[k]) {
      return KernelError(
          fmt::format("{}: axis {} appears twice in axes {}", kernel, a, ShapeToString(axes)));
    }
    sliced[k] = true;
    if (steps[i] == 0) return KernelError(fmt::format("{}: the step on axis {} is 0", kernel, a));
    IRM_ASSIGN_OR_RETURN(AxisRange range,
                         RangeOnAxis(target.dim(a), starts[i], ends[i], steps[i], a, kernel));
    first[k] = range.start;
    step[k] = steps[i];
    plan.slice_shape[k] = range.count;
  }
  std::vector<bool> removed(rank, false);
  for (int64_t d : decrease) {
    IRM_ASSIGN_OR_RETURN(int a, data::NormalizeAxis(d, target, kernel, "decrease_axes", operand));
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

  const Ints strides = ContiguousStrides(target.shape());
  const int64_t n = data::Numel(plan.slice_shape);
  plan.offsets.reserve(static_cast<size_t>(n));
  Ints index(rank, 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += (first[k] + index[k] * step[k]) * strides[k];
    plan.offsets.push_back(offset);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < plan.slice_shape[k]) break;
      index[k] = 0;
    }
  }
  return plan;
}

// `values` must broadcast to the plan's value shape.
Status CheckValues(const Tensor& values, const SetValuePlan& plan, std::string_view kernel) {
  if (BroadcastsTo(values.shape(), plan.value_shape)) return Status::Ok();
  return KernelError(fmt::format("{}: values {} does not broadcast to the slice's shape {}", kernel,
                                 values.Describe(), ShapeToString(plan.value_shape)));
}

// x with the planned slice overwritten by `values` (x's dtype, broadcast to the value shape).
Tensor WriteSlice(const Tensor& x, const Tensor& values, const SetValuePlan& plan) {
  Tensor out = x.Clone();
  const size_t item = DTypeSize(x.dtype());
  auto* o = static_cast<std::byte*>(out.raw());
  const auto* v = static_cast<const std::byte*>(values.raw());
  const BroadcastWalk<1> walk = PlanBroadcast<1>(plan.value_shape, {&values.shape()});
  ForEachBroadcast(walk, [&](int64_t j, const std::array<int64_t, 1>& offsets) {
    std::memcpy(o + static_cast<size_t>(plan.offsets[static_cast<size_t>(j)]) * item,
                v + static_cast<size_t>(offsets[0]) * item, item);
  });
  return out;
}

// set_value(x; starts, ends, steps, axes, decrease_axes, none_axes, shape, values) -> out.
// values is a float array or an int array (kept exact); there must be one per element of shape.
// A second input slot may be given empty: the legacy op's absent ValueTensor.
template <typename T>
struct SetValueKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    if (call.has_input(1)) {
      return KernelError("set_value: takes its values from attributes, not from a tensor");
    }
    IRM_ASSIGN_OR_RETURN(SetValuePlan plan, PlanSetValue(x, "x", call.attrs, "set_value"));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                         call.attrs.GetOr<std::vector<int64_t>>("shape", {}));
    IRM_ASSIGN_OR_RETURN(Tensor values, data::MakeOutput("set_value", x.dtype(), shape));
    T* v = values.data<T>();
    auto it = call.attrs.values().find("values");
    if (it != call.attrs.values().end() &&
        std::holds_alternative<std::vector<int64_t>>(it->second)) {
      const auto& ints = std::get<std::vector<int64_t>>(it->second);
      if (static_cast<int64_t>(ints.size()) != values.numel()) {
        return KernelError(fmt::format("set_value: {} values for shape {} ({} elements)",
                                       ints.size(), ShapeToString(shape), values.numel()));
      }
      for (size_t i = 0; i < ints.size(); ++i) v[i] = ConvertElement<T>(ints[i]);
    } else {
      IRM_ASSIGN_OR_RETURN(std::vector<double> floats,
                           call.attrs.Get<std::vector<double>>("values"));
      if (static_cast<int64_t>(floats.size()) != values.numel()) {
        return KernelError(fmt::format("set_value: {} values for shape {} ({} elements)",
                                       floats.size(), ShapeToString(shape), values.numel()));
      }
      for (size_t i = 0; i < floats.size(); ++i) v[i] = ConvertElement<T>(floats[i]);
    }
    IRM_RETURN_IF_ERROR(CheckValues(values, plan, "set_value"));
    call.SetOutput(0, WriteSlice(x, values, plan));
    return Status::Ok();
  }
};

// set_value_with_tensor(x, values; starts, ends, steps, axes, decrease_axes, none_axes) -> out.
Status SetValueWithTensor(KernelCall& call) {
  const Tensor& x = call.input(0);
  const Tensor& values = call.input(1);
  IRM_RETURN_IF_ERROR(CheckDType(values, "values", {x.dtype()}));
  IRM_ASSIGN_OR_RETURN(SetValuePlan plan,
                       PlanSetValue(x, "x", call.attrs, "set_value_with_tensor"));
  IRM_RETURN_IF_ERROR(CheckValues(values, plan, "set_value_with_tensor"));
  call.SetOutput(0, WriteSlice(x, values, plan));
  return Status::Ok();
}

// set_value_with_tensor_grad(values, out_grad; same attributes) -> x_grad, values_grad. The
// values_grad sums run over the slice in C order (SumToShape), in the compute type.
template <typename T>
struct SetValueWithTensorGradKernel {
  static Status Run(KernelCall& call) {
    constexpr std::string_view kName = "set_value_with_tensor_grad";
    const Tensor& values = call.input(0);
    const Tensor& out_grad = call.input(1);
    IRM_RETURN_IF_ERROR(CheckDType(values, "values", {out_grad.dtype()}));
    IRM_ASSIGN_OR_RETURN(SetValuePlan plan, PlanSetValue(out_grad, "out_grad", call.attrs, kName));
    IRM_RETURN_IF_ERROR(CheckValues(values, plan, kName));
    const T* g = out_grad.data<T>();
    if (call.wants_output(0)) {
      Tensor x_grad = out_grad.Clone();
      T* xg = x_grad.data<T>();
      for (int64_t offset : plan.offsets) xg[offset] = Store<T>(Compute<T>(0));
      call.SetOutput(0, std::move(x_grad));
    }
    if (call.wants_output(1)) {
      call.SetOutput(1, SumToShape<T, 1>(plan.value_shape, {&values.shape()},
                                         [&](int64_t i, const std::array<int64_t, 1>&) {
                                           return Load(g[plan.offsets[static_cast<size_t>(i)]]);
                                         }));
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterSetValueKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      data::RegisterTemplateForEveryDType<SetValueKernel>(registry, "set_value", {1, 2, 1}));
  IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, "set_value_with_tensor",
                                                  &SetValueWithTensor, {2, 2, 1}));
  return RegisterForTypes<SetValueWithTensorGradKernel, Float16, BFloat16, float, double>(
      registry, "set_value_with_tensor_grad", {2, 2, 2});
}

}  // namespace irm::rt
