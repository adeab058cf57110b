// The evaluation ops of a classifier's training program: topk (and the legacy top_k, phi's
// topk_v1) and accuracy, as phi's CPU kernels define them (paddle/phi/kernels/cpu/top_k_kernel.cc,
// accuracy_kernel.cc; signatures of paddle/phi/ops/yaml/ops.yaml and legacy/static_ops.yaml).
//
// topk(x; k, axis = -1, largest = true, sorted = true) -> (out, indices int64): the k largest (or
// smallest) values along axis and their positions. NaN counts as larger than every number (phi's
// comparator). phi leaves the order of equal values to std::partial_sort / nth_element; here they
// come lowest index first, and the result is always sorted (an order `sorted = false` allows), so
// that the output is deterministic. topk_v1 is topk along the last axis, largest, sorted.
//
// accuracy(x, indices int64 [N, k], label int64 [N, ...]) -> (accuracy float32, correct int32,
// total int32), 0-D (AccuracyInferMeta): a sample is correct when one of its k indices equals its
// label; accuracy = correct / N in float32.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

template <typename T>
Status RunTopk(KernelCall& call, int64_t k, int64_t axis_attr, bool largest) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const Tensor& x = call.input(0);
  IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
  if (x.rank() == 0) return KernelError("x is 0-D; topk needs at least one dim");
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, x.shape(), "axis"));
  const AxisSplit split = SplitAround(x.shape(), axis);
  if (k < 1 || k > split.size) {
    return KernelError(
        fmt::format("k is {}, expected 1 to {} (the size of axis {})", k, split.size, axis));
  }
  std::vector<int64_t> shape = x.shape();
  shape[static_cast<size_t>(axis)] = k;
  IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<T>(), shape));
  IRM_ASSIGN_OR_RETURN(Tensor indices, Tensor::Zeros(DType::kInt64, shape));
  const T* in = x.data<T>();
  T* values = out.data<T>();
  int64_t* where = indices.data<int64_t>();
  std::vector<int64_t> order(static_cast<size_t>(split.size));
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t i = 0; i < split.inner; ++i) {
      auto at = [&](int64_t a) { return Load(in[(o * split.size + a) * split.inner + i]); };
      // Strict weak order: NaN first (largest) or last (smallest), then by value, then by index.
      auto before = [&](int64_t l, int64_t r) {
        const auto a = at(l), b = at(r);
        const bool a_nan = std::isnan(static_cast<double>(a));
        const bool b_nan = std::isnan(static_cast<double>(b));
        if (a_nan != b_nan) return largest ? a_nan : b_nan;
        if (!a_nan && a != b) return largest ? a > b : a < b;
        return l < r;
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dst = (o * k + j) * split.inner + i;
        values[dst] = in[(o * split.size + order[j]) * split.inner + i];
        where[dst] = order[j];
      }
    }
  }
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, std::move(indices));
  return Status::Ok();
}

template <typename T>
struct TopkKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const int64_t k, call.attrs.GetOr<int64_t>("k", 1));
    IRM_ASSIGN_OR_RETURN(const int64_t axis, call.attrs.GetOr<int64_t>("axis", -1));
    IRM_ASSIGN_OR_RETURN(const bool largest, call.attrs.GetOr<bool>("largest", true));
    return RunTopk<T>(call, k, axis, largest);
  }
};

template <typename T>
struct TopkV1Kernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const int64_t k, call.attrs.GetOr<int64_t>("k", 1));
    return RunTopk<T>(call, k, -1, true);
  }
};

template <typename T>
struct AccuracyKernel {
  static Status Run(KernelCall& call) {
    for (size_t i = 0; i < 3; ++i) {
      IRM_RETURN_IF_ERROR(CheckPresent(call, i, i == 0 ? "x" : i == 1 ? "indices" : "label"));
    }
    const Tensor& x = call.input(0);
    const Tensor& indices = call.input(1);
    const Tensor& label = call.input(2);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(CheckDType(indices, "indices", {DType::kInt64}));
    IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64}));
    if (x.rank() != 2) {
      return KernelError(
          fmt::format("x has shape {}, expected [samples, k]", ShapeToString(x.shape())));
    }
    IRM_RETURN_IF_ERROR(CheckShape(indices, "indices", x.shape(), "the shape of x"));
    const int64_t samples = x.dim(0);
    const int64_t k = x.dim(1);
    if (label.rank() == 0 || label.dim(0) < samples) {
      return KernelError(fmt::format("label has shape {}, expected at least {} samples",
                                     ShapeToString(label.shape()), samples));
    }
    const int64_t label_stride = label.dim(0) == 0 ? 0 : label.numel() / label.dim(0);
    const int64_t* idx = indices.data<int64_t>();
    const int64_t* lab = label.data<int64_t>();
    int32_t correct = 0;
    for (int64_t i = 0; i < samples; ++i) {
      const int64_t want = lab[i * label_stride];
      if (want < 0) return KernelError(fmt::format("label[{}] is {}, expected >= 0", i, want));
      for (int64_t j = 0; j < k; ++j) {
        if (idx[i * k + j] == want) {
          ++correct;
          break;
        }
      }
    }
    const float accuracy =
        samples == 0 ? 0.0f : static_cast<float>(correct) / static_cast<float>(samples);
    call.SetOutput(0, Tensor::FromVector(std::vector<float>{accuracy}, {}));
    call.SetOutput(1, Tensor::FromVector(std::vector<int32_t>{correct}, {}));
    call.SetOutput(2, Tensor::FromVector(std::vector<int32_t>{static_cast<int32_t>(samples)}, {}));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterMetricsKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<TopkKernel, float, double, int32_t, int64_t, Float16>(
      registry, "topk", {1, 1, 2})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<TopkV1Kernel, float, double, int32_t, int64_t, Float16>(
      registry, "topk_v1", {1, 1, 2})));
  return RegisterForTypes<AccuracyKernel, float, double>(registry, "accuracy", {3, 3, 3});
}

}  // namespace irm::rt
