// The device-independent half of topk, topk_v1 and accuracy: the attributes, the axis topk runs
// along and its output shape, and accuracy's operand checks. The CPU kernels (metrics.cc, which
// cites Paddle) and the CUDA kernels (cuda/metrics_kernels.cc) both plan with these and only
// compute their own way, so that the two check the same things in the same order with the same
// words.
//
// The checks of the call are templates over the call type: CheckPresent, CheckDType and CheckShape
// are each device's own (kernels/axes.h for Tensor and KernelCall, cuda/cuda_kernel.h for
// DeviceTensor and CudaKernelCall; same wording), found by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

struct TopkAttrs {
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
};
// topk: k, axis and largest; topk_v1 (the legacy top_k): k alone, the last axis, largest.
StatusOr<TopkAttrs> ReadTopkAttrs(const KernelAttrs& attrs);
StatusOr<TopkAttrs> ReadTopkV1Attrs(const KernelAttrs& attrs);

struct TopkPlan {
  int axis = 0;
  AxisSplit split;                 // x as [outer, size, inner] around axis
  std::vector<int64_t> out_shape;  // x's shape with k along axis (out and indices)
};
// x has a dim, axis is one of them, and k is 1 to its size.
StatusOr<TopkPlan> PlanTopk(const Operand& x, const TopkAttrs& attrs);

// accuracy's x (0), indices (1) and label (2) are all given.
template <typename Call>
Status CheckAccuracyPresent(const Call& call) {
  for (size_t i = 0; i < 3; ++i) {
    IRM_RETURN_IF_ERROR(CheckPresent(call, i, i == 0 ? "x" : i == 1 ? "indices" : "label"));
  }
  return Status::Ok();
}

struct AccuracyPlan {
  int64_t samples = 0;
  int64_t k = 0;
  int64_t label_stride = 0;  // label's elements per sample: sample i's label is at i * stride
};
// x has shape [samples, k].
Status CheckAccuracyX(const Operand& x);
// label has at least `samples` rows; then the plan.
StatusOr<AccuracyPlan> PlanAccuracyLabel(const Operand& x, const Operand& label);

// indices and label int64, x of shape [samples, k] with indices of its shape, label with at least
// `samples` rows. x's dtype is the kernel's to check.
template <typename Call>
StatusOr<AccuracyPlan> PlanAccuracy(const Call& call) {
  const auto& x = call.input(0);
  const auto& indices = call.input(1);
  const auto& label = call.input(2);
  IRM_RETURN_IF_ERROR(CheckDType(indices, "indices", {DType::kInt64}));
  IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64}));
  IRM_RETURN_IF_ERROR(CheckAccuracyX(x));
  IRM_RETURN_IF_ERROR(CheckShape(indices, "indices", x.shape(), "the shape of x"));
  return PlanAccuracyLabel(x, label);
}

}  // namespace irm::rt::plan
