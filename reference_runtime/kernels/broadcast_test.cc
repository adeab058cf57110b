// Broadcasting helpers: the shape rule and its error, strides, the collapsed walk against a naive
// multi-index walk, and the fixed-order reduction of a gradient back to an operand's shape.
#include "reference_runtime/kernels/broadcast.h"

#include <gtest/gtest.h>

#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using Shape = std::vector<int64_t>;

TEST(BroadcastTest, ShapesFollowTheRightAlignedRule) {
  EXPECT_EQ(BroadcastShapes({2, 3}, {3}).value(), (Shape{2, 3}));
  EXPECT_EQ(BroadcastShapes({4, 1, 5}, {3, 1}).value(), (Shape{4, 3, 5}));
  EXPECT_EQ(BroadcastShapes({}, {2, 1}).value(), (Shape{2, 1}));
  EXPECT_EQ(BroadcastShapes({1}, {0}).value(), (Shape{0}));
  EXPECT_EQ(BroadcastShapes({}, {}).value(), (Shape{}));
  EXPECT_EQ(BroadcastShapes({2, 3}, {4}).status().message(), "x [2, 3] and y [4] do not broadcast");
  EXPECT_EQ(BroadcastShapes({0}, {3}, "out", "out_grad").status().message(),
            "out [0] and out_grad [3] do not broadcast");
}

TEST(BroadcastTest, BroadcastsToAndStrides) {
  EXPECT_TRUE(BroadcastsTo({3}, {2, 3}));
  EXPECT_TRUE(BroadcastsTo({1, 3}, {2, 3}));
  EXPECT_FALSE(BroadcastsTo({2, 3}, {3}));
  EXPECT_FALSE(BroadcastsTo({2}, {2, 3}));
  EXPECT_EQ(BroadcastStrides({3, 1, 5}, {2, 3, 4, 5}), (Shape{0, 5, 0, 1}));
  EXPECT_EQ(BroadcastStrides({}, {2, 3}), (Shape{0, 0}));
}

// Operand offset of output index `i` by multi-index arithmetic (what the walk must reproduce).
int64_t NaiveOffset(int64_t i, const Shape& out, const Shape& shape) {
  const Shape strides = BroadcastStrides(shape, out);
  int64_t offset = 0;
  for (size_t d = out.size(); d-- > 0;) {
    offset += (i % out[d]) * strides[d];
    i /= out[d];
  }
  return offset;
}

TEST(BroadcastTest, WalkVisitsEveryOutputInOrderWithTheRightOffsets) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 3}, {2, 1}},       {{4, 1, 5}, {3, 1}},
      {{1, 1}, {1}},    {{}, {}},      {{2, 1, 3}, {1, 4, 1}}, {{5, 1, 1, 2}, {3, 1, 2}},
      {{0, 3}, {3}},
  };
  for (const auto& shapes : cases) {
    // Named references, not a structured binding: the lambda below captures them, which Clang 14
    // does not parse.
    const Shape& x = shapes.first;
    const Shape& y = shapes.second;
    const Shape out = BroadcastShapes(x, y).value();
    int64_t numel = 1;
    for (int64_t d : out) numel *= d;
    const BroadcastWalk<2> walk = PlanBroadcast<2>(out, {&x, &y});
    int64_t expected_index = 0;
    ForEachBroadcast(walk, [&](int64_t i, const std::array<int64_t, 2>& offsets) {
      EXPECT_EQ(i, expected_index++);
      EXPECT_EQ(offsets[0], NaiveOffset(i, out, x)) << ShapeToString(x) << " at " << i;
      EXPECT_EQ(offsets[1], NaiveOffset(i, out, y)) << ShapeToString(y) << " at " << i;
    });
    EXPECT_EQ(expected_index, numel) << ShapeToString(x) << " " << ShapeToString(y);
  }
}

TEST(BroadcastTest, SameShapesCollapseToOneLoop) {
  const Shape s = {2, 3, 4};
  const BroadcastWalk<2> walk = PlanBroadcast<2>(s, {&s, &s});
  EXPECT_EQ(walk.dims, (Shape{24}));
  const Shape bias = {4};
  EXPECT_EQ(PlanBroadcast<2>(s, {&s, &bias}).dims, (Shape{6, 4}));
}

TEST(BroadcastTest, SumToShapeAddsInIncreasingOutputIndex) {
  const Shape out = {3, 2, 4};
  const Tensor grad = testing::RandomTensor(DType::kFloat64, out, 3);
  const std::vector<double> g = testing::ToDoubles(grad);
  for (const Shape& shape : std::vector<Shape>{{3, 2, 4}, {4}, {2, 1}, {3, 1, 1}, {}, {1, 1, 4}}) {
    // Naive: each operand element's terms, in increasing output index, summed left to right.
    std::vector<double> expected(
        static_cast<size_t>(Tensor::ZerosUnchecked(DType::kFloat64, shape).numel()), 0.0);
    for (int64_t i = 0; i < 24; ++i) {
      expected[static_cast<size_t>(NaiveOffset(i, out, shape))] += g[static_cast<size_t>(i)];
    }
    const Tensor sum = SumToShape<double, 1>(
        out, {&shape}, [&](int64_t i, const std::array<int64_t, 1>&) { return g[i]; });
    ASSERT_EQ(sum.shape(), shape);
    EXPECT_EQ(testing::ToDoubles(sum), expected) << ShapeToString(shape);  // bit for bit
  }
}

TEST(BroadcastTest, SumToShapeAccumulatesHalfInFloat) {
  // 4097 ones: a float16 accumulator sticks at 2048 (2048 + 1 rounds back to 2048); a float one
  // reaches 4097, stored as the nearest float16, 4096.
  const Shape out = {4097};
  const Shape one = {1};
  const Tensor sum = SumToShape<Float16, 1>(
      out, {&one}, [](int64_t, const std::array<int64_t, 1>&) { return 1.0f; });
  EXPECT_EQ(testing::ToDoubles(sum), std::vector<double>{4096.0});
}

}  // namespace
}  // namespace irm::rt
