// The exponential decay's kernels (elementwise_pow, floor) and the detection kernels (prod,
// gather, shape, smooth_l1_loss, sigmoid_cross_entropy_with_logits, affine_channel,
// anchor_generator, roi_align and their grads, generate_proposals) against naive float64 references
// written here from the formulas Paddle documents (paddle/phi/kernels/cpu/*,
// impl/anchor_generator_kernel_impl.h, smooth_l1_loss_op.h of Paddle 2.x); grads also against
// central differences; rpn_target_assign refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::FromDoubles;
using testing::NumericGradient;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(ElementwisePowTest, BroadcastsAndItsGradsMatchTheCalculus) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = RandomTensor(dtype, {2, 3}, 3, 0.5, 2.0);
    const Tensor y = RandomTensor(dtype, {3}, 4, -1.0, 2.0);
    const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y);
    std::vector<double> want(6), dx(6), dy(3, 0.0);
    const Tensor g = RandomTensor(dtype, {2, 3}, 5);
    const std::vector<double> gv = ToDoubles(g);
    for (size_t i = 0; i < 6; ++i) {
      const double a = xv[i], b = yv[i % 3];
      want[i] = std::pow(a, b);
      dx[i] = gv[i] * b * std::pow(a, b - 1);
      dy[i % 3] += gv[i] * std::log(a) * std::pow(a, b);
    }
    const double tol = ToleranceFor(dtype) * 4;
    ExpectClose(RunKernel("elementwise_pow", dtype, {&x, &y}, {}, 1)[0], want, {2, 3}, tol, "out");
    const std::vector<Tensor> grads = RunKernel("elementwise_pow_grad", dtype, {&x, &y, &g}, {}, 2);
    ExpectClose(grads[0], dx, {2, 3}, tol, "x_grad");
    ExpectClose(grads[1], dy, {3}, tol, "y_grad");
  }
}

TEST(ElementwisePowTest, IntegersRoundTheDoublePower) {
  const Tensor x = Tensor::FromVector(std::vector<int64_t>{3, 2, -2, 7}, {4});
  const Tensor y = Tensor::FromVector(std::vector<int64_t>{1, 10, 3, 0}, {4});
  ExpectClose(RunKernel("elementwise_pow", DType::kInt64, {&x, &y}, {}, 1)[0], {3, 1024, -8, 1},
              {4}, 0, "out");
}

TEST(FloorTest, RoundsDownAndItsGradIsZero) {
  const Tensor x = Tensor::FromVector(std::vector<float>{-1.5f, -0.0f, 0.25f, 2.0f, 2.999f}, {5});
  ExpectClose(RunKernel("floor", DType::kFloat32, {&x}, {}, 1)[0], {-2, 0, 0, 2, 2}, {5}, 0, "out");
  const Tensor g = RandomTensor(DType::kFloat32, {5}, 1);
  ExpectClose(RunKernel("floor_grad", DType::kFloat32, {&g}, {}, 1)[0], {0, 0, 0, 0, 0}, {5}, 0,
              "x_grad");
}

TEST(ProdTest, MultipliesOverAxesAndItsGradIsOutOverX) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 3, 4}, 7, 0.5, 1.5);
  const std::vector<double> xv = ToDoubles(x);
  KernelAttrs attrs;
  attrs.Set("axis", std::vector<int64_t>{1});
  attrs.Set("keepdim", false);
  std::vector<double> want(8, 1.0);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c) want[a * 4 + c] *= xv[(a * 3 + b) * 4 + c];
  const Tensor out = RunKernel("prod", DType::kFloat64, {&x}, attrs, 1)[0];
  ExpectClose(out, want, {2, 4}, 1e-12, "out");
  const Tensor g = RandomTensor(DType::kFloat64, {2, 4}, 8);
  const std::vector<double> gv = ToDoubles(g);
  const std::vector<double> numeric = NumericGradient(
      [&](const std::vector<double>& v) {
        std::vector<double> p(8, 1.0);
        for (int64_t a = 0; a < 2; ++a)
          for (int64_t b = 0; b < 3; ++b)
            for (int64_t c = 0; c < 4; ++c) p[a * 4 + c] *= v[(a * 3 + b) * 4 + c];
        return Dot(p, gv);
      },
      xv);
  ExpectClose(RunKernel("prod_grad", DType::kFloat64, {&x, &out, &g}, attrs, 1)[0], numeric,
              {2, 3, 4}, 1e-7, "x_grad");
}

TEST(GatherTest, TakesSlicesAlongAnAxisAndItsGradAddsRepeats) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4}, 9);
  const std::vector<double> xv = ToDoubles(x);
  const Tensor rows = Tensor::FromVector(std::vector<int64_t>{2, 0, 2}, {3});
  const Tensor cols = Tensor::FromVector(std::vector<int32_t>{3, 1}, {2});
  KernelAttrs axis0, axis1;
  axis0.Set("axis", int64_t{0});
  axis1.Set("axis", int64_t{-1});
  std::vector<double> want0, want1;
  for (int64_t r : {2, 0, 2})
    for (int64_t c = 0; c < 4; ++c) want0.push_back(xv[r * 4 + c]);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c : {3, 1}) want1.push_back(xv[r * 4 + c]);
  ExpectClose(RunKernel("gather", DType::kFloat32, {&x, &rows}, axis0, 1)[0], want0, {3, 4}, 0,
              "axis 0");
  ExpectClose(RunKernel("gather", DType::kFloat32, {&x, &cols}, axis1, 1)[0], want1, {3, 2}, 0,
              "axis -1");
  const Tensor g = RandomTensor(DType::kFloat32, {3, 4}, 10);
  const std::vector<double> gv = ToDoubles(g);
  std::vector<double> dx(12, 0.0);
  const int64_t picked[] = {2, 0, 2};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 4; ++c) dx[picked[i] * 4 + c] += gv[i * 4 + c];
  ExpectClose(RunKernel("gather_grad", DType::kFloat32, {&x, &rows, &g}, axis0, 1)[0], dx, {3, 4},
              1e-6, "x_grad");

  const Tensor bad = Tensor::FromVector(std::vector<int64_t>{1, 3}, {2});
  auto r = TryRunKernel("gather", DType::kFloat32, {&x, &bad}, axis0, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "gather: index[1] = 3 is outside [0, 3), dim 0 of x float32[3, 4]");
}

TEST(ShapeTest, IsTheDimsAsInt32) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 0, 5}, 1);
  const Tensor out = RunKernel("shape", DType::kFloat64, {&x}, {}, 1)[0];
  EXPECT_EQ(out.dtype(), DType::kInt32);
  ExpectClose(out, {2, 0, 5}, {3}, 0, "out");
}

// Smooth L1 of d with sigma^2 = s2: 0.5 s2 d^2 inside 1 / s2, |d| - 0.5 / s2 outside.
double SmoothL1(double d, double s2) {
  return std::abs(d) < 1.0 / s2 ? 0.5 * s2 * d * d : std::abs(d) - 0.5 / s2;
}

TEST(SmoothL1LossTest, SumsWeightedErrorsPerSampleAndDifferentiates) {
  const DType dtype = DType::kFloat64;
  const Tensor x = RandomTensor(dtype, {3, 4}, 11, -2, 2);
  const Tensor y = RandomTensor(dtype, {3, 4}, 12, -2, 2);
  const Tensor inside = RandomTensor(dtype, {3, 4}, 13, 0.5, 1.5);
  const Tensor outside = RandomTensor(dtype, {3, 4}, 14, 0.5, 1.5);
  const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y), iv = ToDoubles(inside),
                            ov = ToDoubles(outside);
  KernelAttrs attrs;
  attrs.Set("sigma", 1.5);
  const double s2 = 2.25;
  auto loss = [&](const std::vector<double>& xs) {
    std::vector<double> out(3, 0.0);
    for (size_t i = 0; i < 12; ++i) out[i / 4] += ov[i] * SmoothL1((xs[i] - yv[i]) * iv[i], s2);
    return out;
  };
  std::vector<double> diff(12);
  for (size_t i = 0; i < 12; ++i) diff[i] = (xv[i] - yv[i]) * iv[i];
  const std::vector<Tensor> fwd =
      RunKernel("smooth_l1_loss", dtype, {&x, &y, &inside, &outside}, attrs, 2);
  ExpectClose(fwd[0], diff, {3, 4}, 1e-12, "diff");
  ExpectClose(fwd[1], loss(xv), {3, 1}, 1e-12, "out");

  // d out / d x is outside * inside * slope(diff) (Paddle multiplies both weights in); out_grad
  // per sample.
  const Tensor g = RandomTensor(dtype, {3, 1}, 15);
  const std::vector<double> gv = ToDoubles(g);
  const std::vector<double> numeric =
      NumericGradient([&](const std::vector<double>& v) { return Dot(loss(v), gv); }, xv);
  const std::vector<Tensor> grads =
      RunKernel("smooth_l1_loss_grad", dtype, {&inside, &outside, &fwd[0], &g}, attrs, 2);
  ExpectClose(grads[0], numeric, {3, 4}, 1e-6, "x_grad");
  std::vector<double> negated(numeric);
  for (double& v : negated) v = -v;
  ExpectClose(grads[1], negated, {3, 4}, 1e-6, "y_grad");
}

TEST(SigmoidCrossEntropyWithLogitsTest, MatchesTheLogisticLossIgnoresAndNormalizes) {
  const DType dtype = DType::kFloat64;
  const Tensor x = RandomTensor(dtype, {2, 3}, 16, -4, 4);
  const Tensor label = Tensor::FromVector(std::vector<double>{1, 0, -100, 0.25, 1, 0}, {2, 3});
  const Tensor pos_weight = RandomTensor(dtype, {2, 3}, 17, 0.5, 2);
  const std::vector<double> xv = ToDoubles(x), lv = ToDoubles(label), pv = ToDoubles(pos_weight);
  for (bool weighted : {false, true}) {
    for (bool normalize : {false, true}) {
      SCOPED_TRACE(std::string(weighted ? "pos_weight" : "plain") +
                   (normalize ? " normalize" : ""));
      auto loss = [&](const std::vector<double>& xs) {
        std::vector<double> out(6, 0.0);
        for (size_t i = 0; i < 6; ++i) {
          if (lv[i] == -100) continue;
          // (1 - l) x + w log(1 + e^-x): the logistic loss, w = pos_weight the weight of its log
          // term (Paddle's Python API passes 1 + (pos_weight - 1) l there, python/paddle/nn/
          // functional/loss.py binary_cross_entropy_with_logits), else 1.
          const double w = weighted ? pv[i] : 1.0;
          out[i] = (1 - lv[i]) * xs[i] + w * std::log1p(std::exp(-xs[i]));
          if (normalize) out[i] /= 5;  // five labels are not ignore_index
        }
        return out;
      };
      KernelAttrs attrs;
      attrs.Set("normalize", normalize);
      attrs.Set("ignore_index", int64_t{-100});
      std::vector<const Tensor*> inputs = {&x, &label};
      if (weighted) inputs.push_back(&pos_weight);
      ExpectClose(RunKernel("sigmoid_cross_entropy_with_logits", dtype, inputs, attrs, 1)[0],
                  loss(xv), {2, 3}, 1e-12, "out");
      const Tensor g = RandomTensor(dtype, {2, 3}, 18);
      const std::vector<double> gv = ToDoubles(g);
      const std::vector<double> numeric =
          NumericGradient([&](const std::vector<double>& v) { return Dot(loss(v), gv); }, xv);
      std::vector<const Tensor*> grad_inputs = {&x, &label, weighted ? &pos_weight : nullptr, &g};
      ExpectClose(
          RunKernel("sigmoid_cross_entropy_with_logits_grad", dtype, grad_inputs, attrs, 1)[0],
          numeric, {2, 3}, 1e-6, "x_grad");
    }
  }
}

TEST(AffineChannelTest, ScalesAndShiftsEachChannelInEitherLayout) {
  const DType dtype = DType::kFloat64;
  const Tensor scale = RandomTensor(dtype, {3}, 19, 0.5, 1.5);
  const Tensor bias = RandomTensor(dtype, {3}, 20);
  const std::vector<double> sv = ToDoubles(scale), bv = ToDoubles(bias);
  for (const char* layout : {"NCHW", "NHWC"}) {
    SCOPED_TRACE(layout);
    const bool nchw = std::string(layout) == "NCHW";
    const std::vector<int64_t> shape =
        nchw ? std::vector<int64_t>{2, 3, 2, 2} : std::vector<int64_t>{2, 2, 2, 3};
    const Tensor x = RandomTensor(dtype, shape, 21);
    const std::vector<double> xv = ToDoubles(x);
    auto channel = [&](size_t i) { return nchw ? (i / 4) % 3 : i % 3; };
    std::vector<double> want(24);
    for (size_t i = 0; i < 24; ++i) want[i] = xv[i] * sv[channel(i)] + bv[channel(i)];
    KernelAttrs attrs;
    attrs.Set("data_layout", std::string(layout));
    ExpectClose(RunKernel("affine_channel", dtype, {&x, &scale, &bias}, attrs, 1)[0], want, shape,
                1e-12, "out");
    const Tensor g = RandomTensor(dtype, shape, 22);
    const std::vector<double> gv = ToDoubles(g);
    std::vector<double> dx(24), ds(3, 0.0), db(3, 0.0);
    for (size_t i = 0; i < 24; ++i) {
      dx[i] = gv[i] * sv[channel(i)];
      ds[channel(i)] += gv[i] * xv[i];
      db[channel(i)] += gv[i];
    }
    // The legacy grad maker feeds no bias.
    const std::vector<Tensor> grads =
        RunKernel("affine_channel_grad", dtype, {&x, &scale, nullptr, &g}, attrs, 3);
    ExpectClose(grads[0], dx, shape, 1e-12, "x_grad");
    ExpectClose(grads[1], ds, {3}, 1e-12, "scale_grad");
    ExpectClose(grads[2], db, {3}, 1e-12, "bias_grad");
  }
}

TEST(AnchorGeneratorTest, CentresEverySizeAndRatioOnTheStrideGrid) {
  const Tensor input = RandomTensor(DType::kFloat32, {1, 2, 1, 2}, 1);
  KernelAttrs attrs;
  attrs.Set("anchor_sizes", std::vector<double>{32});
  attrs.Set("aspect_ratios", std::vector<double>{0.5, 1});
  attrs.Set("variances", std::vector<double>{0.1, 0.1, 0.2, 0.2});
  attrs.Set("stride", std::vector<double>{16, 16});
  attrs.Set("offset", 0.5);
  const std::vector<Tensor> out =
      RunKernel("anchor_generator", DType::kFloat32, {&input}, attrs, 2);
  // Centre x = 16 w + 7.5, y = 7.5. Ratio 0.5: base 23 x 12 (round(sqrt(512)), round(11.5)),
  // scaled by 32 / 16: 46 x 24. Ratio 1: 32 x 32. Corners centre -+ (size - 1) / 2.
  ExpectClose(out[0],
              {-15, -4, 30, 19, -8, -8, 23, 23,  // w = 0
               1, -4, 46, 19, 8, -8, 39, 23},    // w = 1
              {1, 2, 2, 4}, 0, "anchors");
  ExpectClose(out[1],
              {0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2},
              {1, 2, 2, 4}, 1e-7, "variances");
}

// Bilinear interpolation of one H x W plane at (y, x) with Paddle's edge rules: off the map
// (beyond -1 or the size) is 0, negative coordinates clamp to 0, the last row / column repeats.
double Bilinear(const std::vector<double>& plane, int64_t h, int64_t w, double y, double x) {
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return 0;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y0 = y1 = h - 1, y = static_cast<double>(y0);
  if (x0 >= w - 1) x0 = x1 = w - 1, x = static_cast<double>(x0);
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  return (1 - ly) * (1 - lx) * plane[y0 * w + x0] + (1 - ly) * lx * plane[y0 * w + x1] +
         ly * (1 - lx) * plane[y1 * w + x0] + ly * lx * plane[y1 * w + x1];
}

TEST(RoiAlignTest, AveragesBilinearSamplesPerBinAndItsGradIsTheAdjoint) {
  const DType dtype = DType::kFloat64;
  const int64_t n = 2, c = 2, h = 5, w = 6, ph = 2, pw = 3;
  const Tensor x = RandomTensor(dtype, {n, c, h, w}, 23);
  const Tensor boxes =
      Tensor::FromVector(std::vector<double>{0.5, 1, 9, 7, 2, 0, 5, 3.5, -1, 2, 11, 12}, {3, 4});
  const Tensor boxes_num = Tensor::FromVector(std::vector<int32_t>{1, 2}, {2});
  const std::vector<double> bv = ToDoubles(boxes);
  const int64_t image[] = {0, 1, 1};
  for (bool aligned : {false, true}) {
    SCOPED_TRACE(aligned ? "aligned" : "not aligned");
    KernelAttrs attrs;
    attrs.Set("pooled_height", ph);
    attrs.Set("pooled_width", pw);
    attrs.Set("spatial_scale", 0.5);
    attrs.Set("sampling_ratio", int64_t{2});
    attrs.Set("aligned", aligned);
    auto pool = [&](const std::vector<double>& xs) {
      std::vector<double> out;
      for (int64_t r = 0; r < 3; ++r) {
        const double off = aligned ? 0.5 : 0.0;
        const double x0 = bv[r * 4] * 0.5 - off, y0 = bv[r * 4 + 1] * 0.5 - off;
        double rw = bv[r * 4 + 2] * 0.5 - off - x0, rh = bv[r * 4 + 3] * 0.5 - off - y0;
        if (!aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        for (int64_t ch = 0; ch < c; ++ch) {
          const std::vector<double> plane(xs.begin() + (image[r] * c + ch) * h * w,
                                          xs.begin() + (image[r] * c + ch + 1) * h * w);
          for (int64_t py = 0; py < ph; ++py)
            for (int64_t px = 0; px < pw; ++px) {
              double sum = 0;
              for (int iy = 0; iy < 2; ++iy)
                for (int ix = 0; ix < 2; ++ix)
                  sum += Bilinear(plane, h, w, y0 + rh / ph * (py + (iy + 0.5) / 2),
                                  x0 + rw / pw * (px + (ix + 0.5) / 2));
              out.push_back(sum / 4);
            }
        }
      }
      return out;
    };
    const std::vector<double> xv = ToDoubles(x);
    ExpectClose(RunKernel("roi_align", dtype, {&x, &boxes, &boxes_num}, attrs, 1)[0], pool(xv),
                {3, c, ph, pw}, 1e-12, "out");
    if (aligned) continue;  // the grad keeps boxes at least 1 wide even when aligned
    const Tensor g = RandomTensor(dtype, {3, c, ph, pw}, 24);
    const std::vector<double> gv = ToDoubles(g);
    const std::vector<double> numeric =
        NumericGradient([&](const std::vector<double>& v) { return Dot(pool(v), gv); }, xv);
    ExpectClose(RunKernel("roi_align_grad", dtype, {&x, &boxes, &boxes_num, &g}, attrs, 1)[0],
                numeric, {n, c, h, w}, 1e-7, "x_grad");
  }
}

TEST(RoiAlignTest, WithoutBoxesNumOnlyOneImageIsCertain) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 1, 3, 3}, 1);
  const Tensor boxes = Tensor::FromVector(std::vector<float>{0, 0, 2, 2}, {1, 4});
  auto r = TryRunKernel("roi_align", DType::kFloat32, {&x, &boxes, nullptr}, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("boxes_num is absent and x float32[2, 1, 3, 3] holds 2"),
            std::string::npos)
      << r.status().message();
}

// A map without pixels has no neighbours to sample: refused, not read out of bounds.
TEST(RoiAlignTest, AnEmptyMapIsRefusedForTheKernelAndItsGrad) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 1, 0, 3}, std::vector<int64_t>{1, 1, 3, 0}}) {
    const Tensor x = Tensor::ZerosUnchecked(DType::kFloat32, shape);
    const Tensor boxes = Tensor::FromVector(std::vector<float>{0, 0, 2, 2}, {1, 4});
    const Tensor boxes_num = Tensor::FromVector(std::vector<int32_t>{1}, {1});
    const Tensor g = Tensor::ZerosUnchecked(DType::kFloat32, {1, 1, 1, 1});
    auto r = TryRunKernel("roi_align", DType::kFloat32, {&x, &boxes, &boxes_num}, {}, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("has an empty map: H and W must be >= 1"),
              std::string::npos)
        << r.status().message();
    auto gr = TryRunKernel("roi_align_grad", DType::kFloat32, {&x, &boxes, &boxes_num, &g}, {}, 1);
    ASSERT_FALSE(gr.ok());
    EXPECT_NE(gr.status().message().find("has an empty map"), std::string::npos)
        << gr.status().message();
  }
}

// One image, a 1 x 2 map with 2 anchors per position, zero deltas (the proposals are the anchors):
// r0 [0, 0, 9, 9] 0.9, r1 [1, 1, 10, 10] 0.8 (IoU with r0 81 / 119 > 0.5), r2 [12, 12, 15, 15]
// 0.7 and r3 [0, 12, 3, 15] 0.7, apart. NMS keeps r0, drops r1, and of the tied r2 and r3 takes
// the later first (Paddle's NMS pops a stable ascending sort from the back).
TEST(GenerateProposalsTest, DecodesClipsAndSuppressesTiesInPaddlesOrder) {
  const Tensor scores =
      Tensor::FromVector(std::vector<float>{0.9f, 0.7f, 0.8f, 0.7f}, {1, 2, 1, 2});
  const Tensor deltas = Tensor::FromVector(std::vector<float>(16, 0.0f), {1, 8, 1, 2});
  const Tensor im_shape = Tensor::FromVector(std::vector<float>{20, 20}, {1, 2});
  const Tensor anchors = Tensor::FromVector(
      std::vector<float>{0, 0, 9, 9, 1, 1, 10, 10, 12, 12, 15, 15, 0, 12, 3, 15}, {1, 2, 2, 4});
  const Tensor variances = Tensor::FromVector(std::vector<float>(16, 1.0f), {1, 2, 2, 4});
  for (int64_t post : {0, 2}) {
    KernelAttrs attrs;
    attrs.Set("pre_nms_top_n", int64_t{10});
    attrs.Set("post_nms_top_n", post);
    attrs.Set("nms_thresh", 0.5);
    attrs.Set("min_size", 0.1);
    attrs.Set("eta", 1.0);
    attrs.Set("pixel_offset", true);
    const std::vector<Tensor> out =
        RunKernel("generate_proposals", DType::kFloat32,
                  {&scores, &deltas, &im_shape, &anchors, &variances}, attrs, 3);
    const std::vector<double> r0 = {0, 0, 9, 9}, r3 = {0, 12, 3, 15}, r2 = {12, 12, 15, 15};
    std::vector<double> rois = r0, probs = {0.9f};
    rois.insert(rois.end(), r3.begin(), r3.end());
    probs.push_back(0.7f);
    if (post == 0) {
      rois.insert(rois.end(), r2.begin(), r2.end());
      probs.push_back(0.7f);
    }
    const int64_t kept = post == 0 ? 3 : 2;
    ExpectClose(out[0], rois, {kept, 4}, 0, "rpn_rois");
    ExpectClose(out[1], probs, {kept, 1}, 0, "rpn_roi_probs");
    ExpectClose(out[2], {static_cast<double>(kept)}, {1}, 0, "rpn_rois_num");
    EXPECT_EQ(out[2].dtype(), DType::kInt32);
  }
}

// Deltas move and scale the anchor: centre + variance * delta * size, size * exp(variance *
// delta); the box is clipped to the image (width 8 - 1 here) and filtered below min_size.
TEST(GenerateProposalsTest, DecodesDeltasClipsToTheImageAndFiltersSmallBoxes) {
  const Tensor scores = Tensor::FromVector(std::vector<double>{0.6, 0.4}, {1, 1, 1, 2});
  // [N, 4, H, W]: delta j of position x at (j, x); anchor 0 (1, 0, 0.5, 0), anchor 1 (0, 0, 0, -3).
  const Tensor deltas =
      Tensor::FromVector(std::vector<double>{1, 0, 0, 0, 0.5, 0, 0, -3}, {1, 4, 1, 2});
  const Tensor im_shape = Tensor::FromVector(std::vector<double>{8, 8}, {1, 2});
  const Tensor anchors =
      Tensor::FromVector(std::vector<double>{0, 0, 3, 3, 2, 2, 5, 5}, {1, 2, 1, 4});
  const Tensor variances = Tensor::FromVector(std::vector<double>(8, 0.5), {1, 2, 1, 4});
  KernelAttrs attrs;
  attrs.Set("nms_thresh", 0.0);  // no NMS
  attrs.Set("min_size", 2.0);
  const std::vector<Tensor> out =
      RunKernel("generate_proposals", DType::kFloat64,
                {&scores, &deltas, &im_shape, &anchors, &variances}, attrs, 3);
  // Anchor 0 (4 x 4, centre 2, 2): dx 1 * 0.5 * 4 = 2 -> centre 4; dw 0.5 * 0.5 -> w 4 e^0.25.
  const double w0 = 4 * std::exp(0.25);
  const double box0[4] = {4 - w0 / 2, 0, std::min(4 + w0 / 2 - 1, 7.0), 3};
  // Anchor 1 (4 x 4, centre 4, 4): dh -3 * 0.5 -> h 4 e^-1.5 < 2 - 1: filtered out.
  ExpectClose(out[0], {box0[0], box0[1], box0[2], box0[3]}, {1, 4}, 1e-12, "rpn_rois");
  ExpectClose(out[1], {0.6}, {1, 1}, 0, "rpn_roi_probs");
}

// A batch of no image is bad input that must not crash (it divided im_shape's size by the image
// count): no proposal, empty outputs of the usual ranks, as the device twin gives for N = 0
// (reference_runtime/cuda/detection_kernels.cc).
TEST(GenerateProposalsTest, NoImageGivesNoProposals) {
  const Tensor scores = Tensor::FromVector(std::vector<float>{}, {0, 2, 1, 2});
  const Tensor deltas = Tensor::FromVector(std::vector<float>{}, {0, 8, 1, 2});
  const Tensor im_shape = Tensor::FromVector(std::vector<float>{}, {0, 2});
  const Tensor anchors = Tensor::FromVector(std::vector<float>(16, 1.0f), {1, 2, 2, 4});
  const Tensor variances = Tensor::FromVector(std::vector<float>(16, 1.0f), {1, 2, 2, 4});
  const std::vector<Tensor> out =
      RunKernel("generate_proposals", DType::kFloat32,
                {&scores, &deltas, &im_shape, &anchors, &variances}, {}, 3);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{0}));
  EXPECT_EQ(out[2].dtype(), DType::kInt32);
}

TEST(RpnTargetAssignTest, IsRefusedByNameWithTheReason) {
  const Tensor t = RandomTensor(DType::kFloat32, {1, 4}, 1);
  auto r = TryRunKernel("rpn_target_assign", DType::kFloat32, {&t, &t, &t, &t}, {}, 5);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rpn_target_assign is not run"), std::string::npos);
  EXPECT_NE(r.status().message().find("use_random"), std::string::npos);
}

}  // namespace
}  // namespace irm::rt
