// The reference reduction of the in-process communicators: every element reduced over the ranks'
// tensors in rank order 0..N-1, whatever the tensor's size or how it was bucketed, so that a
// result depends only on the values (docs/architecture.md, invariant 2). float16 and bfloat16
// accumulate in float32 and round once; float32 and float64 accumulate in their own type;
// integers are exact (wrapping as the type does); kAvg is the sum divided by N (integer division
// for integers); max and min propagate NaN.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// out[out_begin + i] = reduce over r of inputs[r][in_begin + i], for i in [0, count). Every input
// and `out` have one dtype (the caller checked); `out` may be one of the inputs. kInvalidArgument
// for bool, which no reduction takes.
Status ReduceInRankOrder(const std::vector<const Tensor*>& inputs, ReduceOp op, int64_t in_begin,
                         int64_t count, Tensor& out, int64_t out_begin);

}  // namespace irm::rt
