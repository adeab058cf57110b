// The CUDA twins of the CPU's data-movement kernels that the first families left out: gather and
// gather_grad (kernels/indexing.cc), shape, share_data and assign_out (kernels/manipulation.cc),
// set_value, set_value_with_tensor and set_value_with_tensor_grad (kernels/set_value.cc) — the CPU
// kernels' names, signatures, dtypes, attributes and errors. They run on launch.h's launchers: the
// host checks the indices and plans the rows or the strided slice (set_value's with the CPU's
// plan, kernels/set_value_plan.h), the device moves elements.
// gather_grad adds each x row's out_grad rows in increasing position (embedding_grad's sorted
// sums), and set_value_with_tensor_grad's values_grad sums the slice in C order (add_grad's sums):
// both in the CPU's order, so the bits are the CPU's.
//
// share_data hands back a device copy: the `--device gpu` registry stages every output back to a
// fresh host tensor (gpu_kernel_registry.h), so storage is not shared across it in any case.
#include <fmt/format.h>

#include <numeric>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/cuda/walk_plans.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/set_value_plan.h"

namespace irm::rt::cuda {
namespace {

// "float32[2, 3]", as the CPU's Tensor::Describe words the operands in its errors.
std::string Described(const DeviceTensor& t) {
  return fmt::format("{}{}", DTypeName(t.dtype()), ShapeToString(t.shape()));
}

int ElementSize(const DeviceTensor& t) { return static_cast<int>(DTypeSize(t.dtype())); }

StatusOr<DeviceTensor> Upload(const std::vector<int64_t>& values, std::string_view kernel) {
  return DeviceTensor::FromHost(
      Tensor::FromVector<int64_t>(values, {static_cast<int64_t>(values.size())}), kernel);
}

// ---- gather
// --------------------------------------------------------------------------------------

// x viewed as [outer, size, inner] around `axis`; out row (b, i) is x row (b, index[i]).
struct GatherPlan {
  int64_t outer = 1, size = 0, inner = 1;
  std::vector<int64_t> index;
  std::vector<int64_t> out_shape;
  // Row ids into x viewed as [outer * size, inner], one per out row (b, i) in order.
  std::vector<int64_t> rows() const {
    std::vector<int64_t> ids;
    ids.reserve(static_cast<size_t>(outer) * index.size());
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t i : index) ids.push_back(b * size + i);
    }
    return ids;
  }
};

StatusOr<GatherPlan> PlanGather(const CudaKernelCall& call, const DeviceTensor& x,
                                const DeviceTensor& index, std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(int64_t axis, call.attrs.GetOr<int64_t>("axis", 0));
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) {
    return KernelError(fmt::format("{}: axis {} is outside x {}", kernel, axis, Described(x)));
  }
  if ((index.dtype() != DType::kInt32 && index.dtype() != DType::kInt64) || index.rank() > 1) {
    return KernelError(
        fmt::format("{}: index {} must be int32 or int64, 0-D or 1-D", kernel, Described(index)));
  }
  GatherPlan p;
  const auto a = static_cast<size_t>(axis);
  for (size_t d = 0; d < a; ++d) p.outer *= x.shape()[d];
  p.size = x.shape()[a];
  for (size_t d = a + 1; d < x.shape().size(); ++d) p.inner *= x.shape()[d];
  IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(index, kernel));
  p.index.resize(static_cast<size_t>(index.numel()));
  for (size_t i = 0; i < p.index.size(); ++i) {
    p.index[i] = index.dtype() == DType::kInt32 ? host.data<int32_t>()[i] : host.data<int64_t>()[i];
    if (p.index[i] < 0 || p.index[i] >= p.size) {
      return KernelError(fmt::format("{}: index[{}] = {} is outside [0, {}), dim {} of x {}",
                                     kernel, i, p.index[i], p.size, axis, Described(x)));
    }
  }
  p.out_shape.assign(x.shape().begin(), x.shape().begin() + axis);
  if (index.rank() == 1) p.out_shape.push_back(index.numel());
  p.out_shape.insert(p.out_shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  return p;
}

// Row gathers are embedding lookups of x viewed as [outer * size, inner] (no padding row).
Status RunGather(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(GatherPlan p, PlanGather(call, x, call.input(1), "gather"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), p.out_shape, "gather"));
  const std::vector<int64_t> rows = p.rows();
  if (!rows.empty() && p.inner > 0) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor device_rows, Upload(rows, "gather"));
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchEmbedding(ElementSize(x), static_cast<int64_t>(rows.size()), p.inner,
                                     static_cast<const int64_t*>(device_rows.raw()), -1, x.raw(),
                                     out.raw(), Stream()),
                     "gather"));
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// gather_grad (x, index, out_grad) -> x_grad: x row r is the sum of the out_grad rows that read it,
// in increasing out row — the CPU's ScatterAssignAdd order — from zero in the compute type.
Status RunGatherGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& out_grad = call.input(2);
  IRM_ASSIGN_OR_RETURN(GatherPlan p, PlanGather(call, x, call.input(1), "gather_grad"));
  if (out_grad.dtype() != x.dtype() || out_grad.shape() != p.out_shape) {
    return KernelError(fmt::format("gather_grad: out_grad {} should be {}{}", Described(out_grad),
                                   DTypeName(x.dtype()), ShapeToString(p.out_shape)));
  }
  // A stable counting sort of the out rows by the x row they read.
  const std::vector<int64_t> rows = p.rows();
  const int64_t x_rows = p.outer * p.size;
  std::vector<int64_t> row_start(static_cast<size_t>(x_rows) + 1, 0);
  for (int64_t r : rows) ++row_start[static_cast<size_t>(r) + 1];
  std::partial_sum(row_start.begin(), row_start.end(), row_start.begin());
  std::vector<int64_t> order(rows.size());
  std::vector<int64_t> next(row_start.begin(), row_start.end() - 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    order[static_cast<size_t>(next[static_cast<size_t>(rows[i])]++)] = static_cast<int64_t>(i);
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "gather_grad"));
  if (x_rows > 0 && p.inner > 0) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor device_start, Upload(row_start, "gather_grad"));
    IRM_ASSIGN_OR_RETURN(DeviceTensor device_order, Upload(order, "gather_grad"));
    IRM_RETURN_IF_ERROR(LaunchStatus(
        LaunchEmbeddingGrad(elem, x_rows, p.inner, static_cast<const int64_t*>(device_start.raw()),
                            static_cast<const int64_t*>(device_order.raw()), out_grad.raw(),
                            x_grad.raw(), Stream()),
        "gather_grad"));
  }
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- shape, copies
// -------------------------------------------------------------------------------

// shape: the input's dims as an int32 1-D tensor.
Status RunShape(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  std::vector<int32_t> dims(input.shape().begin(), input.shape().end());
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::FromHost(Tensor::FromVector(dims, {input.rank()}), "shape"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// assign_out(x, output): a copy of x (the executor writes it into output); share_data(x): see the
// file comment.
Status RunCopy(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, CopyOf(call.input(0), "assign_out"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// ---- set_value
// -----------------------------------------------------------------------------------

// A device tensor as the set_value plan sees it, worded as the CPU words its operands
// ("float32[2, 3]", not "... on gpu"), so that set_value's errors read alike on both devices.
class HostWorded {
 public:
  explicit HostWorded(const DeviceTensor& t) : t_(&t) {}
  DType dtype() const { return t_->dtype(); }
  const std::vector<int64_t>& shape() const { return t_->shape(); }
  int64_t numel() const { return t_->numel(); }
  std::string Describe() const { return Described(*t_); }

 private:
  const DeviceTensor* t_;
};

// The planned slice (kernels/set_value_plan.h) as a walk: element j of the slice in C order is at
// base + WalkOffset(slice, j) in the target.
struct SlicePlan {
  plan::SetValuePlan shapes;
  int64_t base = 0;
  Walk slice;
  int64_t count = 0;
};

StatusOr<SlicePlan> PlanSlice(const DeviceTensor& target, std::string_view operand,
                              const KernelAttrs& attrs, std::string_view kernel) {
  SlicePlan plan;
  IRM_ASSIGN_OR_RETURN(plan.shapes, plan::PlanSetValue(HostWorded(target), operand, attrs, kernel));
  const std::vector<int64_t> strides = ContiguousStrides(target.shape());
  std::vector<int64_t> slice_strides(strides.size());
  plan.count = 1;
  for (size_t k = 0; k < strides.size(); ++k) {
    plan.base += plan.shapes.first[k] * strides[k];
    slice_strides[k] = plan.shapes.step[k] * strides[k];
    plan.count *= plan.shapes.slice_shape[k];
  }
  IRM_ASSIGN_OR_RETURN(plan.slice, WalkOf(plan.shapes.slice_shape, slice_strides, kernel));
  return plan;
}

Status CheckValues(const DeviceTensor& values, const SlicePlan& plan, std::string_view kernel) {
  return plan::CheckSetValueValues(HostWorded(values), plan.shapes, kernel);
}

// A copy of x with the slice overwritten by `values` broadcast to the value shape: the values are
// first spread to the slice's element count (a gather), then scattered into the slice.
Status WriteSlice(CudaKernelCall& call, const DeviceTensor& x, const DeviceTensor& values,
                  const SlicePlan& plan, std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, CopyOf(x, kernel));
  if (plan.count > 0) {
    IRM_ASSIGN_OR_RETURN(Walk spread,
                         WalkOf(plan.shapes.value_shape,
                                BroadcastStrides(values.shape(), plan.shapes.value_shape), kernel));
    IRM_ASSIGN_OR_RETURN(DeviceTensor spread_values,
                         DeviceTensor::Uninitialized(x.dtype(), {plan.count}, kernel));
    IRM_RETURN_IF_ERROR(LaunchStatus(LaunchGather(ElementSize(x), plan.count, spread, 0,
                                                  values.raw(), spread_values.raw(), Stream()),
                                     kernel));
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchScatter(ElementSize(x), plan.count, plan.slice, plan.base,
                                   spread_values.raw(), out.raw(), Stream()),
                     kernel));
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// set_value(x; starts, ends, steps, axes, decrease_axes, none_axes, shape, values) -> out.
Status RunSetValue(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  if (call.has_input(1)) {
    return KernelError("set_value: takes its values from attributes, not from a tensor");
  }
  IRM_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(x, "x", call.attrs, "set_value"));
  IRM_ASSIGN_OR_RETURN(Tensor host_values, plan::SetValueAttrValues(call.attrs, x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor values, DeviceTensor::FromHost(host_values, "set_value"));
  IRM_RETURN_IF_ERROR(CheckValues(values, plan, "set_value"));
  return WriteSlice(call, x, values, plan, "set_value");
}

Status RunSetValueWithTensor(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& values = call.input(1);
  IRM_RETURN_IF_ERROR(CheckDType(values, "values", {x.dtype()}));
  IRM_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(x, "x", call.attrs, "set_value_with_tensor"));
  IRM_RETURN_IF_ERROR(CheckValues(values, plan, "set_value_with_tensor"));
  return WriteSlice(call, x, values, plan, "set_value_with_tensor");
}

// (values, out_grad) -> x_grad (out_grad with the slice zeroed), values_grad (the slice of out_grad
// summed back to values' shape in C order of the slice, as the CPU's SumToShape).
Status RunSetValueWithTensorGrad(CudaKernelCall& call) {
  constexpr std::string_view kName = "set_value_with_tensor_grad";
  const DeviceTensor& values = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_RETURN_IF_ERROR(CheckDType(values, "values", {out_grad.dtype()}));
  IRM_ASSIGN_OR_RETURN(SlicePlan plan, PlanSlice(out_grad, "out_grad", call.attrs, kName));
  IRM_RETURN_IF_ERROR(CheckValues(values, plan, kName));
  const int size = ElementSize(out_grad);
  if (call.wants_output(0)) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, CopyOf(out_grad, kName));
    if (plan.count > 0) {
      IRM_ASSIGN_OR_RETURN(DeviceTensor zeros,
                           DeviceTensor::Zeros(out_grad.dtype(), {plan.count}, kName));
      IRM_RETURN_IF_ERROR(LaunchStatus(LaunchScatter(size, plan.count, plan.slice, plan.base,
                                                     zeros.raw(), x_grad.raw(), Stream()),
                                       kName));
    }
    call.SetOutput(0, std::move(x_grad));
  }
  if (call.wants_output(1)) {
    // The slice gathered in C order is an out_grad of the value shape; summing it back to values'
    // shape is add_grad's sum for the operand `values` (each values element's terms in increasing
    // slice index, from zero in the compute type).
    IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(out_grad.dtype()));
    IRM_ASSIGN_OR_RETURN(DeviceTensor slice,
                         DeviceTensor::Uninitialized(out_grad.dtype(), {plan.count}, kName));
    IRM_RETURN_IF_ERROR(LaunchStatus(LaunchGather(size, plan.count, plan.slice, plan.base,
                                                  out_grad.raw(), slice.raw(), Stream()),
                                     kName));
    IRM_ASSIGN_OR_RETURN(GradPlan grad_plan, PlanOperandGrad(values.shape(), values.shape(),
                                                             plan.shapes.value_shape, kName));
    IRM_ASSIGN_OR_RETURN(DeviceTensor values_grad,
                         DeviceTensor::Uninitialized(values.dtype(), values.shape(), kName));
    IRM_RETURN_IF_ERROR(LaunchStatus(
        LaunchBinaryGrad(BinaryOp::kAdd, false, elem, grad_plan, values.raw(), values.raw(),
                         nullptr, slice.raw(), values_grad.raw(), Stream()),
        kName));
    call.SetOutput(1, std::move(values_grad));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterCudaGatherKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "gather", kCudaEvery, &RunGather, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "gather_grad", kCudaFloating, &RunGatherGrad, {3, 3, 1}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "shape", kCudaEvery, &RunShape, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "assign_out", kCudaEvery, &RunCopy, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "share_data", kCudaEvery, &RunCopy, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "set_value", kCudaEvery, &RunSetValue, {1, 2, 1}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "set_value_with_tensor", kCudaEvery,
                                        &RunSetValueWithTensor, {2, 2, 1}));
  return RegisterForDTypes(registry, "set_value_with_tensor_grad", kCudaFloating,
                           &RunSetValueWithTensorGrad, {2, 2, 2});
}

}  // namespace irm::rt::cuda
