// Launchers of metrics.cu (the device side of metrics_kernels.cc): topk and accuracy as
// kernels/metrics.cc defines them. Plain descriptions only, as launch.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

// topk along the middle dim of x viewed as [outer, size, inner]: values (x's type) and indices
// (int64) of shape [outer, k, inner]. The order is the CPU's strict one — NaN first when largest
// (last otherwise), then by value, then lowest index first — so each element's place is its rank:
// one thread per element counts the elements before it (no sort, no atomics: the CPU's result).
cudaError_t LaunchTopk(Elem elem, int64_t outer, int64_t size, int64_t inner, int64_t k,
                       bool largest, const void* x, void* values, int64_t* indices,
                       cudaStream_t stream);

// accuracy over `samples` rows of k indices and labels (label_stride apart, all >= 0, checked by
// the host): correct[0] = the rows whose indices hold their label, total[0] = samples,
// accuracy[0] = correct / samples in float32 (0 without samples). One thread, rows in order.
cudaError_t LaunchAccuracy(int64_t samples, int64_t k, int64_t label_stride, const int64_t* indices,
                           const int64_t* label, float* accuracy, int32_t* correct, int32_t* total,
                           cudaStream_t stream);

}  // namespace irm::rt::cuda
