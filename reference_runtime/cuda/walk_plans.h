// Host-side plans that turn shapes into launch.h walks for the CUDA kernel files (elementwise,
// logical, elementwise_more, prod, gather kernels): the two operand walks of a broadcasting binary
// op, one operand's grad plan, and a walk from dims and strides. Each error names the kernel ("gpu
// equal: shape [...] has more than 8 dims after merging").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

// x and y broadcast to `shape` (kernels/broadcast.h: the error names x and y when they do not).
struct BinaryWalks {
  std::vector<int64_t> shape;
  Walk x, y;
};
StatusOr<BinaryWalks> PlanBinaryWalks(const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                      std::string_view kernel);

// The grad plan of operand `self` of a binary op whose other operand is `other` and whose output
// (and out_grad) is `out` (the sums of launch.h's GradPlan, in increasing output index).
StatusOr<GradPlan> PlanOperandGrad(const std::vector<int64_t>& self,
                                   const std::vector<int64_t>& other,
                                   const std::vector<int64_t>& out, std::string_view kernel);

// A walk over `dims` with `strides` (size-1 dims dropped: they never move the offset).
StatusOr<Walk> WalkOf(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                      std::string_view kernel);

}  // namespace irm::rt::cuda
