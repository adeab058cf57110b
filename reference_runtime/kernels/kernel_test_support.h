// Test support for kernel tests (linked into the tests only): seeded random inputs of any dtype,
// conversion to float64 for the naive reference implementations the tests write themselves,
// running a kernel from the global registry, closeness checks with the failing index, and central
// finite differences for grad kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::testing {

// Values uniform in [lo, hi) drawn from (seed, element index); integers are rounded down.
Tensor RandomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, double lo = -1.0,
                    double hi = 1.0);
std::vector<double> ToDoubles(const Tensor& t);
Tensor FromDoubles(const std::vector<double>& values, std::vector<int64_t> shape, DType dtype);

// Runs `name` for `dtype` from the global registry with `num_outputs` outputs.
StatusOr<std::vector<Tensor>> TryRunKernel(const std::string& name, DType dtype,
                                           const std::vector<const Tensor*>& inputs,
                                           const KernelAttrs& attrs, size_t num_outputs,
                                           const KernelContext& context = {});
// The same, failing the current test (and returning empty tensors) on an error.
std::vector<Tensor> RunKernel(const std::string& name, DType dtype,
                              const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs,
                              size_t num_outputs, const KernelContext& context = {});

// The relative tolerance a kernel result of this dtype is held to against a float64 reference:
// a few units of its rounding (float64 1e-12, float32 1e-5, bfloat16 2e-2, float16 4e-3).
double ToleranceFor(DType dtype);

// Expects shape `shape` and every |actual - expected| <= tol * max(1, |expected|); the first
// failures name their flat index. `what` names the result in messages.
void ExpectClose(const Tensor& actual, const std::vector<double>& expected,
                 const std::vector<int64_t>& shape, double tol, const std::string& what);

// d loss / d x by central differences with step h (float64).
std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& loss,
                                    std::vector<double> x, double h = 1e-6);

}  // namespace irm::rt::testing
