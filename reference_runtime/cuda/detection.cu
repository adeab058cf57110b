// Device code of detection_launch.h: kernels/detection.cc's arithmetic, expression for expression
// (the same literals, the same double intermediates, the same association), compiled without fused
// multiply-add. Forward ops run one thread per output element or row; the sums that scatter
// (affine_channel_grad's per channel, roi_align_grad's into x_grad) run in the CPU's loop order —
// roi_align_grad on a single thread: correctness and the CPU's bits first, speed later.
// generate_proposals decodes one thread per anchor, then sorts and suppresses on one thread per
// image (the greedy NMS is sequential and data-dependent).
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

// ---- generate_proposals (kernels/detection.cc's ProposalsOfImage)

template <typename T>
__device__ __forceinline__ T MinOf(T a, T b) {  // std::min's rule: a unless b < a
  return b < a ? b : a;
}

// The C library's exp as closely as the device allows: float32 through the device's float64 exp
// rounded once (correctly rounded but for inputs within 1e-16 of a tie, as glibc's expf but for
// rarer ones); float64 is the device's exp, within an ulp of glibc's.
__device__ __forceinline__ float ExpLikeHost(float v) {
  return static_cast<float>(exp(static_cast<double>(v)));
}
__device__ __forceinline__ double ExpLikeHost(double v) { return exp(v); }

// BBoxArea and JaccardOverlap (paddle/phi/kernels/funcs/detection/nms_util.h).
template <typename T>
__device__ T BoxArea(const T* b, bool normalized) {
  if (b[2] < b[0] || b[3] < b[1]) return T(0);
  const T w = b[2] - b[0];
  const T h = b[3] - b[1];
  return normalized ? w * h : (w + 1) * (h + 1);
}
template <typename T>
__device__ T Overlap(const T* a, const T* b, bool normalized) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1]) return T(0);
  const T norm = normalized ? T(0) : T(1);
  const T inter_w = MinOf(a[2], b[2]) - MaxOf(a[0], b[0]) + norm;
  const T inter_h = MinOf(a[3], b[3]) - MaxOf(a[1], b[1]) + norm;
  const T inter = inter_w * inter_h;
  return inter / (BoxArea(a, normalized) + BoxArea(b, normalized) - inter);
}

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
    const T* an = anchors + row * 4;
    const T* var = variances + row * 4;
    const T aw = an[2] - an[0] + offset;
    const T ah = an[3] - an[1] + offset;
    const T acx = static_cast<T>(an[0] + 0.5 * aw);
    const T acy = static_cast<T>(an[1] + 0.5 * ah);
    const T cx = var[0] * delta[0] * aw + acx;
    const T cy = var[1] * delta[1] * ah + acy;
    const T w = ExpLikeHost(MinOf(var[2] * delta[2], clip)) * aw;
    const T h = ExpLikeHost(MinOf(var[3] * delta[3], clip)) * ah;
    T box[4] = {cx - w / 2, cy - h / 2, cx + w / 2 - offset, cy + h / 2 - offset};
    for (int c = 0; c < 4; ++c) {
      const T limit = (c % 2 == 0 ? im_w : im_h) - offset;
      box[c] = MaxOf(MinOf(box[c], limit), T(0));
    }
    const T ws = box[2] - box[0] + offset;
    const T hs = box[3] - box[1] + offset;
    bool kept = ws >= min_size && hs >= min_size;
    if (d.pixel_offset) kept = kept && box[0] + ws / 2 <= im_w && box[1] + hs / 2 <= im_h;
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
  int64_t num_selected = 0;
  if (d.nms_thresh <= 0) {
    for (int64_t i = 0; i < num_kept; ++i) selected[num_selected++] = kept[i];
  } else {
    T threshold = static_cast<T>(d.nms_thresh);
    const bool normalized = !d.pixel_offset;
    for (int64_t first = 0; first < num_kept;) {
      int64_t last = first;
      while (last + 1 < num_kept && !(scores[kept[last + 1]] < scores[kept[first]]) &&
             !(scores[kept[first]] < scores[kept[last + 1]])) {
        ++last;
      }
      for (int64_t i = last; i >= first; --i) {
        const T* candidate = boxes + kept[i] * 4;
        bool keep_it = true;
        for (int64_t s = 0; s < num_selected; ++s) {
          if (Overlap(candidate, boxes + selected[s] * 4, normalized) > threshold) {
            keep_it = false;
            break;
          }
        }
        if (!keep_it) continue;
        selected[num_selected++] = kept[i];
        if (d.eta < 1 && threshold > 0.5) threshold *= d.eta;
      }
      first = last + 1;
    }
    if (d.post_nms_top_n > 0 && d.post_nms_top_n < num_selected) num_selected = d.post_nms_top_n;
  }
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
