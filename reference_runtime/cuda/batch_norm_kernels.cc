// The CUDA batch_norm family, host side: batch_norm and batch_norm_grad with the CPU kernels'
// names, signatures, attributes, dtypes (float32, float64) and errors: both plan with
// kernels/batch_norm_plan.h (batch_norm.cc says what each output holds in training and with global
// statistics). The per-channel sums run one thread per channel over samples then positions in index
// order, the CPU's sequential order, and every other value repeats the CPU's expression (conv.cu,
// no fused multiply-add): the CPU's bits, running statistics included.
#include <cstdint>
#include <vector>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/kernels/batch_norm_plan.h"

namespace irm::rt::cuda {
namespace {

// batch_norm_grad's operands (batch_norm_plan.h).
constexpr size_t kX = plan::kBnX;
constexpr size_t kScale = plan::kBnScale;
constexpr size_t kMeanOut = plan::kBnMeanOut;
constexpr size_t kVarianceOut = plan::kBnVarianceOut;
constexpr size_t kSavedMean = plan::kBnSavedMean;
constexpr size_t kSavedVariance = plan::kBnSavedVariance;
constexpr size_t kOutGrad = plan::kBnOutGrad;

const void* OptionalData(const CudaKernelCall& call, size_t index) {
  return call.has_input(index) ? call.input(index).raw() : nullptr;
}

// batch_norm: (x, mean, variance, scale?, bias?) -> (out, mean_out, variance_out, saved_mean,
// saved_variance, reserve_space).
template <DType kDType>
Status RunBatchNorm(CudaKernelCall& call) {
  constexpr std::string_view kOp = "batch_norm";
  IRM_ASSIGN_OR_RETURN(const plan::BatchNormPlan p, plan::PlanBatchNormCall(call, kDType));
  IRM_RETURN_IF_ERROR(plan::CheckBatchNormChannels(call, kDType, p));
  IRM_ASSIGN_OR_RETURN(const plan::BatchNormMode mode, plan::ReadBatchNormMode(call.attrs));
  // Rounded through float, as the CPU kernel uses them.
  const double momentum = static_cast<float>(mode.momentum);
  const double epsilon = static_cast<float>(mode.epsilon);
  const plan::BatchNormPlan& g = p;
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const DeviceTensor& running_mean = call.input(1);
  const DeviceTensor& running_var = call.input(2);
  IRM_ASSIGN_OR_RETURN(DeviceTensor saved_mean, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  IRM_ASSIGN_OR_RETURN(DeviceTensor saved_var, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  DeviceTensor out, mean_out, variance_out;
  if (!mode.global_stats && g.n * g.s == 1) {
    // One element per channel: out = x, the running statistics untouched.
    IRM_ASSIGN_OR_RETURN(out, CopyOf(x, kOp));
    IRM_ASSIGN_OR_RETURN(mean_out, CopyOf(running_mean, kOp));
    IRM_ASSIGN_OR_RETURN(variance_out, CopyOf(running_var, kOp));
  } else {
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Uninitialized(kDType, x.shape(), kOp));
    const void* mean = running_mean.raw();
    const void* inv_std = running_var.raw();
    if (mode.global_stats) {
      IRM_ASSIGN_OR_RETURN(mean_out, CopyOf(running_mean, kOp));
      IRM_ASSIGN_OR_RETURN(variance_out, CopyOf(running_var, kOp));
    } else {
      IRM_ASSIGN_OR_RETURN(mean_out, DeviceTensor::Uninitialized(kDType, {g.c}, kOp));
      IRM_ASSIGN_OR_RETURN(variance_out, DeviceTensor::Uninitialized(kDType, {g.c}, kOp));
      IRM_RETURN_IF_ERROR(
          LaunchStatus(LaunchBatchNormStats(elem, g, momentum, epsilon, x.raw(), running_mean.raw(),
                                            running_var.raw(), mean_out.raw(), variance_out.raw(),
                                            saved_mean.raw(), saved_var.raw(), Stream()),
                       kOp));
      mean = saved_mean.raw();
      inv_std = saved_var.raw();
    }
    IRM_RETURN_IF_ERROR(LaunchStatus(
        LaunchBatchNormApply(elem, g, mode.global_stats, epsilon, x.raw(), mean, inv_std,
                             OptionalData(call, 3), OptionalData(call, 4), out.raw(), Stream()),
        kOp));
  }
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, std::move(mean_out));
  call.SetOutput(2, std::move(variance_out));
  call.SetOutput(3, std::move(saved_mean));
  call.SetOutput(4, std::move(saved_var));
  // reserve_space: cuDNN's workspace in Paddle; empty, as on the CPU.
  IRM_ASSIGN_OR_RETURN(DeviceTensor reserve, DeviceTensor::Zeros(kDType, {0}, kOp));
  call.SetOutput(5, std::move(reserve));
  return Status::Ok();
}

// (x, scale?, bias?, mean_out?, variance_out?, saved_mean?, saved_variance?, reserve_space?,
// out_grad) -> (x_grad, scale_grad, bias_grad).
template <DType kDType>
Status RunBatchNormGrad(CudaKernelCall& call) {
  constexpr std::string_view kOp = "batch_norm_grad";
  IRM_ASSIGN_OR_RETURN(const plan::BatchNormPlan p, plan::PlanBatchNormCall(call, kDType));
  IRM_ASSIGN_OR_RETURN(const plan::BatchNormMode mode, plan::ReadBatchNormMode(call.attrs));
  IRM_RETURN_IF_ERROR(plan::CheckBatchNormGradOperands(call, kDType, p, mode));
  const double epsilon = static_cast<float>(mode.epsilon);  // as the CPU kernel uses it
  const plan::BatchNormPlan& g = p;
  const DeviceTensor& x = call.input(kX);
  const DeviceTensor& out_grad = call.input(kOutGrad);
  const bool global = mode.global_stats;
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  IRM_ASSIGN_OR_RETURN(DeviceTensor dy_xhat_sum, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  IRM_ASSIGN_OR_RETURN(DeviceTensor dy_sum, DeviceTensor::Zeros(kDType, {g.c}, kOp));
  DeviceTensor x_grad;
  if (!global && g.n * g.s == 1) {
    // One element per channel: x_grad = out_grad, the sums stay zero (as the CPU's).
    IRM_ASSIGN_OR_RETURN(x_grad, CopyOf(out_grad, kOp));
  } else {
    IRM_ASSIGN_OR_RETURN(x_grad, DeviceTensor::Uninitialized(kDType, x.shape(), kOp));
    // Global statistics: mean_out and variance_out's inverse std; training: the saved ones.
    const void* mean = global ? call.input(kMeanOut).raw() : call.input(kSavedMean).raw();
    const void* inv_std =
        global ? call.input(kVarianceOut).raw() : call.input(kSavedVariance).raw();
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchBatchNormGrad(elem, g, global, epsilon, x.raw(), mean, inv_std,
                                         OptionalData(call, kScale), out_grad.raw(), x_grad.raw(),
                                         dy_xhat_sum.raw(), dy_sum.raw(), Stream()),
                     kOp));
  }
  call.SetOutput(0, std::move(x_grad));
  call.SetOutput(1, std::move(dy_xhat_sum));
  call.SetOutput(2, std::move(dy_sum));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaBatchNormKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm", DType::kFloat32,
                                        {&RunBatchNorm<DType::kFloat32>, {3, 5, 6}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm", DType::kFloat64,
                                        {&RunBatchNorm<DType::kFloat64>, {3, 5, 6}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm_grad", DType::kFloat32,
                                        {&RunBatchNormGrad<DType::kFloat32>, {9, 9, 3}}));
  IRM_RETURN_IF_ERROR(registry.Register("batch_norm_grad", DType::kFloat64,
                                        {&RunBatchNormGrad<DType::kFloat64>, {9, 9, 3}}));
  // As the CPU kernel: scale, bias, the running and the saved statistics and reserve_space may be
  // absent (the kernel checks that the mode's statistics are there).
  registry.AllowAbsentInputs("batch_norm_grad", {1, 2, 3, 4, 5, 6, 7});
  return Status::Ok();
}

}  // namespace irm::rt::cuda
