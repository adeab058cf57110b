// The CUDA conv2d family, host side: conv2d and conv2d_grad with the CPU kernels' names,
// signatures, attributes, dtypes (float32, float64) and errors (kernels/conv.cc, which says how
// Paddle resolves paddings and dilations). Computed as the CPU kernel computes: im2col of the input
// (conv.cu) and a GEMM per group (cuBLAS in deterministic settings, cublas_gemm.h); the input grad
// is col2im(Wᵀ · dout), col2im a gather in which each input pixel adds its column entries in the
// CPU's order; the filter grad is each sample's dout · colᵀ added into the filter in increasing
// sample order, as the CPU. Samples are processed in chunks (one strided-batched GEMM per group
// and chunk) whose size depends on the shape only, so every run takes the same path. NHWC runs
// through NCHW copies, as on the CPU. The GEMMs' sums are cuBLAS's, not the CPU's loops: results
// agree with the CPU within rounding, not bit for bit.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cublas_gemm.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

// The im2col columns of one chunk of samples take at most this many bytes (at least one sample).
constexpr int64_t kChunkBytes = int64_t{256} << 20;

// kernels/conv.cc's plan, on device tensors' shapes.
struct ConvPlan {
  bool channel_last = false;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input, as NCHW
  int64_t o = 0, kh = 0, kw = 0;       // filter
  ConvGeometry geometry;

  int64_t groups() const { return geometry.groups; }
  int64_t c_per_group() const { return c / groups(); }
  int64_t o_per_group() const { return o / groups(); }
  int64_t col_rows() const { return c_per_group() * kh * kw; }
  int64_t pixels() const { return geometry.oh * geometry.ow; }
  std::vector<int64_t> out_shape() const {
    return channel_last ? std::vector<int64_t>{n, geometry.oh, geometry.ow, o}
                        : std::vector<int64_t>{n, o, geometry.oh, geometry.ow};
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

StatusOr<ConvPlan> PlanConv(const DeviceTensor& input, const DeviceTensor& filter,
                            const KernelAttrs& attrs) {
  ConvPlan p;
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
  IRM_ASSIGN_OR_RETURN(const int64_t groups, attrs.GetOr<int64_t>("groups", 1));
  if (groups < 1 || p.c % groups != 0 || p.o % groups != 0) {
    return KernelError(fmt::format(
        "groups {} must be at least 1 and divide the input channels ({}) and the filter's "
        "output channels ({})",
        groups, p.c, p.o));
  }
  p.geometry.groups = groups;
  if (filter.shape()[1] != p.c_per_group()) {
    return KernelError(
        fmt::format("filter has shape {}: dim 1 must be the input channels / groups = {} / {} = {}",
                    ShapeToString(filter.shape()), p.c, groups, p.c_per_group()));
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
  // [top, bottom, left, right] (Paddle's conv_util.h: 2 values are repeated per dim).
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
  ConvGeometry& g = p.geometry;
  g.c = p.c;
  g.h = p.h;
  g.w = p.w;
  g.kh = p.kh;
  g.kw = p.kw;
  g.stride_h = strides[0];
  g.stride_w = strides[1];
  g.dil_h = dilations[0];
  g.dil_w = dilations[1];
  g.pad_top = pads[0];
  g.pad_left = pads[2];
  g.oh = outs[0];
  g.ow = outs[1];
  return p;
}

template <DType kDType>
StatusOr<ConvPlan> PlanCall(const CudaKernelCall& call) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "input"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 1, "filter"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(0), "input", {kDType}));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(1), "filter", {kDType}));
  return PlanConv(call.input(0), call.input(1), call.attrs);
}

// The address `elements` elements of `item` bytes past `base`.
const void* Advance(const void* base, int64_t elements, size_t item) {
  return static_cast<const std::byte*>(base) + elements * static_cast<int64_t>(item);
}
void* Advance(void* base, int64_t elements, size_t item) {
  return static_cast<std::byte*>(base) + elements * static_cast<int64_t>(item);
}

// [n, hw, c] (channel last) as [n, c, hw] or back, by an exact strided copy.
StatusOr<DeviceTensor> ChannelFirst(const DeviceTensor& t, int64_t n, int64_t c, int64_t hw,
                                    std::string_view op) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(t.dtype(), {n, c, hw}, op));
  Walk walk;
  walk.rank = 3;
  walk.dims[0] = n;
  walk.dims[1] = c;
  walk.dims[2] = hw;
  walk.strides[0] = hw * c;
  walk.strides[1] = 1;
  walk.strides[2] = c;
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(t.dtype())), out.numel(),
                                                walk, 0, t.raw(), out.raw(), Stream()),
                                   op));
  return out;
}
Status ToChannelLast(const DeviceTensor& first, int64_t n, int64_t c, int64_t hw,
                     DeviceTensor& last, std::string_view op) {
  Walk walk;
  walk.rank = 3;
  walk.dims[0] = n;
  walk.dims[1] = hw;
  walk.dims[2] = c;
  walk.strides[0] = c * hw;
  walk.strides[1] = 1;
  walk.strides[2] = hw;
  return LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(first.dtype())), last.numel(), walk,
                                   0, first.raw(), last.raw(), Stream()),
                      op);
}

// The input (or out_grad) as NCHW: itself, or a channel-first copy held in `copy`.
StatusOr<const DeviceTensor*> AsChannelFirst(const DeviceTensor& t, const ConvPlan& p, int64_t c,
                                             int64_t hw, DeviceTensor& copy, std::string_view op) {
  if (!p.channel_last) return &t;
  IRM_ASSIGN_OR_RETURN(copy, ChannelFirst(t, p.n, c, hw, op));
  return &copy;
}

// Samples per chunk: as many as fit kChunkBytes of per-sample scratch (at least 1, at most n).
int64_t ChunkSamples(const ConvPlan& p, int64_t scratch_per_sample, size_t item) {
  const int64_t bytes = std::max<int64_t>(scratch_per_sample * static_cast<int64_t>(item), 1);
  return std::clamp<int64_t>(kChunkBytes / bytes, 1, std::max<int64_t>(p.n, 1));
}

template <DType kDType>
Status RunConv2d(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const ConvPlan p, PlanCall<kDType>(call));
  constexpr std::string_view kOp = "conv2d";
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const size_t item = DTypeSize(kDType);
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& filter = call.input(1);
  const ConvGeometry& g = p.geometry;
  const int64_t k = p.col_rows(), pixels = p.pixels(), og = p.o_per_group();
  const int64_t col_per_sample = p.groups() * k * pixels;

  DeviceTensor x_copy;
  IRM_ASSIGN_OR_RETURN(const DeviceTensor* x,
                       AsChannelFirst(input, p, p.c, p.h * p.w, x_copy, kOp));
  // Zeros: with no input channels (c = 0) the product is an empty sum and no GEMM runs.
  IRM_ASSIGN_OR_RETURN(DeviceTensor y, DeviceTensor::Zeros(kDType, {p.n, p.o, pixels}, kOp));
  const int64_t chunk = ChunkSamples(p, col_per_sample, item);
  IRM_ASSIGN_OR_RETURN(DeviceTensor col,
                       DeviceTensor::Uninitialized(kDType, {chunk * col_per_sample}, kOp));
  for (int64_t s0 = 0; s0 < p.n; s0 += chunk) {
    const int64_t count = std::min(chunk, p.n - s0);
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchIm2Col(elem, g, count, Advance(x->raw(), s0 * p.c * p.h * p.w, item),
                                  col.raw(), Stream()),
                     kOp));
    for (int64_t gr = 0; gr < p.groups(); ++gr) {
      RowMajorGemm gemm;
      gemm.m = og;
      gemm.n = pixels;
      gemm.k = k;
      gemm.a = Advance(filter.raw(), gr * og * k, item);
      gemm.stride_a = 0;
      gemm.b = Advance(col.raw(), gr * k * pixels, item);
      gemm.stride_b = col_per_sample;
      gemm.c = Advance(y.raw(), (s0 * p.o + gr * og) * pixels, item);
      gemm.stride_c = p.o * pixels;
      gemm.batches = count;
      IRM_RETURN_IF_ERROR(RunRowMajorGemm(kDType, gemm, kOp));
    }
  }
  DeviceTensor out;
  if (p.channel_last) {
    IRM_ASSIGN_OR_RETURN(out, DeviceTensor::Uninitialized(kDType, p.out_shape(), kOp));
    IRM_RETURN_IF_ERROR(ToChannelLast(y, p.n, p.o, pixels, out, kOp));
  } else {
    IRM_ASSIGN_OR_RETURN(out, y.Reshaped(p.out_shape()));
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

template <DType kDType>
Status RunConv2dGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const ConvPlan p, PlanCall<kDType>(call));
  constexpr std::string_view kOp = "conv2d_grad";
  IRM_RETURN_IF_ERROR(CheckPresent(call, 2, "out_grad"));
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {kDType}));
  IRM_RETURN_IF_ERROR(
      CheckShape(out_grad, "out_grad", p.out_shape(), "the shape of conv2d's output"));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const size_t item = DTypeSize(kDType);
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& filter = call.input(1);
  const ConvGeometry& g = p.geometry;
  const int64_t k = p.col_rows(), pixels = p.pixels(), og = p.o_per_group();
  const int64_t col_per_sample = p.groups() * k * pixels;
  const int64_t plane = p.c * p.h * p.w;
  const bool want_input = call.wants_output(0);
  const bool want_filter = call.wants_output(1);
  if (!want_input && !want_filter) return Status::Ok();

  DeviceTensor dy_copy;
  IRM_ASSIGN_OR_RETURN(const DeviceTensor* dy,
                       AsChannelFirst(out_grad, p, p.o, pixels, dy_copy, kOp));
  // Scratch per sample: the columns, and the filter grad's product when it is wanted.
  const int64_t chunk = ChunkSamples(p, col_per_sample + (want_filter ? p.o * k : 0), item);
  // Zeros: with no output channels (o = 0) the input grad's columns are an empty sum.
  IRM_ASSIGN_OR_RETURN(DeviceTensor col,
                       DeviceTensor::Zeros(kDType, {chunk * col_per_sample}, kOp));

  if (want_input) {
    // Every element is written by the col2im of its chunk.
    IRM_ASSIGN_OR_RETURN(DeviceTensor dx,
                         DeviceTensor::Uninitialized(kDType, {p.n, p.c, p.h * p.w}, kOp));
    for (int64_t s0 = 0; s0 < p.n; s0 += chunk) {
      const int64_t count = std::min(chunk, p.n - s0);
      for (int64_t gr = 0; gr < p.groups(); ++gr) {
        RowMajorGemm gemm;  // col = W_gᵀ · dout_g, W_g stored [og, k]
        gemm.trans_a = true;
        gemm.m = k;
        gemm.n = pixels;
        gemm.k = og;
        gemm.a = Advance(filter.raw(), gr * og * k, item);
        gemm.stride_a = 0;
        gemm.b = Advance(dy->raw(), (s0 * p.o + gr * og) * pixels, item);
        gemm.stride_b = p.o * pixels;
        gemm.c = Advance(col.raw(), gr * k * pixels, item);
        gemm.stride_c = col_per_sample;
        gemm.batches = count;
        IRM_RETURN_IF_ERROR(RunRowMajorGemm(kDType, gemm, kOp));
      }
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchCol2Im(elem, g, count, col.raw(), Advance(dx.raw(), s0 * plane, item), Stream()),
          kOp));
    }
    DeviceTensor input_grad;
    if (p.channel_last) {
      IRM_ASSIGN_OR_RETURN(input_grad, DeviceTensor::Uninitialized(kDType, input.shape(), kOp));
      IRM_RETURN_IF_ERROR(ToChannelLast(dx, p.n, p.c, p.h * p.w, input_grad, kOp));
    } else {
      IRM_ASSIGN_OR_RETURN(input_grad, dx.Reshaped(input.shape()));
    }
    call.SetOutput(0, std::move(input_grad));
  }
  if (want_filter) {
    IRM_ASSIGN_OR_RETURN(DeviceTensor filter_grad,
                         DeviceTensor::Zeros(kDType, filter.shape(), kOp));
    DeviceTensor x_copy;
    IRM_ASSIGN_OR_RETURN(const DeviceTensor* x,
                         AsChannelFirst(input, p, p.c, p.h * p.w, x_copy, kOp));
    IRM_ASSIGN_OR_RETURN(DeviceTensor parts, DeviceTensor::Zeros(kDType, {chunk * p.o * k}, kOp));
    for (int64_t s0 = 0; s0 < p.n; s0 += chunk) {
      const int64_t count = std::min(chunk, p.n - s0);
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchIm2Col(elem, g, count, Advance(x->raw(), s0 * plane, item), col.raw(), Stream()),
          kOp));
      for (int64_t gr = 0; gr < p.groups(); ++gr) {
        RowMajorGemm gemm;  // part_g = dout_g · col_gᵀ, col_g stored [k, pixels]
        gemm.trans_b = true;
        gemm.m = og;
        gemm.n = k;
        gemm.k = pixels;
        gemm.a = Advance(dy->raw(), (s0 * p.o + gr * og) * pixels, item);
        gemm.stride_a = p.o * pixels;
        gemm.b = Advance(col.raw(), gr * k * pixels, item);
        gemm.stride_b = col_per_sample;
        gemm.c = Advance(parts.raw(), gr * og * k, item);
        gemm.stride_c = p.o * k;
        gemm.batches = count;
        IRM_RETURN_IF_ERROR(RunRowMajorGemm(kDType, gemm, kOp));
      }
      IRM_RETURN_IF_ERROR(LaunchStatus(
          LaunchAddSamples(elem, p.o * k, count, parts.raw(), filter_grad.raw(), Stream()), kOp));
    }
    call.SetOutput(1, std::move(filter_grad));
  }
  return Status::Ok();
}

}  // namespace

Status RegisterCudaConvKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      registry.Register("conv2d", DType::kFloat32, {&RunConv2d<DType::kFloat32>, {2, 2, 1}}));
  IRM_RETURN_IF_ERROR(
      registry.Register("conv2d", DType::kFloat64, {&RunConv2d<DType::kFloat64>, {2, 2, 1}}));
  IRM_RETURN_IF_ERROR(registry.Register("conv2d_grad", DType::kFloat32,
                                        {&RunConv2dGrad<DType::kFloat32>, {3, 3, 2}}));
  return registry.Register("conv2d_grad", DType::kFloat64,
                           {&RunConv2dGrad<DType::kFloat64>, {3, 3, 2}});
}

}  // namespace irm::rt::cuda
