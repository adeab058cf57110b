// pool2d and pool2d_grad against a float64 pooling written here from Paddle's definition
// (paddle/phi/kernels/funcs/pooling.cc, pooling.h), with the resolved paddings, windows and
// output sizes of each case stated by hand: max and avg (exclusive and not), ceil_mode, SAME,
// VALID, global and adaptive pooling, NCHW and NHWC; bit-identical reruns; the bad-input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::TryRunKernel;

struct PoolCase {
  std::string name;
  int64_t n, c, h, w;
  std::string type;
  std::vector<int64_t> ksize, strides, paddings;
  std::string algorithm;
  bool exclusive, ceil_mode, global, adaptive;
  // Stated by hand: the kernel in effect, [top, left] pads, the output size.
  int64_t kh, kw, pad_top, pad_left, oh, ow;
};

const std::vector<PoolCase> kCases = {
    {"max_3x3_s2_p1", 2,     3,     7, 6, "max", {3, 3}, {2, 2}, {1, 1}, "EXPLICIT", true,
     false,           false, false, 3, 3, 1,     1,      4,      3},
    // ceil_mode: (6 - 3 + 0 + 2 - 1) / 2 + 1 = 3 rows instead of 2.
    {"max_ceil", 1,    2,     6,     5, "max", {3, 2}, {2, 2}, {0, 0}, "EXPLICIT",
     true,       true, false, false, 3, 2,     0,      0,      3,      3},
    {"avg_exclusive_pad",
     2,
     2,
     5,
     5,
     "avg",
     {3, 3},
     {2, 2},
     {1, 1},
     "EXPLICIT",
     true,
     false,
     false,
     false,
     3,
     3,
     1,
     1,
     3,
     3},
    // Not exclusive: the padded cells count in the divisor. (6 - 2 + 1) / 2 + 1 = 3 rows,
    // (7 - 3 + 3) / 2 + 1 = 4 columns.
    {"avg_inclusive_pad4",
     1,
     3,
     6,
     7,
     "avg",
     {2, 3},
     {2, 2},
     {1, 0, 1, 2},
     "EXPLICIT",
     false,
     false,
     false,
     false,
     2,
     3,
     1,
     1,
     3,
     4},
    // SAME: out ceil(7 / 2) = 4, pad sum (4-1)*2+3-7 = 2 -> top 1; ceil(5 / 2) = 3, (3-1)*2+3-5
    // = 2 -> left 1.
    {"avg_same", 1,     2,     7,     5, "avg", {3, 3}, {2, 2}, {9, 9}, "SAME",
     true,       false, false, false, 3, 3,     1,      1,      4,      3},
    {"max_valid", 1,     2,     5,     5, "max", {2, 2}, {2, 2}, {1, 1}, "VALID",
     true,        false, false, false, 2, 2,     0,      0,      2,      2},
    // global: the whole plane, paddings ignored.
    {"avg_global", 2,     4,    3,     5, "avg", {1, 1}, {1, 1}, {1, 1}, "EXPLICIT",
     true,         false, true, false, 3, 5,     0,      0,      1,      1},
    // adaptive: the output size is ksize; windows [floor(i*in/out), ceil((i+1)*in/out)).
    {"avg_adaptive", 1,     2,     7,    5, "avg", {3, 2}, {1, 1}, {0, 0}, "EXPLICIT",
     false,          false, false, true, 0, 0,     0,      0,      3,      2},
};

// [N, C, H, W] index of element (i, ch, y, x) in `layout`.
int64_t Index(bool nhwc, int64_t c, int64_t hh, int64_t ww, int64_t i, int64_t ch, int64_t y,
              int64_t x) {
  return nhwc ? ((i * hh + y) * ww + x) * c + ch : ((i * c + ch) * hh + y) * ww + x;
}

struct Win {
  int64_t h0, h1, w0, w1;
  double divisor;
};

Win WindowOf(const PoolCase& k, int64_t oy, int64_t ox) {
  if (k.adaptive) {
    Win w{static_cast<int64_t>(std::floor(double(oy * k.h) / double(k.oh))),
          static_cast<int64_t>(std::ceil(double((oy + 1) * k.h) / double(k.oh))),
          static_cast<int64_t>(std::floor(double(ox * k.w) / double(k.ow))),
          static_cast<int64_t>(std::ceil(double((ox + 1) * k.w) / double(k.ow))), 0};
    w.divisor = double((w.h1 - w.h0) * (w.w1 - w.w0));
    return w;
  }
  const int64_t hs = oy * k.strides[0] - k.pad_top, ws = ox * k.strides[1] - k.pad_left;
  const int64_t he = std::min(hs + k.kh, k.h + k.pad_top),
                we = std::min(ws + k.kw, k.w + k.pad_left);
  Win w{std::max<int64_t>(hs, 0), std::min(he, k.h), std::max<int64_t>(ws, 0), std::min(we, k.w),
        double((he - hs) * (we - ws))};
  if (k.exclusive) w.divisor = double((w.h1 - w.h0) * (w.w1 - w.w0));
  return w;
}

KernelAttrs AttrsOf(const PoolCase& k, bool nhwc) {
  KernelAttrs a;
  a.Set("kernel_size", k.ksize);
  a.Set("strides", k.strides);
  a.Set("paddings", k.paddings);
  a.Set("padding_algorithm", k.algorithm);
  a.Set("pooling_type", k.type);
  a.Set("exclusive", k.exclusive);
  a.Set("ceil_mode", k.ceil_mode);
  a.Set("global_pooling", k.global);
  a.Set("adaptive", k.adaptive);
  a.Set("data_format", std::string(nhwc ? "NHWC" : "NCHW"));
  return a;
}

TEST(Pool2dTest, ForwardAndGradMatchTheFloat64Definition) {
  uint64_t seed = 1;
  for (const PoolCase& k : kCases) {
    for (bool nhwc : {false, true}) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        const std::string where = k.name + (nhwc ? " NHWC " : " NCHW ") + DTypeName(dtype);
        const std::vector<int64_t> xs = nhwc ? std::vector<int64_t>{k.n, k.h, k.w, k.c}
                                             : std::vector<int64_t>{k.n, k.c, k.h, k.w};
        const std::vector<int64_t> ys = nhwc ? std::vector<int64_t>{k.n, k.oh, k.ow, k.c}
                                             : std::vector<int64_t>{k.n, k.c, k.oh, k.ow};
        const Tensor x = RandomTensor(dtype, xs, ++seed);
        const Tensor dy = RandomTensor(dtype, ys, ++seed);
        const std::vector<double> xv = ToDoubles(x), dyv = ToDoubles(dy);
        std::vector<double> want(static_cast<size_t>(k.n * k.c * k.oh * k.ow));
        std::vector<double> dx(xv.size(), 0.0);
        for (int64_t i = 0; i < k.n; ++i)
          for (int64_t ch = 0; ch < k.c; ++ch)
            for (int64_t oy = 0; oy < k.oh; ++oy)
              for (int64_t ox = 0; ox < k.ow; ++ox) {
                const Win w = WindowOf(k, oy, ox);
                const int64_t o = Index(nhwc, k.c, k.oh, k.ow, i, ch, oy, ox);
                double acc = k.type == "max" ? -INFINITY : 0.0;
                int64_t arg = -1;
                for (int64_t y = w.h0; y < w.h1; ++y)
                  for (int64_t xx = w.w0; xx < w.w1; ++xx) {
                    const int64_t at = Index(nhwc, k.c, k.h, k.w, i, ch, y, xx);
                    if (k.type == "max") {
                      if (xv[at] > acc) acc = xv[at], arg = at;
                    } else {
                      acc += xv[at];
                      // Paddle's grad rounds the scale 1 / size to float (Pool2dGradFunctor).
                      dx[at] += dyv[o] * double(1.0f / float(w.divisor));
                    }
                  }
                if (k.type == "max") {
                  dx[arg] += dyv[o];  // random inputs: no ties
                } else {
                  acc /= w.divisor;
                }
                want[o] = acc;
              }
        const KernelAttrs attrs = AttrsOf(k, nhwc);
        const std::vector<Tensor> out = RunKernel("pool2d", dtype, {&x}, attrs, 1);
        ASSERT_EQ(out.size(), 1u) << where;
        ExpectClose(out[0], want, ys, testing::ToleranceFor(dtype), where + " out");
        const std::vector<Tensor> grad =
            RunKernel("pool2d_grad", dtype, {&x, &out[0], &dy}, attrs, 1);
        ASSERT_EQ(grad.size(), 1u) << where;
        ExpectClose(grad[0], dx, xs, testing::ToleranceFor(dtype), where + " x_grad");
        // Deterministic: a rerun gives the same bits.
        EXPECT_TRUE(RunKernel("pool2d", dtype, {&x}, attrs, 1)[0].BitwiseEqual(out[0])) << where;
      }
    }
  }
}

TEST(Pool2dTest, MaxGradGoesToTheFirstMaximumOfTheWindow) {
  // Every input equal: the window's first pixel (row-major) takes the whole gradient.
  const Tensor x = Tensor::FromVector(std::vector<float>(16, 2.0f), {1, 1, 4, 4});
  const Tensor out = Tensor::FromVector(std::vector<float>(4, 2.0f), {1, 1, 2, 2});
  const Tensor dy = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  KernelAttrs a;
  a.Set("kernel_size", std::vector<int64_t>{2, 2});
  a.Set("strides", std::vector<int64_t>{2, 2});
  a.Set("pooling_type", std::string("max"));
  const std::vector<Tensor> dx = RunKernel("pool2d_grad", DType::kFloat32, {&x, &out, &dy}, a, 1);
  ExpectClose(dx[0], {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}, {1, 1, 4, 4}, 0, "dx");
}

std::string ErrorOf(const KernelAttrs& attrs, std::vector<int64_t> shape = {1, 1, 4, 4}) {
  const Tensor x = RandomTensor(DType::kFloat32, std::move(shape), 3);
  auto r = TryRunKernel("pool2d", DType::kFloat32, {&x}, attrs, 1);
  return r.ok() ? "ok" : r.status().message();
}

TEST(Pool2dTest, BadAttributesAreErrors) {
  KernelAttrs a;
  a.Set("kernel_size", std::vector<int64_t>{2, 2});
  a.Set("pooling_type", std::string("lp"));
  EXPECT_EQ(ErrorOf(a), "pooling_type 'lp' is not one of max, avg");
  a.Set("pooling_type", std::string("max"));
  a.Set("adaptive", true);
  EXPECT_EQ(ErrorOf(a),
            "adaptive max pooling is max_pool2d_with_index in Paddle, not pool2d with "
            "pooling_type 'max'");
  a.Set("adaptive", false);
  a.Set("kernel_size", std::vector<int64_t>{5, 2});
  EXPECT_EQ(ErrorOf(a),
            "the output is empty along height: input size 4 padded by (0, 0) is smaller than the "
            "kernel (5)");
  a.Set("kernel_size", std::vector<int64_t>{2});
  EXPECT_EQ(ErrorOf(a), "kernel_size has 1 values, expected 2 (height, width)");
  a.Set("kernel_size", std::vector<int64_t>{2, 2});
  EXPECT_EQ(ErrorOf(a, {4, 4}), "x has shape [4, 4], expected 4 dims (NCHW)");
}

}  // namespace
}  // namespace irm::rt
