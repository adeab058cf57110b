// What the elementwise-style kernel families (elementwise.cc, activation.cc) share: the dtype
// lists they register for, the checks of their inputs' dtypes and shapes (errors naming the
// operands), and the maps of a function over one tensor or two tensors of one shape. Values are
// loaded into the compute type (numeric.h: float16/bfloat16 compute in float32) and stored back
// once, so a 16-bit result is rounded once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// Registers Kernel<T> for the floating dtypes: float32, float64, float16, bfloat16.
template <template <typename> class Kernel>
Status RegisterFloating(KernelRegistry& registry, const std::string& name,
                        KernelSignature signature) {
  return RegisterForTypes<Kernel, float, double, Float16, BFloat16>(registry, name, signature);
}
// ... and int32, int64 (what Paddle's arithmetic kernels have).
template <template <typename> class Kernel>
Status RegisterArithmetic(KernelRegistry& registry, const std::string& name,
                          KernelSignature signature) {
  return RegisterForTypes<Kernel, float, double, Float16, BFloat16, int32_t, int64_t>(
      registry, name, signature);
}
// Every numeric dtype: the floating ones and int8, uint8, int16, int32, int64.
template <template <typename> class Kernel>
Status RegisterNumeric(KernelRegistry& registry, const std::string& name,
                       KernelSignature signature) {
  return RegisterForTypes<Kernel, float, double, Float16, BFloat16, int8_t, uint8_t, int16_t,
                          int32_t, int64_t>(registry, name, signature);
}
// Every numeric dtype and bool.
template <template <typename> class Kernel>
Status RegisterNumericAndBool(KernelRegistry& registry, const std::string& name,
                              KernelSignature signature) {
  IRM_RETURN_IF_ERROR(RegisterNumeric<Kernel>(registry, name, signature));
  return RegisterForTypes<Kernel, bool>(registry, name, signature);
}

// "y is float64, not float32": the registry dispatched on one dtype, every input must have it.
Status ExpectDType(const Tensor& t, DType dtype, std::string_view name);
// "out [2, 3] and out_grad [3, 2] differ in shape".
Status ExpectSameShape(const Tensor& a, std::string_view a_name, const Tensor& b,
                       std::string_view b_name);
// The multi-index of flat index `index` in `shape`: "[1, 2]" ("[]" for a 0-D tensor).
std::string IndexToString(int64_t index, const std::vector<int64_t>& shape);

// out[i] = f(Load(x[i])) for a tensor of In; out has x's shape and dtype Out. f returns the
// compute type of Out (stored with Store<Out>), or bool when Out is bool.
template <typename Out, typename In, typename F>
Tensor MapUnary(const Tensor& x, F&& f) {
  Tensor out = Tensor::ZerosUnchecked(DTypeOf<Out>(), x.shape());
  const In* in = x.data<In>();
  Out* o = out.data<Out>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = Store<Out>(f(Load<In>(in[i])));
  return out;
}

// out[i] = f(Load(a[i]), Load(b[i])) for two tensors of T of one shape (the caller checked it).
template <typename Out, typename T, typename F>
Tensor MapSameShape(const Tensor& a, const Tensor& b, F&& f) {
  Tensor out = Tensor::ZerosUnchecked(DTypeOf<Out>(), a.shape());
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Out* o = out.data<Out>();
  for (int64_t i = 0; i < a.numel(); ++i) o[i] = Store<Out>(f(Load<T>(pa[i]), Load<T>(pb[i])));
  return out;
}

}  // namespace irm::rt
