// The device-independent half of the optimizer kernels (sgd, momentum, adam, adamw): check the
// operands against the parameter, read the attributes, and decide whether the master weight is
// updated. The CPU kernels (optimizer.cc, which cites the Paddle kernels each step follows) and
// the CUDA kernels (cuda/optimizer_kernels.cc) both plan with these and only compute the step
// their own way, so that the two check the same things in the same order with the same words.
//
// The operands are the kernel's inputs in pd_op order (plan::OperandsOf); an optional input
// nobody gave, or one past the inputs given, is absent.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// The type a step computes in: float64 for a float64 parameter, float32 otherwise (numeric.h's
// compute type).
DType UpdateComputeDType(DType param);

// sgd (param, learning_rate, grad, master_param?).
struct SgdPlan {
  DType compute = DType::kFloat32;
  bool updates_master = false;  // multi_precision: the master weight is updated, param_out rounded
};
StatusOr<SgdPlan> PlanSgd(const std::vector<Operand>& in, const KernelAttrs& attrs);

// momentum (param, grad, velocity, learning_rate, master_param?).
struct MomentumPlan {
  DType compute = DType::kFloat32;
  bool updates_master = false;
  double mu = 0.9;
  bool nesterov = false;
  bool l2_decay = false;  // regularization_method "l2_decay" (else "")
  double coeff = 0.0;     // regularization_coeff
  double rescale = 1.0;   // rescale_grad
};
StatusOr<MomentumPlan> PlanMomentum(const std::vector<Operand>& in, const KernelAttrs& attrs);

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
// Each state input and the output that is its next value (what skip_update copies).
inline constexpr std::pair<size_t, size_t> kAdamStateOutputs[] = {{kParam, kParamOut},
                                                                  {kMoment1, kMoment1Out},
                                                                  {kMoment2, kMoment2Out},
                                                                  {kMoment2Max, kMoment2MaxOut},
                                                                  {kBeta1Pow, kBeta1PowOut},
                                                                  {kBeta2Pow, kBeta2PowOut},
                                                                  {kMasterParam, kMasterParamOut}};

// adam and adamw. skip_update, when given, is checked (one bool) but not read: its value is on
// the kernel's device.
struct AdamPlan {
  DType compute = DType::kFloat32;
  bool updates_master = false;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  bool global_beta_pow = false;  // use_global_beta_pow: the beta powers are left alone
  bool amsgrad = false;
  bool decay = false;     // adamw's with_decay (adam: none)
  double lr_ratio = 1.0;  // adamw's
  double coeff = 0.0;     // adamw's (its default is 0.01)
};
StatusOr<AdamPlan> PlanAdam(const std::vector<Operand>& in, const KernelAttrs& attrs,
                            const char* kernel, bool is_adamw);

}  // namespace irm::rt::plan
