// batch_norm's plan (batch_norm_plan.h): x as [n, c, s] and the mode.
#include "reference_runtime/kernels/batch_norm_plan.h"

#include <fmt/format.h>

#include "reference_runtime/kernels/conv_net_plan.h"

namespace irm::rt::plan {

StatusOr<BatchNormPlan> PlanBatchNorm(const Operand& x, const KernelAttrs& attrs) {
  BatchNormPlan p;
  IRM_ASSIGN_OR_RETURN(p.channel_last, ReadChannelLast(attrs));
  if (x.rank() < 2 || x.rank() > 5) {
    return KernelError(
        fmt::format("x has shape {}, expected 2 to 5 dims", ShapeToString(x.shape())));
  }
  p.n = x.dim(0);
  p.c = p.channel_last ? x.dim(x.rank() - 1) : x.dim(1);
  p.s = p.n * p.c == 0 ? 0 : x.numel() / p.n / p.c;
  return p;
}

StatusOr<BatchNormMode> ReadBatchNormMode(const KernelAttrs& attrs) {
  BatchNormMode mode;
  IRM_ASSIGN_OR_RETURN(const bool is_test, attrs.GetOr<bool>("is_test", false));
  IRM_ASSIGN_OR_RETURN(const bool use_global, attrs.GetOr<bool>("use_global_stats", false));
  IRM_ASSIGN_OR_RETURN(const bool trainable, attrs.GetOr<bool>("trainable_statistics", false));
  // Paddle's batch_norm_kernel.cc: test_mode = is_test && !trainable_statistics.
  mode.global_stats = (is_test && !trainable) || use_global;
  IRM_ASSIGN_OR_RETURN(mode.momentum, attrs.GetOr<double>("momentum", 0.9));
  IRM_ASSIGN_OR_RETURN(mode.epsilon, attrs.GetOr<double>("epsilon", 1e-5));
  return mode;
}

}  // namespace irm::rt::plan
