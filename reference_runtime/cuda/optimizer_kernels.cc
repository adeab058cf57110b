// The CUDA optimizer family, host side: sgd, momentum, adam and adamw with the CPU kernels' names,
// signatures, attributes, dtypes and errors (kernels/optimizer.cc, which cites the Paddle kernels
// each follows); both check the operands and read the attributes with kernels/optimizer_plan.h.
// Each step is one device kernel computing every element by the CPU's expression in the CPU's
// compute type (pointwise.cu): the CPU's bits. The learning rate and the beta powers stay on the
// device (every thread reads them), so a step needs no host round trip; only skip_update, a host
// decision, is read back. Outputs are new tensors; the kernels read element i of every input
// before writing element i of any output, so an executor may also pass outputs that alias their
// inputs (pd_op.adamw_ and friends update in place), except the beta powers.
#include <fmt/format.h>

#include <string>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/optimizer_plan.h"

namespace irm::rt::cuda {
namespace {

// The master weight the step updates (null unless the plan says it is updated).
const DeviceTensor* UpdatedMaster(const CudaKernelCall& call, size_t index, bool updates_master) {
  return updates_master ? &call.input(index) : nullptr;
}

// A new output like `like` (written by the step), or an undefined tensor when nobody reads it
// and the step may skip it.
StatusOr<DeviceTensor> OutputLike(const DeviceTensor& like, const char* kernel) {
  return DeviceTensor::Uninitialized(like.dtype(), like.shape(), kernel);
}

// param_out and master_param_out: the master's output is written by the step when the master is
// updated, else a copy of the master given (or nothing).
struct ParamOutputs {
  DeviceTensor param_out;
  DeviceTensor master_out;
  bool master_written = false;
};
StatusOr<ParamOutputs> MakeParamOutputs(const CudaKernelCall& call, const DeviceTensor& param,
                                        size_t master_in, const DeviceTensor* master,
                                        const char* kernel) {
  ParamOutputs o;
  IRM_ASSIGN_OR_RETURN(o.param_out, OutputLike(param, kernel));
  if (master != nullptr) {
    IRM_ASSIGN_OR_RETURN(o.master_out, OutputLike(*master, kernel));
    o.master_written = true;
  } else if (call.has_input(master_in)) {
    IRM_ASSIGN_OR_RETURN(o.master_out, CopyOf(call.input(master_in), kernel));
  }
  return o;
}

// sgd (param, learning_rate, grad, master_param?) -> (param_out, master_param_out?).
Status RunSgd(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::SgdPlan step, plan::PlanSgd(plan::OperandsOf(call), call.attrs));
  const DeviceTensor& param = call.input(0);
  const DeviceTensor* master = UpdatedMaster(call, 3, step.updates_master);
  IRM_ASSIGN_OR_RETURN(ParamOutputs out, MakeParamOutputs(call, param, 3, master, "sgd"));
  SgdArgs args;
  args.n = param.numel();
  args.param = AnyOf(master != nullptr ? master : &param);
  args.grad = AnyOf(&call.input(2));
  args.learning_rate = AnyOf(&call.input(1));
  args.param_out = AnyOutOf(&out.param_out);
  if (out.master_written) args.master_out = AnyOutOf(&out.master_out);
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchSgd(step.compute == DType::kFloat64, args, Stream()), "sgd"));
  call.SetOutput(0, std::move(out.param_out));
  if (out.master_out.defined()) call.SetOutput(1, std::move(out.master_out));
  return Status::Ok();
}

// momentum (param, grad, velocity, learning_rate, master_param?) -> (param_out, velocity_out,
// master_param_out?).
Status RunMomentum(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::MomentumPlan step,
                       plan::PlanMomentum(plan::OperandsOf(call), call.attrs));
  const DeviceTensor& param = call.input(0);
  MomentumArgs args;
  args.mu = step.mu;
  args.nesterov = step.nesterov;
  args.coeff = step.coeff;
  args.rescale = step.rescale;
  args.l2_decay = step.l2_decay;
  const DeviceTensor* master = UpdatedMaster(call, 4, step.updates_master);
  IRM_ASSIGN_OR_RETURN(ParamOutputs out, MakeParamOutputs(call, param, 4, master, "momentum"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor velocity_out, OutputLike(call.input(2), "momentum"));
  args.n = param.numel();
  args.param = AnyOf(master != nullptr ? master : &param);
  args.grad = AnyOf(&call.input(1));
  args.velocity = AnyOf(&call.input(2));
  args.learning_rate = AnyOf(&call.input(3));
  args.param_out = AnyOutOf(&out.param_out);
  args.velocity_out = AnyOutOf(&velocity_out);
  if (out.master_written) args.master_out = AnyOutOf(&out.master_out);
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchMomentum(step.compute == DType::kFloat64, args, Stream()), "momentum"));
  call.SetOutput(0, std::move(out.param_out));
  call.SetOutput(1, std::move(velocity_out));
  if (out.master_out.defined()) call.SetOutput(2, std::move(out.master_out));
  return Status::Ok();
}

using enum plan::AdamIn;
using enum plan::AdamOut;

// skip_update: every output a copy of its input.
Status CopyAdamState(CudaKernelCall& call, const char* kernel) {
  for (const auto& [in, out] : plan::kAdamStateOutputs) {
    if (!call.has_input(in) || !call.wants_output(out)) continue;
    IRM_ASSIGN_OR_RETURN(DeviceTensor copy, CopyOf(call.input(in), kernel));
    call.SetOutput(out, std::move(copy));
  }
  return Status::Ok();
}

Status AdamStep(CudaKernelCall& call, const char* kernel, bool is_adamw) {
  IRM_ASSIGN_OR_RETURN(const plan::AdamPlan step,
                       plan::PlanAdam(plan::OperandsOf(call), call.attrs, kernel, is_adamw));
  if (call.has_input(kSkipUpdate)) {
    IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(call.input(kSkipUpdate), kernel));
    if (host.data<bool>()[0]) return CopyAdamState(call, kernel);
  }
  const DeviceTensor& param = call.input(kParam);
  AdamArgs args;
  args.beta1 = step.beta1;
  args.beta2 = step.beta2;
  args.epsilon = step.epsilon;
  args.amsgrad = step.amsgrad;
  args.decay = step.decay;
  args.lr_ratio = step.lr_ratio;
  args.coeff = step.coeff;
  const DeviceTensor* master = UpdatedMaster(call, kMasterParam, step.updates_master);

  IRM_ASSIGN_OR_RETURN(ParamOutputs out,
                       MakeParamOutputs(call, param, kMasterParam, master, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor m1_out, OutputLike(call.input(kMoment1), kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor m2_out, OutputLike(call.input(kMoment2), kernel));
  DeviceTensor m2_max_out, beta1_pow_out, beta2_pow_out;
  if (args.amsgrad) {
    IRM_ASSIGN_OR_RETURN(m2_max_out, OutputLike(call.input(kMoment2Max), kernel));
  } else if (call.has_input(kMoment2Max)) {
    IRM_ASSIGN_OR_RETURN(m2_max_out, CopyOf(call.input(kMoment2Max), kernel));
  }
  if (step.global_beta_pow) {
    IRM_ASSIGN_OR_RETURN(beta1_pow_out, CopyOf(call.input(kBeta1Pow), kernel));
    IRM_ASSIGN_OR_RETURN(beta2_pow_out, CopyOf(call.input(kBeta2Pow), kernel));
  } else {
    IRM_ASSIGN_OR_RETURN(beta1_pow_out, OutputLike(call.input(kBeta1Pow), kernel));
    IRM_ASSIGN_OR_RETURN(beta2_pow_out, OutputLike(call.input(kBeta2Pow), kernel));
    args.beta1_pow_out = AnyOutOf(&beta1_pow_out);
    args.beta2_pow_out = AnyOutOf(&beta2_pow_out);
  }
  args.n = param.numel();
  args.param = AnyOf(master != nullptr ? master : &param);
  args.grad = AnyOf(&call.input(kGrad));
  args.learning_rate = AnyOf(&call.input(kLearningRate));
  args.moment1 = AnyOf(&call.input(kMoment1));
  args.moment2 = AnyOf(&call.input(kMoment2));
  if (args.amsgrad) {
    args.moment2_max = AnyOf(&call.input(kMoment2Max));
    args.moment2_max_out = AnyOutOf(&m2_max_out);
  }
  args.beta1_pow = AnyOf(&call.input(kBeta1Pow));
  args.beta2_pow = AnyOf(&call.input(kBeta2Pow));
  args.param_out = AnyOutOf(&out.param_out);
  args.moment1_out = AnyOutOf(&m1_out);
  args.moment2_out = AnyOutOf(&m2_out);
  if (out.master_written) args.master_out = AnyOutOf(&out.master_out);
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchAdam(step.compute == DType::kFloat64, args, Stream()), kernel));
  call.SetOutput(kParamOut, std::move(out.param_out));
  call.SetOutput(kMoment1Out, std::move(m1_out));
  call.SetOutput(kMoment2Out, std::move(m2_out));
  if (m2_max_out.defined()) call.SetOutput(kMoment2MaxOut, std::move(m2_max_out));
  call.SetOutput(kBeta1PowOut, std::move(beta1_pow_out));
  call.SetOutput(kBeta2PowOut, std::move(beta2_pow_out));
  if (out.master_out.defined()) call.SetOutput(kMasterParamOut, std::move(out.master_out));
  return Status::Ok();
}

Status RunAdam(CudaKernelCall& call) { return AdamStep(call, "adam", false); }
Status RunAdamw(CudaKernelCall& call) { return AdamStep(call, "adamw", true); }

}  // namespace

Status RegisterCudaOptimizerKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "sgd", kCudaFloating, &RunSgd, {3, 4, 2}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "momentum", kCudaFloating, &RunMomentum, {4, 5, 3}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "adam", kCudaFloating, &RunAdam, {8, 10, 7}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "adamw", kCudaFloating, &RunAdamw, {8, 10, 7}));
  registry.AllowAbsentInputs("adam", {kMoment2Max});
  registry.AllowAbsentInputs("adamw", {kMoment2Max});
  return Status::Ok();
}

}  // namespace irm::rt::cuda
