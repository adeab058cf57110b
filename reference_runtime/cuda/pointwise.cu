// Device code of the pointwise families (launch.h): activations and their grads, add_n, the random
// ops (uniform, gaussian, dropout and its grad) and the optimizer steps (sgd, momentum, adam,
// adamw). One thread per element, grid-stride; each element is computed by the CPU kernel's
// expression in the CPU kernel's compute type, and the file is compiled without fused
// multiply-add (-fmad=false), so that:
//   * add_n, dropout's mask and output, dropout_grad, uniform and the optimizers give the CPU's
//     bits (only correctly rounded operations: + - * / sqrt);
//   * activations (erf, tanh, exp) and gaussian (log, cos, sin) use CUDA's math library, within a
//     few units in the last place of glibc's: they are checked against float64 references.
// Random ops draw from the op's Philox stream exactly as philox.cc (philox.cuh).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/cuda/philox.cuh"

namespace irm::rt::cuda {
namespace {

#define IRM_GRID_STRIDE(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ---- activations (kernels/activation.cc)
// -----------------------------------------------------------

constexpr double kGeluAlpha = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

template <UnaryOp kOp, typename V>
__device__ __forceinline__ V ApplyUnary(V x) {
  if constexpr (kOp == UnaryOp::kRelu) {
    return x > 0 ? x : V(0);
  } else if constexpr (kOp == UnaryOp::kGelu) {
    return x * V(0.5) * (V(1) + erf(x * V(kSqrtHalf)));
  } else if constexpr (kOp == UnaryOp::kGeluTanh) {
    const V inner = V(kGeluAlpha) * (x + V(kGeluCubic) * x * x * x);
    return x * V(0.5) * (V(1) + tanh(inner));
  } else if constexpr (kOp == UnaryOp::kTanh) {
    return tanh(x);
  } else if constexpr (kOp == UnaryOp::kSigmoid) {
    return V(1) / (V(1) + exp(-x));
  } else {
    return sqrt(x);
  }
}

// out_grad * d op / dx, from `a` (the forward output for relu, tanh, sigmoid; x for gelu).
template <UnaryOp kOp, typename V>
__device__ __forceinline__ V ApplyUnaryGrad(V a, V g) {
  if constexpr (kOp == UnaryOp::kRelu) {
    return a > 0 ? g : V(0);
  } else if constexpr (kOp == UnaryOp::kGelu) {
    const V cdf = V(0.5) * (V(1) + erf(a * V(kSqrtHalf)));
    return g * (cdf + V(kInvSqrt2Pi) * a * exp(V(-0.5) * a * a));
  } else if constexpr (kOp == UnaryOp::kGeluTanh) {
    const V t = tanh(V(kGeluAlpha) * (a + V(kGeluCubic) * a * a * a));
    const V slope = V(kGeluAlpha) * a + V(3 * kGeluAlpha * kGeluCubic) * a * a * a;
    return g * (V(0.5) * (V(1) + t + (V(1) - t * t) * slope));
  } else if constexpr (kOp == UnaryOp::kTanh) {
    return g * (V(1) - a * a);
  } else {
    return g * a * (V(1) - a);  // sigmoid
  }
}

template <typename T, UnaryOp kOp>
__global__ void UnaryKernel(int64_t n, const T* x, T* out) {
  IRM_GRID_STRIDE(i, n) { out[i] = Store<T>(ApplyUnary<kOp>(Load(x[i]))); }
}

template <typename T, UnaryOp kOp>
__global__ void UnaryGradKernel(int64_t n, const T* a, const T* g, T* dx) {
  IRM_GRID_STRIDE(i, n) { dx[i] = Store<T>(ApplyUnaryGrad<kOp>(Load(a[i]), Load(g[i]))); }
}

// ---- add_n (kernels/manipulation.cc)
// ---------------------------------------------------------------

template <typename T>
__global__ void AddNKernel(int64_t n, int64_t count, const void* const* inputs, T* out) {
  using C = Compute<T>;
  IRM_GRID_STRIDE(i, n) {
    C acc = 0;
    for (int64_t k = 0; k < count; ++k)
      acc = WrapAdd(acc, Load(static_cast<const T*>(inputs[k])[i]));
    out[i] = Store<T>(acc);
  }
}

// ---- random ops (kernels/random.cc)
// ----------------------------------------------------------------

template <typename T>
__global__ void UniformKernel(int64_t n, RandomStream s, double min, double max, T* out) {
  const DevicePhilox philox{s.seed, s.identity};
  IRM_GRID_STRIDE(i, n) {
    const uint64_t index = DrawIndex(s, i);
    if constexpr (std::is_same_v<T, double>) {
      out[i] = min + (max - min) * philox.UniformDouble(index);
    } else {
      const float lo = static_cast<float>(min);
      const float hi = static_cast<float>(max);
      out[i] = Store<T>(lo + (hi - lo) * philox.UniformFloat(index));
    }
  }
}

template <typename T>
__global__ void GaussianKernel(int64_t n, RandomStream s, double mean, double std, T* out) {
  const DevicePhilox philox{s.seed, s.identity};
  IRM_GRID_STRIDE(i, n) {
    out[i] = Store<T>(static_cast<Compute<T>>(mean + std * philox.Normal(DrawIndex(s, i))));
  }
}

// 1 - p as Paddle's static_cast<T>(1.0f - p): computed in float32, rounded to T.
template <typename T>
__device__ __forceinline__ Compute<T> KeepScale(float p) {
  return Load(Store<T>(static_cast<Compute<T>>(1.0f - p)));
}

template <typename T>
__global__ void DropoutKernel(int64_t n, RandomStream s, float p, bool is_test, bool upscale,
                              const T* x, T* out, uint8_t* mask) {
  const DevicePhilox philox{s.seed, s.identity};
  const Compute<T> keep = KeepScale<T>(p);
  IRM_GRID_STRIDE(i, n) {
    if (is_test) {
      out[i] = upscale ? x[i] : Store<T>(Load(x[i]) * keep);
      mask[i] = 1;
    } else if (p == 1.0f || philox.UniformFloat(static_cast<uint64_t>(i)) < p) {
      out[i] = Store<T>(Compute<T>(0));
      mask[i] = 0;
    } else {
      out[i] = upscale ? Store<T>(Load(x[i]) / keep) : x[i];
      mask[i] = 1;
    }
  }
}

template <typename T>
__global__ void DropoutGradKernel(int64_t n, float p, bool is_test, bool upscale,
                                  const uint8_t* mask, const T* g, T* dx) {
  using C = Compute<T>;
  const C keep = KeepScale<T>(p);
  IRM_GRID_STRIDE(i, n) {
    if (is_test) {
      dx[i] = upscale ? g[i] : Store<T>(Load(g[i]) * keep);
      continue;
    }
    const C masked = Load(g[i]) * static_cast<C>(mask[i]);
    if (!upscale) {
      dx[i] = Store<T>(masked);
    } else if (p == 1.0f) {
      dx[i] = Store<T>(Load(g[i]) * C(0));  // 0 * dy, as Paddle: NaN stays NaN
    } else {
      dx[i] = Store<T>(masked / keep);
    }
  }
}

// ---- optimizers (kernels/optimizer.cc)
// -------------------------------------------------------------

// A 1-element tensor as phi reads it: float64, then the compute type.
template <typename MT>
__device__ __forceinline__ MT Scalar(const AnyFloat& a) {
  return static_cast<MT>(LoadAny<double>(a, 0));
}

template <typename MT>
__device__ __forceinline__ void StoreParam(const AnyFloatOut& param_out,
                                           const AnyFloatOut& master_out, int64_t i, MT p) {
  StoreAny(param_out, i, p);
  if (master_out.data != nullptr) StoreAny(master_out, i, p);
}

template <typename MT>
__global__ void SgdKernel(SgdArgs a) {
  const MT lr = Scalar<MT>(a.learning_rate);
  IRM_GRID_STRIDE(i, a.n) {
    const MT p = LoadAny<MT>(a.param, i);
    StoreParam(a.param_out, a.master_out, i, p - lr * LoadAny<MT>(a.grad, i));
  }
}

template <typename MT>
__global__ void MomentumKernel(MomentumArgs a) {
  const MT lr = Scalar<MT>(a.learning_rate);
  const MT mu = static_cast<MT>(a.mu);
  const MT coeff = static_cast<MT>(a.coeff);
  const MT rescale = static_cast<MT>(a.rescale);
  IRM_GRID_STRIDE(i, a.n) {
    const MT p = LoadAny<MT>(a.param, i);
    MT grad = LoadAny<MT>(a.grad, i) * rescale;
    if (a.l2_decay) grad = p * coeff + grad;
    const MT v = LoadAny<MT>(a.velocity, i) * mu + grad;
    StoreAny(a.velocity_out, i, v);
    StoreParam(a.param_out, a.master_out, i, a.nesterov ? p - (grad + v * mu) * lr : p - lr * v);
  }
}

template <typename MT>
__global__ void AdamKernel(AdamArgs a) {
  const MT one = 1;
  const MT beta1 = static_cast<MT>(a.beta1);
  const MT beta2 = static_cast<MT>(a.beta2);
  const MT beta1_p = Scalar<MT>(a.beta1_pow);
  const MT beta2_p = Scalar<MT>(a.beta2_pow);
  const MT lr_value = Scalar<MT>(a.learning_rate);
  const MT lr = lr_value * (sqrt(one - beta2_p) / (one - beta1_p));
  const MT eps = static_cast<MT>(a.epsilon) * sqrt(one - beta2_p);
  const MT decay_scale = lr_value * static_cast<MT>(a.lr_ratio) * static_cast<MT>(a.coeff);
  IRM_GRID_STRIDE(i, a.n) {
    MT p = LoadAny<MT>(a.param, i);
    const MT g = LoadAny<MT>(a.grad, i);
    if (a.decay) p = p - decay_scale * p;
    const MT m1 = beta1 * LoadAny<MT>(a.moment1, i) + (one - beta1) * g;
    const MT m2 = beta2 * LoadAny<MT>(a.moment2, i) + (one - beta2) * g * g;
    MT m2_used = m2;
    if (a.amsgrad) {
      const MT previous = LoadAny<MT>(a.moment2_max, i);
      m2_used = m2 < previous ? previous : m2;  // std::max(m2, previous)
      StoreAny(a.moment2_max_out, i, m2_used);
    }
    StoreAny(a.moment1_out, i, m1);
    StoreAny(a.moment2_out, i, m2);
    StoreParam(a.param_out, a.master_out, i, p + -lr * (m1 / (sqrt(m2_used) + eps)));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (a.beta1_pow_out.data != nullptr) StoreAny(a.beta1_pow_out, 0, beta1 * beta1_p);
    if (a.beta2_pow_out.data != nullptr) StoreAny(a.beta2_pow_out, 0, beta2 * beta2_p);
  }
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, Elem elem, int64_t n, const void* x, void* out,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(x);
    T* o = static_cast<T*>(out);
#define IRM_UNARY_CASE(OP)                                             \
  case OP:                                                             \
    UnaryKernel<T, OP><<<GridFor(n), kThreads, 0, stream>>>(n, in, o); \
    break;
    switch (op) {
      IRM_UNARY_CASE(UnaryOp::kRelu)
      IRM_UNARY_CASE(UnaryOp::kGelu)
      IRM_UNARY_CASE(UnaryOp::kGeluTanh)
      IRM_UNARY_CASE(UnaryOp::kTanh)
      IRM_UNARY_CASE(UnaryOp::kSigmoid)
      IRM_UNARY_CASE(UnaryOp::kSqrt)
    }
#undef IRM_UNARY_CASE
    return cudaGetLastError();
  });
}

cudaError_t LaunchUnaryGrad(UnaryOp op, Elem elem, int64_t n, const void* a, const void* out_grad,
                            void* x_grad, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const T* av = static_cast<const T*>(a);
    const T* g = static_cast<const T*>(out_grad);
    T* dx = static_cast<T*>(x_grad);
#define IRM_GRAD_CASE(OP)                                                      \
  case OP:                                                                     \
    UnaryGradKernel<T, OP><<<GridFor(n), kThreads, 0, stream>>>(n, av, g, dx); \
    break;
    switch (op) {
      IRM_GRAD_CASE(UnaryOp::kRelu)
      IRM_GRAD_CASE(UnaryOp::kGelu)
      IRM_GRAD_CASE(UnaryOp::kGeluTanh)
      IRM_GRAD_CASE(UnaryOp::kTanh)
      IRM_GRAD_CASE(UnaryOp::kSigmoid)
      case UnaryOp::kSqrt:
        return cudaErrorInvalidValue;  // no sqrt_grad on the CPU either
    }
#undef IRM_GRAD_CASE
    return cudaGetLastError();
  });
}

cudaError_t LaunchAddN(Elem elem, int64_t n, int64_t count, const void* const* inputs, void* out,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchArithmetic(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    AddNKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, count, inputs, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchUniform(Elem elem, int64_t n, const RandomStream& stream_desc, double min,
                          double max, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    UniformKernel<T>
        <<<GridFor(n), kThreads, 0, stream>>>(n, stream_desc, min, max, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchGaussian(Elem elem, int64_t n, const RandomStream& stream_desc, double mean,
                           double std, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    GaussianKernel<T>
        <<<GridFor(n), kThreads, 0, stream>>>(n, stream_desc, mean, std, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchDropout(Elem elem, int64_t n, const RandomStream& stream_desc, float p,
                          bool is_test, bool upscale_in_train, const void* x, void* out,
                          uint8_t* mask, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    DropoutKernel<T>
        <<<GridFor(n), kThreads, 0, stream>>>(n, stream_desc, p, is_test, upscale_in_train,
                                              static_cast<const T*>(x), static_cast<T*>(out), mask);
    return cudaGetLastError();
  });
}

cudaError_t LaunchDropoutGrad(Elem elem, int64_t n, float p, bool is_test, bool upscale_in_train,
                              const uint8_t* mask, const void* out_grad, void* x_grad,
                              cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchFloating(elem, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    DropoutGradKernel<T><<<GridFor(n), kThreads, 0, stream>>>(n, p, is_test, upscale_in_train, mask,
                                                              static_cast<const T*>(out_grad),
                                                              static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchSgd(bool double_compute, const SgdArgs& args, cudaStream_t stream) {
  const unsigned grid = GridFor(args.n);
  if (double_compute) {
    SgdKernel<double><<<grid, kThreads, 0, stream>>>(args);
  } else {
    SgdKernel<float><<<grid, kThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

cudaError_t LaunchMomentum(bool double_compute, const MomentumArgs& args, cudaStream_t stream) {
  const unsigned grid = GridFor(args.n);
  if (double_compute) {
    MomentumKernel<double><<<grid, kThreads, 0, stream>>>(args);
  } else {
    MomentumKernel<float><<<grid, kThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

cudaError_t LaunchAdam(bool double_compute, const AdamArgs& args, cudaStream_t stream) {
  // At least one block, so that the beta powers are written for an empty parameter too.
  const unsigned grid = GridFor(args.n);
  if (double_compute) {
    AdamKernel<double><<<grid, kThreads, 0, stream>>>(args);
  } else {
    AdamKernel<float><<<grid, kThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace irm::rt::cuda
