// Device code of detection_launch.h: kernels/detection.cc's arithmetic, expression for expression
// (the same literals, the same double intermediates, the same association), compiled without fused
// multiply-add. Forward ops run one thread per output element or row; the sums that scatter
// (affine_channel_grad's per channel, roi_align_grad's into x_grad) run in the CPU's loop order —
// roi_align_grad on a single thread: correctness and the CPU's bits first, speed later.
#include <cmath>
#include <cstdint>

#include "reference_runtime/cuda/detection_launch.h"

namespace irm::rt::cuda {
namespace {

constexpr int kThreads = 256;

unsigned BlocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 132 * 32 ? 132 * 32 : blocks));
}

__device__ __forceinline__ int64_t FirstIndex() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ int64_t Step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// std::max's rule: a unless a < b (a NaN a stays).
template <typename T>
__device__ __forceinline__ T MaxOf(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
__device__ __forceinline__ T SigmaSquared(double sigma_attr) {
  const T sigma = static_cast<T>(static_cast<float>(sigma_attr));
  return sigma * sigma;
}

template <typename T>
__global__ void SmoothL1LossKernel(int64_t rows, int64_t cols, double sigma_attr, const T* x,
                                   const T* y, const T* inside, const T* outside, T* diff, T* out) {
  const T sigma2 = SigmaSquared<T>(sigma_attr);
  for (int64_t r = FirstIndex(); r < rows; r += Step()) {
    T sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      T v = x[i] - y[i];
      if (inside != nullptr) v = v * inside[i];
      diff[i] = v;
      const T abs_v = fabs(v);
      T error = abs_v < 1.0 / sigma2 ? static_cast<T>(0.5 * v * v * sigma2)
                                     : static_cast<T>(abs_v - 0.5 / sigma2);
      if (outside != nullptr) error = error * outside[i];
      sum += error;
    }
    out[r] = sum;
  }
}

template <typename T>
__global__ void SmoothL1LossGradKernel(int64_t n, int64_t cols, double sigma_attr, const T* inside,
                                       const T* outside, const T* diff, const T* out_grad,
                                       T* x_grad, T* y_grad) {
  const T sigma2 = SigmaSquared<T>(sigma_attr);
  for (int64_t i = FirstIndex(); i < n; i += Step()) {
    const T weight = inside != nullptr ? inside[i] * outside[i] : T(1);
    const T v = diff[i];
    const T slope = fabs(v) < 1.0 / sigma2 ? sigma2 * v : static_cast<T>((T(0) < v) - (v < T(0)));
    const T g = out_grad[i / cols] * weight * slope;
    if (x_grad != nullptr) x_grad[i] = g;
    if (y_grad != nullptr) y_grad[i] = T(-1) * g;
  }
}

template <typename T>
__global__ void NormalizeCountKernel(int64_t n, int ignore_index, const T* label, int32_t* norm) {
  int32_t count = 0;
  const T eps = static_cast<T>(1e-6);
  for (int64_t i = 0; i < n; ++i) {
    const T d = label[i] - static_cast<T>(ignore_index);
    if (d < -eps || d > eps) ++count;
  }
  norm[0] = count;
}

template <typename T>
__global__ void SigmoidCrossEntropyKernel(int64_t n, bool normalize, int ignore_index, const T* px,
                                          const T* pl, const T* pos_weight, const T* pg,
                                          const int32_t* norm, T* po) {
  for (int64_t i = FirstIndex(); i < n; i += Step()) {
    const T x = px[i];
    const T label = pl[i];
    T result;
    if (static_cast<int>(label) == ignore_index) {
      result = T(0);
    } else if (pg == nullptr && pos_weight == nullptr) {
      const T term1 = x > 0 ? x : T(0);
      const T term2 = x * label;
      const T term3 = log(T(1) + exp(-fabs(x)));
      result = term1 - term2 + term3;
    } else if (pg == nullptr) {
      const T max_val = x < 0 ? -x : T(0);
      const T term1 = (T(1) - label) * x;
      const T term2 = log(exp(-max_val) + exp(-x - max_val));
      result = term1 + pos_weight[i] * (term2 + max_val);
    } else if (pos_weight == nullptr) {
      const T term1 = x > 0 ? T(1) : T(0);
      const T e_x = exp(-fabs(x));
      const T down = 1 + e_x;
      const T abs_grad = x >= 0 ? T(1) : T(-1);
      const T up = -e_x * abs_grad;
      const T term3 = up / down;
      result = pg[i] * (term1 - label + term3);
    } else {
      const T max_val = x < 0 ? -x : T(0);
      const T term1 = x < 0 ? T(-1) : T(0);
      const T down1 = exp(-max_val);
      const T down2 = exp(-x - max_val);
      const T term2 = down1 * (-term1) + down2 * (-1 - term1);
      const T term3 = T(1) - label;
      result = pg[i] * (pos_weight[i] * (term2 / (down1 + down2) + term1) + term3);
    }
    if (normalize) result = result / static_cast<T>(norm[0]);
    po[i] = result;
  }
}

__device__ __forceinline__ int64_t ChannelOf(const ChannelDesc& d, int64_t i) {
  return d.nchw ? (i / d.inner) % d.channels : i % d.channels;
}

template <typename T>
__global__ void AffineChannelKernel(ChannelDesc d, const T* x, const T* scale, const T* bias,
                                    T* out) {
  for (int64_t i = FirstIndex(); i < d.numel; i += Step()) {
    const int64_t c = ChannelOf(d, i);
    out[i] = x[i] * scale[c] + bias[c];
  }
}

template <typename T>
__global__ void AffineChannelXGradKernel(ChannelDesc d, const T* scale, const T* g, T* x_grad) {
  for (int64_t i = FirstIndex(); i < d.numel; i += Step())
    x_grad[i] = g[i] * scale[ChannelOf(d, i)];
}

template <typename T>
__global__ void AffineChannelParamGradKernel(ChannelDesc d, const T* x, const T* g, T* scale_grad,
                                             T* bias_grad) {
  for (int64_t c = FirstIndex(); c < d.channels; c += Step()) {
    T dscale = 0;
    T dbias = 0;
    if (d.nchw) {
      for (int64_t n = 0; n < d.n; ++n) {
        T s = 0;
        T b = 0;
        for (int64_t k = 0; k < d.inner; ++k) {
          const int64_t i = (n * d.channels + c) * d.inner + k;
          s += x[i] * g[i];
          b += g[i];
        }
        dscale = n == 0 ? s : dscale + s;
        dbias = n == 0 ? b : dbias + b;
      }
    } else {
      for (int64_t i = c; i < d.numel; i += d.channels) {
        dscale += x[i] * g[i];
        dbias += g[i];
      }
    }
    if (scale_grad != nullptr) scale_grad[c] = dscale;
    if (bias_grad != nullptr) bias_grad[c] = dbias;
  }
}

template <typename T>
__global__ void AnchorGeneratorKernel(AnchorDesc d, const float* sizes, const float* ratios,
                                      T* anchors, T* variances) {
  const int64_t num = d.num_sizes * d.num_ratios;
  const int64_t total = d.height * d.width * num;
  const T offset = static_cast<T>(d.offset);
  const T stride_w = static_cast<T>(d.stride_w);
  const T stride_h = static_cast<T>(d.stride_h);
  for (int64_t e = FirstIndex(); e < total; e += Step()) {
    const int64_t idx = e % num;
    const int64_t w = (e / num) % d.width;
    const int64_t h = e / (num * d.width);
    const T x_ctr = (static_cast<T>(w) * stride_w) + offset * (stride_w - 1);
    const T y_ctr = (static_cast<T>(h) * stride_h) + offset * (stride_h - 1);
    const T ar = static_cast<T>(ratios[idx / d.num_sizes]);
    const T anchor_size = static_cast<T>(sizes[idx % d.num_sizes]);
    const T area = stride_w * stride_h;
    const T area_ratios = area / ar;
    const T base_w = round(sqrt(area_ratios));
    const T base_h = round(base_w * ar);
    const T anchor_w = anchor_size / stride_w * base_w;
    const T anchor_h = anchor_size / stride_h * base_h;
    T* box = anchors + e * 4;
    box[0] = static_cast<T>(x_ctr - 0.5 * (anchor_w - 1));
    box[1] = static_cast<T>(y_ctr - 0.5 * (anchor_h - 1));
    box[2] = static_cast<T>(x_ctr + 0.5 * (anchor_w - 1));
    box[3] = static_cast<T>(y_ctr + 0.5 * (anchor_h - 1));
    for (int k = 0; k < 4; ++k) variances[e * 4 + k] = static_cast<T>(d.variances[k]);
  }
}

// The box geometry both roi_align kernels start from.
template <typename T>
struct RoiBox {
  T xmin, ymin, roi_w, roi_h;
  int grid_h, grid_w;
};

template <typename T>
__device__ __forceinline__ int GridOf(int64_t sampling_ratio, T roi_size, int64_t pooled) {
  return sampling_ratio > 0 ? static_cast<int>(sampling_ratio)
                            : static_cast<int>(ceil(roi_size / static_cast<T>(pooled)));
}

template <typename T>
__global__ void RoiAlignKernel(RoiAlignDesc d, const T* px, const T* pb, const int64_t* image,
                               T* po) {
  const int64_t bins = d.pooled_height * d.pooled_width;
  const int64_t total = d.rois * d.channels * bins;
  const T roi_offset = d.aligned ? T(0.5) : T(0);
  for (int64_t e = FirstIndex(); e < total; e += Step()) {
    const int64_t bin = e % bins;
    const int64_t c = (e / bins) % d.channels;
    const int64_t r = e / (bins * d.channels);
    const auto py = static_cast<size_t>(bin / d.pooled_width);
    const auto pxi = static_cast<size_t>(bin % d.pooled_width);
    const T* box = pb + r * 4;
    const T xmin = box[0] * d.spatial_scale - roi_offset;
    const T ymin = box[1] * d.spatial_scale - roi_offset;
    const T xmax = box[2] * d.spatial_scale - roi_offset;
    const T ymax = box[3] * d.spatial_scale - roi_offset;
    T roi_w = xmax - xmin;
    T roi_h = ymax - ymin;
    if (!d.aligned) {
      roi_w = MaxOf(roi_w, T(1));
      roi_h = MaxOf(roi_h, T(1));
    }
    const int grid_h = GridOf(d.sampling_ratio, roi_h, d.pooled_height);
    const int grid_w = GridOf(d.sampling_ratio, roi_w, d.pooled_width);
    const auto gh = static_cast<size_t>(grid_h > 0 ? grid_h : 0);
    const auto gw = static_cast<size_t>(grid_w > 0 ? grid_w : 0);
    const T bin_w = roi_w / static_cast<T>(static_cast<size_t>(d.pooled_width));
    const T bin_h = roi_h / static_cast<T>(static_cast<size_t>(d.pooled_height));
    const auto uh = static_cast<size_t>(d.height);
    const auto uw = static_cast<size_t>(d.width);
    const T* data = px + (image[r] * d.channels + c) * d.height * d.width;
    T sum = 0;
    for (size_t iy = 0; iy < gh; ++iy) {
      T y = ymin + bin_h * (static_cast<T>(py) +
                            static_cast<T>(static_cast<float>(iy) + .5f) / static_cast<T>(gh));
      for (size_t ix = 0; ix < gw; ++ix) {
        T xs = xmin + bin_w * (static_cast<T>(pxi) +
                               static_cast<T>(static_cast<float>(ix) + .5f) / static_cast<T>(gw));
        T yy = y;
        // A point off the map: all four weights and offsets zero (the CPU's empty Sample).
        size_t xy = 0, x_y = 0, xy_ = 0, x_y_ = 0;
        T w_xy = 0, w_x_y = 0, w_xy_ = 0, w_x_y_ = 0;
        if (!(yy < -1.0 || yy > static_cast<T>(d.height) || xs < -1.0 ||
              xs > static_cast<T>(d.width))) {
          yy = yy <= 0 ? T(0) : yy;
          xs = xs <= 0 ? T(0) : xs;
          auto x_low = static_cast<size_t>(xs);
          size_t x_high;
          if (x_low >= uw - 1) {
            x_high = x_low = uw - 1;
            xs = static_cast<T>(x_low);
          } else {
            x_high = x_low + 1;
          }
          const T x_ratio = static_cast<T>(x_high) - xs;
          auto y_low = static_cast<size_t>(yy);
          size_t y_high;
          if (y_low >= uh - 1) {
            y_high = y_low = uh - 1;
            yy = static_cast<T>(y_low);
          } else {
            y_high = y_low + 1;
          }
          const T y_ratio = static_cast<T>(y_high) - yy;
          xy = y_low * uw + x_low;
          x_y = y_high * uw + x_low;
          xy_ = y_low * uw + x_high;
          x_y_ = y_high * uw + x_high;
          w_xy = x_ratio * y_ratio;
          w_x_y = x_ratio * (1 - y_ratio);
          w_xy_ = (1 - x_ratio) * y_ratio;
          w_x_y_ = (1 - x_ratio) * (1 - y_ratio);
        }
        sum += w_xy * data[xy] + w_xy_ * data[xy_] + w_x_y * data[x_y] + w_x_y_ * data[x_y_];
      }
    }
    const T count = static_cast<T>(1.0 / static_cast<double>(static_cast<int>(gh * gw)));
    po[e] = sum * count;
  }
}

// bilinear_interpolate_gradient (kernels/detection.cc's Scatter).
template <typename T>
__device__ void ScatterPoint(int64_t height, int64_t width, T y, T x, T bin_grad, T count,
                             T* grad) {
  if (y < -1.0 || y > static_cast<T>(height) || x < -1.0 || x > static_cast<T>(width)) return;
  y = y <= 0 ? T(0) : y;
  x = x <= 0 ? T(0) : x;
  auto y_low = static_cast<int64_t>(y);
  auto x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<T>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<T>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - static_cast<T>(y_low);
  const T lx = x - static_cast<T>(x_low);
  const T hy = static_cast<T>(1. - ly);
  const T hx = static_cast<T>(1. - lx);
  grad[y_low * width + x_low] += bin_grad * (hy * hx) / count;
  grad[y_low * width + x_high] += bin_grad * (hy * lx) / count;
  grad[y_high * width + x_low] += bin_grad * (ly * hx) / count;
  grad[y_high * width + x_high] += bin_grad * (ly * lx) / count;
}

template <typename T>
__global__ void RoiAlignGradKernel(RoiAlignDesc d, const T* pb, const int64_t* image, const T* pg,
                                   T* dx) {
  const T roi_offset = d.aligned ? T(0.5) : T(0);
  for (int64_t r = 0; r < d.rois; ++r) {
    const T* box = pb + r * 4;
    const T xmin = box[0] * d.spatial_scale - roi_offset;
    const T ymin = box[1] * d.spatial_scale - roi_offset;
    const T roi_w = MaxOf(box[2] * d.spatial_scale - roi_offset - xmin, T(1));
    const T roi_h = MaxOf(box[3] * d.spatial_scale - roi_offset - ymin, T(1));
    const T bin_h = roi_h / static_cast<T>(d.pooled_height);
    const T bin_w = roi_w / static_cast<T>(d.pooled_width);
    const int grid_h = GridOf(d.sampling_ratio, roi_h, d.pooled_height);
    const int grid_w = GridOf(d.sampling_ratio, roi_w, d.pooled_width);
    const T count = static_cast<T>(grid_h * grid_w);
    for (int64_t c = 0; c < d.channels; ++c) {
      T* grad = dx + (image[r] * d.channels + c) * d.height * d.width;
      const T* g = pg + (r * d.channels + c) * d.pooled_height * d.pooled_width;
      for (int64_t ph = 0; ph < d.pooled_height; ++ph) {
        for (int64_t pw = 0; pw < d.pooled_width; ++pw) {
          const T bin_grad = g[ph * d.pooled_width + pw];
          for (int iy = 0; iy < grid_h; ++iy) {
            const T y =
                ymin + static_cast<T>(ph) * bin_h +
                static_cast<T>(static_cast<float>(iy) + .5f) * bin_h / static_cast<T>(grid_h);
            for (int ix = 0; ix < grid_w; ++ix) {
              const T xs =
                  xmin + static_cast<T>(pw) * bin_w +
                  static_cast<T>(static_cast<float>(ix) + .5f) * bin_w / static_cast<T>(grid_w);
              ScatterPoint(d.height, d.width, y, xs, bin_grad, count, grad);
            }
          }
        }
      }
    }
  }
}

// Calls f(T{}) with T = double or float.
template <typename F>
cudaError_t ByType(bool is_double, F&& f) {
  return is_double ? f(double{}) : f(float{});
}

}  // namespace

cudaError_t LaunchSmoothL1Loss(bool is_double, int64_t rows, int64_t cols, double sigma,
                               const void* x, const void* y, const void* inside,
                               const void* outside, void* diff, void* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    SmoothL1LossKernel<T><<<BlocksFor(rows), kThreads, 0, stream>>>(
        rows, cols, sigma, static_cast<const T*>(x), static_cast<const T*>(y),
        static_cast<const T*>(inside), static_cast<const T*>(outside), static_cast<T*>(diff),
        static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchSmoothL1LossGrad(bool is_double, int64_t n, int64_t cols, double sigma,
                                   const void* inside, const void* outside, const void* diff,
                                   const void* out_grad, void* x_grad, void* y_grad,
                                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    SmoothL1LossGradKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        n, cols, sigma, static_cast<const T*>(inside), static_cast<const T*>(outside),
        static_cast<const T*>(diff), static_cast<const T*>(out_grad), static_cast<T*>(x_grad),
        static_cast<T*>(y_grad));
    return cudaGetLastError();
  });
}

cudaError_t LaunchSigmoidCrossEntropy(bool is_double, int64_t n, bool normalize, int ignore_index,
                                      const void* x, const void* label, const void* pos_weight,
                                      const void* out_grad, int32_t* norm, void* out,
                                      cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if (normalize) {
      NormalizeCountKernel<T>
          <<<1, 1, 0, stream>>>(n, ignore_index, static_cast<const T*>(label), norm);
    }
    SigmoidCrossEntropyKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        n, normalize, ignore_index, static_cast<const T*>(x), static_cast<const T*>(label),
        static_cast<const T*>(pos_weight), static_cast<const T*>(out_grad), norm,
        static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchAffineChannel(bool is_double, const ChannelDesc& d, const void* x,
                                const void* scale, const void* bias, void* out,
                                cudaStream_t stream) {
  if (d.numel == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    AffineChannelKernel<T><<<BlocksFor(d.numel), kThreads, 0, stream>>>(
        d, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
        static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchAffineChannelGrad(bool is_double, const ChannelDesc& d, const void* x,
                                    const void* scale, const void* out_grad, void* x_grad,
                                    void* scale_grad, void* bias_grad, cudaStream_t stream) {
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    if (x_grad != nullptr && d.numel > 0) {
      AffineChannelXGradKernel<T><<<BlocksFor(d.numel), kThreads, 0, stream>>>(
          d, static_cast<const T*>(scale), static_cast<const T*>(out_grad),
          static_cast<T*>(x_grad));
    }
    if ((scale_grad != nullptr || bias_grad != nullptr) && d.channels > 0) {
      AffineChannelParamGradKernel<T><<<BlocksFor(d.channels), kThreads, 0, stream>>>(
          d, static_cast<const T*>(x), static_cast<const T*>(out_grad), static_cast<T*>(scale_grad),
          static_cast<T*>(bias_grad));
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchAnchorGenerator(bool is_double, const AnchorDesc& d, const float* sizes,
                                  const float* ratios, void* anchors, void* variances,
                                  cudaStream_t stream) {
  const int64_t total = d.height * d.width * d.num_sizes * d.num_ratios;
  if (total == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    AnchorGeneratorKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(
        d, sizes, ratios, static_cast<T*>(anchors), static_cast<T*>(variances));
    return cudaGetLastError();
  });
}

cudaError_t LaunchRoiAlign(bool is_double, const RoiAlignDesc& d, const void* x, const void* boxes,
                           const int64_t* image, void* out, cudaStream_t stream) {
  const int64_t total = d.rois * d.channels * d.pooled_height * d.pooled_width;
  if (total == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    RoiAlignKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(
        d, static_cast<const T*>(x), static_cast<const T*>(boxes), image, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t LaunchRoiAlignGrad(bool is_double, const RoiAlignDesc& d, const void* boxes,
                               const int64_t* image, const void* out_grad, void* x_grad,
                               cudaStream_t stream) {
  if (d.rois == 0 || d.channels == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    RoiAlignGradKernel<T><<<1, 1, 0, stream>>>(d, static_cast<const T*>(boxes), image,
                                               static_cast<const T*>(out_grad),
                                               static_cast<T*>(x_grad));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
