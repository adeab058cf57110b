// Test support for kernel tests (kernel_test_support.h).
#include "reference_runtime/kernels/kernel_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/philox.h"

namespace irm::rt::testing {
namespace {

template <typename T>
void Fill(Tensor& t, const std::vector<double>& values) {
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      out[i] = Store<T>(static_cast<float>(values[i]));
    } else {
      out[i] = static_cast<T>(values[i]);
    }
  }
}

template <typename T>
void Read(const Tensor& t, std::vector<double>& values) {
  const T* in = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) values.push_back(static_cast<double>(Load<T>(in[i])));
}

}  // namespace

Tensor RandomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, double lo, double hi) {
  Tensor t = Tensor::ZerosUnchecked(dtype, std::move(shape));
  const PhiloxStream stream(seed, OpIdentity("kernel-test"));
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = lo + (hi - lo) * stream.UniformDouble(i);
    if (!IsFloatingDType(dtype)) values[i] = std::floor(values[i]);
  }
  VisitDType(dtype, [&](auto zero) { Fill<decltype(zero)>(t, values); });
  return t;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(t.numel()));
  VisitDType(t.dtype(), [&](auto zero) { Read<decltype(zero)>(t, values); });
  return values;
}

Tensor FromDoubles(const std::vector<double>& values, std::vector<int64_t> shape, DType dtype) {
  Tensor t = Tensor::ZerosUnchecked(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  VisitDType(dtype, [&](auto zero) { Fill<decltype(zero)>(t, values); });
  return t;
}

StatusOr<std::vector<Tensor>> TryRunKernel(const std::string& name, DType dtype,
                                           const std::vector<const Tensor*>& inputs,
                                           const KernelAttrs& attrs, size_t num_outputs,
                                           const KernelContext& context) {
  std::vector<Tensor> outputs(num_outputs);
  KernelCall call{.inputs = inputs, .outputs = {}, .attrs = attrs, .context = context};
  for (Tensor& out : outputs) call.outputs.push_back(&out);
  IRM_RETURN_IF_ERROR(KernelRegistry::Global().Run(name, dtype, call));
  return outputs;
}

std::vector<Tensor> RunKernel(const std::string& name, DType dtype,
                              const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs,
                              size_t num_outputs, const KernelContext& context) {
  StatusOr<std::vector<Tensor>> outputs =
      TryRunKernel(name, dtype, inputs, attrs, num_outputs, context);
  if (!outputs.ok()) {
    ADD_FAILURE() << name << " (" << DTypeName(dtype) << "): " << outputs.status().ToString();
    return std::vector<Tensor>(num_outputs);
  }
  return std::move(outputs).value();
}

double ToleranceFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return 1e-12;
    case DType::kFloat32:
      return 1e-5;
    case DType::kFloat16:
      return 4e-3;
    case DType::kBFloat16:
      return 2e-2;
    default:
      return 0.0;
  }
}

void ExpectClose(const Tensor& actual, const std::vector<double>& expected,
                 const std::vector<int64_t>& shape, double tol, const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what << " was not produced";
  ASSERT_EQ(actual.shape(), shape) << what << " has the wrong shape";
  const std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(got.size(), expected.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    const bool both_nan = std::isnan(got[i]) && std::isnan(expected[i]);
    if (both_nan || got[i] == expected[i]) continue;
    if (std::abs(got[i] - expected[i]) > tol * std::max(1.0, std::abs(expected[i]))) {
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", expected " << expected[i]
                    << " (tolerance " << tol << ")";
      ++failures;
    }
  }
}

std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& loss,
                                    std::vector<double> x, double h) {
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss(x);
    x[i] = saved - h;
    const double down = loss(x);
    x[i] = saved;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

}  // namespace irm::rt::testing
