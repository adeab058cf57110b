// set_value kernels: writing a value into a strided slice of x (Paddle's tensor[index] = value in
// static graphs). set_value takes the value from attributes (`values` of `shape`, converted to
// x's dtype by cast's rules, convert.h); set_value_with_tensor from its `values` tensor. Both
// follow Paddle's slice rules (phi's CheckAndUpdateSliceAttrs and GetSliceDims): negative starts
// and ends count from the end of the dim, then are clamped; a negative step walks backwards, with
// end -1 meaning "through index 0". The value broadcasts to the slice's shape after
// decrease_axes are removed and none_axes inserted as 1s. The output is a fresh copy of x with
// the slice overwritten (in-place IR ops are the executors' business). set_value_with_tensor_grad
// gives out_grad with the slice zeroed (x_grad) and the slice of out_grad summed back to the
// values' shape (values_grad), in a fixed order. The slice and set_value's attribute values are
// planned in set_value_plan.h, with the CUDA kernels.
#include <cstring>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"
#include "reference_runtime/kernels/set_value_plan.h"

namespace irm::rt {
namespace {

using plan::SetValuePlan;

// The target's element offset of every slice element, in C order of the slice.
std::vector<int64_t> SliceOffsets(const Tensor& target, const SetValuePlan& plan) {
  const std::vector<int64_t> strides = ContiguousStrides(target.shape());
  const size_t rank = plan.slice_shape.size();
  const int64_t n = data::Numel(plan.slice_shape);
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(n));
  std::vector<int64_t> index(rank, 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) {
      offset += (plan.first[k] + index[k] * plan.step[k]) * strides[k];
    }
    offsets.push_back(offset);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < plan.slice_shape[k]) break;
      index[k] = 0;
    }
  }
  return offsets;
}

// x with the planned slice overwritten by `values` (x's dtype, broadcast to the value shape).
Tensor WriteSlice(const Tensor& x, const Tensor& values, const SetValuePlan& plan) {
  const std::vector<int64_t> slice_offsets = SliceOffsets(x, plan);
  Tensor out = x.Clone();
  const size_t item = DTypeSize(x.dtype());
  auto* o = static_cast<std::byte*>(out.raw());
  const auto* v = static_cast<const std::byte*>(values.raw());
  const BroadcastWalk<1> walk = PlanBroadcast<1>(plan.value_shape, {&values.shape()});
  ForEachBroadcast(walk, [&](int64_t j, const std::array<int64_t, 1>& offsets) {
    std::memcpy(o + static_cast<size_t>(slice_offsets[static_cast<size_t>(j)]) * item,
                v + static_cast<size_t>(offsets[0]) * item, item);
  });
  return out;
}

// set_value(x; starts, ends, steps, axes, decrease_axes, none_axes, shape, values) -> out.
// values is a float array or an int array (kept exact); there must be one per element of shape.
// A second input slot may be given empty: the legacy op's absent ValueTensor.
Status SetValue(KernelCall& call) {
  const Tensor& x = call.input(0);
  if (call.has_input(1)) {
    return KernelError("set_value: takes its values from attributes, not from a tensor");
  }
  IRM_ASSIGN_OR_RETURN(SetValuePlan plan, plan::PlanSetValue(x, "x", call.attrs, "set_value"));
  IRM_ASSIGN_OR_RETURN(Tensor values, plan::SetValueAttrValues(call.attrs, x.dtype()));
  IRM_RETURN_IF_ERROR(plan::CheckSetValueValues(values, plan, "set_value"));
  call.SetOutput(0, WriteSlice(x, values, plan));
  return Status::Ok();
}

// set_value_with_tensor(x, values; starts, ends, steps, axes, decrease_axes, none_axes) -> out.
Status SetValueWithTensor(KernelCall& call) {
  const Tensor& x = call.input(0);
  const Tensor& values = call.input(1);
  IRM_RETURN_IF_ERROR(CheckDType(values, "values", {x.dtype()}));
  IRM_ASSIGN_OR_RETURN(SetValuePlan plan,
                       plan::PlanSetValue(x, "x", call.attrs, "set_value_with_tensor"));
  IRM_RETURN_IF_ERROR(plan::CheckSetValueValues(values, plan, "set_value_with_tensor"));
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
    IRM_ASSIGN_OR_RETURN(SetValuePlan plan,
                         plan::PlanSetValue(out_grad, "out_grad", call.attrs, kName));
    IRM_RETURN_IF_ERROR(plan::CheckSetValueValues(values, plan, kName));
    const std::vector<int64_t> offsets = SliceOffsets(out_grad, plan);
    const T* g = out_grad.data<T>();
    if (call.wants_output(0)) {
      Tensor x_grad = out_grad.Clone();
      T* xg = x_grad.data<T>();
      for (int64_t offset : offsets) xg[offset] = Store<T>(Compute<T>(0));
      call.SetOutput(0, std::move(x_grad));
    }
    if (call.wants_output(1)) {
      call.SetOutput(1, SumToShape<T, 1>(plan.value_shape, {&values.shape()},
                                         [&](int64_t i, const std::array<int64_t, 1>&) {
                                           return Load(g[offsets[static_cast<size_t>(i)]]);
                                         }));
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterSetValueKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, "set_value", &SetValue, {1, 2, 1}));
  IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, "set_value_with_tensor",
                                                  &SetValueWithTensor, {2, 2, 1}));
  return RegisterForTypes<SetValueWithTensorGradKernel, Float16, BFloat16, float, double>(
      registry, "set_value_with_tensor_grad", {2, 2, 2});
}

}  // namespace irm::rt
