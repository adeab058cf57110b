// Optimizer kernels: one dense update step of sgd, momentum, adam and adamw, as Paddle's phi CPU
// kernels compute it (each kernel cites its source below). Registered for the parameter's dtype:
// float32, float64, float16, bfloat16. Everything is computed in the compute type of numeric.h
// (float32 for the 16-bit types). Optimizer state (velocity, moments, master weight, gradient) is
// kept in the parameter's dtype or, for a 16-bit parameter, in float32 as Paddle's multi-precision
// optimizers keep it; outputs keep each input's dtype. The learning rate and the beta powers are
// 1-element tensors of any floating dtype, read as float64 and cast to the compute type (phi reads
// the learning rate as float64 too).
//
// With multi_precision the float32 master weight is updated and param_out is its rounded copy
// (phi's GPU kernels; the CPU ones have no 16-bit path). An output whose input the step leaves
// alone (the master weight without multi_precision, moment2_max without amsgrad, the beta powers
// with use_global_beta_pow, everything under skip_update) is a copy of that input: in the IR it is
// the same variable, updated in place, so it keeps its value.
//
// Every element is updated independently, so the results do not depend on order or threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// The elements of a floating tensor converted to C.
template <typename C>
std::vector<C> LoadAs(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype()) {
      case DType::kFloat16:
        v[i] = static_cast<C>(ToFloat(t.data<Float16>()[i]));
        break;
      case DType::kBFloat16:
        v[i] = static_cast<C>(ToFloat(t.data<BFloat16>()[i]));
        break;
      case DType::kFloat32:
        v[i] = static_cast<C>(t.data<float>()[i]);
        break;
      default:
        v[i] = static_cast<C>(t.data<double>()[i]);
        break;
    }
  }
  return v;
}

// A tensor of `like`'s dtype and shape holding `v` (one rounding from C).
template <typename C>
Tensor StoreLike(const std::vector<C>& v, const Tensor& like) {
  Tensor t = Tensor::ZerosUnchecked(like.dtype(), like.shape());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (like.dtype()) {
      case DType::kFloat16:
        t.data<Float16>()[i] = ToFloat16(static_cast<float>(v[i]));
        break;
      case DType::kBFloat16:
        t.data<BFloat16>()[i] = ToBFloat16(static_cast<float>(v[i]));
        break;
      case DType::kFloat32:
        t.data<float>()[i] = static_cast<float>(v[i]);
        break;
      default:
        t.data<double>()[i] = static_cast<double>(v[i]);
        break;
    }
  }
  return t;
}

// The input checks every update shares; messages name the kernel and the operand.
class UpdateChecks {
 public:
  UpdateChecks(const char* kernel, const Tensor& param) : kernel_(kernel), param_(param) {}

  // A per-element tensor (gradient, velocity, moment): param's shape, and param's dtype or, for a
  // 16-bit param, float32.
  Status Elementwise(const char* name, const Tensor& t) const {
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

  // The master weight, when given: param's shape, in param's compute type.
  Status Master(const Tensor& t, DType compute) const {
    IRM_RETURN_IF_ERROR(SameShape("master_param", t));
    if (t.dtype() == compute) return Status::Ok();
    return KernelError(fmt::format("{}: master_param is {}, expected {} for a {} param", kernel_,
                                   DTypeName(t.dtype()), DTypeName(compute),
                                   DTypeName(param_.dtype())));
  }

  // The value of a 1-element floating tensor (learning rate, beta powers).
  StatusOr<double> Scalar(const char* name, const Tensor& t) const {
    if (t.numel() != 1) {
      return KernelError(
          fmt::format("{}: {} must hold 1 element, got {}", kernel_, name, t.Describe()));
    }
    if (!IsFloatingDType(t.dtype())) {
      return KernelError(fmt::format("{}: {} is {}, expected a floating-point dtype", kernel_, name,
                                     t.Describe()));
    }
    return LoadAs<double>(t)[0];
  }

  // The master weight the step updates: null without multi_precision; an error when
  // multi_precision is set and none is given.
  StatusOr<const Tensor*> UpdatedMaster(const KernelCall& call, size_t index, DType compute,
                                        bool multi_precision) const {
    if (call.has_input(index)) IRM_RETURN_IF_ERROR(Master(call.input(index), compute));
    if (!multi_precision) return static_cast<const Tensor*>(nullptr);
    if (!call.has_input(index)) {
      return KernelError(
          fmt::format("{}: multi_precision is set but master_param is missing", kernel_));
    }
    return &call.input(index);
  }

 private:
  Status SameShape(const char* name, const Tensor& t) const {
    if (t.shape() == param_.shape()) return Status::Ok();
    return KernelError(fmt::format("{}: {} has shape {}, param has shape {}", kernel_, name,
                                   ShapeToString(t.shape()), ShapeToString(param_.shape())));
  }

  const char* kernel_;
  const Tensor& param_;
};

// The parameter values the step starts from: the master weight's when it is updated.
template <typename T>
std::vector<Compute<T>> ParamValues(const Tensor& param, const Tensor* master) {
  return LoadAs<Compute<T>>(master != nullptr ? *master : param);
}

// Sets param_out (rounded to T) and master_param_out: the updated values when the master was
// updated, else a copy of the master given (or nothing).
template <typename T>
void SetParamOutputs(KernelCall& call, size_t param_out, size_t master_in, size_t master_out,
                     const std::vector<Compute<T>>& p, const Tensor& param, const Tensor* master) {
  call.SetOutput(param_out, StoreLike(p, param));
  if (master != nullptr) {
    call.SetOutput(master_out, StoreLike(p, *master));
  } else if (call.has_input(master_in)) {
    call.SetOutput(master_out, call.input(master_in).Clone());
  }
}

// sgd (param, learning_rate, grad, master_param?) -> (param_out, master_param_out?):
// p - lr * g (paddle/phi/kernels/cpu/sgd_kernel.cc and jit/refer Sgd; the master weight as
// phi's GPU SGDKernelMT).
template <typename T>
struct SgdKernel {
  static Status Run(KernelCall& call) {
    using MT = Compute<T>;
    const Tensor& param = call.input(0);
    const UpdateChecks check("sgd", param);
    IRM_ASSIGN_OR_RETURN(const double lr_value, check.Scalar("learning_rate", call.input(1)));
    IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(2)));
    IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                         call.attrs.GetOr<bool>("multi_precision", false));
    IRM_ASSIGN_OR_RETURN(const Tensor* master,
                         check.UpdatedMaster(call, 3, DTypeOf<MT>(), multi_precision));

    std::vector<MT> p = ParamValues<T>(param, master);
    const std::vector<MT> g = LoadAs<MT>(call.input(2));
    const MT lr = static_cast<MT>(lr_value);
    for (size_t i = 0; i < p.size(); ++i) p[i] = p[i] - lr * g[i];
    SetParamOutputs<T>(call, 0, 3, 1, p, param, master);
    return Status::Ok();
  }
};

// momentum (param, grad, velocity, learning_rate, master_param?) -> (param_out, velocity_out,
// master_param_out?), as paddle/phi/kernels/impl/momentum_kernel_impl.h:
//   g' = g * rescale_grad (+ regularization_coeff * p with l2_decay)
//   v_out = v * mu + g'
//   p_out = p - (g' + v_out * mu) * lr   (nesterov)   or   p - lr * v_out
// The CPU functor there drops rescale_grad; we apply it as the GPU functor does, so that the
// attribute is never silently ignored (at the default 1 both give the same bits).
template <typename T>
struct MomentumKernel {
  static Status Run(KernelCall& call) {
    using MT = Compute<T>;
    const Tensor& param = call.input(0);
    const UpdateChecks check("momentum", param);
    IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(1)));
    IRM_RETURN_IF_ERROR(check.Elementwise("velocity", call.input(2)));
    IRM_ASSIGN_OR_RETURN(const double lr_value, check.Scalar("learning_rate", call.input(3)));
    IRM_ASSIGN_OR_RETURN(const double mu_attr, call.attrs.GetOr<double>("mu", 0.9));
    IRM_ASSIGN_OR_RETURN(const bool nesterov, call.attrs.GetOr<bool>("use_nesterov", false));
    IRM_ASSIGN_OR_RETURN(const std::string method,
                         call.attrs.GetOr<std::string>("regularization_method", ""));
    IRM_ASSIGN_OR_RETURN(const double coeff_attr,
                         call.attrs.GetOr<double>("regularization_coeff", 0.0));
    IRM_ASSIGN_OR_RETURN(const double rescale_attr, call.attrs.GetOr<double>("rescale_grad", 1.0));
    IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                         call.attrs.GetOr<bool>("multi_precision", false));
    if (method != "" && method != "l2_decay") {
      return KernelError(fmt::format(
          "momentum: regularization_method is '{}', expected '' or 'l2_decay'", method));
    }
    IRM_ASSIGN_OR_RETURN(const Tensor* master,
                         check.UpdatedMaster(call, 4, DTypeOf<MT>(), multi_precision));

    std::vector<MT> p = ParamValues<T>(param, master);
    const std::vector<MT> g = LoadAs<MT>(call.input(1));
    std::vector<MT> v = LoadAs<MT>(call.input(2));
    const MT lr = static_cast<MT>(lr_value);
    const MT mu = static_cast<MT>(mu_attr);
    const MT coeff = static_cast<MT>(coeff_attr);
    const MT rescale = static_cast<MT>(rescale_attr);
    const bool l2_decay = method == "l2_decay";
    for (size_t i = 0; i < p.size(); ++i) {
      MT grad = g[i] * rescale;
      if (l2_decay) grad = p[i] * coeff + grad;
      v[i] = v[i] * mu + grad;
      p[i] = nesterov ? p[i] - (grad + v[i] * mu) * lr : p[i] - lr * v[i];
    }
    call.SetOutput(1, StoreLike(v, call.input(2)));
    SetParamOutputs<T>(call, 0, 4, 2, p, param, master);
    return Status::Ok();
  }
};

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

// Every output equal to its input: skip_update.
void CopyAdamState(KernelCall& call) {
  const std::pair<size_t, size_t> pairs[] = {{kParam, kParamOut},
                                             {kMoment1, kMoment1Out},
                                             {kMoment2, kMoment2Out},
                                             {kMoment2Max, kMoment2MaxOut},
                                             {kBeta1Pow, kBeta1PowOut},
                                             {kBeta2Pow, kBeta2PowOut},
                                             {kMasterParam, kMasterParamOut}};
  for (const auto& [in, out] : pairs) {
    if (call.has_input(in)) call.SetOutput(out, call.input(in).Clone());
  }
}

// adam and adamw (param, grad, learning_rate, moment1, moment2, moment2_max?, beta1_pow,
// beta2_pow, master_param?, skip_update?) -> (param_out, moment1_out, moment2_out,
// moment2_max_out?, beta1_pow_out, beta2_pow_out, master_param_out?), as
// paddle/phi/kernels/cpu/adam_kernel.cc, cpu/adamw_kernel.cc and the jit/refer Adam/AdamW loops:
//   lr' = lr * (sqrt(1 - beta2_pow) / (1 - beta1_pow)),  eps' = epsilon * sqrt(1 - beta2_pow)
//   p   = p - lr * lr_ratio * coeff * p                   (adamw with with_decay only)
//   m1  = beta1 * m1 + (1 - beta1) * g,  m2 = beta2 * m2 + (1 - beta2) * g * g
//   m2max = max(m2, m2max) (amsgrad),    p_out = p + (-lr') * (m1 / (sqrt(m2 or m2max) + eps'))
//   beta1_pow_out = beta1 * beta1_pow, beta2_pow_out = beta2 * beta2_pow (unless global)
// As phi's CPU adamw, lr_ratio scales the decay only (its GPU kernel also scales the step).
template <typename T>
Status AdamStep(KernelCall& call, const char* kernel, bool is_adamw) {
  using MT = Compute<T>;
  const Tensor& param = call.input(kParam);
  const UpdateChecks check(kernel, param);
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", call.input(kGrad)));
  IRM_ASSIGN_OR_RETURN(const double lr_value,
                       check.Scalar("learning_rate", call.input(kLearningRate)));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment1", call.input(kMoment1)));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment2", call.input(kMoment2)));
  if (call.has_input(kMoment2Max)) {
    IRM_RETURN_IF_ERROR(check.Elementwise("moment2_max", call.input(kMoment2Max)));
  }
  IRM_ASSIGN_OR_RETURN(const double beta1_pow, check.Scalar("beta1_pow", call.input(kBeta1Pow)));
  IRM_ASSIGN_OR_RETURN(const double beta2_pow, check.Scalar("beta2_pow", call.input(kBeta2Pow)));
  IRM_ASSIGN_OR_RETURN(const double beta1_attr, call.attrs.Get<double>("beta1"));
  IRM_ASSIGN_OR_RETURN(const double beta2_attr, call.attrs.Get<double>("beta2"));
  IRM_ASSIGN_OR_RETURN(const double epsilon_attr, call.attrs.Get<double>("epsilon"));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision,
                       call.attrs.GetOr<bool>("multi_precision", false));
  IRM_ASSIGN_OR_RETURN(const bool global_beta_pow,
                       call.attrs.GetOr<bool>("use_global_beta_pow", false));
  IRM_ASSIGN_OR_RETURN(const bool amsgrad, call.attrs.GetOr<bool>("amsgrad", false));
  bool decay = false;
  double lr_ratio_attr = 1.0, coeff_attr = 0.0;
  if (is_adamw) {
    IRM_ASSIGN_OR_RETURN(decay, call.attrs.GetOr<bool>("with_decay", false));
    IRM_ASSIGN_OR_RETURN(lr_ratio_attr, call.attrs.GetOr<double>("lr_ratio", 1.0));
    IRM_ASSIGN_OR_RETURN(coeff_attr, call.attrs.GetOr<double>("coeff", 0.01));
  }
  if (amsgrad && !call.has_input(kMoment2Max)) {
    return KernelError(fmt::format("{}: amsgrad is set but moment2_max is missing", kernel));
  }
  IRM_ASSIGN_OR_RETURN(const Tensor* master,
                       check.UpdatedMaster(call, kMasterParam, DTypeOf<MT>(), multi_precision));
  if (call.has_input(kSkipUpdate)) {
    const Tensor& skip = call.input(kSkipUpdate);
    if (skip.numel() != 1 || skip.dtype() != DType::kBool) {
      return KernelError(
          fmt::format("{}: skip_update is {}, expected one bool", kernel, skip.Describe()));
    }
    if (skip.data<bool>()[0]) {
      CopyAdamState(call);
      return Status::Ok();
    }
  }

  const MT beta1 = static_cast<MT>(beta1_attr);
  const MT beta2 = static_cast<MT>(beta2_attr);
  const MT beta1_p = static_cast<MT>(beta1_pow);
  const MT beta2_p = static_cast<MT>(beta2_pow);
  const MT one = 1;
  const MT lr = static_cast<MT>(lr_value) * (std::sqrt(one - beta2_p) / (one - beta1_p));
  const MT eps = static_cast<MT>(epsilon_attr) * std::sqrt(one - beta2_p);
  const MT decay_scale = static_cast<MT>(lr_value) * static_cast<MT>(lr_ratio_attr) *
                         static_cast<MT>(coeff_attr);  // old_lr * lr_ratio * coeff

  std::vector<MT> p = ParamValues<T>(param, master);
  const std::vector<MT> g = LoadAs<MT>(call.input(kGrad));
  std::vector<MT> m1 = LoadAs<MT>(call.input(kMoment1));
  std::vector<MT> m2 = LoadAs<MT>(call.input(kMoment2));
  std::vector<MT> m2_max;
  if (amsgrad) m2_max = LoadAs<MT>(call.input(kMoment2Max));
  for (size_t i = 0; i < p.size(); ++i) {
    MT pi = p[i];
    if (decay) pi = pi - decay_scale * pi;
    m1[i] = beta1 * m1[i] + (one - beta1) * g[i];
    m2[i] = beta2 * m2[i] + (one - beta2) * g[i] * g[i];
    MT m2_used = m2[i];
    if (amsgrad) m2_used = m2_max[i] = std::max(m2[i], m2_max[i]);
    p[i] = pi + -lr * (m1[i] / (std::sqrt(m2_used) + eps));
  }

  SetParamOutputs<T>(call, kParamOut, kMasterParam, kMasterParamOut, p, param, master);
  call.SetOutput(kMoment1Out, StoreLike(m1, call.input(kMoment1)));
  call.SetOutput(kMoment2Out, StoreLike(m2, call.input(kMoment2)));
  if (amsgrad) {
    call.SetOutput(kMoment2MaxOut, StoreLike(m2_max, call.input(kMoment2Max)));
  } else if (call.has_input(kMoment2Max)) {
    call.SetOutput(kMoment2MaxOut, call.input(kMoment2Max).Clone());
  }
  if (global_beta_pow) {
    call.SetOutput(kBeta1PowOut, call.input(kBeta1Pow).Clone());
    call.SetOutput(kBeta2PowOut, call.input(kBeta2Pow).Clone());
  } else {
    call.SetOutput(kBeta1PowOut,
                   StoreLike(std::vector<MT>{beta1 * beta1_p}, call.input(kBeta1Pow)));
    call.SetOutput(kBeta2PowOut,
                   StoreLike(std::vector<MT>{beta2 * beta2_p}, call.input(kBeta2Pow)));
  }
  return Status::Ok();
}

template <typename T>
struct AdamKernel {
  static Status Run(KernelCall& call) { return AdamStep<T>(call, "adam", false); }
};

template <typename T>
struct AdamwKernel {
  static Status Run(KernelCall& call) { return AdamStep<T>(call, "adamw", true); }
};

}  // namespace

Status RegisterOptimizerKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<SgdKernel, float, double, Float16, BFloat16>(
      registry, "sgd", {.min_inputs = 3, .max_inputs = 4, .num_outputs = 2})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<MomentumKernel, float, double, Float16, BFloat16>(
      registry, "momentum", {.min_inputs = 4, .max_inputs = 5, .num_outputs = 3})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<AdamKernel, float, double, Float16, BFloat16>(
      registry, "adam", {.min_inputs = 8, .max_inputs = 10, .num_outputs = 7})));
  return RegisterForTypes<AdamwKernel, float, double, Float16, BFloat16>(
      registry, "adamw", {.min_inputs = 8, .max_inputs = 10, .num_outputs = 7});
}

}  // namespace irm::rt
