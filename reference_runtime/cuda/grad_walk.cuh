// The sum behind every binary op's grad on the device (launch.h's GradPlan), shared by the .cu
// files that run one (elementwise.cu, elementwise_more.cu): element j of the operand ("self") is
// the sum, from zero in the compute type C and in increasing output index (the CPU's order,
// kernels/broadcast.h), of term(out_offset, other_offset) over the outputs that read it. Each
// file gives its own term. Device code only (nvcc).
#pragma once

#include <cstdint>

#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

// Adds to *out and *other the offsets of position `index` of `walk` (out_grad's strides in the
// walk, the other operand's in other_strides).
__device__ __forceinline__ void AddWalkOffsets(const Walk& walk, const int64_t* other_strides,
                                               int64_t index, int64_t* out, int64_t* other) {
  for (int d = walk.rank - 1; d >= 0; --d) {
    const int64_t at = index % walk.dims[d];
    index /= walk.dims[d];
    *out += at * walk.strides[d];
    *other += at * other_strides[d];
  }
}

template <typename C, typename Term>
__device__ __forceinline__ C SumGradTerms(const GradPlan& plan, int64_t j, Term term) {
  // j's offsets along the dims self keeps, then each reduced position's on top.
  int64_t out_base = 0;
  int64_t other_base = 0;
  AddWalkOffsets(plan.kept, plan.other_kept_strides, j, &out_base, &other_base);
  C sum = 0;
  for (int64_t r = 0; r < plan.reduce_count; ++r) {
    int64_t out_offset = out_base;
    int64_t other_offset = other_base;
    AddWalkOffsets(plan.reduced, plan.other_reduced_strides, r, &out_offset, &other_offset);
    sum += term(out_offset, other_offset);
  }
  return sum;
}

}  // namespace irm::rt::cuda
