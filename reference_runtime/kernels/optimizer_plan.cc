// The optimizer kernels' plans (optimizer_plan.h): operand checks and attributes.
#include "reference_runtime/kernels/optimizer_plan.h"

#include <fmt/format.h>

#include <string>

namespace irm::rt::plan {
namespace {

bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

// Operand i, absent when the call has fewer inputs.
Operand At(const std::vector<Operand>& in, size_t i) { return i < in.size() ? in[i] : Operand(); }

// The input checks every update shares; messages name the kernel and the operand.
class UpdateChecks {
 public:
  UpdateChecks(const char* kernel, const Operand& param) : kernel_(kernel), param_(param) {}

  // A per-element tensor (gradient, velocity, moment): param's shape, and param's dtype or, for a
  // 16-bit param, float32.
  Status Elementwise(const char* name, const Operand& t) const {
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

  // A 1-element floating tensor (learning rate, beta powers).
  Status Scalar(const char* name, const Operand& t) const {
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

  // Whether the step updates the master weight `master` (absent when none is given): not
  // without multi_precision; an error when multi_precision is set and none is given. A master
  // given must have param's shape, in param's compute type.
  StatusOr<bool> UpdatesMaster(const Operand& master, DType compute, bool multi_precision) const {
    if (master.present()) {
      IRM_RETURN_IF_ERROR(SameShape("master_param", master));
      if (master.dtype() != compute) {
        return KernelError(fmt::format("{}: master_param is {}, expected {} for a {} param",
                                       kernel_, DTypeName(master.dtype()), DTypeName(compute),
                                       DTypeName(param_.dtype())));
      }
    }
    if (!multi_precision) return false;
    if (!master.present()) {
      return KernelError(
          fmt::format("{}: multi_precision is set but master_param is missing", kernel_));
    }
    return true;
  }

 private:
  Status SameShape(const char* name, const Operand& t) const {
    if (t.shape() == param_.shape()) return Status::Ok();
    return KernelError(fmt::format("{}: {} has shape {}, param has shape {}", kernel_, name,
                                   ShapeToString(t.shape()), ShapeToString(param_.shape())));
  }

  const char* kernel_;
  const Operand& param_;
};

}  // namespace

DType UpdateComputeDType(DType param) {
  return param == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

StatusOr<SgdPlan> PlanSgd(const std::vector<Operand>& in, const KernelAttrs& attrs) {
  const UpdateChecks check("sgd", in[0]);
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", in[1]));
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", in[2]));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision, attrs.GetOr<bool>("multi_precision", false));
  SgdPlan plan;
  plan.compute = UpdateComputeDType(in[0].dtype());
  IRM_ASSIGN_OR_RETURN(plan.updates_master,
                       check.UpdatesMaster(At(in, 3), plan.compute, multi_precision));
  return plan;
}

StatusOr<MomentumPlan> PlanMomentum(const std::vector<Operand>& in, const KernelAttrs& attrs) {
  const UpdateChecks check("momentum", in[0]);
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", in[1]));
  IRM_RETURN_IF_ERROR(check.Elementwise("velocity", in[2]));
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", in[3]));
  MomentumPlan plan;
  IRM_ASSIGN_OR_RETURN(plan.mu, attrs.GetOr<double>("mu", 0.9));
  IRM_ASSIGN_OR_RETURN(plan.nesterov, attrs.GetOr<bool>("use_nesterov", false));
  IRM_ASSIGN_OR_RETURN(const std::string method,
                       attrs.GetOr<std::string>("regularization_method", ""));
  IRM_ASSIGN_OR_RETURN(plan.coeff, attrs.GetOr<double>("regularization_coeff", 0.0));
  IRM_ASSIGN_OR_RETURN(plan.rescale, attrs.GetOr<double>("rescale_grad", 1.0));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision, attrs.GetOr<bool>("multi_precision", false));
  if (method != "" && method != "l2_decay") {
    return KernelError(
        fmt::format("momentum: regularization_method is '{}', expected '' or 'l2_decay'", method));
  }
  plan.l2_decay = method == "l2_decay";
  plan.compute = UpdateComputeDType(in[0].dtype());
  IRM_ASSIGN_OR_RETURN(plan.updates_master,
                       check.UpdatesMaster(At(in, 4), plan.compute, multi_precision));
  return plan;
}

StatusOr<AdamPlan> PlanAdam(const std::vector<Operand>& in, const KernelAttrs& attrs,
                            const char* kernel, bool is_adamw) {
  const UpdateChecks check(kernel, in[kParam]);
  IRM_RETURN_IF_ERROR(check.Elementwise("grad", in[kGrad]));
  IRM_RETURN_IF_ERROR(check.Scalar("learning_rate", in[kLearningRate]));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment1", in[kMoment1]));
  IRM_RETURN_IF_ERROR(check.Elementwise("moment2", in[kMoment2]));
  const Operand moment2_max = At(in, kMoment2Max);
  if (moment2_max.present()) IRM_RETURN_IF_ERROR(check.Elementwise("moment2_max", moment2_max));
  IRM_RETURN_IF_ERROR(check.Scalar("beta1_pow", in[kBeta1Pow]));
  IRM_RETURN_IF_ERROR(check.Scalar("beta2_pow", in[kBeta2Pow]));
  AdamPlan plan;
  IRM_ASSIGN_OR_RETURN(plan.beta1, attrs.Get<double>("beta1"));
  IRM_ASSIGN_OR_RETURN(plan.beta2, attrs.Get<double>("beta2"));
  IRM_ASSIGN_OR_RETURN(plan.epsilon, attrs.Get<double>("epsilon"));
  IRM_ASSIGN_OR_RETURN(const bool multi_precision, attrs.GetOr<bool>("multi_precision", false));
  IRM_ASSIGN_OR_RETURN(plan.global_beta_pow, attrs.GetOr<bool>("use_global_beta_pow", false));
  IRM_ASSIGN_OR_RETURN(plan.amsgrad, attrs.GetOr<bool>("amsgrad", false));
  if (is_adamw) {
    IRM_ASSIGN_OR_RETURN(plan.decay, attrs.GetOr<bool>("with_decay", false));
    IRM_ASSIGN_OR_RETURN(plan.lr_ratio, attrs.GetOr<double>("lr_ratio", 1.0));
    IRM_ASSIGN_OR_RETURN(plan.coeff, attrs.GetOr<double>("coeff", 0.01));
  }
  if (plan.amsgrad && !moment2_max.present()) {
    return KernelError(fmt::format("{}: amsgrad is set but moment2_max is missing", kernel));
  }
  plan.compute = UpdateComputeDType(in[kParam].dtype());
  IRM_ASSIGN_OR_RETURN(plan.updates_master,
                       check.UpdatesMaster(At(in, kMasterParam), plan.compute, multi_precision));
  const Operand skip = At(in, kSkipUpdate);
  if (skip.present() && (skip.numel() != 1 || skip.dtype() != DType::kBool)) {
    return KernelError(
        fmt::format("{}: skip_update is {}, expected one bool", kernel, skip.Describe()));
  }
  return plan;
}

}  // namespace irm::rt::plan
