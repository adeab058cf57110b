// The CUDA optimizer family, host side: sgd, momentum, adam and adamw with the CPU kernels' names,
// signatures, attributes, dtypes and errors (kernels/optimizer.cc, which cites the Paddle kernels
// each follows). Each step is one device kernel computing every element by the CPU's expression
// in the CPU's compute type (pointwise.cu): the CPU's bits. The learning rate and the beta powers
// stay on the device (every thread reads them), so a step needs no host round trip; only
// skip_update, a host decision, is read back. Outputs are new tensors; the kernels read element i
// of every input before writing element i of any output, so an executor may also pass outputs
// that alias their inputs (pd_op.adamw_ and friends update in place), except the beta powers.
#include <fmt/format.h>

#include <string>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// The checks every update shares (kernels/optimizer.cc, UpdateChecks), with its messages.
class UpdateChecks {
 public:
  UpdateChecks(const char* kernel, const DeviceTensor& param) : kernel_(kernel), param_(param) {}

  Status Elementwise(const char* name, const DeviceTensor& t) const {
    IRM_RETURN_IF_ERROR(SameShape(name, t));
    if (t.dtype() == param_.dtype() || (IsHalf(param_.dtype()) && t.dtype() == DType::kFloat32)) {
      return Status::Ok();
    }
    const std::string expected = IsHalf(param_.dtype())
                                     ? fmt::format("{} or float32", DTypeName(param_.dtype()))
                                     : DTypeName(param_.dtype());
    return KernelError(fmt::format("{}: {} is {}, expected {} for a {} param", kernel_, name,
                                   DTypeName(t.dtype()), expected, DTypeName(param_.dtype())));
  }

  Status Master(const DeviceTensor& t, DType compute) const {
    IRM_RETURN_IF_ERROR(SameShape("master_param", t));
    if (t.dtype() == compute) return Status::Ok();
    return KernelError(fmt::format("{}: master_param is {}, expected {} for a {} param", kernel_,
                                   DTypeName(t.dtype()), DTypeName(compute),
                                   DTypeName(param_.dtype())));
  }

  // A 1-element floating tensor (learning rate, beta powers); its value stays on the device.
  Status Scalar(const char* name, const DeviceTensor& t) const {
    if (t.numel() != 1) {
      return KernelError(
          fmt::format("{}: {} must hold 1 element, got {}", kernel_, name, t.Describe()));
    }
    if (!IsFloatingDType(t.dtype())) {
      return KernelError(fmt::format("{}: {} is {}, expected a floating-point dtype", kernel_, name,
                                     t.Describe()));
    }
    return Status::Ok();
  }

  StatusOr<const DeviceTensor*> UpdatedMaster(const CudaKernelCall& call, size_t index,
                                              DType compute, bool multi_precision) const {
    if (call.has_input(index)) IRM_RETURN_IF_ERROR(Master(call.input(index), compute));
    if (!multi_precision) return static_cast<const DeviceTensor*>(nullptr);
    if (!call.has_input(index)) {
      return KernelError(
          fmt::format("{}: multi_precision is set but master_param is missing", kernel_));
    }
    return &call.input(index);
  }

 private:
  Status SameShape(const char* name, const DeviceTensor& t) const {
    if (t.shape() == param_.shape()) return Status::Ok();
    return KernelError(fmt::format("{}: {} has shape {}, param has shape {}", kernel_, name,
                                   ShapeToString(t.shape()), ShapeToString(param_.shape())));
  }

  const char* kernel_;
  const DeviceTensor& param_;
};

DType ComputeDType(DType param) {
  return param == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
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
  const DeviceTensor& param = call.input(0);
  const UpdateChecks check("sgd", param);
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", call.input(1)));
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(2)));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                       call.attrs.GetOr<bool>("multi_precision", false));
  const DType compute = ComputeDType(param.dtype());
  IRM_ASSIGN_OR_RETURN(const DeviceTensor* master,
                       check.UpdatedMaster(call, 3, compute, multi_precision));
  IRM_ASSIGN_OR_RETURN(ParamOutputs out, MakeParamOutputs(call, param, 3, master, "sgd"));
  SgdArgs args;
  args.n = param.numel();
  args.param = AnyOf(master != nullptr ? master : &param);
  args.grad = AnyOf(&call.input(2));
  args.learning_rate = AnyOf(&call.input(1));
  args.param_out = AnyOutOf(&out.param_out);
  if (out.master_written) args.master_out = AnyOutOf(&out.master_out);
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchSgd(compute == DType::kFloat64, args, Stream()), "sgd"));
  call.SetOutput(0, std::move(out.param_out));
  if (out.master_out.defined()) call.SetOutput(1, std::move(out.master_out));
  return Status::Ok();
}

// momentum (param, grad, velocity, learning_rate, master_param?) -> (param_out, velocity_out,
// master_param_out?).
Status RunMomentum(CudaKernelCall& call) {
  const DeviceTensor& param = call.input(0);
  const UpdateChecks check("momentum", param);
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(1)));
  IRM_RETURN_IF_ERROR(check.Elementwise("velocity", call.input(2)));
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", call.input(3)));
  MomentumArgs args;
  IRM_ASSIGN_OR_RETURN(args.mu, call.attrs.GetOr<double>("mu", 0.9));
  IRM_ASSIGN_OR_RETURN(args.nesterov, call.attrs.GetOr<bool>("use_nesterov", false));
  IRM_ASSIGN_OR_RETURN(const std::string method,
                       call.attrs.GetOr<std::string>("regularization_method", ""));
  IRM_ASSIGN_OR_RETURN(args.coeff, call.attrs.GetOr<double>("regularization_coeff", 0.0));
  IRM_ASSIGN_OR_RETURN(args.rescale, call.attrs.GetOr<double>("rescale_grad", 1.0));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                       call.attrs.GetOr<bool>("multi_precision", false));
  if (method != "" && method != "l2_decay") {
    return KernelError(
        fmt::format("momentum: regularization_method is '{}', expected '' or 'l2_decay'", method));
  }
  args.l2_decay = method == "l2_decay";
  const DType compute = ComputeDType(param.dtype());
  IRM_ASSIGN_OR_RETURN(const DeviceTensor* master,
                       check.UpdatedMaster(call, 4, compute, multi_precision));
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
      LaunchStatus(LaunchMomentum(compute == DType::kFloat64, args, Stream()), "momentum"));
  call.SetOutput(0, std::move(out.param_out));
  call.SetOutput(1, std::move(velocity_out));
  if (out.master_out.defined()) call.SetOutput(2, std::move(out.master_out));
  return Status::Ok();
}

// The operands and results of adam and adamw, in pd_op order.
enum AdamIn : size_t {
  kParam,
  kGrad,
  kLearningRate,
  kMoment1,
  kMoment2,
  kMoment2Max,
  kBeta1Pow,
  kBeta2Pow,
  kMasterParam,
  kSkipUpdate,
};
enum AdamOut : size_t {
  kParamOut,
  kMoment1Out,
  kMoment2Out,
  kMoment2MaxOut,
  kBeta1PowOut,
  kBeta2PowOut,
  kMasterParamOut,
};

// skip_update: every output a copy of its input.
Status CopyAdamState(CudaKernelCall& call, const char* kernel) {
  const std::pair<size_t, size_t> pairs[] = {{kParam, kParamOut},
                                             {kMoment1, kMoment1Out},
                                             {kMoment2, kMoment2Out},
                                             {kMoment2Max, kMoment2MaxOut},
                                             {kBeta1Pow, kBeta1PowOut},
                                             {kBeta2Pow, kBeta2PowOut},
                                             {kMasterParam, kMasterParamOut}};
  for (const auto& [in, out] : pairs) {
    if (!call.has_input(in) || !call.wants_output(out)) continue;
    IRM_ASSIGN_OR_RETURN(DeviceTensor copy, CopyOf(call.input(in), kernel));
    call.SetOutput(out, std::move(copy));
  }
  return Status::Ok();
}

Status AdamStep(CudaKernelCall& call, const char* kernel, bool is_adamw) {
  const DeviceTensor& param = call.input(kParam);
  const UpdateChecks check(kernel, param);
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(kGrad)));
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", call.input(kLearningRate)));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment1", call.input(kMoment1)));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment2", call.input(kMoment2)));
  if (call.has_input(kMoment2Max)) {
    IRM_RETURN_IF_ERROR(check.Elementwise("moment2_max", call.input(kMoment2Max)));
  }
  IRM_RETURN_IF_ERROR(check.Scalar("beta1_pow", call.input(kBeta1Pow)));
  IRM_RETURN_IF_ERROR(check.Scalar("beta2_pow", call.input(kBeta2Pow)));
  AdamArgs args;
  IRM_ASSIGN_OR_RETURN(args.beta1, call.attrs.Get<double>("beta1"));
  IRM_ASSIGN_OR_RETURN(args.beta2, call.attrs.Get<double>("beta2"));
  IRM_ASSIGN_OR_RETURN(args.epsilon, call.attrs.Get<double>("epsilon"));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                       call.attrs.GetOr<bool>("multi_precision", false));
  IRM_ASSIGN_OR_RETURN(const bool global_beta_pow,
                       call.attrs.GetOr<bool>("use_global_beta_pow", false));
  IRM_ASSIGN_OR_RETURN(args.amsgrad, call.attrs.GetOr<bool>("amsgrad", false));
  if (is_adamw) {
    IRM_ASSIGN_OR_RETURN(args.decay, call.attrs.GetOr<bool>("with_decay", false));
    IRM_ASSIGN_OR_RETURN(args.lr_ratio, call.attrs.GetOr<double>("lr_ratio", 1.0));
    IRM_ASSIGN_OR_RETURN(args.coeff, call.attrs.GetOr<double>("coeff", 0.01));
  }
  if (args.amsgrad && !call.has_input(kMoment2Max)) {
    return KernelError(fmt::format("{}: amsgrad is set but moment2_max is missing", kernel));
  }
  const DType compute = ComputeDType(param.dtype());
  IRM_ASSIGN_OR_RETURN(const DeviceTensor* master,
                       check.UpdatedMaster(call, kMasterParam, compute, multi_precision));
  if (call.has_input(kSkipUpdate)) {
    const DeviceTensor& skip = call.input(kSkipUpdate);
    if (skip.numel() != 1 || skip.dtype() != DType::kBool) {
      return KernelError(
          fmt::format("{}: skip_update is {}, expected one bool", kernel, skip.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(skip, kernel));
    if (host.data<bool>()[0]) return CopyAdamState(call, kernel);
  }

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
  if (global_beta_pow) {
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
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchAdam(compute == DType::kFloat64, args, Stream()), kernel));
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
