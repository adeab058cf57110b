// The pieces the CPU kernels and their CUDA twins share, on their own (the kernels' results are
// tested with each family): the paddings rule of conv_net_plan.h (paddle/phi/kernels/funcs/
// pooling.h UpdatePadding, cpu/conv_util.h UpdatePaddingAndDilation), conv_plan.h, the pool
// windows of pool_window.h (funcs/pooling.h AdaptStartIndex / AdaptEndIndex, funcs/pooling.cc
// MaxPool2dGradFunctor) and the detection arithmetic of detection_math.h (cpu/roi_align_kernel.cc
// bilinear interpolation, funcs/detection/nms_util.h JaccardOverlap,
// cpu/generate_proposals_kernel.cc NMS). Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/conv_net_plan.h"
#include "reference_runtime/kernels/conv_plan.h"
#include "reference_runtime/kernels/detection_math.h"
#include "reference_runtime/kernels/pool_window.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {
namespace {

// ---- paddings

TEST(SharedKernelMathTest, TwoPaddingsRepeatPerDimFourAreTopBottomLeftRight) {
  EXPECT_EQ(plan::ExpandPaddings({1, 2}).value(), (plan::Paddings{1, 1, 2, 2}));
  EXPECT_EQ(plan::ExpandPaddings({1, 2, 3, 4}).value(), (plan::Paddings{1, 2, 3, 4}));
  const StatusOr<plan::Paddings> bad = plan::ExpandPaddings({1, 2, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "paddings has 3 values, expected 2 or 4");
}

TEST(SharedKernelMathTest, SamePaddingSplitsTheSumLowHalfFirstValidPadsNothing) {
  // Height 6, stride 2, kernel 3: out ceil(6 / 2) = 3, sum (3 - 1) * 2 + 3 - 6 = 1 -> (0, 1).
  // Width 5, stride 1, kernel 4: out 5, sum 4 * 1 + 4 - 5 = 3 -> (1, 2).
  plan::Paddings pads = {7, 7, 7, 7};
  ASSERT_TRUE(plan::ApplyPaddingAlgorithm("SAME", {6, 5}, {2, 1}, {3, 4}, pads).ok());
  EXPECT_EQ(pads, (plan::Paddings{0, 1, 1, 2}));
  ASSERT_TRUE(plan::ApplyPaddingAlgorithm("VALID", {6, 5}, {2, 1}, {3, 4}, pads).ok());
  EXPECT_EQ(pads, (plan::Paddings{0, 0, 0, 0}));
  pads = {1, 2, 3, 4};
  ASSERT_TRUE(plan::ApplyPaddingAlgorithm("EXPLICIT", {6, 5}, {2, 1}, {3, 4}, pads).ok());
  EXPECT_EQ(pads, (plan::Paddings{1, 2, 3, 4}));
  const Status bad = plan::ApplyPaddingAlgorithm("FULL", {6, 5}, {2, 1}, {3, 4}, pads);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "padding_algorithm 'FULL' is not one of EXPLICIT, SAME, VALID");
}

TEST(SharedKernelMathTest, ConvSamePaddingForcesTheDilationsToOne) {
  // Input 1x2x7x7, filter 4x1x3x3 in 2 groups, stride 2, dilation 2 (dropped by SAME): out
  // ceil(7 / 2) = 4, sum 3 * 2 + 3 - 7 = 2 -> (1, 1).
  const Tensor input = Tensor::Zeros(DType::kFloat32, {1, 2, 7, 7}).value();
  const Tensor filter = Tensor::Zeros(DType::kFloat32, {4, 1, 3, 3}).value();
  KernelAttrs attrs;
  attrs.Set("groups", int64_t{2});
  attrs.Set("strides", std::vector<int64_t>{2, 2});
  attrs.Set("dilations", std::vector<int64_t>{2, 2});
  attrs.Set("padding_algorithm", std::string("SAME"));
  const plan::ConvPlan p = plan::PlanConv(input, filter, attrs).value();
  EXPECT_EQ(p.dil_h, 1);
  EXPECT_EQ(p.dil_w, 1);
  EXPECT_EQ(p.pad_top, 1);
  EXPECT_EQ(p.pad_left, 1);
  EXPECT_EQ(p.out_shape(), (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_EQ(p.col_rows(), 9);  // 1 channel per group x 3 x 3
}

TEST(SharedKernelMathTest, ConvNamesItsPairsAttributeWhenItHasNotTwoValues) {
  const Tensor input = Tensor::Zeros(DType::kFloat32, {1, 1, 4, 4}).value();
  const Tensor filter = Tensor::Zeros(DType::kFloat32, {1, 1, 2, 2}).value();
  KernelAttrs attrs;
  attrs.Set("dilations", std::vector<int64_t>{1, 1, 1});
  const StatusOr<plan::ConvPlan> bad = plan::PlanConv(input, filter, attrs);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "dilations has 3 values, expected 2 (height, width)");
}

// ---- pool windows

TEST(SharedKernelMathTest, AdaptiveWindowsOverlapAsFloorAndCeilPlaceThem) {
  // 5 rows into 3: [0, ceil(5/3) = 2), [floor(5/3) = 1, ceil(10/3) = 4), [floor(10/3) = 3, 5).
  plan::PoolPlan p;
  p.adaptive = true;
  p.h = 5;
  p.w = 5;
  p.oh = 3;
  p.ow = 3;
  const plan::PoolWindow middle = plan::ForwardWindow(p, 1, 2);
  EXPECT_EQ(middle.h0, 1);
  EXPECT_EQ(middle.h1, 4);
  EXPECT_EQ(middle.w0, 3);
  EXPECT_EQ(middle.w1, 5);
  EXPECT_EQ(middle.size, 6);
}

TEST(SharedKernelMathTest, AvgWindowCountsThePaddingUnlessExclusive) {
  // 4x4, kernel 3, stride 2, padding 1: output (0, 0) spans rows and columns [-1, 2), clipped to
  // [0, 2): 4 pixels read; the divisor is 9 with the padding, 4 exclusive.
  plan::PoolPlan p;
  p.h = 4;
  p.w = 4;
  p.kh = 3;
  p.kw = 3;
  p.stride_h = 2;
  p.stride_w = 2;
  p.pad_top = 1;
  p.pad_left = 1;
  p.exclusive = false;
  const plan::PoolWindow padded = plan::ForwardWindow(p, 0, 0);
  EXPECT_EQ(padded.h0, 0);
  EXPECT_EQ(padded.h1, 2);
  EXPECT_EQ(padded.size, 9);
  p.exclusive = true;
  EXPECT_EQ(plan::ForwardWindow(p, 0, 0).size, 4);
  // The max grad's window ends at start + k, clipped to the input only: [1, 4) for output 1.
  const plan::PoolWindow grad = plan::MaxGradWindow(p, 1, 1);
  EXPECT_EQ(grad.h0, 1);
  EXPECT_EQ(grad.h1, 4);
}

// ---- detection

TEST(SharedKernelMathTest, BilinearSampleWeighsTheFourNeighbours) {
  // Map [[1, 2], [3, 4]] at (y 0.5, x 0.25): 0.5 * (0.75 * 1 + 0.25 * 2) + 0.5 * (0.75 * 3 +
  // 0.25 * 4) = 2.25.
  const double map[4] = {1, 2, 3, 4};
  const detection::BilinearSample<double> s =
      detection::SampleAt(0.5, 0.25, int64_t{2}, int64_t{2});
  EXPECT_DOUBLE_EQ(s.w_xy, 0.375);
  EXPECT_DOUBLE_EQ(s.w_xy_, 0.125);
  EXPECT_DOUBLE_EQ(detection::Interpolate(s, map), 2.25);
  // Off the map (below -1): no weight at all.
  EXPECT_EQ(detection::Interpolate(detection::SampleAt(-1.5, 0.0, int64_t{2}, int64_t{2}), map),
            0.0);
}

TEST(SharedKernelMathTest, ScatterIsTheAdjointOfTheSample) {
  // The same point, bin_grad 8 over 2 points: each neighbour gets 8 * weight / 2.
  double grad[4] = {0, 0, 0, 0};
  detection::ScatterBilinear(int64_t{2}, int64_t{2}, 0.5, 0.25, 8.0, 2.0, grad);
  EXPECT_DOUBLE_EQ(grad[0], 1.5);
  EXPECT_DOUBLE_EQ(grad[1], 0.5);
  EXPECT_DOUBLE_EQ(grad[2], 1.5);
  EXPECT_DOUBLE_EQ(grad[3], 0.5);
}

TEST(SharedKernelMathTest, PixelBoxesCountBothEndsInTheirOverlap) {
  // (0, 0, 9, 9) and (5, 5, 14, 14): pixel areas 100, intersection 5 x 5 = 25 -> 25 / 175;
  // normalized: areas 81, intersection 16 -> 16 / 146.
  const float a[4] = {0, 0, 9, 9};
  const float b[4] = {5, 5, 14, 14};
  EXPECT_FLOAT_EQ(detection::Overlap(a, b, false), 25.0f / 175.0f);
  EXPECT_FLOAT_EQ(detection::Overlap(a, b, true), 16.0f / 146.0f);
}

TEST(SharedKernelMathTest, NmsVisitsTiedScoresLastRowFirst) {
  // Rows 0 and 1 are the same box with the same score; row 2 is apart. Paddle's stable ascending
  // sort taken from the back visits row 1 before row 0, keeps it and drops row 0.
  const float boxes[12] = {0, 0, 9, 9, 0, 0, 9, 9, 20, 20, 29, 29};
  const float scores[3] = {0.9f, 0.9f, 0.5f};
  const int64_t kept[3] = {0, 1, 2};
  int64_t selected[3] = {-1, -1, -1};
  ASSERT_EQ(detection::SelectByNms(boxes, scores, kept, 3, 0.5f, 1.0f, 0, true, selected), 2);
  EXPECT_EQ(selected[0], 1);
  EXPECT_EQ(selected[1], 2);
  // post_nms_top_n cuts the list; a threshold of 0 keeps every row.
  EXPECT_EQ(detection::SelectByNms(boxes, scores, kept, 3, 0.5f, 1.0f, 1, true, selected), 1);
  EXPECT_EQ(detection::SelectByNms(boxes, scores, kept, 3, 0.0f, 1.0f, 0, true, selected), 3);
}

}  // namespace
}  // namespace irm::rt
