// The CUDA manipulation family, host side: reshape (with Paddle's xshape carrier) and its grad,
// transpose and its grad, concat, split, split_with_num, slice and their grads, assign, with the
// CPU kernels' names, signatures, attributes, dtypes and errors: both plan with
// kernels/manipulation_plan.h (attributes, checks, output shapes and boxes). reshape's output
// shares x's device storage (no copy): device kernels never write into their inputs, so a view is
// as good as the CPU's copy. The rest are strided gathers and scatters of boxes (layout.cu).
#include <fmt/format.h>

#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/manipulation_plan.h"

namespace irm::rt::cuda {
namespace {

// reshape(x; shape) -> out, xshape (x's dtype, shape [0, x dims...], no element).
Status RunReshape(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> target, plan::PlanReshape(x, call.attrs));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, x.Reshaped(std::move(target)));
  call.SetOutput(0, std::move(out));
  if (call.wants_output(1)) {
    IRM_ASSIGN_OR_RETURN(
        DeviceTensor carrier,
        DeviceTensor::Uninitialized(x.dtype(), plan::XShapeCarrier(x.shape()), "reshape"));
    call.SetOutput(1, std::move(carrier));
  }
  return Status::Ok();
}

// reshape_grad(xshape, out_grad) -> x_grad: out_grad's elements under x's shape.
Status RunReshapeGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> x_shape,
                       plan::PlanReshapeGrad(call.input(0), call.input(1)));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, call.input(1).Reshaped(std::move(x_shape)));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// out.dim(k) = x.dim(perm[k]); out element i reads x at the offset of its permuted index.
StatusOr<DeviceTensor> Transposed(const DeviceTensor& x, const std::vector<int>& perm,
                                  std::string_view kernel) {
  const std::vector<int64_t> x_strides = ContiguousStrides(x.shape());
  std::vector<int64_t> out_shape(perm.size());
  Walk walk;
  for (size_t k = 0; k < perm.size(); ++k) {
    out_shape[k] = x.shape()[static_cast<size_t>(perm[k])];
    if (out_shape[k] == 1) continue;  // never moves the offset
    if (walk.rank == kMaxDims) {
      return KernelError(fmt::format("gpu {}: more than {} dims", kernel, kMaxDims));
    }
    walk.dims[walk.rank] = out_shape[k];
    walk.strides[walk.rank] = x_strides[static_cast<size_t>(perm[k])];
    ++walk.rank;
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), out_shape, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(x.dtype())), x.numel(),
                                                walk, 0, x.raw(), out.raw(), Stream()),
                                   kernel));
  return out;
}

Status RunTranspose(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int> perm, plan::PlanTranspose(call.input(0), call.attrs));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, Transposed(call.input(0), perm, "transpose"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// transpose_grad(out_grad; perm) -> x_grad: out_grad transposed by the inverse permutation.
Status RunTransposeGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(std::vector<int> inverse,
                       plan::PlanTransposeGrad(call.input(0), call.attrs));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, Transposed(call.input(0), inverse, "transpose_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- boxes: concat, split, slice and their grads
// ---------------------------------------------------

// The walk over the box `extent` of a contiguous tensor of `shape` from `start`: its offset base
// and the strides of the box's dims (size-1 dims dropped: they never move the offset).
StatusOr<Walk> BoxWalk(const std::vector<int64_t>& shape, const std::vector<int64_t>& start,
                       const std::vector<int64_t>& extent, int64_t* base, std::string_view kernel) {
  const std::vector<int64_t> strides = ContiguousStrides(shape);
  Walk walk;
  *base = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    *base += start[d] * strides[d];
    if (extent[d] == 1) continue;
    if (walk.rank == kMaxDims) {
      return KernelError(fmt::format("gpu {}: more than {} dims", kernel, kMaxDims));
    }
    walk.dims[walk.rank] = extent[d];
    walk.strides[walk.rank] = strides[d];
    ++walk.rank;
  }
  return walk;
}

// A new tensor of shape `out_shape` holding the box [start, start + extent) of `src`.
StatusOr<DeviceTensor> GatherBox(const DeviceTensor& src, const std::vector<int64_t>& start,
                                 const std::vector<int64_t>& extent, std::vector<int64_t> out_shape,
                                 std::string_view kernel) {
  int64_t base = 0;
  IRM_ASSIGN_OR_RETURN(Walk walk, BoxWalk(src.shape(), start, extent, &base, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(src.dtype(), std::move(out_shape), kernel));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(src.dtype())), out.numel(), walk, base,
                                src.raw(), out.raw(), Stream()),
                   kernel));
  return out;
}

// Writes the contiguous `piece` (of shape `extent`) into the box of `dst` from `start`.
Status ScatterBox(const DeviceTensor& piece, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& extent, DeviceTensor& dst, std::string_view kernel) {
  int64_t base = 0;
  IRM_ASSIGN_OR_RETURN(Walk walk, BoxWalk(dst.shape(), start, extent, &base, kernel));
  return LaunchStatus(LaunchScatter(static_cast<int>(DTypeSize(dst.dtype())), piece.numel(), walk,
                                    base, piece.raw(), dst.raw(), Stream()),
                      kernel);
}

// concat(x...; axis) -> out.
Status RunConcat(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::ConcatPlan p,
                       plan::PlanConcat(plan::OperandsOf(call), call.attrs));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(call.input(0).dtype(), p.shape, "concat"));
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    IRM_RETURN_IF_ERROR(
        ScatterBox(call.input(i), p.starts[i], call.input(i).shape(), out, "concat"));
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Cuts `whole` into the plan's pieces, piece i to output i.
Status Cut(CudaKernelCall& call, const DeviceTensor& whole, const plan::CutPlan& p,
           std::string_view kernel) {
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    if (!call.wants_output(i)) continue;
    IRM_ASSIGN_OR_RETURN(DeviceTensor piece,
                         GatherBox(whole, p.starts[i], p.shapes[i], p.shapes[i], kernel));
    call.SetOutput(i, std::move(piece));
  }
  return Status::Ok();
}

// concat_grad(x..., out_grad; axis) -> x_grad...
Status RunConcatGrad(CudaKernelCall& call) {
  const size_t n = call.num_inputs() - 1;
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanConcatGrad(plan::OperandsOf(call, n), call.input(n), call.attrs,
                                            call.outputs.size()));
  return Cut(call, call.input(n), p, "concat_grad");
}

// split(x; sections, axis) -> out...; one section may be -1 (the rest).
Status RunSplit(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanSplit(call.input(0), call.attrs, call.outputs.size()));
  return Cut(call, call.input(0), p, "split");
}

// split_with_num(x; num, axis) -> out...: num equal pieces.
Status RunSplitWithNum(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::CutPlan p,
                       plan::PlanSplitWithNum(call.input(0), call.attrs, call.outputs.size()));
  return Cut(call, call.input(0), p, "split_with_num");
}

// slice(input; axes, starts, ends, decrease_axis) -> out.
Status RunSlice(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  IRM_ASSIGN_OR_RETURN(const plan::SliceBox box, plan::PlanSlice(input, call.attrs, "slice"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       GatherBox(input, box.start, box.extent, box.out_shape, "slice"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// slice_grad(input, out_grad; same attributes) -> zeros of input's shape with out_grad in the box.
Status RunSliceGrad(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_ASSIGN_OR_RETURN(const plan::SliceBox box, plan::PlanSlice(input, call.attrs, "slice_grad"));
  IRM_RETURN_IF_ERROR(plan::CheckSliceGradShape(box, out_grad));
  IRM_ASSIGN_OR_RETURN(DeviceTensor input_grad,
                       DeviceTensor::Zeros(out_grad.dtype(), input.shape(), "slice_grad"));
  IRM_RETURN_IF_ERROR(ScatterBox(out_grad, box.start, box.extent, input_grad, "slice_grad"));
  call.SetOutput(0, std::move(input_grad));
  return Status::Ok();
}

// assign(x) -> a copy of x.
Status RunAssign(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, CopyOf(call.input(0), "assign"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaManipulationKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "reshape", kCudaEvery, &RunReshape, {1, 1, 2}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "reshape_grad", kCudaEvery, &RunReshapeGrad, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "transpose", kCudaEvery, &RunTranspose, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "transpose_grad", kCudaEvery, &RunTransposeGrad, {1, 1, 1}));
  constexpr size_t kAny = KernelSignature::kVariadic;
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "concat", kCudaEvery, &RunConcat, {1, kAny, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "concat_grad", kCudaEvery, &RunConcatGrad, {2, kAny, kAny}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "split", kCudaEvery, &RunSplit, {1, 1, kAny}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "split_with_num", kCudaEvery, &RunSplitWithNum, {1, 1, kAny}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "slice", kCudaEvery, &RunSlice, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "slice_grad", kCudaEvery, &RunSliceGrad, {2, 2, 1}));
  return RegisterForDTypes(registry, "assign", kCudaEvery, &RunAssign, {1, 1, 1});
}

}  // namespace irm::rt::cuda
