// Detection kernels (a Faster R-CNN training program's ops beyond the conv net), each following
// its phi CPU kernel's arithmetic step for step so that the same inputs give Paddle's bits:
// smooth_l1_loss and its grad (paddle/fluid/operators/smooth_l1_loss_op.h of Paddle 2.x),
// sigmoid_cross_entropy_with_logits and its grad, affine_channel and its grad, anchor_generator,
// roi_align and its grad, generate_proposals (paddle/phi/kernels/cpu/*_kernel.cc,
// impl/anchor_generator_kernel_impl.h, funcs/detection/nms_util.h).
// All of them run in a fixed order on one thread; the grads that scatter (roi_align_grad,
// affine_channel_grad's sums) add in the loop order of Paddle's CPU kernels.
// roi_align's and generate_proposals' arithmetic is in detection_math.h, shared with the CUDA
// kernels (cuda/detection.cu).
//
// rpn_target_assign has a kernel that refuses to run: it samples anchors with a random engine
// Paddle seeds from std::random_device (rpn_target_assign_op.cc, use_random), so no run — not even
// Paddle's own — draws the same anchors twice; parity cannot hold across it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "reference_runtime/kernels/detection_math.h"
#include "reference_runtime/kernels/elementwise.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// ---- smooth_l1_loss
// ------------------------------------------------------------------------------

// sigma (a float attribute) as T, squared in T.
template <typename T>
StatusOr<T> SigmaSquared(const KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(double sigma_attr, call.attrs.GetOr<double>("sigma", 1.0));
  const T sigma = static_cast<T>(static_cast<float>(sigma_attr));
  return sigma * sigma;
}

// Inputs x, y, inside_weight?, outside_weight?; outputs diff (x - y, times inside_weight) and out
// [N, 1]: per sample the sum (in element order) over its elements of outside_weight * f(diff), f(d)
// = 0.5 d^2 sigma^2 when |d| < 1 / sigma^2, else |d| - 0.5 / sigma^2 (SmoothL1LossForward, in
// double as its literals make it, rounded to T).
template <typename T>
struct SmoothL1LossKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& y = call.input(1);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(y, DTypeOf<T>(), "y"));
    IRM_RETURN_IF_ERROR(ExpectSameShape(x, "x", y, "y"));
    const Tensor* inside = call.has_input(2) ? &call.input(2) : nullptr;
    const Tensor* outside = call.has_input(3) ? &call.input(3) : nullptr;
    if (inside != nullptr) IRM_RETURN_IF_ERROR(ExpectSameShape(x, "x", *inside, "inside_weight"));
    if (outside != nullptr) {
      IRM_RETURN_IF_ERROR(ExpectSameShape(x, "x", *outside, "outside_weight"));
    }
    if (x.rank() < 1 || x.dim(0) == 0) {
      return KernelError(fmt::format("smooth_l1_loss: x {} needs a batch dim", x.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(const T sigma2, SigmaSquared<T>(call));
    const int64_t n = x.dim(0);
    const int64_t cols = x.numel() / n;
    Tensor diff = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), {n, 1});
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* pd = diff.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      pd[i] = px[i] - py[i];
      if (inside != nullptr) pd[i] = pd[i] * inside->data<T>()[i];
    }
    for (int64_t r = 0; r < n; ++r) {
      T sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const T v = pd[i];
        const T abs_v = std::abs(v);
        T error = abs_v < 1.0 / sigma2 ? static_cast<T>(0.5 * v * v * sigma2)
                                       : static_cast<T>(abs_v - 0.5 / sigma2);
        if (outside != nullptr) error = error * outside->data<T>()[i];
        sum += error;
      }
      out.data<T>()[r] = sum;
    }
    call.SetOutput(0, std::move(diff));
    call.SetOutput(1, std::move(out));
    return Status::Ok();
  }
};

// Inputs inside_weight?, outside_weight?, diff, out_grad [N, 1]; x_grad = out_grad * weights *
// g(diff) and y_grad its negation, g(d) = sigma^2 d when |d| < 1 / sigma^2, else sign(d); the
// weights are inside * outside when both are given and 1 otherwise (SmoothL1LossGradKernel).
template <typename T>
struct SmoothL1LossGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& diff = call.input(2);
    const Tensor& out_grad = call.input(3);
    IRM_RETURN_IF_ERROR(ExpectDType(diff, DTypeOf<T>(), "diff"));
    IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
    if (diff.rank() < 1 || diff.dim(0) == 0 || out_grad.numel() != diff.dim(0)) {
      return KernelError(
          fmt::format("smooth_l1_loss_grad: out_grad {} should hold one value per "
                      "sample of diff {}",
                      out_grad.Describe(), diff.Describe()));
    }
    const bool weighted = call.has_input(0) && call.has_input(1);
    if (weighted) {
      IRM_RETURN_IF_ERROR(ExpectSameShape(diff, "diff", call.input(0), "inside_weight"));
      IRM_RETURN_IF_ERROR(ExpectSameShape(diff, "diff", call.input(1), "outside_weight"));
    }
    IRM_ASSIGN_OR_RETURN(const T sigma2, SigmaSquared<T>(call));
    const int64_t cols = diff.numel() / diff.dim(0);
    Tensor x_grad = Tensor::ZerosUnchecked(diff.dtype(), diff.shape());
    Tensor y_grad = Tensor::ZerosUnchecked(diff.dtype(), diff.shape());
    const T* pd = diff.data<T>();
    for (int64_t i = 0; i < diff.numel(); ++i) {
      const T weight = weighted ? call.input(0).data<T>()[i] * call.input(1).data<T>()[i] : T(1);
      const T v = pd[i];
      const T slope =
          std::abs(v) < 1.0 / sigma2 ? sigma2 * v : static_cast<T>((T(0) < v) - (v < T(0)));
      const T g = out_grad.data<T>()[i / cols] * weight * slope;
      x_grad.data<T>()[i] = g;
      y_grad.data<T>()[i] = T(-1) * g;
    }
    call.SetOutput(0, std::move(x_grad));
    call.SetOutput(1, std::move(y_grad));
    return Status::Ok();
  }
};

// ---- sigmoid_cross_entropy_with_logits ----------------------------------------------------------

// The count normalize divides by: labels further than 1e-6 from ignore_index (an int, so none
// divides by 0, as in Paddle).
template <typename T>
int NormalizeCount(const T* label, int64_t n, int ignore_index) {
  int norm = 0;
  const T eps = static_cast<T>(1e-6);
  for (int64_t i = 0; i < n; ++i) {
    const T d = label[i] - static_cast<T>(ignore_index);
    if (d < -eps || d > eps) ++norm;
  }
  return norm;
}

struct SigmoidCeInputs {
  const Tensor* x;
  const Tensor* label;
  const Tensor* pos_weight;  // null when absent
  bool normalize;
  int ignore_index;
};

template <typename T>
StatusOr<SigmoidCeInputs> ReadSigmoidCe(const KernelCall& call) {
  SigmoidCeInputs in{&call.input(0), &call.input(1), call.has_input(2) ? &call.input(2) : nullptr,
                     false, -100};
  IRM_RETURN_IF_ERROR(ExpectDType(*in.x, DTypeOf<T>(), "x"));
  IRM_RETURN_IF_ERROR(ExpectDType(*in.label, DTypeOf<T>(), "label"));
  IRM_RETURN_IF_ERROR(ExpectSameShape(*in.x, "x", *in.label, "label"));
  if (in.pos_weight != nullptr) {
    IRM_RETURN_IF_ERROR(ExpectDType(*in.pos_weight, DTypeOf<T>(), "pos_weight"));
    IRM_RETURN_IF_ERROR(ExpectSameShape(*in.x, "x", *in.pos_weight, "pos_weight"));
  }
  IRM_ASSIGN_OR_RETURN(in.normalize, call.attrs.GetOr<bool>("normalize", false));
  IRM_ASSIGN_OR_RETURN(int64_t ignore, call.attrs.GetOr<int64_t>("ignore_index", -100));
  in.ignore_index = static_cast<int>(ignore);
  return in;
}

template <typename T>
struct SigmoidCrossEntropyWithLogitsKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(SigmoidCeInputs in, ReadSigmoidCe<T>(call));
    const int64_t n = in.x->numel();
    Tensor out = Tensor::ZerosUnchecked(in.x->dtype(), in.x->shape());
    const T* px = in.x->data<T>();
    const T* pl = in.label->data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const T x = px[i];
      const T label = pl[i];
      if (static_cast<int>(label) == in.ignore_index) {
        po[i] = T(0);
      } else if (in.pos_weight == nullptr) {
        const T term1 = x > 0 ? x : T(0);
        const T term2 = x * label;
        const T term3 = std::log(T(1) + std::exp(-std::abs(x)));
        po[i] = term1 - term2 + term3;
      } else {
        const T max_val = x < 0 ? -x : T(0);
        const T term1 = (T(1) - label) * x;
        const T term2 = std::log(std::exp(-max_val) + std::exp(-x - max_val));
        po[i] = term1 + in.pos_weight->data<T>()[i] * (term2 + max_val);
      }
    }
    if (in.normalize) {
      const int norm = NormalizeCount(pl, n, in.ignore_index);
      for (int64_t i = 0; i < n; ++i) po[i] = po[i] / static_cast<T>(norm);
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

template <typename T>
struct SigmoidCrossEntropyWithLogitsGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(SigmoidCeInputs in, ReadSigmoidCe<T>(call));
    const Tensor& out_grad = call.input(3);
    IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
    IRM_RETURN_IF_ERROR(ExpectSameShape(*in.x, "x", out_grad, "out_grad"));
    const int64_t n = in.x->numel();
    Tensor x_grad = Tensor::ZerosUnchecked(in.x->dtype(), in.x->shape());
    const T* px = in.x->data<T>();
    const T* pl = in.label->data<T>();
    const T* pg = out_grad.data<T>();
    T* dx = x_grad.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const T x = px[i];
      const T label = pl[i];
      if (static_cast<int>(label) == in.ignore_index) {
        dx[i] = T(0);
      } else if (in.pos_weight == nullptr) {
        const T term1 = x > 0 ? T(1) : T(0);
        const T e_x = std::exp(-std::abs(x));
        const T down = 1 + e_x;
        const T abs_grad = x >= 0 ? T(1) : T(-1);
        const T up = -e_x * abs_grad;
        const T term3 = up / down;
        dx[i] = pg[i] * (term1 - label + term3);
      } else {
        const T max_val = x < 0 ? -x : T(0);
        const T term1 = x < 0 ? T(-1) : T(0);
        const T down1 = std::exp(-max_val);
        const T down2 = std::exp(-x - max_val);
        const T term2 = down1 * (-term1) + down2 * (-1 - term1);
        const T term3 = T(1) - label;
        dx[i] = pg[i] * (in.pos_weight->data<T>()[i] * (term2 / (down1 + down2) + term1) + term3);
      }
    }
    if (in.normalize) {
      const int norm = NormalizeCount(pl, n, in.ignore_index);
      for (int64_t i = 0; i < n; ++i) dx[i] = dx[i] / static_cast<T>(norm);
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

// ---- affine_channel -----------------------------------------------------------------------------

// The channel dim of x under data_layout: dim 1 for "NCHW", the last dim for anything else (the
// kernels test for kNCHW alone, so "AnyLayout", the default, is channel-last).
struct ChannelView {
  int64_t n = 0;      // dim 0
  int64_t c = 0;      // channels
  int64_t inner = 0;  // elements per (n, c) for NCHW
  bool nchw = false;
};

StatusOr<ChannelView> ViewChannels(const KernelCall& call, const Tensor& x, const Tensor& scale) {
  // Read through the StatusOr (g++ 12 sees an uninitialised string in the moved-out form).
  const StatusOr<std::string> layout_or = call.attrs.GetOr<std::string>("data_layout", "AnyLayout");
  if (!layout_or.ok()) return layout_or.status();
  const std::string& layout = layout_or.value();
  if (x.rank() < 2) {
    return KernelError(
        fmt::format("affine_channel: x {} needs a batch and a channel dim", x.Describe()));
  }
  ChannelView v;
  v.nchw = layout == "NCHW";
  v.n = x.dim(0);
  v.c = v.nchw ? x.dim(1) : x.dim(x.rank() - 1);
  v.inner = v.n * v.c == 0 ? 0 : x.numel() / v.n / v.c;
  if (scale.numel() != v.c) {
    return KernelError(
        fmt::format("affine_channel: scale {} should have one value per channel "
                    "({} in x {} under data_layout {})",
                    scale.Describe(), v.c, x.Describe(), layout));
  }
  return v;
}

// The channel of flat element i.
inline int64_t ChannelOf(const ChannelView& v, int64_t i) {
  return v.nchw ? (i / v.inner) % v.c : i % v.c;
}

template <typename T>
struct AffineChannelKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& scale = call.input(1);
    const Tensor& bias = call.input(2);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(scale, DTypeOf<T>(), "scale"));
    IRM_RETURN_IF_ERROR(ExpectDType(bias, DTypeOf<T>(), "bias"));
    IRM_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(call, x, scale));
    IRM_RETURN_IF_ERROR(ExpectSameShape(scale, "scale", bias, "bias"));
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    const T* px = x.data<T>();
    const T* ps = scale.data<T>();
    const T* pb = bias.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = ChannelOf(v, i);
      out.data<T>()[i] = px[i] * ps[c] + pb[c];
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// Inputs x, scale, bias? (never read), out_grad; x_grad = out_grad * scale; scale_grad and
// bias_grad sum x * out_grad and out_grad per channel — for NCHW a partial sum per sample, added
// over the samples in order (the kernel's colwise sums per sample), for channel-last one sum over
// every position in order.
template <typename T>
struct AffineChannelGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& scale = call.input(1);
    const Tensor& out_grad = call.input(3);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(scale, DTypeOf<T>(), "scale"));
    IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
    IRM_RETURN_IF_ERROR(ExpectSameShape(x, "x", out_grad, "out_grad"));
    IRM_ASSIGN_OR_RETURN(ChannelView v, ViewChannels(call, x, scale));
    const T* px = x.data<T>();
    const T* ps = scale.data<T>();
    const T* pg = out_grad.data<T>();
    if (call.wants_output(0)) {
      Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) x_grad.data<T>()[i] = pg[i] * ps[ChannelOf(v, i)];
      call.SetOutput(0, std::move(x_grad));
    }
    std::vector<T> dscale(static_cast<size_t>(v.c), T(0));
    std::vector<T> dbias(static_cast<size_t>(v.c), T(0));
    if (v.nchw) {
      for (int64_t n = 0; n < v.n; ++n) {
        for (int64_t c = 0; c < v.c; ++c) {
          T s = 0;
          T b = 0;
          for (int64_t k = 0; k < v.inner; ++k) {
            const int64_t i = (n * v.c + c) * v.inner + k;
            s += px[i] * pg[i];
            b += pg[i];
          }
          const auto at = static_cast<size_t>(c);
          dscale[at] = n == 0 ? s : dscale[at] + s;
          dbias[at] = n == 0 ? b : dbias[at] + b;
        }
      }
    } else {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const auto at = static_cast<size_t>(i % v.c);
        dscale[at] += px[i] * pg[i];
        dbias[at] += pg[i];
      }
    }
    for (int which : {1, 2}) {
      if (!call.wants_output(static_cast<size_t>(which))) continue;
      Tensor t = Tensor::ZerosUnchecked(scale.dtype(), scale.shape());
      const std::vector<T>& src = which == 1 ? dscale : dbias;
      std::copy(src.begin(), src.end(), t.data<T>());
      call.SetOutput(static_cast<size_t>(which), std::move(t));
    }
    return Status::Ok();
  }
};

// ---- anchor_generator ---------------------------------------------------------------------------

StatusOr<std::vector<double>> FloatsAttr(const KernelCall& call, const char* name) {
  if (!call.attrs.Has(name)) {
    return KernelError(fmt::format("anchor_generator: attribute '{}' is missing", name));
  }
  return call.attrs.Get<std::vector<double>>(name);
}

// Input [N, C, H, W] -> anchors [H, W, A, 4] (A = aspect_ratios x anchor_sizes, ratios outer) in
// (xmin, ymin, xmax, ymax) and variances of the same shape, as AnchorGeneratorOpKernel: the
// anchor of size s and ratio r at (h, w) is centred at (w * stride_w + offset * (stride_w - 1),
// h * stride_h + ...), base_w = round(sqrt(stride_w * stride_h / r)), base_h = round(base_w * r),
// scaled by s / stride; the corners are taken in double (0.5 is a double literal there).
template <typename T>
struct AnchorGeneratorKernel {
  static Status Run(KernelCall& call) {
    const Tensor& input = call.input(0);
    if (input.rank() != 4) {
      return KernelError(
          fmt::format("anchor_generator: input {} must be 4-D [N, C, H, W]", input.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(std::vector<double> sizes, FloatsAttr(call, "anchor_sizes"));
    IRM_ASSIGN_OR_RETURN(std::vector<double> ratios, FloatsAttr(call, "aspect_ratios"));
    IRM_ASSIGN_OR_RETURN(std::vector<double> variances, FloatsAttr(call, "variances"));
    IRM_ASSIGN_OR_RETURN(std::vector<double> stride,
                         call.attrs.GetOr<std::vector<double>>("stride", {16.0, 16.0}));
    IRM_ASSIGN_OR_RETURN(double offset_attr, call.attrs.GetOr<double>("offset", 0.5));
    if (stride.size() != 2 || variances.size() != 4) {
      return KernelError(
          fmt::format("anchor_generator: stride needs 2 values (has {}), variances 4 (has {})",
                      stride.size(), variances.size()));
    }
    const int64_t height = input.dim(2);
    const int64_t width = input.dim(3);
    const auto num = static_cast<int64_t>(sizes.size() * ratios.size());
    const T offset = static_cast<T>(static_cast<float>(offset_attr));
    const T stride_w = static_cast<T>(static_cast<float>(stride[0]));
    const T stride_h = static_cast<T>(static_cast<float>(stride[1]));
    Tensor anchors = Tensor::ZerosUnchecked(DTypeOf<T>(), {height, width, num, 4});
    Tensor vars = Tensor::ZerosUnchecked(DTypeOf<T>(), {height, width, num, 4});
    T* pa = anchors.data<T>();
    T* pv = vars.data<T>();
    for (int64_t h = 0; h < height; ++h) {
      for (int64_t w = 0; w < width; ++w) {
        const T x_ctr = (static_cast<T>(w) * stride_w) + offset * (stride_w - 1);
        const T y_ctr = (static_cast<T>(h) * stride_h) + offset * (stride_h - 1);
        int64_t idx = 0;
        for (double ratio_attr : ratios) {
          const T ar = static_cast<T>(static_cast<float>(ratio_attr));
          for (double size_attr : sizes) {
            const T anchor_size = static_cast<T>(static_cast<float>(size_attr));
            const T area = stride_w * stride_h;
            const T area_ratios = area / ar;
            const T base_w = std::round(std::sqrt(area_ratios));
            const T base_h = std::round(base_w * ar);
            const T anchor_w = anchor_size / stride_w * base_w;
            const T anchor_h = anchor_size / stride_h * base_h;
            T* box = pa + ((h * width + w) * num + idx) * 4;
            box[0] = static_cast<T>(x_ctr - 0.5 * (anchor_w - 1));
            box[1] = static_cast<T>(y_ctr - 0.5 * (anchor_h - 1));
            box[2] = static_cast<T>(x_ctr + 0.5 * (anchor_w - 1));
            box[3] = static_cast<T>(y_ctr + 0.5 * (anchor_h - 1));
            ++idx;
          }
        }
      }
    }
    for (int64_t i = 0; i < vars.numel(); ++i) {
      pv[i] = static_cast<T>(static_cast<float>(variances[static_cast<size_t>(i % 4)]));
    }
    call.SetOutput(0, std::move(anchors));
    call.SetOutput(1, std::move(vars));
    return Status::Ok();
  }
};

// ---- roi_align ----------------------------------------------------------------------------------

struct RoiAlignAttrs {
  int64_t pooled_height = 1;
  int64_t pooled_width = 1;
  float spatial_scale = 1.0f;
  int64_t sampling_ratio = -1;
  bool aligned = false;
};

StatusOr<RoiAlignAttrs> ReadRoiAlignAttrs(const KernelAttrs& attrs) {
  RoiAlignAttrs a;
  IRM_ASSIGN_OR_RETURN(a.pooled_height, attrs.GetOr<int64_t>("pooled_height", 1));
  IRM_ASSIGN_OR_RETURN(a.pooled_width, attrs.GetOr<int64_t>("pooled_width", 1));
  IRM_ASSIGN_OR_RETURN(double scale, attrs.GetOr<double>("spatial_scale", 1.0));
  a.spatial_scale = static_cast<float>(scale);
  IRM_ASSIGN_OR_RETURN(a.sampling_ratio, attrs.GetOr<int64_t>("sampling_ratio", -1));
  IRM_ASSIGN_OR_RETURN(a.aligned, attrs.GetOr<bool>("aligned", false));
  if (a.pooled_height < 1 || a.pooled_width < 1) {
    return KernelError(fmt::format("roi_align: pooled_height {} and pooled_width {} must be >= 1",
                                   a.pooled_height, a.pooled_width));
  }
  return a;
}

// The image of each box: boxes_num[n] boxes belong to image n in order. Without boxes_num Paddle
// reads the boxes' LoD, which a dense tensor has not: only a batch of one image is then certain.
StatusOr<std::vector<int64_t>> BoxImages(const KernelCall& call, const Tensor& x,
                                         const Tensor& boxes) {
  const int64_t count = boxes.dim(0);
  std::vector<int64_t> image(static_cast<size_t>(count), 0);
  if (!call.has_input(2)) {
    if (x.dim(0) != 1) {
      return KernelError(fmt::format(
          "roi_align: boxes_num is absent and x {} holds {} images: which box belongs to which "
          "image is the boxes' LoD, which a dense tensor has not",
          x.Describe(), x.dim(0)));
    }
    return image;
  }
  const Tensor& num = call.input(2);
  if ((num.dtype() != DType::kInt32 && num.dtype() != DType::kInt64) || num.numel() != x.dim(0)) {
    return KernelError(
        fmt::format("roi_align: boxes_num {} should be int32 or int64 with one count "
                    "per image of x {}",
                    num.Describe(), x.Describe()));
  }
  int64_t start = 0;
  for (int64_t n = 0; n < num.numel(); ++n) {
    const int64_t k =
        num.dtype() == DType::kInt32 ? num.data<int32_t>()[n] : num.data<int64_t>()[n];
    if (k < 0 || start + k > count) {
      return KernelError(fmt::format("roi_align: boxes_num {} counts more boxes than the {} given",
                                     num.Describe(), count));
    }
    for (int64_t i = start; i < start + k; ++i) image[static_cast<size_t>(i)] = n;
    start += k;
  }
  return image;
}

StatusOr<RoiAlignAttrs> CheckRoiAlign(const KernelCall& call, const Tensor& x,
                                      const Tensor& boxes) {
  if (x.rank() != 4 || boxes.rank() != 2 || boxes.dim(1) != 4 || x.dtype() != boxes.dtype()) {
    return KernelError(
        fmt::format("roi_align: x {} must be 4-D [N, C, H, W] and boxes {} [R, 4] "
                    "of its dtype",
                    x.Describe(), boxes.Describe()));
  }
  // Bilinear sampling reads the map's neighbours: an empty map has none to read.
  if (x.dim(2) < 1 || x.dim(3) < 1) {
    return KernelError(
        fmt::format("roi_align: x {} has an empty map: H and W must be >= 1", x.Describe()));
  }
  return ReadRoiAlignAttrs(call.attrs);
}

// RoiAlignKernel: per box (corners scaled, less 0.5 when aligned; width and height at least 1
// unless aligned), per bin a grid of sampling points (sampling_ratio, or ceil(size / pooled)),
// bilinearly interpolated and averaged (the sum times 1 / count).
template <typename T>
struct RoiAlignKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& boxes = call.input(1);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_ASSIGN_OR_RETURN(RoiAlignAttrs a, CheckRoiAlign(call, x, boxes));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> image, BoxImages(call, x, boxes));
    const int64_t channels = x.dim(1);
    const int64_t height = x.dim(2);
    const int64_t width = x.dim(3);
    const int64_t rois = boxes.dim(0);
    Tensor out =
        Tensor::ZerosUnchecked(x.dtype(), {rois, channels, a.pooled_height, a.pooled_width});
    const T* px = x.data<T>();
    const T* pb = boxes.data<T>();
    T* po = out.data<T>();
    const auto ph_n = static_cast<size_t>(a.pooled_height);
    const auto pw_n = static_cast<size_t>(a.pooled_width);
    for (int64_t r = 0; r < rois; ++r) {
      const detection::RoiBox<T> roi =
          detection::RoiBoxOf(pb + r * 4, a.spatial_scale, a.aligned, !a.aligned);
      const int grid_h = detection::SamplingGrid(a.sampling_ratio, roi.roi_h, a.pooled_height);
      const int grid_w = detection::SamplingGrid(a.sampling_ratio, roi.roi_w, a.pooled_width);
      const auto gh = static_cast<size_t>(std::max(grid_h, 0));
      const auto gw = static_cast<size_t>(std::max(grid_w, 0));
      // GetIndexesAndRatios: the sampling points of every bin, bins in C order.
      std::vector<detection::BilinearSample<T>> samples;
      samples.reserve(ph_n * pw_n * gh * gw);
      const T bin_w = roi.roi_w / static_cast<T>(pw_n);
      const T bin_h = roi.roi_h / static_cast<T>(ph_n);
      for (size_t py = 0; py < ph_n; ++py) {
        for (size_t pxi = 0; pxi < pw_n; ++pxi) {
          for (size_t iy = 0; iy < gh; ++iy) {
            const T y = detection::ForwardSamplePoint(roi.ymin, bin_h, py, iy, gh);
            for (size_t ix = 0; ix < gw; ++ix) {
              const T xs = detection::ForwardSamplePoint(roi.xmin, bin_w, pxi, ix, gw);
              samples.push_back(detection::SampleAt(y, xs, height, width));
            }
          }
        }
      }
      const size_t grid_points = gh * gw;
      const T count = static_cast<T>(1.0 / static_cast<double>(static_cast<int>(grid_points)));
      for (int64_t c = 0; c < channels; ++c) {
        const T* data = px + (image[static_cast<size_t>(r)] * channels + c) * height * width;
        T* o = po + (r * channels + c) * a.pooled_height * a.pooled_width;
        size_t at = 0;
        for (size_t bin = 0; bin < ph_n * pw_n; ++bin) {
          T sum = 0;
          for (size_t k = 0; k < grid_points; ++k, ++at) {
            sum += detection::Interpolate(samples[at], data);
          }
          o[bin] = sum * count;
        }
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// RoiAlignGradKernel: x_grad starts at zero; per box, channel, bin and sampling point (in that
// order) the bin's out_grad times each bilinear weight, divided by the point count, is added to
// the four neighbours. Its sampling points are placed as ymin + ph * bin_h + (iy + .5) * bin_h /
// grid (the forward's association differs), and the box is at least 1 wide and high even when
// aligned, as Paddle's grad has it.
template <typename T>
struct RoiAlignGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& boxes = call.input(1);
    const Tensor& out_grad = call.input(3);
    IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
    IRM_RETURN_IF_ERROR(ExpectDType(out_grad, DTypeOf<T>(), "out_grad"));
    IRM_ASSIGN_OR_RETURN(RoiAlignAttrs a, CheckRoiAlign(call, x, boxes));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> image, BoxImages(call, x, boxes));
    const int64_t channels = x.dim(1);
    const int64_t height = x.dim(2);
    const int64_t width = x.dim(3);
    const int64_t rois = boxes.dim(0);
    const std::vector<int64_t> expected = {rois, channels, a.pooled_height, a.pooled_width};
    if (out_grad.shape() != expected) {
      return KernelError(fmt::format("roi_align_grad: out_grad {} should be {}",
                                     out_grad.Describe(), ShapeToString(expected)));
    }
    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    T* dx = x_grad.data<T>();
    const T* pb = boxes.data<T>();
    const T* pg = out_grad.data<T>();
    for (int64_t r = 0; r < rois; ++r) {
      const detection::RoiBox<T> roi =
          detection::RoiBoxOf(pb + r * 4, a.spatial_scale, a.aligned, true);
      const T bin_h = roi.roi_h / static_cast<T>(a.pooled_height);
      const T bin_w = roi.roi_w / static_cast<T>(a.pooled_width);
      const int grid_h = detection::SamplingGrid(a.sampling_ratio, roi.roi_h, a.pooled_height);
      const int grid_w = detection::SamplingGrid(a.sampling_ratio, roi.roi_w, a.pooled_width);
      const T count = static_cast<T>(grid_h * grid_w);
      for (int64_t c = 0; c < channels; ++c) {
        T* grad = dx + (image[static_cast<size_t>(r)] * channels + c) * height * width;
        const T* g = pg + (r * channels + c) * a.pooled_height * a.pooled_width;
        for (int64_t ph = 0; ph < a.pooled_height; ++ph) {
          for (int64_t pw = 0; pw < a.pooled_width; ++pw) {
            const T bin_grad = g[ph * a.pooled_width + pw];
            for (int iy = 0; iy < grid_h; ++iy) {
              const T y = detection::GradSamplePoint(roi.ymin, bin_h, ph, iy, grid_h);
              for (int ix = 0; ix < grid_w; ++ix) {
                const T xs = detection::GradSamplePoint(roi.xmin, bin_w, pw, ix, grid_w);
                detection::ScatterBilinear(height, width, y, xs, bin_grad, count, grad);
              }
            }
          }
        }
      }
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

// ---- generate_proposals
// --------------------------------------------------------------------------

struct ProposalAttrs {
  int64_t pre_nms_top_n = 6000;
  int64_t post_nms_top_n = 1000;
  float nms_thresh = 0.5f;
  float min_size = 0.1f;
  float eta = 1.0f;
  bool pixel_offset = true;
};

StatusOr<ProposalAttrs> ReadProposalAttrs(const KernelAttrs& attrs) {
  ProposalAttrs a;
  IRM_ASSIGN_OR_RETURN(a.pre_nms_top_n, attrs.GetOr<int64_t>("pre_nms_top_n", 6000));
  IRM_ASSIGN_OR_RETURN(a.post_nms_top_n, attrs.GetOr<int64_t>("post_nms_top_n", 1000));
  IRM_ASSIGN_OR_RETURN(double nms_thresh, attrs.GetOr<double>("nms_thresh", 0.5));
  IRM_ASSIGN_OR_RETURN(double min_size, attrs.GetOr<double>("min_size", 0.1));
  IRM_ASSIGN_OR_RETURN(double eta, attrs.GetOr<double>("eta", 1.0));
  IRM_ASSIGN_OR_RETURN(a.pixel_offset, attrs.GetOr<bool>("pixel_offset", true));
  a.nms_thresh = static_cast<float>(nms_thresh);
  a.min_size = static_cast<float>(min_size);
  a.eta = static_cast<float>(eta);
  return a;
}

// The proposals of one image (ProposalForOneImage): rows are (h, w, anchor) positions with
// their score, four deltas, anchor and variances. Returns boxes (4 per proposal) and scores.
template <typename T>
void ProposalsOfImage(const ProposalAttrs& a, T im_h, T im_w, const std::vector<T>& scores,
                      const std::vector<T>& deltas, const T* anchors, const T* variances,
                      std::vector<T>& boxes_out, std::vector<T>& scores_out) {
  static const double kBBoxClip = std::log(1000.0 / 16.0);
  const auto count = static_cast<int64_t>(scores.size());
  // Paddle sorts by score alone (std::sort, or std::nth_element when pre_nms_top_n cuts), which
  // leaves tied scores in an unspecified order; ties go lowest position first here, so the
  // order is Paddle's whenever Paddle's own is determined.
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&scores](int64_t l, int64_t r) {
    return scores[static_cast<size_t>(l)] > scores[static_cast<size_t>(r)];
  });
  if (a.pre_nms_top_n > 0 && a.pre_nms_top_n < count) {
    order.resize(static_cast<size_t>(a.pre_nms_top_n));
  }
  const T offset = a.pixel_offset ? T(1) : T(0);
  const float min_size = std::max(a.min_size, 1.0f);
  std::vector<T> boxes;  // decoded, clipped, kept
  std::vector<T> kept_scores;
  for (int64_t i : order) {
    // BoxCoder, ClipTiledBoxes, FilterBoxes (at least min_size and 1 wide and high).
    T box[4];
    if (!detection::DecodeProposal(anchors + i * 4, variances + i * 4, deltas.data() + i * 4,
                                   offset, static_cast<T>(kBBoxClip), im_h, im_w, min_size,
                                   a.pixel_offset, box)) {
      continue;
    }
    boxes.insert(boxes.end(), box, box + 4);
    kept_scores.push_back(scores[static_cast<size_t>(i)]);
  }
  if (kept_scores.empty()) {  // one zero box, as Paddle when nothing is left
    boxes_out.insert(boxes_out.end(), 4, T(0));
    scores_out.push_back(T(0));
    return;
  }
  // The kept boxes are in score order, best first, tied scores lowest position first.
  const auto num_kept = static_cast<int64_t>(kept_scores.size());
  std::vector<int64_t> kept(kept_scores.size());
  std::iota(kept.begin(), kept.end(), int64_t{0});
  std::vector<int64_t> selected(kept.size());
  selected.resize(static_cast<size_t>(
      detection::SelectByNms(boxes.data(), kept_scores.data(), kept.data(), num_kept, a.nms_thresh,
                             a.eta, a.post_nms_top_n, a.pixel_offset, selected.data())));
  for (int64_t i : selected) {
    boxes_out.insert(boxes_out.end(), boxes.begin() + i * 4, boxes.begin() + i * 4 + 4);
    scores_out.push_back(kept_scores[static_cast<size_t>(i)]);
  }
}

// generate_proposals (phi's GenerateProposalsKernel, generate_proposals_v2): scores [N, A, H, W],
// bbox_deltas [N, 4A, H, W], im_shape [N, 2] (height, width), anchors and variances [H, W, A, 4]
// -> rpn_rois [R, 4], rpn_roi_probs [R, 1] and rpn_rois_num (int32 [N]), the images' proposals
// one after the other.
template <typename T>
struct GenerateProposalsKernel {
  static Status Run(KernelCall& call) {
    const Tensor& scores = call.input(0);
    const Tensor& deltas = call.input(1);
    const Tensor& im_shape = call.input(2);
    const Tensor& anchors = call.input(3);
    const Tensor& variances = call.input(4);
    for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&scores, "scores"},
                                  {&deltas, "bbox_deltas"},
                                  {&im_shape, "im_shape"},
                                  {&anchors, "anchors"},
                                  {&variances, "variances"}}) {
      IRM_RETURN_IF_ERROR(ExpectDType(*t, DTypeOf<T>(), name));
    }
    if (scores.rank() != 4 || deltas.rank() != 4) {
      return KernelError(fmt::format("generate_proposals: scores {} and bbox_deltas {} must be 4-D",
                                     scores.Describe(), deltas.Describe()));
    }
    const int64_t n = scores.dim(0), a = scores.dim(1), h = scores.dim(2), w = scores.dim(3);
    const int64_t rows = h * w * a;
    if (deltas.shape() != std::vector<int64_t>{n, 4 * a, h, w} || anchors.numel() != rows * 4 ||
        variances.numel() != rows * 4 || im_shape.numel() < n * 2) {
      return KernelError(fmt::format(
          "generate_proposals: bbox_deltas {} should be [{}, {}, {}, {}], anchors {} and "
          "variances {} hold {} boxes, im_shape {} two values per image",
          deltas.Describe(), n, 4 * a, h, w, anchors.Describe(), variances.Describe(), rows,
          im_shape.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(ProposalAttrs attrs, ReadProposalAttrs(call.attrs));
    // No image, no proposal: empty outputs, as the device twin gives (and no division by the
    // image count).
    const int64_t im_cols = n > 0 ? im_shape.numel() / n : 2;
    std::vector<T> boxes, probs;
    std::vector<int32_t> counts;
    for (int64_t img = 0; img < n; ++img) {
      // The NHWC view of this image: row (y, x, anchor) and its four deltas.
      std::vector<T> s(static_cast<size_t>(rows)), d(static_cast<size_t>(rows * 4));
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          for (int64_t k = 0; k < a; ++k) {
            const int64_t row = (y * w + x) * a + k;
            s[static_cast<size_t>(row)] = scores.data<T>()[((img * a + k) * h + y) * w + x];
            for (int64_t j = 0; j < 4; ++j) {
              d[static_cast<size_t>(row * 4 + j)] =
                  deltas.data<T>()[((img * 4 * a + k * 4 + j) * h + y) * w + x];
            }
          }
      const size_t before = probs.size();
      ProposalsOfImage<T>(attrs, im_shape.data<T>()[img * im_cols],
                          im_shape.data<T>()[img * im_cols + 1], s, d, anchors.data<T>(),
                          variances.data<T>(), boxes, probs);
      counts.push_back(static_cast<int32_t>(probs.size() - before));
    }
    const auto total = static_cast<int64_t>(probs.size());
    Tensor rois = Tensor::ZerosUnchecked(DTypeOf<T>(), {total, 4});
    Tensor roi_probs = Tensor::ZerosUnchecked(DTypeOf<T>(), {total, 1});
    std::copy(boxes.begin(), boxes.end(), rois.data<T>());
    std::copy(probs.begin(), probs.end(), roi_probs.data<T>());
    call.SetOutput(0, std::move(rois));
    call.SetOutput(1, std::move(roi_probs));
    call.SetOutput(2, Tensor::FromVector(counts, {n}));
    return Status::Ok();
  }
};

// ---- rpn_target_assign --------------------------------------------------------------------------

Status RefuseRpnTargetAssign(KernelCall&) {
  return KernelError(
      "rpn_target_assign is not run: it samples foreground and background anchors with a "
      "random engine seeded from std::random_device (use_random; "
      "paddle/fluid/operators/detection/rpn_target_assign_op.cc), so no two runs, Paddle's "
      "included, draw the same anchors; feed its targets instead");
}

}  // namespace

Status RegisterDetectionKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<SmoothL1LossKernel, float, double>(registry, "smooth_l1_loss", {2, 4, 2})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SmoothL1LossGradKernel, float, double>(
      registry, "smooth_l1_loss_grad", {4, 4, 2})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SigmoidCrossEntropyWithLogitsKernel, float, double>(
      registry, "sigmoid_cross_entropy_with_logits", {2, 3, 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SigmoidCrossEntropyWithLogitsGradKernel, float, double>(
      registry, "sigmoid_cross_entropy_with_logits_grad", {4, 4, 1})));
  IRM_RETURN_IF_ERROR((
      RegisterForTypes<AffineChannelKernel, float, double>(registry, "affine_channel", {3, 3, 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<AffineChannelGradKernel, float, double>(
      registry, "affine_channel_grad", {4, 4, 3})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<AnchorGeneratorKernel, float, double>(
      registry, "anchor_generator", {1, 1, 2})));
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<RoiAlignKernel, float, double>(registry, "roi_align", {2, 3, 1})));
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<RoiAlignGradKernel, float, double>(registry, "roi_align_grad", {4, 4, 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<GenerateProposalsKernel, float, double>(
      registry, "generate_proposals", {5, 5, 3})));
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    IRM_RETURN_IF_ERROR(registry.Register("rpn_target_assign", dtype, Device::kCpu,
                                          {&RefuseRpnTargetAssign, {4, 4, 5}}));
  }
  return Status::Ok();
}

}  // namespace irm::rt
