// conv2d and conv2d_grad as phi defines them (paddle/phi/ops/yaml/ops.yaml, backward.yaml;
// paddle/phi/kernels/impl/conv_kernel_impl.h, conv_grad_kernel_impl.h): input [N, C, H, W]
// (NCHW) or [N, H, W, C] (NHWC), filter [O, C / groups, KH, KW] in both layouts, attributes
// strides, paddings (2 values: the same before and after; 4: top, bottom, left, right),
// padding_algorithm (EXPLICIT, SAME: output ceil(in / stride) with the padding split low half
// first and the dilations forced to 1; VALID: no padding — paddle/phi/kernels/cpu/conv_util.h,
// UpdatePaddingAndDilation), dilations, groups, data_format.
//
// Computed as phi's CPU kernel does: per sample and group, im2col of the input (rows: channel,
// kernel row, kernel column; columns: output pixels) and one GEMM through gemm.h (the context's
// GemmMode), so the bits are those of the GEMM path. The grads: input_grad = col2im(Wᵀ · dout),
// the col2im adding each column entry into its input pixel in (row, column) order; filter_grad =
// Σ over samples, in order 0, 1, ..., of dout · colᵀ. NHWC runs through NCHW copies (exact).
//
// Kernel dtype: the input's (float32, float64: the GEMM's types, as phi's CPU conv registers).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// Everything the loops need, with paddings and dilations resolved.
struct ConvPlan {
  bool channel_last = false;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input, as NCHW
  int64_t o = 0, kh = 0, kw = 0;       // filter
  int64_t groups = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // bottom and right only shape the output
  int64_t oh = 0, ow = 0;

  int64_t c_per_group() const { return c / groups; }
  int64_t o_per_group() const { return o / groups; }
  int64_t col_rows() const { return c_per_group() * kh * kw; }
  int64_t pixels() const { return oh * ow; }
  std::vector<int64_t> out_shape() const {
    return channel_last ? std::vector<int64_t>{n, oh, ow, o} : std::vector<int64_t>{n, o, oh, ow};
  }
};

StatusOr<std::vector<int64_t>> PairAttr(const KernelAttrs& attrs, const char* name,
                                        std::vector<int64_t> fallback) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetOr(name, std::move(fallback)));
  if (v.size() != 2) {
    return KernelError(fmt::format("{} has {} values, expected 2 (height, width)", name, v.size()));
  }
  return v;
}

StatusOr<ConvPlan> PlanConv(const Tensor& input, const Tensor& filter, const KernelAttrs& attrs) {
  ConvPlan p;
  // Read without a moved-from copy: g++ 12 warns (falsely) about the short string's bytes.
  const StatusOr<std::string> format_or = attrs.GetOr<std::string>("data_format", "NCHW");
  if (!format_or.ok()) return format_or.status();
  const std::string_view format = format_or.value();
  if (format != "NCHW" && format != "NHWC" && format != "AnyLayout") {
    return KernelError(
        fmt::format("data_format '{}' is not one of NCHW, NHWC, AnyLayout (NCHW)", format));
  }
  p.channel_last = format == "NHWC";
  if (input.rank() != 4) {
    return KernelError(fmt::format("input has shape {}, expected 4 dims ({})",
                                   ShapeToString(input.shape()), p.channel_last ? "NHWC" : "NCHW"));
  }
  if (filter.rank() != 4) {
    return KernelError(fmt::format("filter has shape {}, expected 4 dims [O, C / groups, KH, KW]",
                                   ShapeToString(filter.shape())));
  }
  const std::vector<int64_t>& in = input.shape();
  p.n = in[0];
  p.c = p.channel_last ? in[3] : in[1];
  p.h = p.channel_last ? in[1] : in[2];
  p.w = p.channel_last ? in[2] : in[3];
  p.o = filter.shape()[0];
  p.kh = filter.shape()[2];
  p.kw = filter.shape()[3];
  IRM_ASSIGN_OR_RETURN(p.groups, attrs.GetOr<int64_t>("groups", 1));
  if (p.groups < 1 || p.c % p.groups != 0 || p.o % p.groups != 0) {
    return KernelError(fmt::format(
        "groups {} must be at least 1 and divide the input channels ({}) and the filter's "
        "output channels ({})",
        p.groups, p.c, p.o));
  }
  if (filter.shape()[1] != p.c_per_group()) {
    return KernelError(
        fmt::format("filter has shape {}: dim 1 must be the input channels / groups = {} / {} = {}",
                    ShapeToString(filter.shape()), p.c, p.groups, p.c_per_group()));
  }
  if (p.kh < 1 || p.kw < 1) {
    return KernelError(
        fmt::format("filter has shape {}: an empty kernel window", ShapeToString(filter.shape())));
  }

  IRM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, PairAttr(attrs, "strides", {1, 1}));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, PairAttr(attrs, "dilations", {1, 1}));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> paddings,
                       attrs.GetOr<std::vector<int64_t>>("paddings", {0, 0}));
  IRM_ASSIGN_OR_RETURN(const std::string algorithm,
                       attrs.GetOr<std::string>("padding_algorithm", "EXPLICIT"));
  for (size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1 || dilations[d] < 1) {
      return KernelError(fmt::format("strides {} and dilations {} must be at least 1",
                                     ShapeToString(strides), ShapeToString(dilations)));
    }
  }
  // [top, bottom, left, right] (conv_util.h: 2 values are repeated per dim).
  std::array<int64_t, 4> pads{};
  if (paddings.size() == 2) {
    pads = {paddings[0], paddings[0], paddings[1], paddings[1]};
  } else if (paddings.size() == 4) {
    pads = {paddings[0], paddings[1], paddings[2], paddings[3]};
  } else {
    return KernelError(fmt::format("paddings has {} values, expected 2 or 4", paddings.size()));
  }
  const std::array<int64_t, 2> sizes = {p.h, p.w};
  const std::array<int64_t, 2> kernel = {p.kh, p.kw};
  if (algorithm == "SAME") {
    for (size_t d = 0; d < 2; ++d) {
      const int64_t out = (sizes[d] + strides[d] - 1) / strides[d];
      const int64_t sum = std::max<int64_t>((out - 1) * strides[d] + kernel[d] - sizes[d], 0);
      pads[2 * d] = sum / 2;
      pads[2 * d + 1] = sum - sum / 2;
      dilations[d] = 1;
    }
  } else if (algorithm == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (algorithm != "EXPLICIT") {
    return KernelError(
        fmt::format("padding_algorithm '{}' is not one of EXPLICIT, SAME, VALID", algorithm));
  }
  for (int64_t pad : pads) {
    if (pad < 0)
      return KernelError(fmt::format("paddings {} has a negative value", ShapeToString(paddings)));
  }
  std::array<int64_t, 2> outs{};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t window = dilations[d] * (kernel[d] - 1) + 1;
    const int64_t padded = sizes[d] + pads[2 * d] + pads[2 * d + 1];
    outs[d] = padded < window ? 0 : (padded - window) / strides[d] + 1;
    if (outs[d] < 1) {
      return KernelError(fmt::format(
          "the output is empty along {}: input size {} padded by ({}, {}) is smaller than the "
          "dilated kernel ({})",
          d == 0 ? "height" : "width", sizes[d], pads[2 * d], pads[2 * d + 1], window));
    }
  }
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  p.dil_h = dilations[0];
  p.dil_w = dilations[1];
  p.pad_top = pads[0];
  p.pad_left = pads[2];
  p.oh = outs[0];
  p.ow = outs[1];
  return p;
}

// [N, H, W, C] <-> [N, C, H, W] copies (exact; the loops below see NCHW only).
template <typename T>
std::vector<T> ToChannelFirst(const T* src, int64_t n, int64_t c, int64_t hw) {
  std::vector<T> dst(static_cast<size_t>(n * c * hw));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t ch = 0; ch < c; ++ch) dst[(i * c + ch) * hw + p] = src[(i * hw + p) * c + ch];
  return dst;
}
template <typename T>
void ToChannelLast(const T* src, int64_t n, int64_t c, int64_t hw, T* dst) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t ch = 0; ch < c; ++ch) dst[(i * hw + p) * c + ch] = src[(i * c + ch) * hw + p];
}

// The input of one sample, as NCHW (a view when it is NCHW already).
template <typename T>
class ChannelFirstInput {
 public:
  ChannelFirstInput(const Tensor& t, const ConvPlan& p) {
    if (p.channel_last) {
      copy_ = ToChannelFirst(t.data<T>(), p.n, p.c, p.h * p.w);
      data_ = copy_.data();
    } else {
      data_ = t.data<T>();
    }
  }
  const T* sample(const ConvPlan& p, int64_t i) const { return data_ + i * p.c * p.h * p.w; }

 private:
  std::vector<T> copy_;
  const T* data_ = nullptr;
};

// col[(ch * KH + ki) * KW + kj][oy * OW + ox] = x[ch][oy * sh - pt + ki * dh][ox * sw - pl +
// kj * dw], zero outside the input; x is one group of one sample.
template <typename T>
void Im2Col(const ConvPlan& p, const T* x, T* col) {
  const int64_t pixels = p.pixels();
  for (int64_t ch = 0; ch < p.c_per_group(); ++ch) {
    const T* plane = x + ch * p.h * p.w;
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        T* row = col + ((ch * p.kh + ki) * p.kw + kj) * pixels;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t iy = oy * p.stride_h - p.pad_top + ki * p.dil_h;
          T* out = row + oy * p.ow;
          if (iy < 0 || iy >= p.h) {
            for (int64_t ox = 0; ox < p.ow; ++ox) out[ox] = T{0};
            continue;
          }
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t ix = ox * p.stride_w - p.pad_left + kj * p.dil_w;
            out[ox] = ix >= 0 && ix < p.w ? plane[iy * p.w + ix] : T{0};
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col: adds every in-bounds col entry into its pixel of dx, in col order.
template <typename T>
void Col2ImAdd(const ConvPlan& p, const T* col, T* dx) {
  const int64_t pixels = p.pixels();
  for (int64_t ch = 0; ch < p.c_per_group(); ++ch) {
    T* plane = dx + ch * p.h * p.w;
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        const T* row = col + ((ch * p.kh + ki) * p.kw + kj) * pixels;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t iy = oy * p.stride_h - p.pad_top + ki * p.dil_h;
          if (iy < 0 || iy >= p.h) continue;
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t ix = ox * p.stride_w - p.pad_left + kj * p.dil_w;
            if (ix >= 0 && ix < p.w) plane[iy * p.w + ix] += row[oy * p.ow + ox];
          }
        }
      }
    }
  }
}

template <typename T>
StatusOr<ConvPlan> PlanCall(const KernelCall& call) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "input"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 1, "filter"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(0), "input", {DTypeOf<T>()}));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(1), "filter", {DTypeOf<T>()}));
  return PlanConv(call.input(0), call.input(1), call.attrs);
}

template <typename T>
struct Conv2dKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const ConvPlan p, PlanCall<T>(call));
    IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<T>(), p.out_shape()));
    const ChannelFirstInput<T> x(call.input(0), p);
    const T* w = call.input(1).data<T>();
    const int64_t k = p.col_rows();
    const int64_t pixels = p.pixels();
    std::vector<T> col(static_cast<size_t>(k * pixels));
    std::vector<T> first(p.channel_last ? static_cast<size_t>(p.n * p.o * pixels) : 0);
    T* y = p.channel_last ? first.data() : out.data<T>();
    for (int64_t i = 0; i < p.n; ++i) {
      for (int64_t g = 0; g < p.groups; ++g) {
        Im2Col(p, x.sample(p, i) + g * p.c_per_group() * p.h * p.w, col.data());
        IRM_RETURN_IF_ERROR(Gemm<T>(call.context.gemm, false, false, p.o_per_group(), pixels, k,
                                    w + g * p.o_per_group() * k, col.data(),
                                    y + (i * p.o + g * p.o_per_group()) * pixels));
      }
    }
    if (p.channel_last) ToChannelLast(first.data(), p.n, p.o, pixels, out.data<T>());
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

template <typename T>
struct Conv2dGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const ConvPlan p, PlanCall<T>(call));
    IRM_RETURN_IF_ERROR(CheckPresent(call, 2, "out_grad"));
    const Tensor& out_grad = call.input(2);
    IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(
        CheckShape(out_grad, "out_grad", p.out_shape(), "the shape of conv2d's output"));
    const bool want_input = call.wants_output(0);
    const bool want_filter = call.wants_output(1);
    const int64_t k = p.col_rows();
    const int64_t pixels = p.pixels();
    const int64_t og = p.o_per_group();
    const Tensor& filter = call.input(1);
    const T* w = filter.data<T>();
    std::vector<T> dout_copy =
        p.channel_last ? ToChannelFirst(out_grad.data<T>(), p.n, p.o, pixels) : std::vector<T>{};
    const T* dy = p.channel_last ? dout_copy.data() : out_grad.data<T>();
    std::vector<T> col(static_cast<size_t>(k * pixels));

    if (want_input) {
      // Accumulated in NCHW, then laid out as the input.
      std::vector<T> dx(static_cast<size_t>(p.n * p.c * p.h * p.w), T{0});
      for (int64_t i = 0; i < p.n; ++i) {
        for (int64_t g = 0; g < p.groups; ++g) {
          IRM_RETURN_IF_ERROR(Gemm<T>(call.context.gemm, true, false, k, pixels, og, w + g * og * k,
                                      dy + (i * p.o + g * og) * pixels, col.data()));
          Col2ImAdd(p, col.data(), dx.data() + (i * p.c + g * p.c_per_group()) * p.h * p.w);
        }
      }
      IRM_ASSIGN_OR_RETURN(Tensor input_grad, Tensor::Zeros(DTypeOf<T>(), call.input(0).shape()));
      if (p.channel_last) {
        ToChannelLast(dx.data(), p.n, p.c, p.h * p.w, input_grad.data<T>());
      } else {
        std::copy(dx.begin(), dx.end(), input_grad.data<T>());
      }
      call.SetOutput(0, std::move(input_grad));
    }
    if (want_filter) {
      IRM_ASSIGN_OR_RETURN(Tensor filter_grad, Tensor::Zeros(DTypeOf<T>(), filter.shape()));
      T* dw = filter_grad.data<T>();
      const ChannelFirstInput<T> x(call.input(0), p);
      std::vector<T> part(static_cast<size_t>(og * k));
      for (int64_t i = 0; i < p.n; ++i) {
        for (int64_t g = 0; g < p.groups; ++g) {
          Im2Col(p, x.sample(p, i) + g * p.c_per_group() * p.h * p.w, col.data());
          IRM_RETURN_IF_ERROR(Gemm<T>(call.context.gemm, false, true, og, k, pixels,
                                      dy + (i * p.o + g * og) * pixels, col.data(), part.data()));
          T* dst = dw + g * og * k;
          for (size_t j = 0; j < part.size(); ++j) dst[j] += part[j];
        }
      }
      call.SetOutput(1, std::move(filter_grad));
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterConvKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<Conv2dKernel, float, double>(registry, "conv2d", {2, 2, 1})));
  return RegisterForTypes<Conv2dGradKernel, float, double>(registry, "conv2d_grad", {3, 3, 2});
}

}  // namespace irm::rt
