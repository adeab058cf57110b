// The CUDA twins of prod and prod_grad (kernels/reduction.cc): the product per out element from 1
// in the CPU's order (one thread per out element, so the bits are the CPU's), and x_grad = out_grad
// * out * (1 / x) with out and out_grad broadcast back over the reduced dims. Device code in
// elementwise_more.cu.
#include <fmt/format.h>

#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/elementwise_more_launch.h"
#include "reference_runtime/cuda/walk_plans.h"
#include "reference_runtime/kernels/axes.h"

namespace irm::rt::cuda {
namespace {

StatusOr<ReducePlan> PlanFromAttrs(const CudaKernelCall& call, const DeviceTensor& x) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> axis,
                       call.attrs.GetOr<std::vector<int64_t>>("axis", {}));
  IRM_ASSIGN_OR_RETURN(bool keepdim, call.attrs.GetOr<bool>("keepdim", false));
  IRM_ASSIGN_OR_RETURN(bool reduce_all, call.attrs.GetOr<bool>("reduce_all", false));
  return PlanReduce(x.shape(), axis, keepdim, reduce_all, "x");
}

// kernels/axes.h's CheckReducedGradShape on a device tensor (the CPU names out_grad for out too).
Status CheckReducedShape(const ReducePlan& plan, const DeviceTensor& t,
                         const std::vector<int64_t>& x_shape) {
  const std::vector<int64_t>& got = t.shape();
  if (got == plan.drop_shape || got == plan.keep_shape) return Status::Ok();
  if (plan.drop_shape.empty() && got == std::vector<int64_t>{1}) return Status::Ok();
  return KernelError(fmt::format("out_grad has shape {}, expected {} (x of shape {} reduced)",
                                 ShapeToString(got), ShapeToString(plan.out_shape),
                                 ShapeToString(x_shape)));
}

Status RunProd(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(ReducePlan plan, PlanFromAttrs(call, x));
  ReducePlanDesc desc;
  desc.out_numel = plan.out_numel;
  desc.reduce_count = plan.reduce_count;
  IRM_ASSIGN_OR_RETURN(desc.out_walk, WalkOf(plan.kept_dims, plan.kept_strides, "prod"));
  IRM_ASSIGN_OR_RETURN(desc.reduced_walk, WalkOf(plan.reduced_dims, plan.reduced_strides, "prod"));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), plan.out_shape, "prod"));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchProd(elem, desc, x.raw(), out.raw(), Stream()), "prod"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, out, out_grad) -> x_grad.
Status RunProdGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& out = call.input(1);
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(CheckDType(out, "out", {x.dtype()}));
  IRM_ASSIGN_OR_RETURN(ReducePlan plan, PlanFromAttrs(call, x));
  IRM_RETURN_IF_ERROR(CheckReducedShape(plan, out_grad, x.shape()));
  IRM_RETURN_IF_ERROR(CheckReducedShape(plan, out, x.shape()));
  IRM_RETURN_IF_ERROR(CheckDType(
      out_grad, "out_grad", {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  // x's dims in order, each reading out at the kept dims' contiguous strides (0 when reduced).
  const std::vector<int64_t> out_strides = ContiguousStrides(plan.kept_dims);
  std::vector<int64_t> dims, strides;
  size_t kept = 0;
  for (size_t d = 0; d < plan.reduced.size(); ++d) {
    dims.push_back(x.shape()[d]);
    strides.push_back(plan.reduced[d] ? 0 : out_strides[kept++]);
  }
  IRM_ASSIGN_OR_RETURN(Walk from, WalkOf(dims, strides, "prod_grad"));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "prod_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchProdGrad(elem, x.numel(), from, x.raw(), out.raw(),
                                                  AnyOf(&out_grad), x_grad.raw(), Stream()),
                                   "prod_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaProdKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "prod",
                                        {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                         DType::kBFloat16, DType::kInt32, DType::kInt64},
                                        &RunProd, {1, 1, 1}));
  return RegisterForDTypes(registry, "prod_grad", kCudaFloating, &RunProdGrad, {3, 3, 1});
}

}  // namespace irm::rt::cuda
