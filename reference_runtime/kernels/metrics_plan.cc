// The metrics kernels' plans (metrics_plan.h).
#include "reference_runtime/kernels/metrics_plan.h"

#include <fmt/format.h>

namespace irm::rt::plan {

StatusOr<TopkAttrs> ReadTopkAttrs(const KernelAttrs& attrs) {
  TopkAttrs read;
  IRM_ASSIGN_OR_RETURN(read.k, attrs.GetOr<int64_t>("k", 1));
  IRM_ASSIGN_OR_RETURN(read.axis, attrs.GetOr<int64_t>("axis", -1));
  IRM_ASSIGN_OR_RETURN(read.largest, attrs.GetOr<bool>("largest", true));
  return read;
}

StatusOr<TopkAttrs> ReadTopkV1Attrs(const KernelAttrs& attrs) {
  TopkAttrs read;
  IRM_ASSIGN_OR_RETURN(read.k, attrs.GetOr<int64_t>("k", 1));
  return read;
}

StatusOr<TopkPlan> PlanTopk(const Operand& x, const TopkAttrs& attrs) {
  if (x.rank() == 0) return KernelError("x is 0-D; topk needs at least one dim");
  TopkPlan plan;
  IRM_ASSIGN_OR_RETURN(plan.axis, rt::NormalizeAxis(attrs.axis, x.shape(), "axis"));
  plan.split = SplitAround(x.shape(), plan.axis);
  if (attrs.k < 1 || attrs.k > plan.split.size) {
    return KernelError(fmt::format("k is {}, expected 1 to {} (the size of axis {})", attrs.k,
                                   plan.split.size, plan.axis));
  }
  plan.out_shape = x.shape();
  plan.out_shape[static_cast<size_t>(plan.axis)] = attrs.k;
  return plan;
}

Status CheckAccuracyX(const Operand& x) {
  if (x.rank() == 2) return Status::Ok();
  return KernelError(
      fmt::format("x has shape {}, expected [samples, k]", ShapeToString(x.shape())));
}

StatusOr<AccuracyPlan> PlanAccuracyLabel(const Operand& x, const Operand& label) {
  AccuracyPlan plan;
  plan.samples = x.dim(0);
  plan.k = x.dim(1);
  if (label.rank() == 0 || label.dim(0) < plan.samples) {
    return KernelError(fmt::format("label has shape {}, expected at least {} samples",
                                   ShapeToString(label.shape()), plan.samples));
  }
  plan.label_stride = label.dim(0) == 0 ? 0 : label.numel() / label.dim(0);
  return plan;
}

}  // namespace irm::rt::plan
