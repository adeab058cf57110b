// The CUDA twins of the evaluation ops (kernels/metrics.cc): topk, topk_v1 and accuracy, with the
// CPU kernels' names, signatures, dtypes, attributes and errors (both plan with
// kernels/metrics_plan.h). topk places each element by its rank in the CPU's strict order
// (metrics.cu), accuracy counts on one device thread after the host has checked the labels (the
// CPU's error names the first negative one).
#include <fmt/format.h>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/metrics_launch.h"
#include "reference_runtime/kernels/metrics_plan.h"

namespace irm::rt::cuda {
namespace {

Status RunTopk(CudaKernelCall& call, const plan::TopkAttrs& attrs) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(const plan::TopkPlan plan, plan::PlanTopk(x, attrs));
  const AxisSplit& split = plan.split;
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor values,
                       DeviceTensor::Uninitialized(x.dtype(), plan.out_shape, "topk"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor indices,
                       DeviceTensor::Uninitialized(DType::kInt64, plan.out_shape, "topk"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchTopk(elem, split.outer, split.size, split.inner, attrs.k, attrs.largest, x.raw(),
                 values.raw(), static_cast<int64_t*>(indices.raw()), Stream()),
      "topk"));
  call.SetOutput(0, std::move(values));
  call.SetOutput(1, std::move(indices));
  return Status::Ok();
}

Status RunTopkV2(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::TopkAttrs attrs, plan::ReadTopkAttrs(call.attrs));
  return RunTopk(call, attrs);
}

// topk_v1 (the legacy top_k): the last axis, largest.
Status RunTopkV1(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const plan::TopkAttrs attrs, plan::ReadTopkV1Attrs(call.attrs));
  return RunTopk(call, attrs);
}

Status RunAccuracy(CudaKernelCall& call) {
  IRM_RETURN_IF_ERROR(plan::CheckAccuracyPresent(call));
  IRM_ASSIGN_OR_RETURN(const plan::AccuracyPlan plan, plan::PlanAccuracy(call));
  const DeviceTensor& indices = call.input(1);
  const DeviceTensor& label = call.input(2);
  const int64_t samples = plan.samples;
  const int64_t k = plan.k;
  const int64_t label_stride = plan.label_stride;
  IRM_ASSIGN_OR_RETURN(Tensor host_label, HostCopy(label, "accuracy"));
  for (int64_t i = 0; i < samples; ++i) {
    const int64_t want = host_label.data<int64_t>()[i * label_stride];
    if (want < 0) return KernelError(fmt::format("label[{}] is {}, expected >= 0", i, want));
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor accuracy,
                       DeviceTensor::Uninitialized(DType::kFloat32, {}, "accuracy"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor correct,
                       DeviceTensor::Uninitialized(DType::kInt32, {}, "accuracy"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor total,
                       DeviceTensor::Uninitialized(DType::kInt32, {}, "accuracy"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchAccuracy(samples, k, label_stride, static_cast<const int64_t*>(indices.raw()),
                     static_cast<const int64_t*>(label.raw()), static_cast<float*>(accuracy.raw()),
                     static_cast<int32_t*>(correct.raw()), static_cast<int32_t*>(total.raw()),
                     Stream()),
      "accuracy"));
  call.SetOutput(0, std::move(accuracy));
  call.SetOutput(1, std::move(correct));
  call.SetOutput(2, std::move(total));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaMetricsKernels(CudaKernelRegistry& registry) {
  const std::initializer_list<DType> topk_dtypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                                    DType::kInt64, DType::kFloat16};
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "topk", topk_dtypes, &RunTopkV2, {1, 1, 2}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "topk_v1", topk_dtypes, &RunTopkV1, {1, 1, 2}));
  return RegisterForDTypes(registry, "accuracy", {DType::kFloat32, DType::kFloat64}, &RunAccuracy,
                           {3, 3, 3});
}

}  // namespace irm::rt::cuda
