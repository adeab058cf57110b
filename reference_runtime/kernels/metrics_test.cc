// topk, topk_v1 and accuracy against references written here: top-k by sorting (value, index)
// pairs in float64 (ties lowest index first, NaN largest), accuracy by counting; the errors.
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

TEST(TopkTest, MatchesASortAlongEveryAxisLargestAndSmallest) {
  uint64_t seed = 5;
  const std::vector<int64_t> shape = {3, 5, 4};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    for (int64_t axis : {0, 1, -1}) {
      for (bool largest : {true, false}) {
        // Integers drawn from a small range: ties are frequent.
        const Tensor x = RandomTensor(dtype, shape, ++seed, -3, 3);
        const std::vector<double> xv = ToDoubles(x);
        const int a = axis < 0 ? 2 : static_cast<int>(axis);
        const int64_t k = shape[a] - 1;
        std::vector<int64_t> out_shape = shape;
        out_shape[a] = k;
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < a; ++d) outer *= shape[d];
        for (int d = a + 1; d < 3; ++d) inner *= shape[d];
        std::vector<double> want_v, want_i(static_cast<size_t>(outer * k * inner));
        want_v.resize(want_i.size());
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t in = 0; in < inner; ++in) {
            std::vector<std::pair<double, int64_t>> col;
            for (int64_t j = 0; j < shape[a]; ++j)
              col.emplace_back(xv[(o * shape[a] + j) * inner + in], j);
            std::stable_sort(col.begin(), col.end(), [&](const auto& l, const auto& r) {
              return largest ? l.first > r.first : l.first < r.first;
            });
            for (int64_t j = 0; j < k; ++j) {
              want_v[(o * k + j) * inner + in] = col[j].first;
              want_i[(o * k + j) * inner + in] = double(col[j].second);
            }
          }
        KernelAttrs attrs;
        attrs.Set("k", k);
        attrs.Set("axis", axis);
        attrs.Set("largest", largest);
        const std::vector<Tensor> out = RunKernel("topk", dtype, {&x}, attrs, 2);
        ASSERT_EQ(out.size(), 2u);
        const std::string where = std::string(DTypeName(dtype)) + " axis " + std::to_string(axis);
        ExpectClose(out[0], want_v, out_shape, 0, where + " out");
        ExpectClose(out[1], want_i, out_shape, 0, where + " indices");
        EXPECT_EQ(out[1].dtype(), DType::kInt64);
      }
    }
  }
}

TEST(TopkTest, V1IsTheLastAxisLargestAndNanCountsAsLargest) {
  const Tensor x = Tensor::FromVector(std::vector<float>{1, NAN, 3, 3, 0, 7}, {2, 3});
  KernelAttrs attrs;
  attrs.Set("k", int64_t{2});
  const std::vector<Tensor> out = RunKernel("topk_v1", DType::kFloat32, {&x}, attrs, 2);
  const std::vector<double> v = ToDoubles(out[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 3.0);
  EXPECT_EQ((std::vector<double>{v[2], v[3]}), (std::vector<double>{7, 3}));
  ExpectClose(out[1], {1, 2, 2, 0}, {2, 2}, 0, "indices");
}

TEST(TopkTest, KOutOfRangeIsAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  KernelAttrs attrs;
  attrs.Set("k", int64_t{4});
  auto r = TryRunKernel("topk", DType::kFloat32, {&x}, attrs, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "k is 4, expected 1 to 3 (the size of axis 1)");
}

TEST(AccuracyTest, CountsTheSamplesWhoseLabelIsAmongTheirTopK) {
  const Tensor x = RandomTensor(DType::kFloat32, {4, 2}, 1);
  const Tensor indices = Tensor::FromVector(std::vector<int64_t>{0, 3, 2, 1, 5, 4, 1, 0}, {4, 2});
  const Tensor label = Tensor::FromVector(std::vector<int64_t>{3, 0, 4, 1}, {4, 1});
  const std::vector<Tensor> out =
      RunKernel("accuracy", DType::kFloat32, {&x, &indices, &label}, {}, 3);
  ASSERT_EQ(out.size(), 3u);
  // Samples 0 (3 in {0, 3}), 2 (4 in {5, 4}) and 3 (1 in {1, 0}): 3 of 4.
  ExpectClose(out[0], {0.75}, {}, 0, "accuracy");
  ExpectClose(out[1], {3}, {}, 0, "correct");
  ExpectClose(out[2], {4}, {}, 0, "total");
  EXPECT_EQ(out[0].dtype(), DType::kFloat32);
  EXPECT_EQ(out[1].dtype(), DType::kInt32);
}

TEST(AccuracyTest, ANegativeLabelIsAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {1, 1}, 1);
  const Tensor indices = Tensor::FromVector(std::vector<int64_t>{0}, {1, 1});
  const Tensor label = Tensor::FromVector(std::vector<int64_t>{-1}, {1, 1});
  auto r = TryRunKernel("accuracy", DType::kFloat32, {&x, &indices, &label}, {}, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "label[0] is -1, expected >= 0");
}

}  // namespace
}  // namespace irm::rt
