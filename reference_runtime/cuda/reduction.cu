// Device code of sum, mean, squared_l2_norm, their grads and softmax (launch.h). No atomics: every
// sum has one fixed order, so that a run gives the same bits as the last one.
//   * A reduction of at most kSequentialCount elements per out element runs one thread per out
//     element adding them in C order from 0, as the CPU kernel does (kernels/reduction.cc): the
//     CPU's bits, since this file is compiled without fused multiply-add.
//   * A longer one splits each out element's elements into ReduceSplits(count) equal chunks; a
//     block of kThreads threads sums a chunk (thread t adds elements t, t + kThreads, ... in
//     order, then a shared-memory tree halves the kThreads partial sums), and a second launch
//     sums each out element's chunk partials the same way. The order depends on the shape only.
//   * Softmax: one block per line; the max, the sum of exponentials and the outputs by the same
//     per-thread-then-tree order.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

inline constexpr int64_t kSequentialCount = 32;

// Adds the kThreads values of `shared` into shared[0] by halving; every thread must call it.
template <typename A>
__device__ __forceinline__ void TreeSum(A* shared) {
  for (int half = kThreads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half)
      shared[threadIdx.x] = WrapAdd(shared[threadIdx.x], shared[threadIdx.x + half]);
  }
  __syncthreads();
}

template <typename X, typename A>
__device__ __forceinline__ A ToAcc(X v) {
  if constexpr (std::is_same_v<X, bool>) {
    return static_cast<A>(v ? 1 : 0);
  } else {
    return static_cast<A>(Load(v));
  }
}

// The term a reduction adds for element v: v, or v * v for squared_l2_norm.
template <typename X, typename A>
__device__ __forceinline__ A Term(X v, bool square) {
  const A a = ToAcc<X, A>(v);
  if constexpr (std::is_floating_point_v<A>) {
    if (square) return a * a;
  }
  return a;
}

template <typename Out, typename A>
__device__ __forceinline__ Out Finish(A sum, bool mean, int64_t count) {
  if constexpr (std::is_floating_point_v<A>) {
    if (mean) return Store<Out>(static_cast<Compute<Out>>(sum / static_cast<A>(count)));
  }
  return Store<Out>(static_cast<Compute<Out>>(sum));
}

template <typename X, typename Out, typename A>
__global__ void SumSequentialKernel(ReducePlanDesc plan, bool mean, const X* x, Out* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < plan.out_numel;
       o += step) {
    const int64_t base = WalkOffset(plan.out_walk, o);
    A sum = 0;
    for (int64_t r = 0; r < plan.reduce_count; ++r) {
      sum = WrapAdd(sum, Term<X, A>(x[base + WalkOffset(plan.reduced_walk, r)], plan.square));
    }
    out[o] = Finish<Out>(sum, mean, plan.reduce_count);
  }
}

// Block (o, s) sums chunk s of out element o; with one split it writes the result, else a partial.
template <typename X, typename Out, typename A>
__global__ void SumChunkKernel(ReducePlanDesc plan, bool mean, const X* x, Out* out, A* partials) {
  __shared__ A shared[kThreads];
  const int64_t o = blockIdx.x;
  const int64_t splits = gridDim.y;
  const int64_t chunk = (plan.reduce_count + splits - 1) / splits;
  const int64_t begin = blockIdx.y * chunk;
  const int64_t end = begin + chunk < plan.reduce_count ? begin + chunk : plan.reduce_count;
  const int64_t base = WalkOffset(plan.out_walk, o);
  A sum = 0;
  for (int64_t r = begin + threadIdx.x; r < end; r += kThreads) {
    sum = WrapAdd(sum, Term<X, A>(x[base + WalkOffset(plan.reduced_walk, r)], plan.square));
  }
  shared[threadIdx.x] = sum;
  TreeSum(shared);
  if (threadIdx.x != 0) return;
  if (splits == 1) {
    out[o] = Finish<Out>(shared[0], mean, plan.reduce_count);
  } else {
    partials[o * splits + blockIdx.y] = shared[0];
  }
}

template <typename Out, typename A>
__global__ void SumPartialsKernel(int64_t splits, bool mean, int64_t count, const A* partials,
                                  Out* out) {
  __shared__ A shared[kThreads];
  const int64_t o = blockIdx.x;
  A sum = 0;
  for (int64_t s = threadIdx.x; s < splits; s += kThreads)
    sum = WrapAdd(sum, partials[o * splits + s]);
  shared[threadIdx.x] = sum;
  TreeSum(shared);
  if (threadIdx.x == 0) out[o] = Finish<Out>(shared[0], mean, count);
}

template <typename X, typename Out>
cudaError_t LaunchSumAs(bool mean, const ReducePlanDesc& plan, const void* x_raw, void* out_raw,
                        void* partials_raw, cudaStream_t stream) {
  using A = Compute<Out>;
  const X* x = static_cast<const X*>(x_raw);
  Out* out = static_cast<Out*>(out_raw);
  if (plan.out_numel == 0) return cudaSuccess;
  if (plan.reduce_count <= kSequentialCount) {
    SumSequentialKernel<X, Out, A>
        <<<GridFor(plan.out_numel), kThreads, 0, stream>>>(plan, mean, x, out);
    return cudaGetLastError();
  }
  const int splits = ReduceSplits(plan.reduce_count);
  A* partials = static_cast<A*>(partials_raw);
  const dim3 grid(static_cast<unsigned>(plan.out_numel), static_cast<unsigned>(splits));
  SumChunkKernel<X, Out, A><<<grid, kThreads, 0, stream>>>(plan, mean, x, out, partials);
  if (splits > 1) {
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    SumPartialsKernel<Out, A><<<static_cast<unsigned>(plan.out_numel), kThreads, 0, stream>>>(
        splits, mean, plan.reduce_count, partials, out);
  }
  return cudaGetLastError();
}

template <typename T>
__global__ void SoftmaxKernel(int64_t size, int64_t inner, const T* x, T* out) {
  using C = Compute<T>;
  __shared__ C shared[kThreads];
  const int64_t line = blockIdx.x;
  const int64_t base = (line / inner) * size * inner + line % inner;
  C max = -INFINITY;
  for (int64_t j = threadIdx.x; j < size; j += kThreads) {
    const C v = Load(x[base + j * inner]);
    max = v > max ? v : max;
  }
  shared[threadIdx.x] = max;
  for (int half = kThreads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) {
      const C other = shared[threadIdx.x + half];
      if (other > shared[threadIdx.x]) shared[threadIdx.x] = other;
    }
  }
  __syncthreads();
  max = shared[0];
  __syncthreads();
  C sum = 0;
  for (int64_t j = threadIdx.x; j < size; j += kThreads)
    sum += exp(Load(x[base + j * inner]) - max);
  shared[threadIdx.x] = sum;
  TreeSum(shared);
  sum = shared[0];
  for (int64_t j = threadIdx.x; j < size; j += kThreads) {
    out[base + j * inner] = Store<T>(exp(Load(x[base + j * inner]) - max) / sum);
  }
}

template <typename T>
__global__ void ReduceGradKernel(int64_t n, Walk from, AnyFloat g, bool mean, int64_t count,
                                 T* dx) {
  using C = Compute<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    C v = LoadAny<C>(g, WalkOffset(from, i));
    if (mean) v /= static_cast<C>(count);
    dx[i] = Store<T>(v);
  }
}

template <typename T>
__global__ void SquaredL2NormGradKernel(int64_t n, const T* x, AnyFloat g, T* dx) {
  using C = Compute<T>;
  const C gv = LoadAny<C>(g, 0);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    dx[i] = Store<T>(C{2} * Load(x[i]) * gv);
  }
}

}  // namespace

cudaError_t LaunchReduceGrad(Elem x_elem, int64_t n, const Walk& from, AnyFloat out_grad, bool mean,
                             int64_t count, void* x_grad, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(x_elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    ReduceGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, from, out_grad, mean, count,
                                                             static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchSquaredL2NormGrad(Elem elem, int64_t n, const void* x, AnyFloat out_grad,
                                    void* x_grad, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    SquaredL2NormGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(
        n, static_cast<const T*>(x), out_grad, static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

int ReduceSplits(int64_t reduce_count) {
  const int64_t splits = reduce_count / (16 * kThreads * 4);
  return static_cast<int>(splits < 1 ? 1 : (splits > 1024 ? 1024 : splits));
}

cudaError_t LaunchSum(Elem x_elem, Elem out_elem, bool mean, const ReducePlanDesc& plan,
                      const void* x, void* out, void* partials, cudaStream_t stream) {
  if (x_elem == Elem::kInt32 && out_elem == Elem::kInt64) {
    return LaunchSumAs<int32_t, int64_t>(mean, plan, x, out, partials, stream);
  }
  if (x_elem == Elem::kBool && out_elem == Elem::kInt64) {
    return LaunchSumAs<bool, int64_t>(mean, plan, x, out, partials, stream);
  }
  if (x_elem != out_elem) return cudaErrorInvalidValue;
  if (x_elem == Elem::kInt64)
    return LaunchSumAs<int64_t, int64_t>(mean, plan, x, out, partials, stream);
  return DispatchFloating(x_elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    return LaunchSumAs<T, T>(mean, plan, x, out, partials, stream);
  });
}

cudaError_t LaunchSoftmax(Elem elem, int64_t outer, int64_t size, int64_t inner, const void* x,
                          void* out, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0 || size == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    SoftmaxKernel<T><<<static_cast<unsigned>(lines), kThreads, 0, stream>>>(
        size, inner, static_cast<const T*>(x), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
