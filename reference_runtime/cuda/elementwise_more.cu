// Device code of elementwise_more_launch.h: the scalar rules of kernels/elementwise.cc and
// kernels/reduction.cc (prod) on the device, one thread per output element. Compiled without fused
// multiply-add (-fmad=false): arithmetic that is +, -, *, / or exact (floor, fmod, comparisons)
// rounds as the CPU's does; pow and log are CUDA's, within a few ulp of the C library's.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/elementwise_more_launch.h"
#include "reference_runtime/cuda/grad_walk.cuh"

namespace irm::rt::cuda {
namespace {

__device__ __forceinline__ int64_t FirstIndex() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t Step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Paddle's equal (kernels/elementwise.cc's Equal): float32/float64 within 1e-8, infinities only
// equal to themselves, a NaN equal to nothing; 16-bit floats, integers and bool exactly.
template <typename T>
__device__ __forceinline__ bool Equal(Compute<T> a, Compute<T> b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (isinf(a) || isinf(b)) return a == b;
    if (isnan(a) || isnan(b)) return false;
    return fabs(static_cast<double>(a - b)) < 1e-8;
  } else {
    return a == b;
  }
}

template <CompareOp kOp, typename T>
__device__ __forceinline__ bool ApplyCompare(Compute<T> a, Compute<T> b) {
  if constexpr (kOp == CompareOp::kEqual) {
    return Equal<T>(a, b);
  } else if constexpr (kOp == CompareOp::kNotEqual) {
    return !Equal<T>(a, b);
  } else if constexpr (kOp == CompareOp::kLessThan) {
    return a < b;
  } else if constexpr (kOp == CompareOp::kGreaterThan) {
    return a > b;
  } else if constexpr (kOp == CompareOp::kLogicalAnd) {
    return static_cast<bool>(a) && static_cast<bool>(b);
  } else if constexpr (kOp == CompareOp::kLogicalOr) {
    return static_cast<bool>(a) || static_cast<bool>(b);
  } else {
    return static_cast<bool>(a) != static_cast<bool>(b);
  }
}

template <typename T, CompareOp kOp>
__global__ void CompareKernel(int64_t n, Walk x_walk, Walk y_walk, const T* x, const T* y,
                              bool* out) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) {
    out[i] = ApplyCompare<kOp, T>(Load(x[WalkOffset(x_walk, i)]), Load(y[WalkOffset(y_walk, i)]));
  }
}

template <typename T>
__global__ void LogicalNotKernel(int64_t n, const T* x, bool* out) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) out[i] = !static_cast<bool>(Load(x[i]));
}

// Integers: truncating, b != 0 (checked by the host); min / -1 wraps to min.
template <typename C>
__device__ __forceinline__ C Div(C a, C b) {
  if constexpr (kIsInteger<C>) {
    if (b == -1) return WrapSub(C(0), a);
  }
  return a / b;
}

// The remainder with the divisor's sign.
template <typename C>
__device__ __forceinline__ C Mod(C a, C b) {
  C r;
  if constexpr (kIsInteger<C>) {
    if (b == -1) return 0;  // min % -1 would overflow
    r = a % b;
  } else {
    r = fmod(a, b);
  }
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Python's //, as kernels/elementwise.cc's FloorDiv (phi's FloorDivideFunctor).
template <typename C>
__device__ __forceinline__ C FloorDiv(C a, C b) {
  if constexpr (kIsInteger<C>) {
    const C quotient = Div(a, b);
    if ((a < 0) != (b < 0) && b != -1 && a % b != 0) return WrapSub(quotient, C(1));
    return quotient;
  } else {
    if (b == 0) return a / b;
    const C mod = fmod(a, b);
    C div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
    if (div == 0) return copysign(C(0), a / b);
    C floored = floor(div);
    if (div - floored > C(0.5)) floored += C(1);
    return floored;
  }
}

// phi's compute_pow: pow in the compute type; integers round the double power to the nearest.
template <typename C>
__device__ __forceinline__ C Pow(C a, C b) {
  if constexpr (kIsInteger<C>) {
    return static_cast<C>(llrint(pow(static_cast<double>(a), static_cast<double>(b))));
  } else {
    return pow(a, b);
  }
}

template <ArithOp kOp, typename C>
__device__ __forceinline__ C ApplyArith(C a, C b) {
  if constexpr (kOp == ArithOp::kDivide) {
    return Div(a, b);
  } else if constexpr (kOp == ArithOp::kFloorDivide) {
    return FloorDiv(a, b);
  } else if constexpr (kOp == ArithOp::kRemainder) {
    return Mod(a, b);
  } else {
    return Pow(a, b);
  }
}

template <typename T, ArithOp kOp>
__global__ void ArithKernel(int64_t n, Walk x_walk, Walk y_walk, const T* x, const T* y, T* out) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) {
    out[i] = Store<T>(ApplyArith<kOp, Compute<T>>(Load(x[WalkOffset(x_walk, i)]),
                                                  Load(y[WalkOffset(y_walk, i)])));
  }
}

constexpr int kMinThreads = 256;

template <typename T>
__global__ void FirstZeroKernel(int64_t n, const T* y, int64_t* first_zero) {
  __shared__ int64_t best[kMinThreads];
  int64_t mine = n;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (y[i] == 0) {
      mine = i;
      break;  // this thread's indices only grow
    }
  }
  best[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kMinThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half && best[threadIdx.x + half] < best[threadIdx.x]) {
      best[threadIdx.x] = best[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) first_zero[0] = best[0];
}

template <typename T, bool kSelfIsY>
__global__ void PowGradKernel(GradPlan plan, const T* self, const T* other, const T* out_grad,
                              T* grad) {
  using C = Compute<T>;
  for (int64_t j = FirstIndex(); j < plan.self_numel; j += Step()) {
    const C self_value = Load(self[j]);
    grad[j] = Store<T>(SumGradTerms<C>(plan, j, [&](int64_t out_offset, int64_t other_offset) {
      const C g = Load(out_grad[out_offset]);
      const C x = kSelfIsY ? Load(other[other_offset]) : self_value;
      const C y = kSelfIsY ? self_value : Load(other[other_offset]);
      return kSelfIsY ? g * log(x) * pow(x, y) : g * y * pow(x, y - C(1));
    }));
  }
}

template <typename T>
__global__ void FloorKernel(int64_t n, const T* x, T* out) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) out[i] = Store<T>(floor(Load(x[i])));
}

template <typename T>
__global__ void IncrementKernel(int64_t n, Compute<T> step, const T* x, T* out) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) out[i] = Store<T>(WrapAdd(Load(x[i]), step));
}

template <typename T>
__global__ void ProdKernel(ReducePlanDesc plan, const T* x, T* out) {
  for (int64_t o = FirstIndex(); o < plan.out_numel; o += Step()) {
    const int64_t base = WalkOffset(plan.out_walk, o);
    Compute<T> product{1};
    for (int64_t r = 0; r < plan.reduce_count; ++r) {
      product = WrapMul(product, Load(x[base + WalkOffset(plan.reduced_walk, r)]));
    }
    out[o] = Store<T>(product);
  }
}

template <typename T>
__global__ void ProdGradKernel(int64_t n, Walk from, const T* x, const T* out, AnyFloat out_grad,
                               T* x_grad) {
  using C = Compute<T>;
  for (int64_t i = FirstIndex(); i < n; i += Step()) {
    const int64_t o = WalkOffset(from, i);
    x_grad[i] = Store<T>(LoadAny<C>(out_grad, o) * Load(out[o]) * (C{1} / Load(x[i])));
  }
}

template <typename T, CompareOp kOp>
cudaError_t LaunchCompareAs(int64_t n, const Walk& xw, const Walk& yw, const void* x, const void* y,
                            bool* out, cudaStream_t stream) {
  CompareKernel<T, kOp><<<GridFor(n), kThreads, 0, stream>>>(n, xw, yw, static_cast<const T*>(x),
                                                             static_cast<const T*>(y), out);
  return cudaGetLastError();
}

template <typename T, ArithOp kOp>
cudaError_t LaunchArithAs(int64_t n, const Walk& xw, const Walk& yw, const void* x, const void* y,
                          void* out, cudaStream_t stream) {
  ArithKernel<T, kOp><<<GridFor(n), kThreads, 0, stream>>>(
      n, xw, yw, static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out));
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchCompare(CompareOp op, Elem elem, int64_t n, const Walk& x_walk,
                          const Walk& y_walk, const void* x, const void* y, bool* out,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchElem(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
#define IRM_COMPARE_CASE(OP) \
  case OP:                   \
    return LaunchCompareAs<T, OP>(n, x_walk, y_walk, x, y, out, stream);
    switch (op) {
      IRM_COMPARE_CASE(CompareOp::kEqual)
      IRM_COMPARE_CASE(CompareOp::kNotEqual)
      IRM_COMPARE_CASE(CompareOp::kLessThan)
      IRM_COMPARE_CASE(CompareOp::kGreaterThan)
      IRM_COMPARE_CASE(CompareOp::kLogicalAnd)
      IRM_COMPARE_CASE(CompareOp::kLogicalOr)
      IRM_COMPARE_CASE(CompareOp::kLogicalXor)
    }
#undef IRM_COMPARE_CASE
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchLogicalNot(Elem elem, int64_t n, const void* x, bool* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchElem(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    LogicalNotKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<const T*>(x), out);
    return cudaGetLastError();
  });
}

cudaError_t LaunchArith(ArithOp op, Elem elem, int64_t n, const Walk& x_walk, const Walk& y_walk,
                        const void* x, const void* y, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    switch (op) {
      case ArithOp::kDivide:
        if constexpr (kIsInteger<T>) {
          return LaunchArithAs<T, ArithOp::kDivide>(n, x_walk, y_walk, x, y, out, stream);
        } else {
          return cudaErrorInvalidValue;  // launch.h's LaunchBinary divides floats
        }
      case ArithOp::kFloorDivide:
        return LaunchArithAs<T, ArithOp::kFloorDivide>(n, x_walk, y_walk, x, y, out, stream);
      case ArithOp::kRemainder:
        return LaunchArithAs<T, ArithOp::kRemainder>(n, x_walk, y_walk, x, y, out, stream);
      case ArithOp::kPow:
        return LaunchArithAs<T, ArithOp::kPow>(n, x_walk, y_walk, x, y, out, stream);
    }
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchFirstZero(Elem elem, int64_t n, const void* y, int64_t* first_zero,
                            cudaStream_t stream) {
  auto launch = [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    FirstZeroKernel<T><<<1, kMinThreads, 0, stream>>>(n, static_cast<const T*>(y), first_zero);
    return cudaGetLastError();
  };
  if (elem == Elem::kInt32) return launch(int32_t{});
  if (elem == Elem::kInt64) return launch(int64_t{});
  return cudaErrorInvalidValue;
}

cudaError_t LaunchPowGrad(bool self_is_y, Elem elem, const GradPlan& plan, const void* self,
                          const void* other, const void* out_grad, void* grad,
                          cudaStream_t stream) {
  if (plan.self_numel == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const auto* s = static_cast<const T*>(self);
    const auto* o = static_cast<const T*>(other);
    const auto* g = static_cast<const T*>(out_grad);
    auto* out = static_cast<T*>(grad);
    if (self_is_y) {
      PowGradKernel<T, true><<<GridFor(plan.self_numel), kThreads, 0, stream>>>(plan, s, o, g, out);
    } else {
      PowGradKernel<T, false>
          <<<GridFor(plan.self_numel), kThreads, 0, stream>>>(plan, s, o, g, out);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchFloor(Elem elem, int64_t n, const void* x, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    FloorKernel<T>
        <<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<const T*>(x), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchIncrement(Elem elem, int64_t n, double step, const void* x, void* out,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    IncrementKernel<T><<<GridFor(n), kThreads, 0, stream>>>(
        n, static_cast<Compute<T>>(step), static_cast<const T*>(x), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchProd(Elem elem, const ReducePlanDesc& plan, const void* x, void* out,
                       cudaStream_t stream) {
  if (plan.out_numel == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    ProdKernel<T><<<GridFor(plan.out_numel), kThreads, 0, stream>>>(plan, static_cast<const T*>(x),
                                                                    static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchProdGrad(Elem elem, int64_t n, const Walk& from, const void* x, const void* out,
                           AnyFloat out_grad, void* x_grad, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    ProdGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, from, static_cast<const T*>(x),
                                                           static_cast<const T*>(out), out_grad,
                                                           static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
