// The CUDA twins of the evaluation ops (kernels/metrics.cc): topk, topk_v1 and accuracy, with the
// CPU kernels' names, signatures, dtypes, attributes and errors. topk places each element by its
// rank in the CPU's strict order (metrics.cu), accuracy counts on one device thread after the host
// has checked the labels (the CPU's error names the first negative one).
#include <fmt/format.h>

#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/metrics_launch.h"
#include "reference_runtime/kernels/axes.h"

namespace irm::rt::cuda {
namespace {

Status RunTopk(CudaKernelCall& call, int64_t k, int64_t axis_attr, bool largest) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const DeviceTensor& x = call.input(0);
  if (x.rank() == 0) return KernelError("x is 0-D; topk needs at least one dim");
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, x.shape(), "axis"));
  const AxisSplit split = SplitAround(x.shape(), axis);
  if (k < 1 || k > split.size) {
    return KernelError(
        fmt::format("k is {}, expected 1 to {} (the size of axis {})", k, split.size, axis));
  }
  std::vector<int64_t> shape = x.shape();
  shape[static_cast<size_t>(axis)] = k;
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor values, DeviceTensor::Uninitialized(x.dtype(), shape, "topk"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor indices,
                       DeviceTensor::Uninitialized(DType::kInt64, shape, "topk"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchTopk(elem, split.outer, split.size, split.inner, k, largest, x.raw(),
                              values.raw(), static_cast<int64_t*>(indices.raw()), Stream()),
                   "topk"));
  call.SetOutput(0, std::move(values));
  call.SetOutput(1, std::move(indices));
  return Status::Ok();
}

Status RunTopkV2(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const int64_t k, call.attrs.GetOr<int64_t>("k", 1));
  IRM_ASSIGN_OR_RETURN(const int64_t axis, call.attrs.GetOr<int64_t>("axis", -1));
  IRM_ASSIGN_OR_RETURN(const bool largest, call.attrs.GetOr<bool>("largest", true));
  return RunTopk(call, k, axis, largest);
}

// topk_v1 (the legacy top_k): the last axis, largest.
Status RunTopkV1(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const int64_t k, call.attrs.GetOr<int64_t>("k", 1));
  return RunTopk(call, k, -1, true);
}

Status RunAccuracy(CudaKernelCall& call) {
  for (size_t i = 0; i < 3; ++i) {
    IRM_RETURN_IF_ERROR(CheckPresent(call, i, i == 0 ? "x" : i == 1 ? "indices" : "label"));
  }
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& indices = call.input(1);
  const DeviceTensor& label = call.input(2);
  IRM_RETURN_IF_ERROR(CheckDType(indices, "indices", {DType::kInt64}));
  IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64}));
  if (x.rank() != 2) {
    return KernelError(
        fmt::format("x has shape {}, expected [samples, k]", ShapeToString(x.shape())));
  }
  IRM_RETURN_IF_ERROR(CheckShape(indices, "indices", x.shape(), "the shape of x"));
  const int64_t samples = x.shape()[0];
  const int64_t k = x.shape()[1];
  if (label.rank() == 0 || label.shape()[0] < samples) {
    return KernelError(fmt::format("label has shape {}, expected at least {} samples",
                                   ShapeToString(label.shape()), samples));
  }
  const int64_t label_stride = label.shape()[0] == 0 ? 0 : label.numel() / label.shape()[0];
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
