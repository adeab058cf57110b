// Device code of detection_launch.h: kernels/detection.cc's arithmetic, expression for expression
// (the same literals, the same double intermediates, the same association), compiled without fused
// multiply-add. Forward ops run one thread per output element or row; the sums that scatter
// (affine_channel_grad's per channel, roi_align_grad's into x_grad) run in the CPU's loop order —
// roi_align_grad on a single thread: correctness and the CPU's bits first, speed later.
// generate_proposals decodes one thread per anchor, then sorts and suppresses on one thread per
// image (the greedy NMS is sequential and data-dependent).
// roi_align's boxes, grids and bilinear samples, the proposals' decoding, IoU and NMS are
// kernels/detection_math.h's, the very functions the CPU kernels call.
#include <cmath>
#include <cstdint>

#include "reference_runtime/cuda/detection_launch.h"
#include "reference_runtime/kernels/detection_math.h"

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

using detection::MaxOf;
using detection::MinOf;

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

template <typename T>
__global__ void RoiAlignKernel(RoiAlignDesc d, const T* px, const T* pb, const int64_t* image,
                               T* po) {
  const int64_t bins = d.pooled_height * d.pooled_width;
  const int64_t total = d.rois * d.channels * bins;
  for (int64_t e = FirstIndex(); e < total; e += Step()) {
    const int64_t bin = e % bins;
    const int64_t c = (e / bins) % d.channels;
    const int64_t r = e / (bins * d.channels);
    const auto py = static_cast<size_t>(bin / d.pooled_width);
    const auto pxi = static_cast<size_t>(bin % d.pooled_width);
    const detection::RoiBox<T> roi =
        detection::RoiBoxOf(pb + r * 4, d.spatial_scale, d.aligned, !d.aligned);
    const int grid_h = detection::SamplingGrid(d.sampling_ratio, roi.roi_h, d.pooled_height);
    const int grid_w = detection::SamplingGrid(d.sampling_ratio, roi.roi_w, d.pooled_width);
    const auto gh = static_cast<size_t>(grid_h > 0 ? grid_h : 0);
    const auto gw = static_cast<size_t>(grid_w > 0 ? grid_w : 0);
    const T bin_w = roi.roi_w / static_cast<T>(static_cast<size_t>(d.pooled_width));
    const T bin_h = roi.roi_h / static_cast<T>(static_cast<size_t>(d.pooled_height));
    const T* data = px + (image[r] * d.channels + c) * d.height * d.width;
    T sum = 0;
    for (size_t iy = 0; iy < gh; ++iy) {
      const T y = detection::ForwardSamplePoint(roi.ymin, bin_h, py, iy, gh);
      for (size_t ix = 0; ix < gw; ++ix) {
        const T xs = detection::ForwardSamplePoint(roi.xmin, bin_w, pxi, ix, gw);
        // A point off the map: all four weights and offsets zero (as on the CPU).
        sum += detection::Interpolate(detection::SampleAt(y, xs, d.height, d.width), data);
      }
    }
    const T count = static_cast<T>(1.0 / static_cast<double>(static_cast<int>(gh * gw)));
    po[e] = sum * count;
  }
}

template <typename T>
__global__ void RoiAlignGradKernel(RoiAlignDesc d, const T* pb, const int64_t* image, const T* pg,
                                   T* dx) {
  for (int64_t r = 0; r < d.rois; ++r) {
    const detection::RoiBox<T> roi =
        detection::RoiBoxOf(pb + r * 4, d.spatial_scale, d.aligned, true);
    const T bin_h = roi.roi_h / static_cast<T>(d.pooled_height);
    const T bin_w = roi.roi_w / static_cast<T>(d.pooled_width);
    const int grid_h = detection::SamplingGrid(d.sampling_ratio, roi.roi_h, d.pooled_height);
    const int grid_w = detection::SamplingGrid(d.sampling_ratio, roi.roi_w, d.pooled_width);
    const T count = static_cast<T>(grid_h * grid_w);
    for (int64_t c = 0; c < d.channels; ++c) {
      T* grad = dx + (image[r] * d.channels + c) * d.height * d.width;
      const T* g = pg + (r * d.channels + c) * d.pooled_height * d.pooled_width;
      for (int64_t ph = 0; ph < d.pooled_height; ++ph) {
        for (int64_t pw = 0; pw < d.pooled_width; ++pw) {
          const T bin_grad = g[ph * d.pooled_width + pw];
          for (int iy = 0; iy < grid_h; ++iy) {
            const T y = detection::GradSamplePoint(roi.ymin, bin_h, ph, iy, grid_h);
            for (int ix = 0; ix < grid_w; ++ix) {
              const T xs = detection::GradSamplePoint(roi.xmin, bin_w, pw, ix, grid_w);
              detection::ScatterBilinear(d.height, d.width, y, xs, bin_grad, count, grad);
            }
          }
        }
      }
    }
  }
}

// ---- generate_proposals (kernels/detection.cc's ProposalsOfImage)

// One thread per (image, anchor): the score and deltas of row (y, x, anchor) in NHWC order, the
// box decoded against its anchor (BoxCoder), clipped to the image (ClipTiledBoxes) and whether it
// passes FilterBoxes. The CPU decodes only the pre_nms_top_n best rows, each independently of the
// others, so decoding them all gives the same values for the rows it reads.
template <typename T>
__global__ void DecodeProposalsKernel(ProposalDesc d, const T* scores, const T* deltas,
                                      const T* im_shape, const T* anchors, const T* variances,
                                      T* boxes, T* row_scores, uint8_t* keep) {
  const int64_t rows = d.rows;
  const int64_t total = d.images * rows;
  const T offset = d.pixel_offset ? T(1) : T(0);
  const float min_size = MaxOf(d.min_size, 1.0f);
  const T clip = static_cast<T>(d.bbox_clip);
  for (int64_t e = FirstIndex(); e < total; e += Step()) {
    const int64_t img = e / rows;
    const int64_t row = e % rows;
    const int64_t k = row % d.anchors;
    const int64_t x = (row / d.anchors) % d.width;
    const int64_t y = row / (d.anchors * d.width);
    row_scores[e] = scores[((img * d.anchors + k) * d.height + y) * d.width + x];
    T delta[4];
    for (int64_t j = 0; j < 4; ++j) {
      delta[j] = deltas[((img * 4 * d.anchors + k * 4 + j) * d.height + y) * d.width + x];
    }
    const T im_h = im_shape[img * d.im_cols];
    const T im_w = im_shape[img * d.im_cols + 1];
    T box[4];
    const bool kept =
        detection::DecodeProposal(anchors + row * 4, variances + row * 4, delta, offset, clip, im_h,
                                  im_w, min_size, d.pixel_offset, box);
    for (int c = 0; c < 4; ++c) boxes[e * 4 + c] = box[c];
    keep[e] = kept ? 1 : 0;
  }
}

// The rest of ProposalsOfImage on ONE thread per image (one block each): the sort, the cut and
// the greedy NMS are data-dependent and sequential — each keep decides the next box's fate and
// shrinks eta's threshold — so they run in the CPU's exact order; correctness first, speed later.
// The sort is a bottom-up merge sort taking the left run's row on ties: a stable sort by
// decreasing score (ties lowest row first), as the CPU's std::stable_sort. The CPU's NMS then
// visits the kept rows in a stable ascending sort taken from the back: the same descending order
// with each run of tied scores reversed, which is what the loop below walks (no second sort).
// NaN scores have no order on the CPU either (its comparator is not a strict weak order).
template <typename T>
__global__ void SelectProposalsKernel(ProposalDesc d, const T* all_boxes, const T* all_scores,
                                      const uint8_t* all_keep, int64_t* all_order,
                                      int64_t* all_spare, T* all_out_boxes, T* all_out_scores,
                                      int32_t* counts) {
  if (threadIdx.x != 0) return;
  const int64_t img = blockIdx.x;
  const int64_t rows = d.rows;
  const T* boxes = all_boxes + img * rows * 4;
  const T* scores = all_scores + img * rows;
  const uint8_t* keep = all_keep + img * rows;
  int64_t* src = all_order + img * rows;
  int64_t* dst = all_spare + img * rows;
  T* out_boxes = all_out_boxes + img * d.capacity * 4;
  T* out_scores = all_out_scores + img * d.capacity;
  for (int64_t i = 0; i < rows; ++i) src[i] = i;
  for (int64_t width = 1; width < rows; width *= 2) {
    for (int64_t lo = 0; lo < rows; lo += 2 * width) {
      const int64_t mid = lo + width < rows ? lo + width : rows;
      const int64_t hi = lo + 2 * width < rows ? lo + 2 * width : rows;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = scores[src[j]] > scores[src[i]] ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    int64_t* sorted = dst;
    dst = src;
    src = sorted;
  }
  int64_t considered = rows;
  if (d.pre_nms_top_n > 0 && d.pre_nms_top_n < rows) considered = d.pre_nms_top_n;
  // The kept rows, best first, into dst; the selected ones will go into src.
  int64_t* kept = dst;
  int64_t num_kept = 0;
  for (int64_t i = 0; i < considered; ++i) {
    if (keep[src[i]] != 0) kept[num_kept++] = src[i];
  }
  if (num_kept == 0) {  // one zero box, as Paddle when nothing is left
    for (int c = 0; c < 4; ++c) out_boxes[c] = T(0);
    out_scores[0] = T(0);
    counts[img] = 1;
    return;
  }
  int64_t* selected = src;
  const int64_t num_selected =
      detection::SelectByNms(boxes, scores, kept, num_kept, d.nms_thresh, d.eta, d.post_nms_top_n,
                             d.pixel_offset, selected);
  for (int64_t s = 0; s < num_selected; ++s) {
    for (int c = 0; c < 4; ++c) out_boxes[s * 4 + c] = boxes[selected[s] * 4 + c];
    out_scores[s] = scores[selected[s]];
  }
  counts[img] = static_cast<int32_t>(num_selected);
}

// One thread per image: its proposals after those of the images before it.
template <typename T>
__global__ void PackProposalsKernel(ProposalDesc d, const T* proposal_boxes,
                                    const T* proposal_scores, const int32_t* counts, T* rois,
                                    T* probs) {
  for (int64_t img = FirstIndex(); img < d.images; img += Step()) {
    int64_t start = 0;
    for (int64_t before = 0; before < img; ++before) start += counts[before];
    const T* boxes = proposal_boxes + img * d.capacity * 4;
    const T* scores = proposal_scores + img * d.capacity;
    for (int64_t s = 0; s < counts[img]; ++s) {
      for (int c = 0; c < 4; ++c) rois[(start + s) * 4 + c] = boxes[s * 4 + c];
      probs[start + s] = scores[s];
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

cudaError_t LaunchGenerateProposals(bool is_double, const ProposalDesc& d, const void* scores,
                                    const void* deltas, const void* im_shape, const void* anchors,
                                    const void* variances, const ProposalScratch& scratch,
                                    cudaStream_t stream) {
  if (d.images == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    const int64_t total = d.images * d.rows;
    if (total > 0) {
      DecodeProposalsKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(
          d, static_cast<const T*>(scores), static_cast<const T*>(deltas),
          static_cast<const T*>(im_shape), static_cast<const T*>(anchors),
          static_cast<const T*>(variances), static_cast<T*>(scratch.boxes),
          static_cast<T*>(scratch.scores), scratch.keep);
    }
    SelectProposalsKernel<T><<<static_cast<unsigned>(d.images), 1, 0, stream>>>(
        d, static_cast<const T*>(scratch.boxes), static_cast<const T*>(scratch.scores),
        scratch.keep, scratch.order, scratch.spare, static_cast<T*>(scratch.proposal_boxes),
        static_cast<T*>(scratch.proposal_scores), scratch.counts);
    return cudaGetLastError();
  });
}

cudaError_t LaunchPackProposals(bool is_double, const ProposalDesc& d,
                                const ProposalScratch& scratch, void* rois, void* probs,
                                cudaStream_t stream) {
  if (d.images == 0) return cudaSuccess;
  return ByType(is_double, [&](auto zero) -> cudaError_t {
    using T = decltype(zero);
    PackProposalsKernel<T><<<BlocksFor(d.images), kThreads, 0, stream>>>(
        d, static_cast<const T*>(scratch.proposal_boxes),
        static_cast<const T*>(scratch.proposal_scores), scratch.counts, static_cast<T*>(rois),
        static_cast<T*>(probs));
    return cudaGetLastError();
  });
}

}  // namespace irm::rt::cuda
