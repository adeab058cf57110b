// The CUDA twins of the detection kernels (kernels/detection.cc): smooth_l1_loss and its grad,
// sigmoid_cross_entropy_with_logits and its grad, affine_channel and its grad, anchor_generator,
// roi_align and its grad, generate_proposals — float32 and float64, with the CPU kernels' names,
// signatures, attributes and errors; the arithmetic is in detection.cu. Not here:
// rpn_target_assign (refused by both runtimes: Paddle seeds its sampling from
// std::random_device).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/detection_launch.h"

namespace irm::rt::cuda {
namespace {

std::string Described(const DeviceTensor& t) {
  return fmt::format("{}{}", DTypeName(t.dtype()), ShapeToString(t.shape()));
}

Status SameShape(const DeviceTensor& a, std::string_view a_name, const DeviceTensor& b,
                 std::string_view b_name) {
  if (a.shape() == b.shape()) return Status::Ok();
  return KernelError(fmt::format("{} {} and {} {} differ in shape", a_name,
                                 ShapeToString(a.shape()), b_name, ShapeToString(b.shape())));
}

bool IsDouble(const DeviceTensor& t) { return t.dtype() == DType::kFloat64; }

const void* RawOrNull(const CudaKernelCall& call, size_t i) {
  return call.has_input(i) && call.input(i).defined() ? call.input(i).raw() : nullptr;
}

// ---- smooth_l1_loss

// (x, y, inside_weight?, outside_weight?) -> diff, out [N, 1].
Status RunSmoothL1Loss(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_RETURN_IF_ERROR(SameShape(x, "x", y, "y"));
  const void* inside = RawOrNull(call, 2);
  const void* outside = RawOrNull(call, 3);
  if (inside != nullptr) IRM_RETURN_IF_ERROR(SameShape(x, "x", call.input(2), "inside_weight"));
  if (outside != nullptr) IRM_RETURN_IF_ERROR(SameShape(x, "x", call.input(3), "outside_weight"));
  if (x.rank() < 1 || x.shape()[0] == 0) {
    return KernelError(fmt::format("smooth_l1_loss: x {} needs a batch dim", Described(x)));
  }
  IRM_ASSIGN_OR_RETURN(double sigma, call.attrs.GetOr<double>("sigma", 1.0));
  const int64_t n = x.shape()[0];
  IRM_ASSIGN_OR_RETURN(DeviceTensor diff,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "smooth_l1_loss"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), {n, 1}, "smooth_l1_loss"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchSmoothL1Loss(IsDouble(x), n, x.numel() / n, sigma, x.raw(), y.raw(),
                                      inside, outside, diff.raw(), out.raw(), Stream()),
                   "smooth_l1_loss"));
  call.SetOutput(0, std::move(diff));
  call.SetOutput(1, std::move(out));
  return Status::Ok();
}

// (inside_weight?, outside_weight?, diff, out_grad [N, 1]) -> x_grad, y_grad.
Status RunSmoothL1LossGrad(CudaKernelCall& call) {
  const DeviceTensor& diff = call.input(2);
  const DeviceTensor& out_grad = call.input(3);
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, diff.dtype(), "out_grad"));
  if (diff.rank() < 1 || diff.shape()[0] == 0 || out_grad.numel() != diff.shape()[0]) {
    return KernelError(
        fmt::format("smooth_l1_loss_grad: out_grad {} should hold one value per "
                    "sample of diff {}",
                    Described(out_grad), Described(diff)));
  }
  const bool weighted = RawOrNull(call, 0) != nullptr && RawOrNull(call, 1) != nullptr;
  if (weighted) {
    IRM_RETURN_IF_ERROR(SameShape(diff, "diff", call.input(0), "inside_weight"));
    IRM_RETURN_IF_ERROR(SameShape(diff, "diff", call.input(1), "outside_weight"));
  }
  IRM_ASSIGN_OR_RETURN(double sigma, call.attrs.GetOr<double>("sigma", 1.0));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, DeviceTensor::Uninitialized(diff.dtype(), diff.shape(),
                                                                        "smooth_l1_loss_grad"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor y_grad, DeviceTensor::Uninitialized(diff.dtype(), diff.shape(),
                                                                        "smooth_l1_loss_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSmoothL1LossGrad(IsDouble(diff), diff.numel(), diff.numel() / diff.shape()[0], sigma,
                             weighted ? call.input(0).raw() : nullptr,
                             weighted ? call.input(1).raw() : nullptr, diff.raw(), out_grad.raw(),
                             x_grad.raw(), y_grad.raw(), Stream()),
      "smooth_l1_loss_grad"));
  call.SetOutput(0, std::move(x_grad));
  call.SetOutput(1, std::move(y_grad));
  return Status::Ok();
}

// ---- sigmoid_cross_entropy_with_logits

// (x, label, pos_weight?[, out_grad]) -> out (the forward) or x_grad (the grad).
Status RunSigmoidCe(CudaKernelCall& call, bool grad) {
  const char* kernel =
      grad ? "sigmoid_cross_entropy_with_logits_grad" : "sigmoid_cross_entropy_with_logits";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& label = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(label, x.dtype(), "label"));
  IRM_RETURN_IF_ERROR(SameShape(x, "x", label, "label"));
  const void* pos_weight = RawOrNull(call, 2);
  if (pos_weight != nullptr) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(2), x.dtype(), "pos_weight"));
    IRM_RETURN_IF_ERROR(SameShape(x, "x", call.input(2), "pos_weight"));
  }
  IRM_ASSIGN_OR_RETURN(bool normalize, call.attrs.GetOr<bool>("normalize", false));
  IRM_ASSIGN_OR_RETURN(int64_t ignore, call.attrs.GetOr<int64_t>("ignore_index", -100));
  const void* out_grad = nullptr;
  if (grad) {
    const DeviceTensor& g = call.input(3);
    IRM_RETURN_IF_ERROR(ExpectDType(g, x.dtype(), "out_grad"));
    IRM_RETURN_IF_ERROR(SameShape(x, "x", g, "out_grad"));
    out_grad = g.raw();
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor norm, DeviceTensor::Uninitialized(DType::kInt32, {1}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), x.shape(), kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchSigmoidCrossEntropy(IsDouble(x), x.numel(), normalize, static_cast<int>(ignore),
                                x.raw(), label.raw(), pos_weight, out_grad,
                                static_cast<int32_t*>(norm.raw()), out.raw(), Stream()),
      kernel));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}
Status RunSigmoidCeForward(CudaKernelCall& call) { return RunSigmoidCe(call, false); }
Status RunSigmoidCeGrad(CudaKernelCall& call) { return RunSigmoidCe(call, true); }

// ---- affine_channel

StatusOr<ChannelDesc> ViewChannels(const CudaKernelCall& call, const DeviceTensor& x,
                                   const DeviceTensor& scale) {
  const StatusOr<std::string> layout_or = call.attrs.GetOr<std::string>("data_layout", "AnyLayout");
  if (!layout_or.ok()) return layout_or.status();
  const std::string& layout = layout_or.value();
  if (x.rank() < 2) {
    return KernelError(
        fmt::format("affine_channel: x {} needs a batch and a channel dim", Described(x)));
  }
  ChannelDesc d;
  d.nchw = layout == "NCHW";
  d.n = x.shape()[0];
  d.channels = d.nchw ? x.shape()[1] : x.shape().back();
  d.inner = d.n * d.channels == 0 ? 0 : x.numel() / d.n / d.channels;
  d.numel = x.numel();
  if (scale.numel() != d.channels) {
    return KernelError(
        fmt::format("affine_channel: scale {} should have one value per channel "
                    "({} in x {} under data_layout {})",
                    Described(scale), d.channels, Described(x), layout));
  }
  return d;
}

// (x, scale, bias) -> out.
Status RunAffineChannel(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& scale = call.input(1);
  const DeviceTensor& bias = call.input(2);
  IRM_RETURN_IF_ERROR(ExpectDType(scale, x.dtype(), "scale"));
  IRM_RETURN_IF_ERROR(ExpectDType(bias, x.dtype(), "bias"));
  IRM_ASSIGN_OR_RETURN(ChannelDesc d, ViewChannels(call, x, scale));
  IRM_RETURN_IF_ERROR(SameShape(scale, "scale", bias, "bias"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "affine_channel"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchAffineChannel(IsDouble(x), d, x.raw(), scale.raw(), bias.raw(), out.raw(), Stream()),
      "affine_channel"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, scale, bias?, out_grad) -> x_grad, scale_grad, bias_grad.
Status RunAffineChannelGrad(CudaKernelCall& call) {
  const char* kernel = "affine_channel_grad";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& scale = call.input(1);
  const DeviceTensor& out_grad = call.input(3);
  IRM_RETURN_IF_ERROR(ExpectDType(scale, x.dtype(), "scale"));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_RETURN_IF_ERROR(SameShape(x, "x", out_grad, "out_grad"));
  IRM_ASSIGN_OR_RETURN(ChannelDesc d, ViewChannels(call, x, scale));
  DeviceTensor grads[3];
  if (call.wants_output(0)) {
    IRM_ASSIGN_OR_RETURN(grads[0], DeviceTensor::Uninitialized(x.dtype(), x.shape(), kernel));
  }
  for (size_t which : {size_t{1}, size_t{2}}) {
    if (!call.wants_output(which)) continue;
    IRM_ASSIGN_OR_RETURN(grads[which],
                         DeviceTensor::Uninitialized(scale.dtype(), scale.shape(), kernel));
  }
  auto raw = [&](size_t i) -> void* { return grads[i].defined() ? grads[i].raw() : nullptr; };
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchAffineChannelGrad(IsDouble(x), d, x.raw(), scale.raw(), out_grad.raw(),
                                           raw(0), raw(1), raw(2), Stream()),
                   kernel));
  for (size_t i = 0; i < 3; ++i) {
    if (grads[i].defined()) call.SetOutput(i, std::move(grads[i]));
  }
  return Status::Ok();
}

// ---- anchor_generator

StatusOr<std::vector<double>> FloatsAttr(const CudaKernelCall& call, const char* name) {
  if (!call.attrs.Has(name)) {
    return KernelError(fmt::format("anchor_generator: attribute '{}' is missing", name));
  }
  return call.attrs.Get<std::vector<double>>(name);
}

StatusOr<DeviceTensor> UploadFloats(const std::vector<double>& values) {
  std::vector<float> floats(values.begin(), values.end());
  return DeviceTensor::FromHost(
      Tensor::FromVector<float>(floats, {static_cast<int64_t>(floats.size())}), "anchor_generator");
}

// input [N, C, H, W] -> anchors, variances [H, W, ratios x sizes, 4].
Status RunAnchorGenerator(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  if (input.rank() != 4) {
    return KernelError(
        fmt::format("anchor_generator: input {} must be 4-D [N, C, H, W]", Described(input)));
  }
  IRM_ASSIGN_OR_RETURN(std::vector<double> sizes, FloatsAttr(call, "anchor_sizes"));
  IRM_ASSIGN_OR_RETURN(std::vector<double> ratios, FloatsAttr(call, "aspect_ratios"));
  IRM_ASSIGN_OR_RETURN(std::vector<double> variances, FloatsAttr(call, "variances"));
  IRM_ASSIGN_OR_RETURN(std::vector<double> stride,
                       call.attrs.GetOr<std::vector<double>>("stride", {16.0, 16.0}));
  IRM_ASSIGN_OR_RETURN(double offset, call.attrs.GetOr<double>("offset", 0.5));
  if (stride.size() != 2 || variances.size() != 4) {
    return KernelError(
        fmt::format("anchor_generator: stride needs 2 values (has {}), variances 4 (has {})",
                    stride.size(), variances.size()));
  }
  AnchorDesc d;
  d.height = input.shape()[2];
  d.width = input.shape()[3];
  d.num_sizes = static_cast<int64_t>(sizes.size());
  d.num_ratios = static_cast<int64_t>(ratios.size());
  d.stride_w = static_cast<float>(stride[0]);
  d.stride_h = static_cast<float>(stride[1]);
  d.offset = static_cast<float>(offset);
  for (size_t k = 0; k < 4; ++k) d.variances[k] = static_cast<float>(variances[k]);
  const std::vector<int64_t> shape = {d.height, d.width, d.num_sizes * d.num_ratios, 4};
  IRM_ASSIGN_OR_RETURN(DeviceTensor device_sizes, UploadFloats(sizes));
  IRM_ASSIGN_OR_RETURN(DeviceTensor device_ratios, UploadFloats(ratios));
  IRM_ASSIGN_OR_RETURN(DeviceTensor anchors,
                       DeviceTensor::Uninitialized(input.dtype(), shape, "anchor_generator"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor vars,
                       DeviceTensor::Uninitialized(input.dtype(), shape, "anchor_generator"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchAnchorGenerator(IsDouble(input), d, static_cast<const float*>(device_sizes.raw()),
                            static_cast<const float*>(device_ratios.raw()), anchors.raw(),
                            vars.raw(), Stream()),
      "anchor_generator"));
  call.SetOutput(0, std::move(anchors));
  call.SetOutput(1, std::move(vars));
  return Status::Ok();
}

// ---- roi_align

StatusOr<RoiAlignDesc> CheckRoiAlign(const CudaKernelCall& call, const DeviceTensor& x,
                                     const DeviceTensor& boxes) {
  if (x.rank() != 4 || boxes.rank() != 2 || boxes.shape()[1] != 4 || x.dtype() != boxes.dtype()) {
    return KernelError(
        fmt::format("roi_align: x {} must be 4-D [N, C, H, W] and boxes {} [R, 4] "
                    "of its dtype",
                    Described(x), Described(boxes)));
  }
  // Bilinear sampling reads the map's neighbours: an empty map has none to read.
  if (x.shape()[2] < 1 || x.shape()[3] < 1) {
    return KernelError(
        fmt::format("roi_align: x {} has an empty map: H and W must be >= 1", Described(x)));
  }
  RoiAlignDesc d;
  IRM_ASSIGN_OR_RETURN(d.pooled_height, call.attrs.GetOr<int64_t>("pooled_height", 1));
  IRM_ASSIGN_OR_RETURN(d.pooled_width, call.attrs.GetOr<int64_t>("pooled_width", 1));
  IRM_ASSIGN_OR_RETURN(double scale, call.attrs.GetOr<double>("spatial_scale", 1.0));
  d.spatial_scale = static_cast<float>(scale);
  IRM_ASSIGN_OR_RETURN(d.sampling_ratio, call.attrs.GetOr<int64_t>("sampling_ratio", -1));
  IRM_ASSIGN_OR_RETURN(d.aligned, call.attrs.GetOr<bool>("aligned", false));
  if (d.pooled_height < 1 || d.pooled_width < 1) {
    return KernelError(fmt::format("roi_align: pooled_height {} and pooled_width {} must be >= 1",
                                   d.pooled_height, d.pooled_width));
  }
  d.channels = x.shape()[1];
  d.height = x.shape()[2];
  d.width = x.shape()[3];
  d.rois = boxes.shape()[0];
  return d;
}

// Each box's image from boxes_num (kernels/detection.cc's BoxImages), on the device.
StatusOr<DeviceTensor> BoxImages(const CudaKernelCall& call, const DeviceTensor& x,
                                 const DeviceTensor& boxes) {
  const int64_t count = boxes.shape()[0];
  std::vector<int64_t> image(static_cast<size_t>(count), 0);
  if (!call.has_input(2) || !call.input(2).defined()) {
    if (x.shape()[0] != 1) {
      return KernelError(fmt::format(
          "roi_align: boxes_num is absent and x {} holds {} images: which box belongs to which "
          "image is the boxes' LoD, which a dense tensor has not",
          Described(x), x.shape()[0]));
    }
  } else {
    const DeviceTensor& num = call.input(2);
    if ((num.dtype() != DType::kInt32 && num.dtype() != DType::kInt64) ||
        num.numel() != x.shape()[0]) {
      return KernelError(
          fmt::format("roi_align: boxes_num {} should be int32 or int64 with one count "
                      "per image of x {}",
                      Described(num), Described(x)));
    }
    IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(num, "roi_align"));
    int64_t start = 0;
    for (int64_t n = 0; n < num.numel(); ++n) {
      const int64_t k =
          num.dtype() == DType::kInt32 ? host.data<int32_t>()[n] : host.data<int64_t>()[n];
      if (k < 0 || start + k > count) {
        return KernelError(fmt::format(
            "roi_align: boxes_num {} counts more boxes than the {} given", Described(num), count));
      }
      for (int64_t i = start; i < start + k; ++i) image[static_cast<size_t>(i)] = n;
      start += k;
    }
  }
  return DeviceTensor::FromHost(Tensor::FromVector<int64_t>(image, {count}), "roi_align");
}

// (x, boxes, boxes_num?) -> out [R, C, pooled_height, pooled_width].
Status RunRoiAlign(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& boxes = call.input(1);
  IRM_ASSIGN_OR_RETURN(RoiAlignDesc d, CheckRoiAlign(call, x, boxes));
  IRM_ASSIGN_OR_RETURN(DeviceTensor image, BoxImages(call, x, boxes));
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor out,
      DeviceTensor::Uninitialized(x.dtype(), {d.rois, d.channels, d.pooled_height, d.pooled_width},
                                  "roi_align"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchRoiAlign(IsDouble(x), d, x.raw(), boxes.raw(),
                                  static_cast<const int64_t*>(image.raw()), out.raw(), Stream()),
                   "roi_align"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, boxes, boxes_num?, out_grad) -> x_grad.
Status RunRoiAlignGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& boxes = call.input(1);
  const DeviceTensor& out_grad = call.input(3);
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(RoiAlignDesc d, CheckRoiAlign(call, x, boxes));
  IRM_ASSIGN_OR_RETURN(DeviceTensor image, BoxImages(call, x, boxes));
  const std::vector<int64_t> expected = {d.rois, d.channels, d.pooled_height, d.pooled_width};
  if (out_grad.shape() != expected) {
    return KernelError(fmt::format("roi_align_grad: out_grad {} should be {}", Described(out_grad),
                                   ShapeToString(expected)));
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Zeros(x.dtype(), x.shape(), "roi_align_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchRoiAlignGrad(IsDouble(x), d, boxes.raw(), static_cast<const int64_t*>(image.raw()),
                         out_grad.raw(), x_grad.raw(), Stream()),
      "roi_align_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- generate_proposals

StatusOr<ProposalDesc> ReadProposalAttrs(const CudaKernelCall& call, ProposalDesc d) {
  IRM_ASSIGN_OR_RETURN(d.pre_nms_top_n, call.attrs.GetOr<int64_t>("pre_nms_top_n", 6000));
  IRM_ASSIGN_OR_RETURN(d.post_nms_top_n, call.attrs.GetOr<int64_t>("post_nms_top_n", 1000));
  IRM_ASSIGN_OR_RETURN(double nms_thresh, call.attrs.GetOr<double>("nms_thresh", 0.5));
  IRM_ASSIGN_OR_RETURN(double min_size, call.attrs.GetOr<double>("min_size", 0.1));
  IRM_ASSIGN_OR_RETURN(double eta, call.attrs.GetOr<double>("eta", 1.0));
  IRM_ASSIGN_OR_RETURN(d.pixel_offset, call.attrs.GetOr<bool>("pixel_offset", true));
  d.nms_thresh = static_cast<float>(nms_thresh);
  d.min_size = static_cast<float>(min_size);
  d.eta = static_cast<float>(eta);
  // The CPU kernel's clip constant, by the same C library.
  d.bbox_clip = std::log(1000.0 / 16.0);
  return d;
}

// (scores [N, A, H, W], bbox_deltas [N, 4A, H, W], im_shape [N, 2], anchors, variances
// [H, W, A, 4]) -> rpn_rois [R, 4], rpn_roi_probs [R, 1], rpn_rois_num (int32 [N]). The counts
// come back to the host once, to size the outputs.
Status RunGenerateProposals(CudaKernelCall& call) {
  const char* kernel = "generate_proposals";
  const DeviceTensor& scores = call.input(0);
  const DeviceTensor& deltas = call.input(1);
  const DeviceTensor& im_shape = call.input(2);
  const DeviceTensor& anchors = call.input(3);
  const DeviceTensor& variances = call.input(4);
  for (const auto& [t, name] : {std::pair<const DeviceTensor*, const char*>{&scores, "scores"},
                                {&deltas, "bbox_deltas"},
                                {&im_shape, "im_shape"},
                                {&anchors, "anchors"},
                                {&variances, "variances"}}) {
    IRM_RETURN_IF_ERROR(ExpectDType(*t, scores.dtype(), name));
  }
  if (scores.rank() != 4 || deltas.rank() != 4) {
    return KernelError(fmt::format("generate_proposals: scores {} and bbox_deltas {} must be 4-D",
                                   Described(scores), Described(deltas)));
  }
  ProposalDesc d;
  d.images = scores.shape()[0];
  d.anchors = scores.shape()[1];
  d.height = scores.shape()[2];
  d.width = scores.shape()[3];
  d.rows = d.height * d.width * d.anchors;
  d.capacity = d.rows > 0 ? d.rows : 1;
  const int64_t rows = d.rows;
  if (deltas.shape() != std::vector<int64_t>{d.images, 4 * d.anchors, d.height, d.width} ||
      anchors.numel() != rows * 4 || variances.numel() != rows * 4 ||
      im_shape.numel() < d.images * 2) {
    return KernelError(
        fmt::format("generate_proposals: bbox_deltas {} should be [{}, {}, {}, {}], anchors {} and "
                    "variances {} hold {} boxes, im_shape {} two values per image",
                    Described(deltas), d.images, 4 * d.anchors, d.height, d.width,
                    Described(anchors), Described(variances), rows, Described(im_shape)));
  }
  IRM_ASSIGN_OR_RETURN(d, ReadProposalAttrs(call, d));
  // No image, no proposal (and no division by the image count).
  d.im_cols = d.images > 0 ? im_shape.numel() / d.images : 2;
  const DType dtype = scores.dtype();
  const int64_t n = d.images;
  IRM_ASSIGN_OR_RETURN(DeviceTensor boxes,
                       DeviceTensor::Uninitialized(dtype, {n, rows, 4}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor row_scores,
                       DeviceTensor::Uninitialized(dtype, {n, rows}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor keep,
                       DeviceTensor::Uninitialized(DType::kUInt8, {n, rows}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor order,
                       DeviceTensor::Uninitialized(DType::kInt64, {n, rows}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor spare,
                       DeviceTensor::Uninitialized(DType::kInt64, {n, rows}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor proposal_boxes,
                       DeviceTensor::Uninitialized(dtype, {n, d.capacity, 4}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor proposal_scores,
                       DeviceTensor::Uninitialized(dtype, {n, d.capacity}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor counts, DeviceTensor::Zeros(DType::kInt32, {n}, kernel));
  ProposalScratch scratch;
  scratch.boxes = boxes.raw();
  scratch.scores = row_scores.raw();
  scratch.keep = static_cast<uint8_t*>(keep.raw());
  scratch.order = static_cast<int64_t*>(order.raw());
  scratch.spare = static_cast<int64_t*>(spare.raw());
  scratch.proposal_boxes = proposal_boxes.raw();
  scratch.proposal_scores = proposal_scores.raw();
  scratch.counts = static_cast<int32_t*>(counts.raw());
  const bool is_double = IsDouble(scores);
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchGenerateProposals(is_double, d, scores.raw(), deltas.raw(), im_shape.raw(),
                                           anchors.raw(), variances.raw(), scratch, Stream()),
                   kernel));
  IRM_ASSIGN_OR_RETURN(Tensor host_counts, HostCopy(counts, kernel));
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += host_counts.data<int32_t>()[i];
  IRM_ASSIGN_OR_RETURN(DeviceTensor rois, DeviceTensor::Uninitialized(dtype, {total, 4}, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor probs, DeviceTensor::Uninitialized(dtype, {total, 1}, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchPackProposals(is_double, d, scratch, rois.raw(), probs.raw(), Stream()), kernel));
  call.SetOutput(0, std::move(rois));
  call.SetOutput(1, std::move(probs));
  call.SetOutput(2, std::move(counts));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaDetectionKernels(CudaKernelRegistry& registry) {
  const std::initializer_list<DType> dtypes = {DType::kFloat32, DType::kFloat64};
  struct Entry {
    const char* name;
    CudaKernelFn fn;
    KernelSignature signature;
  };
  const Entry entries[] = {
      {"smooth_l1_loss", &RunSmoothL1Loss, {2, 4, 2}},
      {"smooth_l1_loss_grad", &RunSmoothL1LossGrad, {4, 4, 2}},
      {"sigmoid_cross_entropy_with_logits", &RunSigmoidCeForward, {2, 3, 1}},
      {"sigmoid_cross_entropy_with_logits_grad", &RunSigmoidCeGrad, {4, 4, 1}},
      {"affine_channel", &RunAffineChannel, {3, 3, 1}},
      {"affine_channel_grad", &RunAffineChannelGrad, {4, 4, 3}},
      {"anchor_generator", &RunAnchorGenerator, {1, 1, 2}},
      {"roi_align", &RunRoiAlign, {2, 3, 1}},
      {"roi_align_grad", &RunRoiAlignGrad, {4, 4, 1}},
      {"generate_proposals", &RunGenerateProposals, {5, 5, 3}},
  };
  for (const Entry& e : entries) {
    IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, e.name, dtypes, e.fn, e.signature));
  }
  // Optional inputs below min_inputs, as the CPU kernels read them.
  registry.AllowAbsentInputs("smooth_l1_loss_grad", {0, 1});  // inside_weight, outside_weight
  registry.AllowAbsentInputs("affine_channel_grad", {2});     // bias (never read)
  return Status::Ok();
}

}  // namespace irm::rt::cuda
