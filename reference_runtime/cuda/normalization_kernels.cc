// The CUDA normalization family, host side: layer_norm and its grad, softmax_grad,
// cross_entropy_with_softmax and its grad, mean_all and its grad, with the CPU kernels' names,
// signatures, attributes, dtypes and errors (kernels/normalization.cc, kernels/softmax.cc,
// kernels/reduction.cc); layer_norm's layout and checks are the CPU's plan
// (kernels/normalization_plan.h). The orders of every sum are in rowwise.cu and reduction.cu.
// Hard labels are read back to the host and checked there, so that a bad label is the CPU's error
// naming its index; a gpt's labels are a few kilobytes.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/normalization_plan.h"

namespace irm::rt::cuda {
namespace {

const DeviceTensor* Optional(const CudaKernelCall& call, size_t index) {
  return call.has_input(index) ? &call.input(index) : nullptr;
}

// (x, scale?, bias?) -> (out, mean, variance).
Status RunLayerNorm(CudaKernelCall& call) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(const plan::LayerNormPlan layout, plan::PlanLayerNorm(x, call.attrs));
  IRM_RETURN_IF_ERROR(plan::CheckLayerNormParams(call, x.dtype(), layout));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  const DType stat = layout.stat_dtype;
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "layer_norm"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor mean,
                       DeviceTensor::Uninitialized(stat, {layout.rows}, "layer_norm"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor variance,
                       DeviceTensor::Uninitialized(stat, {layout.rows}, "layer_norm"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchLayerNorm(elem, layout.rows, layout.n, layout.epsilon, x.raw(),
                                   AnyOf(Optional(call, 1)), AnyOf(Optional(call, 2)), out.raw(),
                                   mean.raw(), variance.raw(), Stream()),
                   "layer_norm"));
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, std::move(mean));
  call.SetOutput(2, std::move(variance));
  return Status::Ok();
}

// (x, scale?, bias?, mean, variance, out_grad) -> (x_grad, scale_grad?, bias_grad?).
Status RunLayerNormGrad(CudaKernelCall& call) {
  IRM_RETURN_IF_ERROR(plan::CheckLayerNormGradPresent(call));
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& mean = call.input(3);
  const DeviceTensor& variance = call.input(4);
  const DeviceTensor& out_grad = call.input(5);
  IRM_ASSIGN_OR_RETURN(const plan::LayerNormPlan layout, plan::PlanLayerNorm(x, call.attrs));
  IRM_RETURN_IF_ERROR(plan::CheckLayerNormParams(call, x.dtype(), layout));
  IRM_RETURN_IF_ERROR(plan::CheckLayerNormGradStats(x, mean, variance, out_grad, layout));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "layer_norm_grad"));
  DeviceTensor scale_grad, bias_grad;
  if (call.has_input(1)) {
    IRM_ASSIGN_OR_RETURN(scale_grad, DeviceTensor::Uninitialized(call.input(1).dtype(), {layout.n},
                                                                 "layer_norm_grad"));
  }
  if (call.has_input(2)) {
    IRM_ASSIGN_OR_RETURN(bias_grad, DeviceTensor::Uninitialized(call.input(2).dtype(), {layout.n},
                                                                "layer_norm_grad"));
  }
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchLayerNormGrad(elem, layout.rows, layout.n, layout.epsilon, x.raw(),
                          AnyOf(Optional(call, 1)), mean.raw(), variance.raw(), out_grad.raw(),
                          x_grad.raw(), AnyOutOf(scale_grad.defined() ? &scale_grad : nullptr),
                          AnyOutOf(bias_grad.defined() ? &bias_grad : nullptr), Stream()),
      "layer_norm_grad"));
  call.SetOutput(0, std::move(x_grad));
  if (scale_grad.defined()) call.SetOutput(1, std::move(scale_grad));
  if (bias_grad.defined()) call.SetOutput(2, std::move(bias_grad));
  return Status::Ok();
}

// (out, out_grad) -> x_grad = out * (out_grad - sum(out_grad * out)) along the axis.
Status RunSoftmaxGrad(CudaKernelCall& call) {
  const DeviceTensor& out = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {out.dtype()}));
  IRM_RETURN_IF_ERROR(CheckShape(out_grad, "out_grad", out.shape(), "the shape of out"));
  IRM_ASSIGN_OR_RETURN(const int64_t axis_attr, call.attrs.GetOr<int64_t>("axis", -1));
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, out.shape(), "out"));
  const AxisSplit s = SplitAround(out.shape(), axis);
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(out.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(out.dtype(), out.shape(), "softmax_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchSoftmaxGrad(elem, s.outer, s.size, s.inner, out.raw(),
                                                     out_grad.raw(), x_grad.raw(), Stream()),
                                   "softmax_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

struct CrossEntropyAttrs {
  bool soft_label = false;
  bool use_softmax = true;
  int64_t ignore_index = -100;
  int64_t axis = -1;
};
StatusOr<CrossEntropyAttrs> ReadCrossEntropyAttrs(const KernelAttrs& attrs) {
  CrossEntropyAttrs a;
  IRM_ASSIGN_OR_RETURN(a.soft_label, attrs.GetOr<bool>("soft_label", false));
  IRM_ASSIGN_OR_RETURN(a.use_softmax, attrs.GetOr<bool>("use_softmax", true));
  IRM_ASSIGN_OR_RETURN(const bool stable, attrs.GetOr<bool>("numeric_stable_mode", true));
  (void)stable;  // always stable, as the CPU kernel; read so that a malformed value is an error
  IRM_ASSIGN_OR_RETURN(a.ignore_index, attrs.GetOr<int64_t>("ignore_index", -100));
  IRM_ASSIGN_OR_RETURN(a.axis, attrs.GetOr<int64_t>("axis", -1));
  return a;
}

// The class layout and the label checks of the forward and the grad (kernels/softmax.cc), hard
// labels included: each must be a class or ignore_index.
StatusOr<CrossEntropyDesc> CheckCrossEntropyOperands(const DeviceTensor& probs,
                                                     std::string_view name,
                                                     const DeviceTensor& label,
                                                     const CrossEntropyAttrs& a,
                                                     std::vector<int64_t>* loss_shape) {
  if (probs.rank() == 0) return KernelError(fmt::format("{} of shape [] has no class axis", name));
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(a.axis, probs.shape(), name));
  const AxisSplit split = SplitAround(probs.shape(), axis);
  *loss_shape = probs.shape();
  (*loss_shape)[static_cast<size_t>(axis)] = 1;
  CrossEntropyDesc d;
  d.outer = split.outer;
  d.size = split.size;
  d.inner = split.inner;
  d.soft_label = a.soft_label;
  d.use_softmax = a.use_softmax;
  d.ignore_index = a.ignore_index;
  if (a.soft_label) {
    IRM_RETURN_IF_ERROR(CheckDType(label, "label", {probs.dtype()}));
    IRM_RETURN_IF_ERROR(CheckShape(label, "label", probs.shape(),
                                   fmt::format("soft labels have the shape of {}", name)));
    return d;
  }
  IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64, DType::kInt32}));
  IRM_RETURN_IF_ERROR(
      CheckShape(label, "label", *loss_shape,
                 fmt::format("hard labels have the shape of {} with the class axis 1", name)));
  d.label_elem = label.dtype() == DType::kInt64 ? Elem::kInt64 : Elem::kInt32;
  IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(label, "cross_entropy_with_softmax"));
  for (int64_t k = 0; k < host.numel(); ++k) {
    const int64_t v =
        label.dtype() == DType::kInt64 ? host.data<int64_t>()[k] : int64_t{host.data<int32_t>()[k]};
    if (v == a.ignore_index || (v >= 0 && v < d.size)) continue;
    return KernelError(fmt::format(
        "label[{}] = {} is out of range for {} classes ({} of shape {}, ignore_index {})", k, v,
        d.size, name, ShapeToString(probs.shape()), a.ignore_index));
  }
  return d;
}

// (input, label) -> (softmax, loss).
Status RunCrossEntropy(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& label = call.input(1);
  IRM_ASSIGN_OR_RETURN(const CrossEntropyAttrs a, ReadCrossEntropyAttrs(call.attrs));
  std::vector<int64_t> loss_shape;
  IRM_ASSIGN_OR_RETURN(const CrossEntropyDesc d,
                       CheckCrossEntropyOperands(input, "input", label, a, &loss_shape));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(input.dtype()));
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor softmax,
      DeviceTensor::Uninitialized(input.dtype(), input.shape(), "cross_entropy_with_softmax"));
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor loss,
      DeviceTensor::Uninitialized(input.dtype(), loss_shape, "cross_entropy_with_softmax"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchCrossEntropy(elem, d, input.raw(), label.raw(), softmax.raw(), loss.raw(), Stream()),
      "cross_entropy_with_softmax"));
  call.SetOutput(0, std::move(softmax));
  call.SetOutput(1, std::move(loss));
  return Status::Ok();
}

// (label, softmax, loss_grad) -> input_grad.
Status RunCrossEntropyGrad(CudaKernelCall& call) {
  const DeviceTensor& label = call.input(0);
  const DeviceTensor& softmax = call.input(1);
  const DeviceTensor& loss_grad = call.input(2);
  IRM_ASSIGN_OR_RETURN(const CrossEntropyAttrs a, ReadCrossEntropyAttrs(call.attrs));
  std::vector<int64_t> loss_shape;
  IRM_ASSIGN_OR_RETURN(const CrossEntropyDesc d,
                       CheckCrossEntropyOperands(softmax, "softmax", label, a, &loss_shape));
  IRM_RETURN_IF_ERROR(CheckDType(loss_grad, "loss_grad", {softmax.dtype()}));
  IRM_RETURN_IF_ERROR(CheckShape(loss_grad, "loss_grad", loss_shape, "the shape of loss"));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(softmax.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor input_grad,
                       DeviceTensor::Uninitialized(softmax.dtype(), softmax.shape(),
                                                   "cross_entropy_with_softmax_grad"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchCrossEntropyGrad(elem, d, label.raw(), softmax.raw(), loss_grad.raw(),
                                          input_grad.raw(), Stream()),
                   "cross_entropy_with_softmax_grad"));
  call.SetOutput(0, std::move(input_grad));
  return Status::Ok();
}

// mean_all: the mean of every element as a 0-D tensor (reduction.cu's fixed order).
Status RunMeanAll(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  ReducePlanDesc desc;
  desc.out_numel = 1;
  desc.reduce_count = x.numel();
  // Every element, in C order: one walk dim over the flat tensor.
  desc.reduced_walk.rank = 1;
  desc.reduced_walk.dims[0] = x.numel() > 0 ? x.numel() : 1;
  desc.reduced_walk.strides[0] = 1;
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), {}, "mean_all"));
  DeviceTensor partials;
  const int splits = ReduceSplits(desc.reduce_count);
  if (splits > 1) {
    IRM_ASSIGN_OR_RETURN(partials,
                         DeviceTensor::Uninitialized(DType::kFloat64, {splits}, "mean_all"));
  }
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSum(elem, elem, true, desc, x.raw(), out.raw(), partials.raw(), Stream()), "mean_all"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, out_grad) -> x_grad = out_grad / numel everywhere.
Status RunMeanAllGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  if (!out_grad.shape().empty() && out_grad.shape() != std::vector<int64_t>{1}) {
    return KernelError(
        fmt::format("out_grad has shape {}, expected [] or [1] (the shape of mean_all's out)",
                    ShapeToString(out_grad.shape())));
  }
  IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {x.dtype()}));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "mean_all_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchMeanAllGrad(elem, x.numel(), out_grad.raw(), x_grad.raw(), Stream()), "mean_all_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaNormalizationKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "layer_norm", kCudaFloating, &RunLayerNorm, {1, 3, 3}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "layer_norm_grad", kCudaFloating, &RunLayerNormGrad, {6, 6, 3}));
  registry.AllowAbsentInputs("layer_norm_grad", {1, 2});  // scale, bias
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "softmax_grad", kCudaFloating, &RunSoftmaxGrad, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "cross_entropy_with_softmax", kCudaFloating,
                                        &RunCrossEntropy, {2, 2, 2}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "cross_entropy_with_softmax_grad", kCudaFloating,
                                        &RunCrossEntropyGrad, {3, 3, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "mean_all", kCudaFloating, &RunMeanAll, {1, 1, 1}));
  return RegisterForDTypes(registry, "mean_all_grad", kCudaFloating, &RunMeanAllGrad, {2, 2, 1});
}

}  // namespace irm::rt::cuda
