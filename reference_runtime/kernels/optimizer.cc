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
// Every element is updated independently, so the results do not depend on order or threads. The
// operand checks and the attributes are the plans the CUDA kernels share (optimizer_plan.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/optimizer_plan.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

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

// The value of a 1-element floating tensor (learning rate, beta powers) the plan has checked.
double ScalarValue(const Tensor& t) { return LoadAs<double>(t)[0]; }

// The master weight the step updates (null unless the plan says it is updated).
const Tensor* UpdatedMaster(const KernelCall& call, size_t index, bool updates_master) {
  return updates_master ? &call.input(index) : nullptr;
}

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
    IRM_ASSIGN_OR_RETURN(const plan::SgdPlan step,
                         plan::PlanSgd(plan::OperandsOf(call), call.attrs));
    const Tensor& param = call.input(0);
    const Tensor* master = UpdatedMaster(call, 3, step.updates_master);
    const double lr_value = ScalarValue(call.input(1));

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
    IRM_ASSIGN_OR_RETURN(const plan::MomentumPlan step,
                         plan::PlanMomentum(plan::OperandsOf(call), call.attrs));
    const Tensor& param = call.input(0);
    const Tensor* master = UpdatedMaster(call, 4, step.updates_master);
    const double lr_value = ScalarValue(call.input(3));

    std::vector<MT> p = ParamValues<T>(param, master);
    const std::vector<MT> g = LoadAs<MT>(call.input(1));
    std::vector<MT> v = LoadAs<MT>(call.input(2));
    const MT lr = static_cast<MT>(lr_value);
    const MT mu = static_cast<MT>(step.mu);
    const MT coeff = static_cast<MT>(step.coeff);
    const MT rescale = static_cast<MT>(step.rescale);
    for (size_t i = 0; i < p.size(); ++i) {
      MT grad = g[i] * rescale;
      if (step.l2_decay) grad = p[i] * coeff + grad;
      v[i] = v[i] * mu + grad;
      p[i] = step.nesterov ? p[i] - (grad + v[i] * mu) * lr : p[i] - lr * v[i];
    }
    call.SetOutput(1, StoreLike(v, call.input(2)));
    SetParamOutputs<T>(call, 0, 4, 2, p, param, master);
    return Status::Ok();
  }
};

using enum plan::AdamIn;
using enum plan::AdamOut;

// Every output equal to its input: skip_update.
void CopyAdamState(KernelCall& call) {
  for (const auto& [in, out] : plan::kAdamStateOutputs) {
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
  IRM_ASSIGN_OR_RETURN(const plan::AdamPlan step,
                       plan::PlanAdam(plan::OperandsOf(call), call.attrs, kernel, is_adamw));
  if (call.has_input(kSkipUpdate) && call.input(kSkipUpdate).data<bool>()[0]) {
    CopyAdamState(call);
    return Status::Ok();
  }
  const Tensor& param = call.input(kParam);
  const Tensor* master = UpdatedMaster(call, kMasterParam, step.updates_master);
  const double lr_value = ScalarValue(call.input(kLearningRate));
  const double beta1_pow = ScalarValue(call.input(kBeta1Pow));
  const double beta2_pow = ScalarValue(call.input(kBeta2Pow));

  const MT beta1 = static_cast<MT>(step.beta1);
  const MT beta2 = static_cast<MT>(step.beta2);
  const MT beta1_p = static_cast<MT>(beta1_pow);
  const MT beta2_p = static_cast<MT>(beta2_pow);
  const MT one = 1;
  const MT lr = static_cast<MT>(lr_value) * (std::sqrt(one - beta2_p) / (one - beta1_p));
  const MT eps = static_cast<MT>(step.epsilon) * std::sqrt(one - beta2_p);
  const MT decay_scale = static_cast<MT>(lr_value) * static_cast<MT>(step.lr_ratio) *
                         static_cast<MT>(step.coeff);  // old_lr * lr_ratio * coeff

  std::vector<MT> p = ParamValues<T>(param, master);
  const std::vector<MT> g = LoadAs<MT>(call.input(kGrad));
  std::vector<MT> m1 = LoadAs<MT>(call.input(kMoment1));
  std::vector<MT> m2 = LoadAs<MT>(call.input(kMoment2));
  std::vector<MT> m2_max;
  if (step.amsgrad) m2_max = LoadAs<MT>(call.input(kMoment2Max));
  for (size_t i = 0; i < p.size(); ++i) {
    MT pi = p[i];
    if (step.decay) pi = pi - decay_scale * pi;
    m1[i] = beta1 * m1[i] + (one - beta1) * g[i];
    m2[i] = beta2 * m2[i] + (one - beta2) * g[i] * g[i];
    MT m2_used = m2[i];
    if (step.amsgrad) m2_used = m2_max[i] = std::max(m2[i], m2_max[i]);
    p[i] = pi + -lr * (m1[i] / (std::sqrt(m2_used) + eps));
  }

  SetParamOutputs<T>(call, kParamOut, kMasterParam, kMasterParamOut, p, param, master);
  call.SetOutput(kMoment1Out, StoreLike(m1, call.input(kMoment1)));
  call.SetOutput(kMoment2Out, StoreLike(m2, call.input(kMoment2)));
  if (step.amsgrad) {
    call.SetOutput(kMoment2MaxOut, StoreLike(m2_max, call.input(kMoment2Max)));
  } else if (call.has_input(kMoment2Max)) {
    call.SetOutput(kMoment2MaxOut, call.input(kMoment2Max).Clone());
  }
  if (step.global_beta_pow) {
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
