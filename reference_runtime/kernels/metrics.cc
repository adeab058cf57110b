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
//
// The attributes and checks are planned in metrics_plan.h, with the CUDA kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "reference_runtime/kernels/metrics_plan.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

template <typename T>
Status RunTopk(KernelCall& call, const plan::TopkAttrs& attrs) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const Tensor& x = call.input(0);
  IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
  IRM_ASSIGN_OR_RETURN(const plan::TopkPlan plan, plan::PlanTopk(x, attrs));
  const AxisSplit& split = plan.split;
  const int64_t k = attrs.k;
  const bool largest = attrs.largest;
  IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<T>(), plan.out_shape));
  IRM_ASSIGN_OR_RETURN(Tensor indices, Tensor::Zeros(DType::kInt64, plan.out_shape));
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
    IRM_ASSIGN_OR_RETURN(const plan::TopkAttrs attrs, plan::ReadTopkAttrs(call.attrs));
    return RunTopk<T>(call, attrs);
  }
};

template <typename T>
struct TopkV1Kernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const plan::TopkAttrs attrs, plan::ReadTopkV1Attrs(call.attrs));
    return RunTopk<T>(call, attrs);
  }
};

template <typename T>
struct AccuracyKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(plan::CheckAccuracyPresent(call));
    IRM_RETURN_IF_ERROR(CheckDType(call.input(0), "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const plan::AccuracyPlan plan, plan::PlanAccuracy(call));
    const int64_t samples = plan.samples;
    const int64_t k = plan.k;
    const int64_t label_stride = plan.label_stride;
    const int64_t* idx = call.input(1).data<int64_t>();
    const int64_t* lab = call.input(2).data<int64_t>();
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
