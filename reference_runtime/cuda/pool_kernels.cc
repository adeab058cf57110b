// The CUDA pool2d family, host side: pool2d and pool2d_grad with the CPU kernels' names,
// signatures, attributes, dtypes (float32, float64) and errors: both plan with kernels/pool_plan.h
// (pool.cc says how Paddle resolves kernel size, paddings and windows). The device code (conv.cu)
// runs one thread per output element for the forward and one per input element for the grad, which
// gathers the terms the CPU's loop over outputs scatters, in the CPU's order: both give the CPU's
// bits.
#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/kernels/pool_plan.h"

namespace irm::rt::cuda {
namespace {

template <DType kDType>
Status RunPool2d(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::PoolPlan p, plan::PlanPoolCall(call, kDType));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(kDType, p.out_shape(), "pool2d"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchPool2d(elem, p, call.input(0).raw(), out.raw(), Stream()), "pool2d"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, out, out_grad) -> x_grad.
template <DType kDType>
Status RunPool2dGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::PoolPlan p, plan::PlanPoolCall(call, kDType));
  IRM_RETURN_IF_ERROR(plan::CheckPoolGradOperands(call, kDType, p));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(kDType, x.shape(), "pool2d_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchPool2dGrad(elem, p, x.raw(), call.input(1).raw(),
                                                    call.input(2).raw(), x_grad.raw(), Stream()),
                                   "pool2d_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaPoolKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      registry.Register("pool2d", DType::kFloat32, {&RunPool2d<DType::kFloat32>, {1, 1, 1}}));
  IRM_RETURN_IF_ERROR(
      registry.Register("pool2d", DType::kFloat64, {&RunPool2d<DType::kFloat64>, {1, 1, 1}}));
  IRM_RETURN_IF_ERROR(registry.Register("pool2d_grad", DType::kFloat32,
                                        {&RunPool2dGrad<DType::kFloat32>, {3, 3, 1}}));
  return registry.Register("pool2d_grad", DType::kFloat64,
                           {&RunPool2dGrad<DType::kFloat64>, {3, 3, 1}});
}

}  // namespace irm::rt::cuda
