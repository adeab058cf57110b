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
// The attributes are resolved by conv_plan.h, which the CUDA kernels plan with too.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "reference_runtime/kernels/conv_plan.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using plan::ConvPlan;

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
struct Conv2dKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const ConvPlan p, plan::PlanConvCall(call, DTypeOf<T>()));
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
    IRM_ASSIGN_OR_RETURN(const ConvPlan p, plan::PlanConvCall(call, DTypeOf<T>()));
    IRM_RETURN_IF_ERROR(plan::CheckConvOutGrad(call, DTypeOf<T>(), p));
    const Tensor& out_grad = call.input(2);
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
