// The device world's one kernel (collective.cu): every element reduced over the ranks' device
// buffers in rank order 0..N-1, each element's operations those of the reference reduction
// (comm/reduce.h): float16 and bfloat16 in float32 rounded once, float32 and float64 in their own
// type, integers wrapping, max and min propagating NaN, avg the sum divided by N (integer division
// for integers). With -fmad=false the bits are the thread backend's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

// The most ranks one launch reduces over (the pointers travel as a kernel parameter).
inline constexpr int kMaxReduceRanks = 64;

struct RankBuffers {
  const void* data[kMaxReduceRanks] = {};
  int count = 0;
};

// out[i] = reduce over r of inputs.data[r][i] for i in [0, count); `op` is a ReduceOp's value
// (kSum 0, kMax 1, kMin 2, kProd 3, kAvg 4). `out` may be one of the inputs. cudaErrorInvalidValue
// for bool or a bad op.
cudaError_t LaunchRankOrderReduce(Elem elem, int op, const RankBuffers& inputs, void* out,
                                  int64_t count, cudaStream_t stream);

}  // namespace irm::rt::cuda
