// The arithmetic of the detection kernels that the CPU (detection.cc) and the device
// (cuda/detection.cu) both run, one definition for both: roi_align's boxes, sampling grids,
// bilinear samples and their gradient scatter, and generate_proposals' box decoding, clipping and
// filtering, IoU and greedy NMS (paddle/phi/kernels/cpu/roi_align_kernel.cc,
// roi_align_grad_kernel.cc, generate_proposals_kernel.cc, funcs/detection/nms_util.h). Every
// expression keeps Paddle's operations in Paddle's order and types, so both sides round alike;
// the only thing that differs by side is the exp a decoded box's size goes through (ExpLikeHost).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "reference_runtime/kernels/host_device.h"

namespace irm::rt::detection {

// std::max's rule: a unless a < b (a NaN a stays).
template <typename T>
IRM_HOST_DEVICE inline T MaxOf(T a, T b) {
  return a < b ? b : a;
}
// std::min's rule: a unless b < a.
template <typename T>
IRM_HOST_DEVICE inline T MinOf(T a, T b) {
  return b < a ? b : a;
}

// The C library's exp on the host. The device's as close to it as the device allows: float32
// through the device's float64 exp rounded once (correctly rounded but for inputs within 1e-16 of
// a tie, as glibc's expf but for rarer ones); float64 the device's exp, within an ulp of glibc's.
IRM_HOST_DEVICE inline float ExpLikeHost(float v) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(exp(static_cast<double>(v)));
#else
  return std::exp(v);
#endif
}
IRM_HOST_DEVICE inline double ExpLikeHost(double v) {
#if defined(__CUDA_ARCH__)
  return exp(v);
#else
  return std::exp(v);
#endif
}

// ---- roi_align

// A box scaled to the map: its corner and size. Corners times spatial_scale, less 0.5 when aligned;
// width and height at least 1 when `at_least_one` (RoiAlignKernel: unless aligned;
// RoiAlignGradKernel: always).
template <typename T>
struct RoiBox {
  T xmin, ymin, roi_w, roi_h;
};
template <typename T>
IRM_HOST_DEVICE inline RoiBox<T> RoiBoxOf(const T* box, float spatial_scale, bool aligned,
                                          bool at_least_one) {
  const T roi_offset = aligned ? T(0.5) : T(0);
  RoiBox<T> r;
  r.xmin = box[0] * spatial_scale - roi_offset;
  r.ymin = box[1] * spatial_scale - roi_offset;
  const T xmax = box[2] * spatial_scale - roi_offset;
  const T ymax = box[3] * spatial_scale - roi_offset;
  r.roi_w = xmax - r.xmin;
  r.roi_h = ymax - r.ymin;
  if (at_least_one) {
    r.roi_w = MaxOf(r.roi_w, T(1));
    r.roi_h = MaxOf(r.roi_h, T(1));
  }
  return r;
}

// Sampling points per bin along one dim: sampling_ratio, or ceil(size / pooled).
template <typename T>
IRM_HOST_DEVICE inline int SamplingGrid(int64_t sampling_ratio, T roi_size, int64_t pooled) {
  return sampling_ratio > 0 ? static_cast<int>(sampling_ratio)
                            : static_cast<int>(std::ceil(roi_size / static_cast<T>(pooled)));
}

// Sampling point `i` of `grid` in bin `bin` along one dim, the forward's association:
// start + bin_size * (bin + (i + .5) / grid).
template <typename T>
IRM_HOST_DEVICE inline T ForwardSamplePoint(T start, T bin_size, size_t bin, size_t i,
                                            size_t grid) {
  return start + bin_size * (static_cast<T>(bin) +
                             static_cast<T>(static_cast<float>(i) + .5f) / static_cast<T>(grid));
}
// The grad's association: start + bin * bin_size + (i + .5) * bin_size / grid.
template <typename T>
IRM_HOST_DEVICE inline T GradSamplePoint(T start, T bin_size, int64_t bin, int i, int grid) {
  return start + static_cast<T>(bin) * bin_size +
         static_cast<T>(static_cast<float>(i) + .5f) * bin_size / static_cast<T>(grid);
}

// The low neighbour of coordinate `v` along a dim of `size` points, and in `high` the high one;
// from the last point on, both are the last point and `v` is moved onto it.
template <typename Index, typename T>
IRM_HOST_DEVICE inline Index LowNeighbour(T& v, Index size, Index& high) {
  auto low = static_cast<Index>(v);
  if (low >= size - 1) {
    high = low = size - 1;
    v = static_cast<T>(low);
  } else {
    high = low + 1;
  }
  return low;
}

// One sampling point's bilinear weights and the offsets of its four neighbours (RoiAlignKernel's
// OffsetsAndRatios; a point off the map has all zero).
template <typename T>
struct BilinearSample {
  size_t xy = 0, x_y = 0, xy_ = 0, x_y_ = 0;  // (x_low, y_low), (x_low, y_high), (x_high, y_low),
                                              // (x_high, y_high)
  T w_xy = 0, w_x_y = 0, w_xy_ = 0, w_x_y_ = 0;
};
template <typename T>
IRM_HOST_DEVICE inline BilinearSample<T> SampleAt(T y, T x, int64_t height, int64_t width) {
  BilinearSample<T> s;
  if (y < -1.0 || y > static_cast<T>(height) || x < -1.0 || x > static_cast<T>(width)) return s;
  const auto uh = static_cast<size_t>(height);
  const auto uw = static_cast<size_t>(width);
  y = y <= 0 ? T(0) : y;
  x = x <= 0 ? T(0) : x;
  size_t x_high = 0;
  const size_t x_low = LowNeighbour(x, uw, x_high);
  const T x_ratio = static_cast<T>(x_high) - x;
  size_t y_high = 0;
  const size_t y_low = LowNeighbour(y, uh, y_high);
  const T y_ratio = static_cast<T>(y_high) - y;
  s.xy = y_low * uw + x_low;
  s.x_y = y_high * uw + x_low;
  s.xy_ = y_low * uw + x_high;
  s.x_y_ = y_high * uw + x_high;
  s.w_xy = x_ratio * y_ratio;
  s.w_x_y = x_ratio * (1 - y_ratio);
  s.w_xy_ = (1 - x_ratio) * y_ratio;
  s.w_x_y_ = (1 - x_ratio) * (1 - y_ratio);
  return s;
}

// The interpolated value of one sample of a map.
template <typename T>
IRM_HOST_DEVICE inline T Interpolate(const BilinearSample<T>& s, const T* data) {
  return s.w_xy * data[s.xy] + s.w_xy_ * data[s.xy_] + s.w_x_y * data[s.x_y] +
         s.w_x_y_ * data[s.x_y_];
}

// bilinear_interpolate_gradient: bin_grad times each bilinear weight of the point (y, x), divided
// by count, added into its four neighbours of `grad`; nothing for a point off the map.
template <typename T>
IRM_HOST_DEVICE inline void ScatterBilinear(int64_t height, int64_t width, T y, T x, T bin_grad,
                                            T count, T* grad) {
  if (y < -1.0 || y > static_cast<T>(height) || x < -1.0 || x > static_cast<T>(width)) return;
  y = y <= 0 ? T(0) : y;
  x = x <= 0 ? T(0) : x;
  int64_t y_high = 0, x_high = 0;
  const int64_t y_low = LowNeighbour(y, height, y_high);
  const int64_t x_low = LowNeighbour(x, width, x_high);
  const T ly = y - static_cast<T>(y_low);
  const T lx = x - static_cast<T>(x_low);
  const T hy = static_cast<T>(1. - ly);
  const T hx = static_cast<T>(1. - lx);
  grad[y_low * width + x_low] += bin_grad * (hy * hx) / count;
  grad[y_low * width + x_high] += bin_grad * (hy * lx) / count;
  grad[y_high * width + x_low] += bin_grad * (ly * hx) / count;
  grad[y_high * width + x_high] += bin_grad * (ly * lx) / count;
}

// ---- generate_proposals

// One anchor's proposal: the deltas decoded against the anchor (BoxCoder; 0.5 is a double there,
// the size's exponent cut at `clip`), clipped to the image (ClipTiledBoxes; im_h, im_w not
// scaled) into `box`; returns whether it passes FilterBoxes (at least min_size wide and high, and
// with pixel_offset its centre inside the image). offset is 1 with pixel_offset, else 0.
template <typename T>
IRM_HOST_DEVICE inline bool DecodeProposal(const T* an, const T* var, const T* delta, T offset,
                                           T clip, T im_h, T im_w, float min_size,
                                           bool pixel_offset, T* box) {
  const T aw = an[2] - an[0] + offset;
  const T ah = an[3] - an[1] + offset;
  const T acx = static_cast<T>(an[0] + 0.5 * aw);
  const T acy = static_cast<T>(an[1] + 0.5 * ah);
  const T cx = var[0] * delta[0] * aw + acx;
  const T cy = var[1] * delta[1] * ah + acy;
  const T w = ExpLikeHost(MinOf(var[2] * delta[2], clip)) * aw;
  const T h = ExpLikeHost(MinOf(var[3] * delta[3], clip)) * ah;
  box[0] = cx - w / 2;
  box[1] = cy - h / 2;
  box[2] = cx + w / 2 - offset;
  box[3] = cy + h / 2 - offset;
  for (int k = 0; k < 4; ++k) {
    const T limit = (k % 2 == 0 ? im_w : im_h) - offset;
    box[k] = MaxOf(MinOf(box[k], limit), T(0));
  }
  const T ws = box[2] - box[0] + offset;
  const T hs = box[3] - box[1] + offset;
  bool keep = ws >= min_size && hs >= min_size;
  if (pixel_offset) keep = keep && box[0] + ws / 2 <= im_w && box[1] + hs / 2 <= im_h;
  return keep;
}

// BBoxArea and JaccardOverlap (nms_util.h) of (xmin, ymin, xmax, ymax) boxes: pixel boxes (not
// normalized) count both ends.
template <typename T>
IRM_HOST_DEVICE inline T BoxArea(const T* b, bool normalized) {
  if (b[2] < b[0] || b[3] < b[1]) return T(0);
  const T w = b[2] - b[0];
  const T h = b[3] - b[1];
  return normalized ? w * h : (w + 1) * (h + 1);
}
template <typename T>
IRM_HOST_DEVICE inline T Overlap(const T* a, const T* b, bool normalized) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1]) return T(0);
  const T norm = normalized ? T(0) : T(1);
  const T inter_w = MinOf(a[2], b[2]) - MaxOf(a[0], b[0]) + norm;
  const T inter_h = MinOf(a[3], b[3]) - MaxOf(a[1], b[1]) + norm;
  const T inter = inter_w * inter_h;
  return inter / (BoxArea(a, normalized) + BoxArea(b, normalized) - inter);
}

// The proposals NMS selects from `kept` (rows of boxes, 4 values each, and scores, best score
// first with tied scores lowest row first), written to `selected`; returns how many. nms_thresh
// <= 0 selects every kept row. Otherwise Paddle's NMS visits the rows in a stable ascending sort
// taken from the back — the order of `kept` with each run of tied scores reversed, which is what
// is walked here — keeping a row that overlaps no kept row by more than the threshold, which eta
// shrinks after each keep while above 0.5; then post_nms_top_n (when positive) cuts the list.
// NaN scores have no order here, as they have none in Paddle's sorts.
template <typename T>
IRM_HOST_DEVICE inline int64_t SelectByNms(const T* boxes, const T* scores, const int64_t* kept,
                                           int64_t num_kept, float nms_thresh, float eta,
                                           int64_t post_nms_top_n, bool pixel_offset,
                                           int64_t* selected) {
  int64_t num_selected = 0;
  if (nms_thresh <= 0) {
    for (int64_t i = 0; i < num_kept; ++i) selected[num_selected++] = kept[i];
    return num_selected;
  }
  T threshold = static_cast<T>(nms_thresh);
  const bool normalized = !pixel_offset;
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
      if (eta < 1 && threshold > 0.5) threshold *= eta;
    }
    first = last + 1;
  }
  if (post_nms_top_n > 0 && post_nms_top_n < num_selected) num_selected = post_nms_top_n;
  return num_selected;
}

}  // namespace irm::rt::detection
