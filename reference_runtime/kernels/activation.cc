// Activation kernels and their grads, for the floating dtypes (16-bit ones computed in float32):
// relu, gelu (exact erf form, or Paddle's tanh approximation when `approximate`), tanh, sigmoid,
// sqrt. As in Paddle, relu_grad, tanh_grad and sigmoid_grad read the forward output rather than
// x; gelu_grad reads x. relu is `x > 0 ? x : 0` and its grad `out > 0 ? out_grad : 0` (Paddle's
// elementwise functors; a NaN input gives 0).
#include <cmath>

#include "reference_runtime/kernels/elementwise.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// sqrt(2 / pi) and the cubic coefficient of the tanh approximation of gelu; 1 / sqrt(2) and
// 1 / sqrt(2 pi) for the exact form.
constexpr double kGeluAlpha = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

template <typename V>
V Gelu(V x, bool approximate) {
  if (approximate) {
    const V inner = V(kGeluAlpha) * (x + V(kGeluCubic) * x * x * x);
    return x * V(0.5) * (V(1) + std::tanh(inner));
  }
  return x * V(0.5) * (V(1) + std::erf(x * V(kSqrtHalf)));
}

// d gelu / dx.
template <typename V>
V GeluDerivative(V x, bool approximate) {
  if (approximate) {
    // d/dx [x/2 (1 + t)] with t = tanh(a (x + c x^3)): (1 + t + (1 - t^2) (a x + 3 a c x^3)) / 2.
    const V t = std::tanh(V(kGeluAlpha) * (x + V(kGeluCubic) * x * x * x));
    const V slope = V(kGeluAlpha) * x + V(3 * kGeluAlpha * kGeluCubic) * x * x * x;
    return V(0.5) * (V(1) + t + (V(1) - t * t) * slope);
  }
  // Phi(x) + x phi(x): the normal CDF and x times the normal density.
  const V cdf = V(0.5) * (V(1) + std::erf(x * V(kSqrtHalf)));
  return cdf + V(kInvSqrt2Pi) * x * std::exp(V(-0.5) * x * x);
}

template <typename T>
using C = Compute<T>;

// x -> out = f(x).
template <typename T, typename F>
Status Unary(KernelCall& call, F&& f) {
  IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "x"));
  call.SetOutput(0, MapUnary<T, T>(call.input(0), f));
  return Status::Ok();
}

// (a, out_grad) -> x_grad = f(a, out_grad), a being out or x (`a_name`).
template <typename T, typename F>
Status Grad(KernelCall& call, const char* a_name, F&& f) {
  const Tensor& a = call.input(0);
  const Tensor& out_grad = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(a, DTypeOf<T>(), a_name));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
  IRM_RETURN_IF_ERROR(ExpectSameShape(a, a_name, out_grad, "out_grad"));
  call.SetOutput(0, MapSameShape<T, T>(a, out_grad, f));
  return Status::Ok();
}

template <typename T>
struct ReluKernel {
  static Status Run(KernelCall& call) {
    return Unary<T>(call, [](C<T> x) { return x > 0 ? x : C<T>(0); });
  }
};
template <typename T>
struct GeluKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(bool approximate, call.attrs.GetOr<bool>("approximate", false));
    return Unary<T>(call, [&](C<T> x) { return Gelu(x, approximate); });
  }
};
template <typename T>
struct TanhKernel {
  static Status Run(KernelCall& call) {
    return Unary<T>(call, [](C<T> x) { return std::tanh(x); });
  }
};
template <typename T>
struct SigmoidKernel {
  static Status Run(KernelCall& call) {
    return Unary<T>(call, [](C<T> x) { return C<T>(1) / (C<T>(1) + std::exp(-x)); });
  }
};
template <typename T>
struct SqrtKernel {
  static Status Run(KernelCall& call) {
    return Unary<T>(call, [](C<T> x) { return std::sqrt(x); });
  }
};

template <typename T>
struct ReluGradKernel {
  static Status Run(KernelCall& call) {
    return Grad<T>(call, "out", [](C<T> out, C<T> g) { return out > 0 ? g : C<T>(0); });
  }
};
template <typename T>
struct GeluGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(bool approximate, call.attrs.GetOr<bool>("approximate", false));
    return Grad<T>(call, "x", [&](C<T> x, C<T> g) { return g * GeluDerivative(x, approximate); });
  }
};
template <typename T>
struct TanhGradKernel {
  static Status Run(KernelCall& call) {
    return Grad<T>(call, "out", [](C<T> out, C<T> g) { return g * (C<T>(1) - out * out); });
  }
};
template <typename T>
struct SigmoidGradKernel {
  static Status Run(KernelCall& call) {
    return Grad<T>(call, "out", [](C<T> out, C<T> g) { return g * out * (C<T>(1) - out); });
  }
};

}  // namespace

Status RegisterActivationKernels(KernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  const KernelSignature grad{2, 2, 1};
  IRM_RETURN_IF_ERROR(RegisterFloating<ReluKernel>(registry, "relu", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<GeluKernel>(registry, "gelu", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<TanhKernel>(registry, "tanh", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<SigmoidKernel>(registry, "sigmoid", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<SqrtKernel>(registry, "sqrt", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<ReluGradKernel>(registry, "relu_grad", grad));
  IRM_RETURN_IF_ERROR(RegisterFloating<GeluGradKernel>(registry, "gelu_grad", grad));
  IRM_RETURN_IF_ERROR(RegisterFloating<TanhGradKernel>(registry, "tanh_grad", grad));
  IRM_RETURN_IF_ERROR(RegisterFloating<SigmoidGradKernel>(registry, "sigmoid_grad", grad));
  return Status::Ok();
}

}  // namespace irm::rt
