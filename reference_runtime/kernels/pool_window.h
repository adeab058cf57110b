// The windows of pool2d and pool2d_grad (paddle/phi/kernels/funcs/pooling.cc, pooling.h; pool.cc
// says how each is laid out), for the CPU loops (pool.cc) and the device kernels (cuda/conv.cu)
// alike: one definition, so that both visit the same pixels and divide by the same size.
// Integer arithmetic, but for the adaptive bounds, taken in float as Paddle's AdaptStartIndex /
// AdaptEndIndex do (floor and ceil are exact, so the host's and the device's agree).
#pragma once

#include <cmath>
#include <cstdint>

#include "reference_runtime/kernels/conv_net_geometry.h"
#include "reference_runtime/kernels/host_device.h"

namespace irm::rt::plan {

// One output pixel's window, clipped to the input, and the divisor of avg pooling.
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t size;
};

IRM_HOST_DEVICE inline int64_t AdaptStart(int64_t i, int64_t in, int64_t out) {
  return static_cast<int64_t>(floorf(static_cast<float>(i * in) / static_cast<float>(out)));
}
IRM_HOST_DEVICE inline int64_t AdaptEnd(int64_t i, int64_t in, int64_t out) {
  return static_cast<int64_t>(ceilf(static_cast<float>((i + 1) * in) / static_cast<float>(out)));
}

IRM_HOST_DEVICE inline int64_t MinIndex(int64_t a, int64_t b) { return b < a ? b : a; }
IRM_HOST_DEVICE inline int64_t MaxIndex(int64_t a, int64_t b) { return a < b ? b : a; }

// The window of Pool2dFunctor / Pool2dGradFunctor: adaptive, or from i * stride - pad to
// min(start + k, in + pad), whose size avg divides by unless exclusive, then clipped to the input
// (exclusive: the clipped size).
IRM_HOST_DEVICE inline PoolWindow ForwardWindow(const PoolPlan& p, int64_t oy, int64_t ox) {
  PoolWindow win{};
  if (p.adaptive) {
    win.h0 = AdaptStart(oy, p.h, p.oh);
    win.h1 = AdaptEnd(oy, p.h, p.oh);
    win.w0 = AdaptStart(ox, p.w, p.ow);
    win.w1 = AdaptEnd(ox, p.w, p.ow);
    win.size = (win.h1 - win.h0) * (win.w1 - win.w0);
    return win;
  }
  win.h0 = oy * p.stride_h - p.pad_top;
  win.w0 = ox * p.stride_w - p.pad_left;
  win.h1 = MinIndex(win.h0 + p.kh, p.h + p.pad_top);
  win.w1 = MinIndex(win.w0 + p.kw, p.w + p.pad_left);
  win.size = (win.h1 - win.h0) * (win.w1 - win.w0);
  win.h0 = MaxIndex(win.h0, 0);
  win.w0 = MaxIndex(win.w0, 0);
  win.h1 = MinIndex(win.h1, p.h);
  win.w1 = MinIndex(win.w1, p.w);
  if (p.exclusive) win.size = (win.h1 - win.h0) * (win.w1 - win.w0);
  return win;
}

// The window of MaxPool2dGradFunctor: start at stride * i - pad, end at start + k, clipped to the
// input.
IRM_HOST_DEVICE inline PoolWindow MaxGradWindow(const PoolPlan& p, int64_t oy, int64_t ox) {
  PoolWindow win{};
  win.h0 = oy * p.stride_h - p.pad_top;
  win.w0 = ox * p.stride_w - p.pad_left;
  win.h1 = MinIndex(win.h0 + p.kh, p.h);
  win.w1 = MinIndex(win.w0 + p.kw, p.w);
  win.h0 = MaxIndex(win.h0, 0);
  win.w0 = MaxIndex(win.w0, 0);
  win.size = 1;
  return win;
}

// Element (i, ch, y, x) of a 4-D tensor in the plan's layout, with `hh` x `ww` planes.
IRM_HOST_DEVICE inline int64_t PoolAt(const PoolPlan& p, int64_t i, int64_t ch, int64_t y,
                                      int64_t x, int64_t hh, int64_t ww) {
  return p.channel_last ? ((i * hh + y) * ww + x) * p.c + ch : ((i * p.c + ch) * hh + y) * ww + x;
}

}  // namespace irm::rt::plan
