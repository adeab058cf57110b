// Device code of the data-movement kernels (launch.h): strided gathers and scatters (transpose,
// slice, split, concat and their grads) and tril/triu. Elements move as unsigned words of their
// size, so every dtype moves with its bits unchanged.
#include <cstdint>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

#define IRM_GRID_STRIDE(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename Word>
__global__ void GatherKernel(int64_t n, Walk walk, int64_t base, const Word* x, Word* out) {
  IRM_GRID_STRIDE(i, n) { out[i] = x[base + WalkOffset(walk, i)]; }
}

template <typename Word>
__global__ void ScatterKernel(int64_t n, Walk walk, int64_t base, const Word* x, Word* out) {
  IRM_GRID_STRIDE(i, n) { out[base + WalkOffset(walk, i)] = x[i]; }
}

template <typename Word>
__global__ void TriangleKernel(int64_t n, int64_t rows, int64_t cols, int64_t diagonal, bool lower,
                               const Word* x, Word* out) {
  IRM_GRID_STRIDE(e, n) {
    const int64_t i = (e / cols) % rows;
    const int64_t j = e % cols;
    const bool kept = lower ? j <= i + diagonal : j >= i + diagonal;
    out[e] = kept ? x[e] : Word{0};
  }
}

// Calls f(Word{}) with an unsigned word of `element_size` bytes.
template <typename F>
cudaError_t DispatchWord(int element_size, F&& f) {
  switch (element_size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchGather(int element_size, int64_t n, const Walk& walk, int64_t base, const void* x,
                         void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchWord(element_size, [&](auto word) -> cudaError_t {
    using Word = decltype(word);
    GatherKernel<Word><<<GridFor(n), kThreads, 0, stream>>>(
        n, walk, base, static_cast<const Word*>(x), static_cast<Word*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchScatter(int element_size, int64_t n, const Walk& walk, int64_t base,
                          const void* x, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchWord(element_size, [&](auto word) -> cudaError_t {
    using Word = decltype(word);
    ScatterKernel<Word><<<GridFor(n), kThreads, 0, stream>>>(
        n, walk, base, static_cast<const Word*>(x), static_cast<Word*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchTriangle(int element_size, int64_t matrices, int64_t rows, int64_t cols,
                           int64_t diagonal, bool lower, const void* x, void* out,
                           cudaStream_t stream) {
  const int64_t n = matrices * rows * cols;
  if (n == 0) return cudaSuccess;
  return DispatchWord(element_size, [&](auto word) -> cudaError_t {
    using Word = decltype(word);
    TriangleKernel<Word><<<GridFor(n), kThreads, 0, stream>>>(
        n, rows, cols, diagonal, lower, static_cast<const Word*>(x), static_cast<Word*>(out));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
