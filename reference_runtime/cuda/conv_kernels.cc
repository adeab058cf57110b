// The CUDA conv2d family, host side: conv2d and conv2d_grad with the CPU kernels' names,
// signatures, attributes, dtypes (float32, float64) and errors: both plan with kernels/conv_plan.h
// (conv.cc says how Paddle resolves paddings and dilations). Computed as the CPU kernel computes:
// im2col of the input (conv.cu) and a GEMM per group (cuBLAS in deterministic settings,
// cublas_gemm.h); the input grad is col2im(Wᵀ · dout), col2im a gather in which each input pixel
// adds its column entries in the CPU's order; the filter grad is each sample's dout · colᵀ added
// into the filter in increasing sample order, as the CPU. Samples are processed in chunks (one
// strided-batched GEMM per group and chunk) whose size depends on the shape only, so every run
// takes the same path. NHWC runs through NCHW copies, as on the CPU. The GEMMs' sums are cuBLAS's,
// not the CPU's loops: results agree with the CPU within rounding, not bit for bit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cublas_gemm.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/conv_plan.h"

namespace irm::rt::cuda {
namespace {

// The im2col columns of one chunk of samples take at most this many bytes (at least one sample).
constexpr int64_t kChunkBytes = int64_t{256} << 20;

// The address `elements` elements of `item` bytes past `base`.
const void* Advance(const void* base, int64_t elements, size_t item) {
  return static_cast<const std::byte*>(base) + elements * static_cast<int64_t>(item);
}
void* Advance(void* base, int64_t elements, size_t item) {
  return static_cast<std::byte*>(base) + elements * static_cast<int64_t>(item);
}

// dst [n, b, a] = src [n, a, b] with its last two dims swapped, by an exact strided copy: channel
// last to channel first (a = hw, b = c) or back (a = c, b = hw).
Status SwapLastTwoDims(const DeviceTensor& src, int64_t n, int64_t a, int64_t b, DeviceTensor& dst,
                       std::string_view op) {
  Walk walk;
  walk.rank = 3;
  walk.dims[0] = n;
  walk.dims[1] = b;
  walk.dims[2] = a;
  walk.strides[0] = a * b;
  walk.strides[1] = 1;
  walk.strides[2] = b;
  return LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(src.dtype())), dst.numel(), walk, 0,
                                   src.raw(), dst.raw(), Stream()),
                      op);
}
// [n, hw, c] (channel last) as a new [n, c, hw].
StatusOr<DeviceTensor> ChannelFirst(const DeviceTensor& t, int64_t n, int64_t c, int64_t hw,
                                    std::string_view op) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(t.dtype(), {n, c, hw}, op));
  IRM_RETURN_IF_ERROR(SwapLastTwoDims(t, n, hw, c, out, op));
  return out;
}
// [n, c, hw] into `last`, [n, hw, c].
Status ToChannelLast(const DeviceTensor& first, int64_t n, int64_t c, int64_t hw,
                     DeviceTensor& last, std::string_view op) {
  return SwapLastTwoDims(first, n, c, hw, last, op);
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
  IRM_ASSIGN_OR_RETURN(const ConvPlan p, plan::PlanConvCall(call, kDType));
  constexpr std::string_view kOp = "conv2d";
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const size_t item = DTypeSize(kDType);
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& filter = call.input(1);
  const int64_t k = p.col_rows(), pixels = p.pixels(), og = p.o_per_group();
  const int64_t col_per_sample = p.groups * k * pixels;

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
        LaunchStatus(LaunchIm2Col(elem, p, count, Advance(x->raw(), s0 * p.c * p.h * p.w, item),
                                  col.raw(), Stream()),
                     kOp));
    for (int64_t gr = 0; gr < p.groups; ++gr) {
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
  IRM_ASSIGN_OR_RETURN(const ConvPlan p, plan::PlanConvCall(call, kDType));
  constexpr std::string_view kOp = "conv2d_grad";
  IRM_RETURN_IF_ERROR(plan::CheckConvOutGrad(call, kDType, p));
  const DeviceTensor& out_grad = call.input(2);
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const size_t item = DTypeSize(kDType);
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& filter = call.input(1);
  const int64_t k = p.col_rows(), pixels = p.pixels(), og = p.o_per_group();
  const int64_t col_per_sample = p.groups * k * pixels;
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
      for (int64_t gr = 0; gr < p.groups; ++gr) {
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
          LaunchCol2Im(elem, p, count, col.raw(), Advance(dx.raw(), s0 * plane, item), Stream()),
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
          LaunchIm2Col(elem, p, count, Advance(x->raw(), s0 * plane, item), col.raw(), Stream()),
          kOp));
      for (int64_t gr = 0; gr < p.groups; ++gr) {
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
