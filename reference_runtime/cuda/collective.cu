#include "reference_runtime/cuda/collective_launch.h"
#include "reference_runtime/cuda/device_numeric.cuh"

namespace irm::rt::cuda {
namespace {

template <typename C>
__device__ __forceinline__ C MaxNan(C acc, C x) {
  if constexpr (!kIsInteger<C>) {
    if (acc != acc) return acc;  // NaN stays NaN
  }
  return acc > x ? acc : x;  // a NaN x is not smaller: it wins
}

template <typename C>
__device__ __forceinline__ C MinNan(C acc, C x) {
  if constexpr (!kIsInteger<C>) {
    if (acc != acc) return acc;
  }
  return acc < x ? acc : x;
}

template <typename T>
__global__ void RankOrderReduceKernel(RankBuffers inputs, int op, T* out, int64_t count) {
  using C = Compute<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    C acc = Load(static_cast<const T*>(inputs.data[0])[i]);
    for (int r = 1; r < inputs.count; ++r) {
      const C x = Load(static_cast<const T*>(inputs.data[r])[i]);
      switch (op) {
        case 1:
          acc = MaxNan(acc, x);
          break;
        case 2:
          acc = MinNan(acc, x);
          break;
        case 3:
          acc = WrapMul(acc, x);
          break;
        default:
          acc = WrapAdd(acc, x);
          break;
      }
    }
    if (op == 4) acc = static_cast<C>(acc / static_cast<C>(inputs.count));
    out[i] = Store<T>(acc);
  }
}

}  // namespace

cudaError_t LaunchRankOrderReduce(Elem elem, int op, const RankBuffers& inputs, void* out,
                                  int64_t count, cudaStream_t stream) {
  if (op < 0 || op > 4 || inputs.count < 1 || inputs.count > kMaxReduceRanks) {
    return cudaErrorInvalidValue;
  }
  if (count == 0) return cudaSuccess;
  return DispatchElem(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bool>) {
      return cudaErrorInvalidValue;
    } else {
      RankOrderReduceKernel<T>
          <<<GridFor(count), kThreads, 0, stream>>>(inputs, op, static_cast<T*>(out), count);
      return cudaGetLastError();
    }
  });
}

}  // namespace irm::rt::cuda
