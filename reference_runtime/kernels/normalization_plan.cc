// layer_norm's plan (normalization_plan.h): rows × n, epsilon and the statistics' dtype.
#include "reference_runtime/kernels/normalization_plan.h"

#include <fmt/format.h>

namespace irm::rt::plan {

StatusOr<LayerNormPlan> PlanLayerNorm(const Operand& x, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(const int64_t begin, attrs.GetOr<int64_t>("begin_norm_axis", 1));
  if (x.rank() == 0) return KernelError("x of shape [] has no dims to normalise");
  if (begin < 0 || begin >= x.rank()) {
    return KernelError(
        fmt::format("begin_norm_axis {} is out of range for x of shape {} (valid: "
                    "0 to {})",
                    begin, ShapeToString(x.shape()), x.rank() - 1));
  }
  const AxisSplit split = SplitAround(x.shape(), static_cast<int>(begin));
  LayerNormPlan plan;
  plan.rows = split.outer;
  plan.n = split.size * split.inner;
  plan.why_n = fmt::format("the size of x of shape {} from begin_norm_axis {}",
                           ShapeToString(x.shape()), begin);
  plan.why_rows = fmt::format("one per row of x of shape {} before begin_norm_axis {}",
                              ShapeToString(x.shape()), begin);
  IRM_ASSIGN_OR_RETURN(plan.epsilon, attrs.GetOr<double>("epsilon", 1e-5));
  plan.stat_dtype = x.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  return plan;
}

bool IsHalfFloat(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

}  // namespace irm::rt::plan
