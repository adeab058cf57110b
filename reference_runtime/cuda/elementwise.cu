// Device code of the elementwise family: broadcasting binary ops (maximum too) and their grads,
// scale, fill and cast (launch.h describes each launcher). Compiled without fused multiply-add
// (-fmad=false, see CMakeLists.txt), so that each element rounds as the CPU kernel's does: binary
// ops and their grads (which sum in increasing output index, as kernels/broadcast.h) give the CPU's
// bits.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/grad_walk.cuh"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

template <BinaryOp kOp, typename C>
__device__ __forceinline__ C ApplyBinary(C a, C b) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return WrapAdd(a, b);
  } else if constexpr (kOp == BinaryOp::kSubtract) {
    return WrapSub(a, b);
  } else if constexpr (kOp == BinaryOp::kMultiply) {
    return WrapMul(a, b);
  } else if constexpr (kOp == BinaryOp::kMaximum) {
    return a > b ? a : b;  // kernels/elementwise.cc's Max: a NaN in x gives y
  } else {
    return a / b;  // floating types only (launch.h)
  }
}

template <typename T, BinaryOp kOp>
__global__ void BinaryKernel(int64_t n, Walk x_walk, Walk y_walk, const T* x, const T* y, T* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    out[i] =
        Store<T>(ApplyBinary<kOp>(Load(x[WalkOffset(x_walk, i)]), Load(y[WalkOffset(y_walk, i)])));
  }
}

// One term of an operand's grad: g = out_grad[i], other = the other operand's element read with
// output i, out = the forward result at i, self = the operand's own element.
template <BinaryOp kOp, bool kSelfIsY, typename C>
__device__ __forceinline__ C GradTerm(C g, C other, C out, C self) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return g;
  } else if constexpr (kOp == BinaryOp::kSubtract) {
    return kSelfIsY ? -g : g;
  } else if constexpr (kOp == BinaryOp::kMultiply) {
    return g * other;
  } else if constexpr (!kSelfIsY) {
    return g / other;  // x_grad = out_grad / y
  } else {
    return -g * out / self;  // y_grad = -out_grad * out / y
  }
}

template <typename T, BinaryOp kOp, bool kSelfIsY>
__global__ void BinaryGradKernel(GradPlan plan, const T* self, const T* other, const T* out,
                                 const T* out_grad, T* grad) {
  using C = Compute<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < plan.self_numel;
       j += step) {
    const C self_value = Load(self[j]);
    grad[j] = Store<T>(SumGradTerms<C>(plan, j, [&](int64_t out_offset, int64_t other_offset) {
      return GradTerm<kOp, kSelfIsY>(Load(out_grad[out_offset]), Load(other[other_offset]),
                                     out != nullptr ? Load(out[out_offset]) : C(0), self_value);
    }));
  }
}

template <typename T>
__global__ void ScaleKernel(int64_t n, Compute<T> scale, Compute<T> bias, bool after, const T* x,
                            T* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    const Compute<T> v = Load(x[i]);
    out[i] = Store<T>(after ? WrapAdd(WrapMul(scale, v), bias) : WrapMul(scale, WrapAdd(v, bias)));
  }
}

template <typename U>
__global__ void FillKernel(int64_t n, U value, U* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    out[i] = value;
  }
}

// ---- cast: kernels/convert.h's rules on the device
// -------------------------------------------------

// float64 -> float32 rounding to odd (truncate, then set the last bit when inexact), so that a
// following round to a 16-bit type rounds like one rounding.
__device__ __forceinline__ float RoundToOdd(double d) {
  if (!isfinite(d)) return static_cast<float>(d);
  const float f = __double2float_rz(d);
  if (static_cast<double>(f) == d) return f;
  return __uint_as_float(__float_as_uint(f) | 1u);
}
__device__ __forceinline__ float RoundToOdd(long long v) {
  const float f = __ll2float_rz(v);
  if (__float2ll_rz(f) == v) return f;
  return __uint_as_float(__float_as_uint(f) | 1u);
}

template <typename To>
__device__ __forceinline__ To FloatToInteger(double d) {
  if (isnan(d)) return To{0};
  const double t = trunc(d);
  const double upper = ldexp(1.0, std::numeric_limits<To>::digits);
  if (t >= upper) return std::numeric_limits<To>::max();
  if (std::is_signed_v<To> ? t < -upper : t < 0.0) return std::numeric_limits<To>::min();
  return static_cast<To>(t);
}

template <typename To, typename From>
__device__ __forceinline__ To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsHalf<From>) {
    return Convert<To, float>(Load(v));  // widening to float32 is exact
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0} || (std::is_floating_point_v<From> && isnan(static_cast<double>(v)));
  } else if constexpr (std::is_same_v<From, bool>) {
    return Convert<To, int32_t>(v ? 1 : 0);
  } else if constexpr (kIsInteger<To>) {
    if constexpr (kIsInteger<From>) {
      return static_cast<To>(v);  // modulo 2^bits, two's complement
    } else {
      return FloatToInteger<To>(static_cast<double>(v));
    }
  } else if constexpr (!kIsHalf<To>) {
    return static_cast<To>(v);  // to float32 / float64: one round to nearest even
  } else if constexpr (std::is_same_v<From, float>) {
    return Store<To>(v);
  } else if constexpr (std::is_same_v<From, double>) {
    return Store<To>(RoundToOdd(v));
  } else {
    return Store<To>(RoundToOdd(static_cast<long long>(v)));
  }
}

template <typename From, typename To>
__global__ void CastKernel(int64_t n, const From* x, To* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    out[i] = Convert<To, From>(x[i]);
  }
}

template <typename T, BinaryOp kOp>
cudaError_t LaunchBinaryAs(int64_t n, const Walk& x_walk, const Walk& y_walk, const void* x,
                           const void* y, void* out, cudaStream_t stream) {
  BinaryKernel<T, kOp><<<GridFor(n), kThreads, 0, stream>>>(
      n, x_walk, y_walk, static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out));
  return cudaGetLastError();
}

template <typename T, BinaryOp kOp, bool kSelfIsY>
cudaError_t LaunchGradAs(const GradPlan& plan, const void* self, const void* other, const void* out,
                         const void* out_grad, void* grad, cudaStream_t stream) {
  BinaryGradKernel<T, kOp, kSelfIsY><<<GridFor(plan.self_numel), kThreads, 0, stream>>>(
      plan, static_cast<const T*>(self), static_cast<const T*>(other), static_cast<const T*>(out),
      static_cast<const T*>(out_grad), static_cast<T*>(grad));
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchBinary(BinaryOp op, Elem elem, int64_t n, const Walk& x_walk, const Walk& y_walk,
                         const void* x, const void* y, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    switch (op) {
      case BinaryOp::kAdd:
        return LaunchBinaryAs<T, BinaryOp::kAdd>(n, x_walk, y_walk, x, y, out, stream);
      case BinaryOp::kSubtract:
        return LaunchBinaryAs<T, BinaryOp::kSubtract>(n, x_walk, y_walk, x, y, out, stream);
      case BinaryOp::kMultiply:
        return LaunchBinaryAs<T, BinaryOp::kMultiply>(n, x_walk, y_walk, x, y, out, stream);
      case BinaryOp::kMaximum:
        return LaunchBinaryAs<T, BinaryOp::kMaximum>(n, x_walk, y_walk, x, y, out, stream);
      case BinaryOp::kDivide:
        if constexpr (kIsInteger<T>) {
          return cudaErrorInvalidValue;  // integer divide needs the zero-divisor check (host)
        } else {
          return LaunchBinaryAs<T, BinaryOp::kDivide>(n, x_walk, y_walk, x, y, out, stream);
        }
    }
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchBinaryGrad(BinaryOp op, bool self_is_y, Elem elem, const GradPlan& plan,
                             const void* self, const void* other, const void* out,
                             const void* out_grad, void* grad, cudaStream_t stream) {
  if (plan.self_numel == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
#define IRM_GRAD_CASE(OP)                                                                        \
  case OP:                                                                                       \
    return self_is_y ? LaunchGradAs<T, OP, true>(plan, self, other, out, out_grad, grad, stream) \
                     : LaunchGradAs<T, OP, false>(plan, self, other, out, out_grad, grad, stream);
    switch (op) {
      IRM_GRAD_CASE(BinaryOp::kAdd)
      IRM_GRAD_CASE(BinaryOp::kSubtract)
      IRM_GRAD_CASE(BinaryOp::kMultiply)
      IRM_GRAD_CASE(BinaryOp::kDivide)
      case BinaryOp::kMaximum:
        return cudaErrorInvalidValue;  // no maximum_grad
    }
#undef IRM_GRAD_CASE
    return cudaErrorInvalidValue;
  });
}

cudaError_t LaunchScale(Elem elem, int64_t n, double scale, double bias, bool bias_after_scale,
                        const void* x, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    ScaleKernel<T><<<GridFor(n), kThreads, 0, stream>>>(
        n, static_cast<Compute<T>>(scale), static_cast<Compute<T>>(bias), bias_after_scale,
        static_cast<const T*>(x), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchFill(int element_size, int64_t n, uint64_t pattern, void* out,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (element_size) {
    case 1:
      FillKernel<uint8_t><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<uint8_t>(pattern),
                                                               static_cast<uint8_t*>(out));
      break;
    case 2:
      FillKernel<uint16_t><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<uint16_t>(pattern),
                                                                static_cast<uint16_t*>(out));
      break;
    case 4:
      FillKernel<uint32_t><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<uint32_t>(pattern),
                                                                static_cast<uint32_t*>(out));
      break;
    case 8:
      FillKernel<uint64_t>
          <<<GridFor(n), kThreads, 0, stream>>>(n, pattern, static_cast<uint64_t*>(out));
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCast(Elem from, Elem to, int64_t n, const void* x, void* out,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchElem(from, [&](auto from_zero) -> cudaError_t {
    using From = decltype(from_zero);
    return DispatchElem(to, [&](auto to_zero) -> cudaError_t {
      using To = decltype(to_zero);
      CastKernel<From, To><<<GridFor(n), kThreads, 0, stream>>>(n, static_cast<const From*>(x),
                                                                static_cast<To*>(out));
      return cudaGetLastError();
    });
  });
}

}  // namespace irm::rt::cuda
