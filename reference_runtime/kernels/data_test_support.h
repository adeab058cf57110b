// What the data kernel tests share: inputs of any dtype whose values are valid for it, attribute
// lists written inline, multi-index iteration for the naive references, the exact-error check,
// and the finite-difference check of a grad kernel against a naive float64 forward.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::testing {

// Random values valid for the dtype: 0/1 for bool, [0, 100) for uint8, [-50, 50) otherwise
// (integers rounded down), so that every element differs from most others.
inline Tensor DataInput(DType dtype, std::vector<int64_t> shape, uint64_t seed) {
  if (dtype == DType::kBool) return RandomTensor(dtype, std::move(shape), seed, 0.0, 2.0);
  if (dtype == DType::kUInt8) return RandomTensor(dtype, std::move(shape), seed, 0.0, 100.0);
  return RandomTensor(dtype, std::move(shape), seed, -50.0, 50.0);
}

inline KernelAttrs Attrs(std::vector<std::pair<std::string, AttrValue>> values) {
  KernelAttrs attrs;
  for (auto& [name, value] : values) attrs.Set(name, std::move(value));
  return attrs;
}

inline int64_t NumelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The C-order flat index of `index` in `shape`.
inline int64_t FlatIndex(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + index[k];
  return flat;
}

// Calls f(index, flat) for every element of `shape` in C order.
inline void ForEachIndex(const std::vector<int64_t>& shape,
                         const std::function<void(const std::vector<int64_t>&, int64_t)>& f) {
  const int64_t n = NumelOf(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(index, flat);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

// Runs a kernel expected to fail and checks the exact message.
inline void ExpectKernelError(const std::string& name, DType dtype,
                              const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs,
                              size_t num_outputs, const std::string& message) {
  StatusOr<std::vector<Tensor>> result = TryRunKernel(name, dtype, inputs, attrs, num_outputs);
  ASSERT_FALSE(result.ok()) << name << " accepted the input";
  EXPECT_EQ(result.status().message(), message);
}

// Checks a grad kernel's float64 result `grad` against central differences of
// loss(x) = sum(w * forward(x)), where `forward` is the test's naive float64 forward and `w` the
// out_grad the kernel was given.
inline void ExpectFiniteDifferenceGrad(
    const std::function<std::vector<double>(const std::vector<double>&)>& forward,
    const std::vector<double>& x, const std::vector<double>& w, const Tensor& grad,
    const std::vector<int64_t>& shape, const std::string& what) {
  auto loss = [&](const std::vector<double>& v) {
    const std::vector<double> y = forward(v);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += w[i] * y[i];
    return s;
  };
  ExpectClose(grad, NumericGradient(loss, x), shape, 1e-6, what);
}

}  // namespace irm::rt::testing
