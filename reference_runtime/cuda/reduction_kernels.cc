// The CUDA reduction family, host side: sum, mean and softmax with the CPU kernels' names,
// attributes and errors (kernels/reduction.cc, kernels/softmax.cc); the summation orders are in
// reduction.cu. sum's dtype attribute may only name the default out dtype for now (x's, int64 for
// int32 and bool): other conversions are not on the GPU yet.
#include <fmt/format.h>

#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/axes.h"

namespace irm::rt::cuda {
namespace {

StatusOr<Walk> ToWalk(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                      std::string_view kernel) {
  // Drop size-1 dims: they never move the offset, and fewer dims fit kMaxDims more often.
  Walk w;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (w.rank == kMaxDims) {
      return KernelError(fmt::format("gpu {}: more than {} dims", kernel, kMaxDims));
    }
    w.dims[w.rank] = dims[d];
    w.strides[w.rank] = strides[d];
    ++w.rank;
  }
  return w;
}

Status RunReduce(CudaKernelCall& call, bool mean) {
  const char* kernel = mean ? "mean" : "sum";
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> axis,
                       call.attrs.GetOr<std::vector<int64_t>>("axis", {}));
  IRM_ASSIGN_OR_RETURN(bool keepdim, call.attrs.GetOr<bool>("keepdim", false));
  IRM_ASSIGN_OR_RETURN(bool reduce_all, call.attrs.GetOr<bool>("reduce_all", false));
  IRM_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(x.shape(), axis, keepdim, reduce_all, "x"));
  DType out_dtype = x.dtype();
  if (!mean && (out_dtype == DType::kBool || out_dtype == DType::kInt32)) {
    out_dtype = DType::kInt64;
  }
  if (!mean && call.attrs.Has("dtype")) {
    IRM_ASSIGN_OR_RETURN(DType wanted, call.attrs.Get<DType>("dtype"));
    if (wanted != out_dtype) {
      return KernelError(fmt::format("gpu sum of {} x into {} is not supported yet",
                                     DTypeName(x.dtype()), DTypeName(wanted)));
    }
  }
  ReducePlanDesc desc;
  desc.out_numel = plan.out_numel;
  desc.reduce_count = plan.reduce_count;
  IRM_ASSIGN_OR_RETURN(desc.out_walk, ToWalk(plan.kept_dims, plan.kept_strides, kernel));
  IRM_ASSIGN_OR_RETURN(desc.reduced_walk, ToWalk(plan.reduced_dims, plan.reduced_strides, kernel));
  IRM_ASSIGN_OR_RETURN(Elem x_elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(Elem out_elem, ElemOf(out_dtype));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(out_dtype, plan.out_shape, kernel));
  DeviceTensor partials;
  const int splits = ReduceSplits(plan.reduce_count);
  if (splits > 1) {
    IRM_ASSIGN_OR_RETURN(
        partials, DeviceTensor::Uninitialized(DType::kFloat64, {plan.out_numel, splits}, kernel));
  }
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSum(x_elem, out_elem, mean, desc, x.raw(), out.raw(), partials.raw(), Stream()),
      kernel));
  // `partials` is freed to the cache here; the stream orders its reuse after these launches.
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

Status RunSum(CudaKernelCall& call) { return RunReduce(call, false); }
Status RunMean(CudaKernelCall& call) { return RunReduce(call, true); }

Status RunSoftmax(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(const int64_t axis_attr, call.attrs.GetOr<int64_t>("axis", -1));
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, x.shape(), "x"));
  const AxisSplit s = SplitAround(x.shape(), axis);
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "softmax"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSoftmax(elem, s.outer, s.size, s.inner, x.raw(), out.raw(), Stream()), "softmax"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaReductionKernels(CudaKernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    IRM_RETURN_IF_ERROR(registry.Register("mean", dtype, {&RunMean, unary}));
    IRM_RETURN_IF_ERROR(registry.Register("softmax", dtype, {&RunSoftmax, unary}));
  }
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                      DType::kInt32, DType::kInt64, DType::kBool}) {
    IRM_RETURN_IF_ERROR(registry.Register("sum", dtype, {&RunSum, unary}));
  }
  return Status::Ok();
}

}  // namespace irm::rt::cuda
