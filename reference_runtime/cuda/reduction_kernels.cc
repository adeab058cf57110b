// The CUDA reduction family, host side: sum, mean, their grads, squared_l2_norm (gradient
// clipping's) and its grad, and softmax with the CPU kernels' names,
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

// sum_grad, mean_grad (x, out_grad) -> x_grad: out_grad broadcast back over the reduced dims
// (divided by the count for mean), as kernels/reduction.cc.
Status RunReduceGrad(CudaKernelCall& call, bool mean) {
  const char* kernel = mean ? "mean_grad" : "sum_grad";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> axis,
                       call.attrs.GetOr<std::vector<int64_t>>("axis", {}));
  IRM_ASSIGN_OR_RETURN(bool keepdim, call.attrs.GetOr<bool>("keepdim", false));
  IRM_ASSIGN_OR_RETURN(bool reduce_all, call.attrs.GetOr<bool>("reduce_all", false));
  IRM_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(x.shape(), axis, keepdim, reduce_all, "x"));
  const std::vector<int64_t>& got = out_grad.shape();
  if (!(got == plan.drop_shape || got == plan.keep_shape ||
        (plan.drop_shape.empty() && got == std::vector<int64_t>{1}))) {
    return KernelError(fmt::format("out_grad has shape {}, expected {} (x of shape {} reduced)",
                                   ShapeToString(got), ShapeToString(plan.out_shape),
                                   ShapeToString(x.shape())));
  }
  IRM_RETURN_IF_ERROR(CheckDType(
      out_grad, "out_grad", {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  // x's dims in order, each reading out_grad at the kept dims' contiguous strides (0 when reduced).
  const std::vector<int64_t> out_strides = ContiguousStrides(plan.kept_dims);
  std::vector<int64_t> dims, strides;
  size_t kept = 0;
  for (size_t d = 0; d < plan.reduced.size(); ++d) {
    dims.push_back(x.shape()[d]);
    strides.push_back(plan.reduced[d] ? 0 : out_strides[kept++]);
  }
  IRM_ASSIGN_OR_RETURN(Walk from, ToWalk(dims, strides, kernel));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchReduceGrad(elem, x.numel(), from, AnyOf(&out_grad), mean,
                                                    plan.reduce_count, x_grad.raw(), Stream()),
                                   kernel));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// squared_l2_norm: the sum of squares of every element, shape [1] (reduction.cu's order).
Status RunSquaredL2Norm(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  ReducePlanDesc desc;
  desc.out_numel = 1;
  desc.reduce_count = x.numel();
  desc.reduced_walk.rank = 1;
  desc.reduced_walk.dims[0] = x.numel() > 0 ? x.numel() : 1;
  desc.reduced_walk.strides[0] = 1;
  desc.square = true;
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), {1}, "squared_l2_norm"));
  DeviceTensor partials;
  const int splits = ReduceSplits(desc.reduce_count);
  if (splits > 1) {
    IRM_ASSIGN_OR_RETURN(partials,
                         DeviceTensor::Uninitialized(DType::kFloat64, {splits}, "squared_l2_norm"));
  }
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchSum(elem, elem, false, desc, x.raw(), out.raw(), partials.raw(), Stream()),
                   "squared_l2_norm"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// squared_l2_norm_grad (x, out_grad) -> 2 * x * out_grad.
Status RunSquaredL2NormGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  if (!out_grad.shape().empty() && out_grad.shape() != std::vector<int64_t>{1}) {
    return KernelError(fmt::format(
        "out_grad has shape {}, expected [] or [1] (the shape of squared_l2_norm's out)",
        ShapeToString(out_grad.shape())));
  }
  IRM_RETURN_IF_ERROR(CheckDType(
      out_grad, "out_grad", {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "squared_l2_norm_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSquaredL2NormGrad(elem, x.numel(), x.raw(), AnyOf(&out_grad), x_grad.raw(), Stream()),
      "squared_l2_norm_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

Status RunSum(CudaKernelCall& call) { return RunReduce(call, false); }
Status RunSumGrad(CudaKernelCall& call) { return RunReduceGrad(call, false); }
Status RunMeanGrad(CudaKernelCall& call) { return RunReduceGrad(call, true); }
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
    IRM_RETURN_IF_ERROR(registry.Register("sum_grad", dtype, {&RunSumGrad, {2, 2, 1}}));
    IRM_RETURN_IF_ERROR(registry.Register("mean_grad", dtype, {&RunMeanGrad, {2, 2, 1}}));
    IRM_RETURN_IF_ERROR(registry.Register("squared_l2_norm", dtype, {&RunSquaredL2Norm, unary}));
    IRM_RETURN_IF_ERROR(
        registry.Register("squared_l2_norm_grad", dtype, {&RunSquaredL2NormGrad, {2, 2, 1}}));
  }
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                      DType::kInt32, DType::kInt64, DType::kBool}) {
    IRM_RETURN_IF_ERROR(registry.Register("sum", dtype, {&RunSum, unary}));
  }
  return Status::Ok();
}

}  // namespace irm::rt::cuda
