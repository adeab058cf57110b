// Device-side element types and arithmetic shared by the .cu files: the storage type of each
// launch.h Elem, the compute type (float16/bfloat16 compute in float32, as kernels/numeric.h),
// Load/Store between them with one round-to-nearest-even store, integer arithmetic that wraps, and
// a dispatch from Elem to a storage type. Device code only (nvcc).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<__half> {
  using type = float;
};
template <>
struct ComputeOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeOf<T>::type;

template <typename T>
__device__ __forceinline__ Compute<T> Load(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename T>
__device__ __forceinline__ T Store(Compute<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return static_cast<T>(v);
  }
}

// Two's complement wrap-around for integers (as the CPU kernels: signed overflow is undefined).
template <typename C>
__device__ __forceinline__ C WrapAdd(C a, C b) {
  if constexpr (kIsInteger<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename C>
__device__ __forceinline__ C WrapSub(C a, C b) {
  if constexpr (kIsInteger<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename C>
__device__ __forceinline__ C WrapMul(C a, C b) {
  if constexpr (kIsInteger<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// The offset of walk element i.
__device__ __forceinline__ int64_t WalkOffset(const Walk& w, int64_t i) {
  int64_t offset = 0;
  for (int d = w.rank - 1; d >= 0; --d) {
    const int64_t size = w.dims[d];
    offset += (i % size) * w.strides[d];
    i /= size;
  }
  return offset;
}

// Calls f(T{}) with T the storage type of `elem`.
template <typename F>
cudaError_t DispatchElem(Elem elem, F&& f) {
  switch (elem) {
    case Elem::kBool:
      return f(bool{});
    case Elem::kInt8:
      return f(int8_t{});
    case Elem::kUInt8:
      return f(uint8_t{});
    case Elem::kInt16:
      return f(int16_t{});
    case Elem::kInt32:
      return f(int32_t{});
    case Elem::kInt64:
      return f(int64_t{});
    case Elem::kFloat16:
      return f(__half{});
    case Elem::kBFloat16:
      return f(__nv_bfloat16{});
    case Elem::kFloat32:
      return f(float{});
    case Elem::kFloat64:
      return f(double{});
  }
  return cudaErrorInvalidValue;
}

// Calls f(T{}) for the floating types only (else cudaErrorInvalidValue).
template <typename F>
cudaError_t DispatchFloating(Elem elem, F&& f) {
  switch (elem) {
    case Elem::kFloat16:
      return f(__half{});
    case Elem::kBFloat16:
      return f(__nv_bfloat16{});
    case Elem::kFloat32:
      return f(float{});
    case Elem::kFloat64:
      return f(double{});
    default:
      return cudaErrorInvalidValue;
  }
}

// The floating types and int32, int64 (what the arithmetic kernels register).
template <typename F>
cudaError_t DispatchArithmetic(Elem elem, F&& f) {
  switch (elem) {
    case Elem::kInt32:
      return f(int32_t{});
    case Elem::kInt64:
      return f(int64_t{});
    default:
      return DispatchFloating(elem, f);
  }
}

// launch.h's run-time typed operands: element i converted to MT, and MT stored with one rounding
// to the output's dtype (16-bit outputs only exist with MT = float).
template <typename MT>
__device__ __forceinline__ MT LoadAny(const AnyFloat& a, int64_t i) {
  switch (a.elem) {
    case Elem::kFloat16:
      return static_cast<MT>(__half2float(static_cast<const __half*>(a.data)[i]));
    case Elem::kBFloat16:
      return static_cast<MT>(__bfloat162float(static_cast<const __nv_bfloat16*>(a.data)[i]));
    case Elem::kFloat64:
      return static_cast<MT>(static_cast<const double*>(a.data)[i]);
    default:
      return static_cast<MT>(static_cast<const float*>(a.data)[i]);
  }
}

template <typename MT>
__device__ __forceinline__ void StoreAny(const AnyFloatOut& o, int64_t i, MT v) {
  switch (o.elem) {
    case Elem::kFloat16:
      static_cast<__half*>(o.data)[i] = __float2half_rn(static_cast<float>(v));
      break;
    case Elem::kBFloat16:
      static_cast<__nv_bfloat16*>(o.data)[i] = __float2bfloat16_rn(static_cast<float>(v));
      break;
    case Elem::kFloat64:
      static_cast<double*>(o.data)[i] = static_cast<double>(v);
      break;
    default:
      static_cast<float*>(o.data)[i] = static_cast<float>(v);
      break;
  }
}

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill an H200 (132 SMs) several times.
inline unsigned GridFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 132 * 32 ? 132 * 32 : blocks));
}

}  // namespace irm::rt::cuda
