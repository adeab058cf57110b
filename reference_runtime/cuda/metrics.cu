// Device code of metrics_launch.h: topk by rank counting and accuracy on one thread, both giving
// kernels/metrics.cc's results exactly (they only compare and count).
#include <cmath>
#include <cstdint>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/metrics_launch.h"

namespace irm::rt::cuda {
namespace {

// Whether element l of a line comes before element r (kernels/metrics.cc's `before`).
template <typename C>
__device__ __forceinline__ bool Before(C a, int64_t l, C b, int64_t r, bool largest) {
  const bool a_nan = isnan(static_cast<double>(a));
  const bool b_nan = isnan(static_cast<double>(b));
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a != b) return largest ? a > b : a < b;
  return l < r;
}

template <typename T>
__global__ void TopkKernel(int64_t outer, int64_t size, int64_t inner, int64_t k, bool largest,
                           const T* x, T* values, int64_t* indices) {
  const int64_t n = outer * size * inner;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n; e += step) {
    const int64_t i = e % inner;
    const int64_t a = (e / inner) % size;
    const int64_t o = e / (inner * size);
    const T* line = x + o * size * inner + i;
    const Compute<T> value = Load(line[a * inner]);
    int64_t rank = 0;
    for (int64_t b = 0; b < size && rank < k; ++b) {
      if (b != a && Before(Load(line[b * inner]), b, value, a, largest)) ++rank;
    }
    if (rank < k) {
      const int64_t dst = (o * k + rank) * inner + i;
      values[dst] = line[a * inner];
      indices[dst] = a;
    }
  }
}

__global__ void AccuracyKernel(int64_t samples, int64_t k, int64_t label_stride,
                               const int64_t* indices, const int64_t* label, float* accuracy,
                               int32_t* correct, int32_t* total) {
  int32_t hits = 0;
  for (int64_t i = 0; i < samples; ++i) {
    const int64_t want = label[i * label_stride];
    for (int64_t j = 0; j < k; ++j) {
      if (indices[i * k + j] == want) {
        ++hits;
        break;
      }
    }
  }
  correct[0] = hits;
  total[0] = static_cast<int32_t>(samples);
  accuracy[0] = samples == 0 ? 0.0f : static_cast<float>(hits) / static_cast<float>(samples);
}

}  // namespace

cudaError_t LaunchTopk(Elem elem, int64_t outer, int64_t size, int64_t inner, int64_t k,
                       bool largest, const void* x, void* values, int64_t* indices,
                       cudaStream_t stream) {
  const int64_t n = outer * size * inner;
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    TopkKernel<T><<<GridFor(n), kThreads, 0, stream>>>(
        outer, size, inner, k, largest, static_cast<const T*>(x), static_cast<T*>(values), indices);
    return cudaGetLastError();
  });
}

cudaError_t LaunchAccuracy(int64_t samples, int64_t k, int64_t label_stride, const int64_t* indices,
                           const int64_t* label, float* accuracy, int32_t* correct, int32_t* total,
                           cudaStream_t stream) {
  AccuracyKernel<<<1, 1, 0, stream>>>(samples, k, label_stride, indices, label, accuracy, correct,
                                      total);
  return cudaGetLastError();
}

}  // namespace irm::rt::cuda
