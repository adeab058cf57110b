// The resolved plans of conv2d, pool2d and batch_norm as plain structs: what conv_plan.h,
// pool_plan.h and batch_norm_plan.h resolve from the attributes and shapes, and what the CUDA
// launchers (cuda/conv_launch.h) take as they are. Nothing here depends on Status, Tensor or the
// attributes, so that nvcc compiles it with the device code and the device kernels read the same
// fields and index helpers the CPU loops read.
#pragma once

#include <cstdint>
#include <vector>

#include "reference_runtime/kernels/host_device.h"

namespace irm::rt::plan {

// One conv2d with its paddings and dilations resolved (conv_plan.h), as NCHW.
struct ConvPlan {
  bool channel_last = false;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input, as NCHW
  int64_t o = 0, kh = 0, kw = 0;       // filter
  int64_t groups = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dil_h = 1, dil_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // bottom and right only shape the output
  int64_t oh = 0, ow = 0;

  IRM_HOST_DEVICE int64_t c_per_group() const { return c / groups; }
  IRM_HOST_DEVICE int64_t o_per_group() const { return o / groups; }
  IRM_HOST_DEVICE int64_t col_rows() const { return c_per_group() * kh * kw; }
  IRM_HOST_DEVICE int64_t pixels() const { return oh * ow; }
  // [n, o, oh, ow], or [n, oh, ow, o] channel last.
  std::vector<int64_t> out_shape() const {
    return channel_last ? std::vector<int64_t>{n, oh, ow, o} : std::vector<int64_t>{n, o, oh, ow};
  }
};

// One pool2d with everything resolved (pool_plan.h).
struct PoolPlan {
  bool channel_last = false;  // NHWC
  bool max = false;           // pooling_type "max" (else "avg")
  bool exclusive = true;
  bool adaptive = false;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t oh = 0, ow = 0;

  // [n, c, oh, ow], or [n, oh, ow, c] channel last.
  std::vector<int64_t> out_shape() const {
    return channel_last ? std::vector<int64_t>{n, oh, ow, c} : std::vector<int64_t>{n, c, oh, ow};
  }
};

// x viewed as [n, c, s] (channel first) or [n, s, c] (channel last) (batch_norm_plan.h).
struct BatchNormPlan {
  bool channel_last = false;
  int64_t n = 0, c = 0, s = 0;
  // The elements each channel's statistics run over.
  IRM_HOST_DEVICE int64_t m() const { return n * s; }
  // Element (sample i, channel ch, position k) of x.
  IRM_HOST_DEVICE int64_t At(int64_t i, int64_t ch, int64_t k) const {
    return channel_last ? (i * s + k) * c + ch : (i * c + ch) * s + k;
  }
};

}  // namespace irm::rt::plan
