// The CUDA twins of matmul_with_flatten and its grad (kernels/matmul_with_flatten.cc, the legacy
// `mul`): x and y flattened to matrices at x_num_col_dims / y_num_col_dims (the CPU's plan,
// kernels/matmul_with_flatten_plan.h), the product and its grads by the CUDA matmul and
// matmul_grad kernels (matmul_kernels.cc) on those views, reshaped back — the CPU kernel's
// composition, on the device's GEMM.
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/kernels/matmul_with_flatten_plan.h"

namespace irm::rt::cuda {
namespace {

Status RunMatmulWithFlatten(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(plan::FlattenedOperands<DeviceTensor> f, plan::FlattenOperands(call));
  DeviceTensor out;
  CudaKernelCall product;
  product.inputs = {&f.x, &f.y};
  product.outputs = {&out};
  product.context = call.context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run("matmul", f.x.dtype(), product));
  IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, out.Reshaped(f.out_dims));
  call.SetOutput(0, std::move(shaped));
  return Status::Ok();
}

Status RunMatmulWithFlattenGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(plan::FlattenedOperands<DeviceTensor> f, plan::FlattenOperands(call));
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(plan::CheckMatmulWithFlattenOutGrad(out_grad, f.out_dims));
  IRM_ASSIGN_OR_RETURN(const DeviceTensor dout,
                       out_grad.Reshaped({f.x.shape()[0], f.y.shape()[1]}));
  DeviceTensor dx, dy;
  CudaKernelCall grad;
  grad.inputs = {&f.x, &f.y, &dout};
  grad.outputs = {call.wants_output(0) ? &dx : nullptr, call.wants_output(1) ? &dy : nullptr};
  grad.context = call.context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run("matmul_grad", f.x.dtype(), grad));
  if (call.wants_output(0)) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, dx.Reshaped(call.input(0).shape()));
    call.SetOutput(0, std::move(shaped));
  }
  if (call.wants_output(1)) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor shaped, dy.Reshaped(call.input(1).shape()));
    call.SetOutput(1, std::move(shaped));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterCudaMatmulWithFlattenKernels(CudaKernelRegistry& registry) {
  const std::initializer_list<DType> dtypes = {DType::kFloat32, DType::kFloat64};
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "matmul_with_flatten", dtypes, &RunMatmulWithFlatten, {2, 2, 1}));
  return RegisterForDTypes(registry, "matmul_with_flatten_grad", dtypes, &RunMatmulWithFlattenGrad,
                           {3, 3, 2});
}

}  // namespace irm::rt::cuda
