// Device code of the conv-net kernels (conv_launch.h): im2col, col2im as a gather and the filter
// grad's sum over samples for conv2d (whose products are cuBLAS GEMMs, conv_kernels.cc), pool2d
// and its grad, batch_norm's statistics, normalisation and grad. Each kernel repeats the CPU
// kernel's expression in the CPU's order (kernels/conv.cc, pool.cc, batch_norm.cc), one thread per
// output element, summing from zero in a fixed order, without atomics; the file is compiled
// without fused multiply-add, so that pool2d, its grad, batch_norm and its grad give the CPU's
// bits, and col2im does for the same columns. batch_norm's statistics run one thread per channel
// along the channel's m elements — the CPU's sequential order exactly, slow only for very large
// batches. The plans are the CPU kernels' own (kernels/conv_net_geometry.h) and the pool windows
// are kernels/pool_window.h's, which pool.cc reads too.
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/kernels/pool_window.h"

namespace irm::rt::cuda {
namespace {

#define IRM_GRID_STRIDE(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// The CPU kernels register float32 and float64 only.
template <typename F>
cudaError_t DispatchConvFloat(Elem elem, F&& f) {
  switch (elem) {
    case Elem::kFloat32:
      return f(float{});
    case Elem::kFloat64:
      return f(double{});
    default:
      return cudaErrorInvalidValue;
  }
}

// ---- conv2d
// ------------------------------------------------------------------------------------

template <typename T>
__global__ void Im2ColKernel(ConvPlan g, int64_t total, const T* x, T* col) {
  const int64_t cpg = g.c_per_group();
  const int64_t pixels = g.pixels();
  const int64_t rows = g.col_rows();
  IRM_GRID_STRIDE(e, total) {
    const int64_t p = e % pixels;
    const int64_t r = (e / pixels) % rows;
    const int64_t sg = e / (pixels * rows);  // sample * groups + group
    const int64_t kj = r % g.kw;
    const int64_t ki = (r / g.kw) % g.kh;
    const int64_t ch = r / (g.kw * g.kh);
    const int64_t oy = p / g.ow;
    const int64_t ox = p % g.ow;
    const int64_t iy = oy * g.stride_h - g.pad_top + ki * g.dil_h;
    const int64_t ix = ox * g.stride_w - g.pad_left + kj * g.dil_w;
    // Sample s, group gr: channel gr * cpg + ch of sample s is plane sg * cpg + ch.
    const T* plane = x + (sg * cpg + ch) * g.h * g.w;
    col[e] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? plane[iy * g.w + ix] : T{0};
  }
}

// The output index o along one dim that reads input index i through kernel offset k, or -1.
__device__ __forceinline__ int64_t OutputAt(int64_t i, int64_t k, int64_t stride, int64_t pad,
                                            int64_t dilation, int64_t out) {
  const int64_t t = i + pad - k * dilation;  // = o * stride
  if (t < 0 || t % stride != 0) return -1;
  const int64_t o = t / stride;
  return o < out ? o : -1;
}

template <typename T>
__global__ void Col2ImKernel(ConvPlan g, int64_t total, const T* col, T* dx) {
  const int64_t cpg = g.c_per_group();
  const int64_t pixels = g.pixels();
  const int64_t rows = g.col_rows();
  IRM_GRID_STRIDE(e, total) {
    const int64_t ix = e % g.w;
    const int64_t iy = (e / g.w) % g.h;
    const int64_t plane = e / (g.w * g.h);  // sample * C + channel
    const int64_t ch = plane % cpg;         // channel within its group
    const int64_t sg = plane / cpg;         // sample * groups + group
    const T* group_col = col + sg * rows * pixels;
    T acc{0};
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t oy = OutputAt(iy, ki, g.stride_h, g.pad_top, g.dil_h, g.oh);
      if (oy < 0) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t ox = OutputAt(ix, kj, g.stride_w, g.pad_left, g.dil_w, g.ow);
        if (ox < 0) continue;
        acc += group_col[((ch * g.kh + ki) * g.kw + kj) * pixels + oy * g.ow + ox];
      }
    }
    dx[e] = acc;
  }
}

template <typename T>
__global__ void AddSamplesKernel(int64_t count, int64_t samples, const T* parts, T* dw) {
  IRM_GRID_STRIDE(j, count) {
    T acc = dw[j];
    for (int64_t s = 0; s < samples; ++s) acc += parts[s * count + j];
    dw[j] = acc;
  }
}

// ---- pool2d
// ------------------------------------------------------------------------------------

using plan::ForwardWindow;
using plan::MaxGradWindow;
using plan::PoolAt;
using plan::PoolWindow;

// Output element e's (i, ch, oy, ox), or an input element's with the input's plane.
struct Pixel {
  int64_t i, ch, y, x;
};
__device__ __forceinline__ Pixel PixelOf(const PoolPlan& p, int64_t e, int64_t hh, int64_t ww) {
  Pixel px{};
  if (p.channel_last) {
    px.ch = e % p.c;
    px.x = (e / p.c) % ww;
    px.y = (e / (p.c * ww)) % hh;
    px.i = e / (p.c * ww * hh);
  } else {
    px.x = e % ww;
    px.y = (e / ww) % hh;
    px.ch = (e / (ww * hh)) % p.c;
    px.i = e / (ww * hh * p.c);
  }
  return px;
}

template <typename T>
__global__ void Pool2dKernel(PoolPlan p, int64_t total, const T* x, T* out) {
  IRM_GRID_STRIDE(e, total) {
    const Pixel o = PixelOf(p, e, p.oh, p.ow);
    const PoolWindow win = ForwardWindow(p, o.y, o.x);
    T acc = p.max ? static_cast<T>(-FLT_MAX) : T{0};
    for (int64_t yy = win.h0; yy < win.h1; ++yy) {
      for (int64_t xx = win.w0; xx < win.w1; ++xx) {
        const T v = x[PoolAt(p, o.i, o.ch, yy, xx, p.h, p.w)];
        if (p.max) {
          acc = acc > v ? acc : v;
        } else {
          acc += v;
        }
      }
    }
    if (!p.max) acc = acc / static_cast<T>(win.size);
    out[e] = acc;
  }
}

// The outputs along one dim whose (unclipped) window [o * stride - pad, ... + k) holds input
// index i: [first, last]; every output for adaptive windows (the caller checks each).
__device__ __forceinline__ void Candidates(const PoolPlan& p, bool rows, int64_t i, int64_t* first,
                                           int64_t* last) {
  const int64_t out = rows ? p.oh : p.ow;
  if (p.adaptive) {
    *first = 0;
    *last = out - 1;
    return;
  }
  const int64_t stride = rows ? p.stride_h : p.stride_w;
  const int64_t pad = rows ? p.pad_top : p.pad_left;
  const int64_t k = rows ? p.kh : p.kw;
  // o * stride - pad <= i  and  i < o * stride - pad + k.
  const int64_t low = i + pad - k + 1;  // o * stride >= low
  *first = low <= 0 ? 0 : (low + stride - 1) / stride;
  *last = min((i + pad) / stride, out - 1);
}

template <typename T>
__global__ void Pool2dGradKernel(PoolPlan p, int64_t total, const T* x, const T* y, const T* dy,
                                 T* dx) {
  IRM_GRID_STRIDE(e, total) {
    const Pixel in = PixelOf(p, e, p.h, p.w);
    int64_t oy0, oy1, ox0, ox1;
    Candidates(p, true, in.y, &oy0, &oy1);
    Candidates(p, false, in.x, &ox0, &ox1);
    T acc{0};
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const int64_t o = PoolAt(p, in.i, in.ch, oy, ox, p.oh, p.ow);
        if (p.max) {
          const PoolWindow win = MaxGradWindow(p, oy, ox);
          if (in.y < win.h0 || in.y >= win.h1 || in.x < win.w0 || in.x >= win.w1) continue;
          // Does the window's first element equal to the output, row-major, sit here?
          bool mine = false;
          bool found = false;
          for (int64_t yy = win.h0; yy < win.h1 && !found; ++yy) {
            for (int64_t xx = win.w0; xx < win.w1 && !found; ++xx) {
              if (x[PoolAt(p, in.i, in.ch, yy, xx, p.h, p.w)] == y[o]) {
                found = true;
                mine = yy == in.y && xx == in.x;
              }
            }
          }
          if (mine) acc += dy[o];
          continue;
        }
        const PoolWindow win = ForwardWindow(p, oy, ox);
        if (in.y < win.h0 || in.y >= win.h1 || in.x < win.w0 || in.x >= win.w1) continue;
        const T scale = static_cast<T>(1.0f / static_cast<float>(win.size));
        acc += scale * dy[o];
      }
    }
    dx[e] = acc;
  }
}

// ---- batch_norm
// --------------------------------------------------------------------------------

__device__ __forceinline__ int64_t BnChannel(const BatchNormPlan& g, int64_t e) {
  return g.channel_last ? e % g.c : (e / g.s) % g.c;
}

template <typename T>
__global__ void BatchNormStatsKernel(BatchNormPlan g, T momentum, T eps, const T* x,
                                     const T* running_mean, const T* running_var, T* mean_out,
                                     T* variance_out, T* saved_mean, T* saved_inv_std) {
  const T m = static_cast<T>(g.n * g.s);
  IRM_GRID_STRIDE(ch, g.c) {
    T sum{0};
    for (int64_t i = 0; i < g.n; ++i)
      for (int64_t k = 0; k < g.s; ++k) sum += x[g.At(i, ch, k)];
    const T mean = sum / m;
    T sq{0};
    for (int64_t i = 0; i < g.n; ++i) {
      for (int64_t k = 0; k < g.s; ++k) {
        const T d = x[g.At(i, ch, k)] - mean;
        sq += d * d;
      }
    }
    const T batch_var = sq / m;
    mean_out[ch] = running_mean[ch] * momentum + mean * (T{1} - momentum);
    variance_out[ch] = running_var[ch] * momentum + batch_var * (T{1} - momentum);
    saved_mean[ch] = mean;
    saved_inv_std[ch] = sqrt(T{1} / (batch_var + eps));
  }
}

template <typename T>
__global__ void BatchNormApplyKernel(BatchNormPlan g, int64_t total, bool from_variance, T eps,
                                     const T* x, const T* mean, const T* inv_std_in, const T* scale,
                                     const T* bias, T* out) {
  IRM_GRID_STRIDE(e, total) {
    const int64_t ch = BnChannel(g, e);
    const T inv_std = from_variance ? T{1} / sqrt(inv_std_in[ch] + eps) : inv_std_in[ch];
    const T s = scale == nullptr ? T{1} : scale[ch];
    const T b = bias == nullptr ? T{0} : bias[ch];
    const T new_scale = inv_std * s;
    const T new_bias = b - mean[ch] * inv_std * s;
    out[e] = x[e] * new_scale + new_bias;
  }
}

template <typename T>
__device__ __forceinline__ T GradInvStd(bool global, T eps, const T* inv_std, int64_t ch) {
  return global ? T{1} / sqrt(inv_std[ch] + eps) : inv_std[ch];
}

template <typename T>
__global__ void BatchNormGradSumsKernel(BatchNormPlan g, bool global, T eps, const T* x,
                                        const T* mean, const T* inv_std_in, const T* dy,
                                        T* dy_xhat_sum, T* dy_sum) {
  IRM_GRID_STRIDE(ch, g.c) {
    const T inv_std = GradInvStd(global, eps, inv_std_in, ch);
    T s{0};
    T t{0};
    for (int64_t i = 0; i < g.n; ++i) {
      for (int64_t k = 0; k < g.s; ++k) {
        const int64_t at = g.At(i, ch, k);
        s += dy[at];
        t += (x[at] - mean[ch]) * inv_std * dy[at];
      }
    }
    dy_sum[ch] = s;
    dy_xhat_sum[ch] = t;
  }
}

template <typename T>
__global__ void BatchNormGradInputKernel(BatchNormPlan g, int64_t total, bool global, T eps,
                                         const T* x, const T* mean, const T* inv_std_in,
                                         const T* scale, const T* dy, const T* dy_xhat_sum,
                                         const T* dy_sum, T* dx) {
  const T m = static_cast<T>(global ? 1 : g.n * g.s);
  IRM_GRID_STRIDE(e, total) {
    const int64_t ch = BnChannel(g, e);
    const T inv_std = GradInvStd(global, eps, inv_std_in, ch);
    const T s = scale == nullptr ? T{1} : scale[ch];
    const T coeff = s * inv_std / m;
    dx[e] = global
                ? coeff * dy[e]
                : coeff * (dy[e] * m - dy_sum[ch] - (x[e] - mean[ch]) * dy_xhat_sum[ch] * inv_std);
  }
}

}  // namespace

cudaError_t LaunchIm2Col(Elem elem, const ConvPlan& g, int64_t samples, const void* x, void* col,
                         cudaStream_t stream) {
  const int64_t total = samples * g.c * g.kh * g.kw * g.oh * g.ow;  // = samples * groups * rows
  if (total == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    Im2ColKernel<T><<<GridFor(total), kThreads, 0, stream>>>(g, total, static_cast<const T*>(x),
                                                             static_cast<T*>(col));
    return cudaGetLastError();
  });
}

cudaError_t LaunchCol2Im(Elem elem, const ConvPlan& g, int64_t samples, const void* col, void* dx,
                         cudaStream_t stream) {
  const int64_t total = samples * g.c * g.h * g.w;
  if (total == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    Col2ImKernel<T><<<GridFor(total), kThreads, 0, stream>>>(g, total, static_cast<const T*>(col),
                                                             static_cast<T*>(dx));
    return cudaGetLastError();
  });
}

cudaError_t LaunchAddSamples(Elem elem, int64_t count, int64_t samples, const void* parts, void* dw,
                             cudaStream_t stream) {
  if (count == 0 || samples == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    AddSamplesKernel<T><<<GridFor(count), kThreads, 0, stream>>>(
        count, samples, static_cast<const T*>(parts), static_cast<T*>(dw));
    return cudaGetLastError();
  });
}

cudaError_t LaunchPool2d(Elem elem, const PoolPlan& g, const void* x, void* out,
                         cudaStream_t stream) {
  const int64_t total = g.n * g.c * g.oh * g.ow;
  if (total == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    Pool2dKernel<T><<<GridFor(total), kThreads, 0, stream>>>(g, total, static_cast<const T*>(x),
                                                             static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchPool2dGrad(Elem elem, const PoolPlan& g, const void* x, const void* out,
                             const void* out_grad, void* x_grad, cudaStream_t stream) {
  const int64_t total = g.n * g.c * g.h * g.w;
  if (total == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    Pool2dGradKernel<T><<<GridFor(total), kThreads, 0, stream>>>(
        g, total, static_cast<const T*>(x), static_cast<const T*>(out),
        static_cast<const T*>(out_grad), static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchNormStats(Elem elem, const BatchNormPlan& g, double momentum, double epsilon,
                                 const void* x, const void* running_mean, const void* running_var,
                                 void* mean_out, void* variance_out, void* saved_mean,
                                 void* saved_inv_std, cudaStream_t stream) {
  if (g.c == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    BatchNormStatsKernel<T><<<GridFor(g.c), kThreads, 0, stream>>>(
        g, static_cast<T>(momentum), static_cast<T>(epsilon), static_cast<const T*>(x),
        static_cast<const T*>(running_mean), static_cast<const T*>(running_var),
        static_cast<T*>(mean_out), static_cast<T*>(variance_out), static_cast<T*>(saved_mean),
        static_cast<T*>(saved_inv_std));
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchNormApply(Elem elem, const BatchNormPlan& g, bool from_variance,
                                 double epsilon, const void* x, const void* mean,
                                 const void* inv_std, const void* scale, const void* bias,
                                 void* out, cudaStream_t stream) {
  const int64_t total = g.n * g.c * g.s;
  if (total == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    BatchNormApplyKernel<T><<<GridFor(total), kThreads, 0, stream>>>(
        g, total, from_variance, static_cast<T>(epsilon), static_cast<const T*>(x),
        static_cast<const T*>(mean), static_cast<const T*>(inv_std), static_cast<const T*>(scale),
        static_cast<const T*>(bias), static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchNormGrad(Elem elem, const BatchNormPlan& g, bool global, double epsilon,
                                const void* x, const void* mean, const void* inv_std,
                                const void* scale, const void* out_grad, void* x_grad,
                                void* dy_xhat_sum, void* dy_sum, cudaStream_t stream) {
  if (g.c == 0) return cudaSuccess;
  return DispatchConvFloat(elem, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    const T eps = static_cast<T>(epsilon);
    BatchNormGradSumsKernel<T><<<GridFor(g.c), kThreads, 0, stream>>>(
        g, global, eps, static_cast<const T*>(x), static_cast<const T*>(mean),
        static_cast<const T*>(inv_std), static_cast<const T*>(out_grad),
        static_cast<T*>(dy_xhat_sum), static_cast<T*>(dy_sum));
    cudaError_t error = cudaGetLastError();
    const int64_t total = g.n * g.c * g.s;
    if (error != cudaSuccess || total == 0) return error;
    BatchNormGradInputKernel<T><<<GridFor(total), kThreads, 0, stream>>>(
        g, total, global, eps, static_cast<const T*>(x), static_cast<const T*>(mean),
        static_cast<const T*>(inv_std), static_cast<const T*>(scale),
        static_cast<const T*>(out_grad), static_cast<const T*>(dy_xhat_sum),
        static_cast<const T*>(dy_sum), static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
