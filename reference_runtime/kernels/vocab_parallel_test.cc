// The vocabulary-parallel kernels on their own: c_embedding and its grad against naive float64
// lookups and sums written here, the parallel cross entropy of one rank (its all-reduces the
// identity) and of two simulated ranks against a float64 softmax cross entropy, its grad against
// (softmax - one_hot) * loss_grad, and every bad-input message. Multi-rank runs through the
// executors are in legacy_comm_ops_test.cc and pir_comm_ops_test.cc.
#include "reference_runtime/kernels/vocab_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::FromDoubles;
using testing::RandomTensor;
using testing::ToDoubles;
using testing::ToleranceFor;
using Doubles = std::vector<double>;

// One rank: the all-reduces leave the tensors as they are.
const RowAllReduce kOneRank = {.max = [](Tensor&) { return Status::Ok(); },
                               .sum = [](Tensor&) { return Status::Ok(); }};

// ---- c_embedding -------------------------------------------------------------------------------

TEST(CEmbeddingTest, LooksUpTheRanksRowsAndZerosTheRest) {
  // Rank 1 of 3 over a vocabulary of 9: rows 3..5 of the table.
  const Tensor w = RandomTensor(DType::kFloat32, {3, 4}, 7);
  const Doubles wv = ToDoubles(w);
  const Doubles ids = {0, 3, 5, 8, 4, 4, 2, 6};
  for (DType id_type : {DType::kInt64, DType::kInt32}) {
    const Tensor x = FromDoubles(ids, {2, 4}, id_type);
    StatusOr<Tensor> out = CEmbedding(w, x, 3, 9);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    Doubles want;
    for (double id : ids) {
      const bool here = id >= 3 && id < 6;
      for (int j = 0; j < 4; ++j)
        want.push_back(here ? wv[static_cast<size_t>(id - 3) * 4 + j] : 0);
    }
    EXPECT_EQ(out->shape(), (std::vector<int64_t>{2, 4, 4}));
    EXPECT_EQ(out->dtype(), DType::kFloat32);
    EXPECT_EQ(ToDoubles(*out), want);  // rows are copied: exactly
  }
}

TEST(CEmbeddingTest, VocabSizeMinusOneChecksOnlyNegativeIds) {
  const Tensor w = FromDoubles({1, 2, 3, 4}, {2, 2}, DType::kFloat64);
  StatusOr<Tensor> out = CEmbedding(w, FromDoubles({1000, 0}, {2}, DType::kInt64), 0, -1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(ToDoubles(*out), (Doubles{0, 0, 1, 2}));
}

TEST(CEmbeddingTest, BadInputsAreErrors) {
  const Tensor w = FromDoubles({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  const Tensor ids = FromDoubles({0, 1}, {2}, DType::kInt64);
  const auto message = [](const StatusOr<Tensor>& r) { return r.status().message(); };
  EXPECT_EQ(message(CEmbedding(w, FromDoubles({0, 1}, {2}, DType::kFloat32), 0, -1)),
            "c_embedding: ids float32[2] must be int32 or int64");
  EXPECT_EQ(message(CEmbedding(FromDoubles({1, 2}, {2}, DType::kFloat32), ids, 0, -1)),
            "c_embedding: weight float32[2] must be 2-D [rows, width] with rows and width");
  EXPECT_EQ(message(CEmbedding(FromDoubles({1, 2}, {2, 1}, DType::kInt64), ids, 0, -1)),
            "c_embedding: weight int64[2, 1] must be a float tensor");
  EXPECT_EQ(message(CEmbedding(w, ids, -1, -1)), "c_embedding: start_index -1 is negative");
  EXPECT_EQ(message(CEmbedding(w, FromDoubles({0, -2}, {2}, DType::kInt64), 0, 4)),
            "c_embedding: ids[1] = -2 is negative");
  EXPECT_EQ(message(CEmbedding(w, FromDoubles({4, 0}, {2}, DType::kInt32), 2, 4)),
            "c_embedding: ids[0] = 4 is not below vocab_size 4");
}

TEST(CEmbeddingGradTest, AccumulatesTheRowsOfItsIdsInIdOrder) {
  // Rank 0 of 2 over a vocabulary of 6: rows 0..2; ids 1 and 2 repeat.
  const Tensor w = RandomTensor(DType::kFloat32, {3, 5}, 11);
  const Doubles ids = {1, 4, 2, 1, 5, 2, 1, 0};
  const Tensor x = FromDoubles(ids, {4, 2}, DType::kInt64);
  const Tensor g = RandomTensor(DType::kFloat32, {4, 2, 5}, 12, -2, 2);
  const Doubles gv = ToDoubles(g);
  Doubles want(15, 0.0);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= 3) continue;
    for (size_t j = 0; j < 5; ++j) want[static_cast<size_t>(ids[i]) * 5 + j] += gv[i * 5 + j];
  }
  StatusOr<Tensor> w_grad = CEmbeddingGrad(w, x, g, 0);
  ASSERT_TRUE(w_grad.ok()) << w_grad.status().ToString();
  ExpectClose(*w_grad, want, {3, 5}, ToleranceFor(DType::kFloat32), "w_grad");

  // The float32 sum in id order: 1e8 + 1 - 1e8 is 0 in that order, 1 in others.
  const Tensor big = FromDoubles({1e8, 1, -1e8}, {3, 1}, DType::kFloat32);
  StatusOr<Tensor> ordered = CEmbeddingGrad(FromDoubles({0}, {1, 1}, DType::kFloat32),
                                            FromDoubles({7, 7, 7}, {3}, DType::kInt32), big, 7);
  ASSERT_TRUE(ordered.ok()) << ordered.status().ToString();
  EXPECT_EQ(ToDoubles(*ordered), (Doubles{0}));
}

TEST(CEmbeddingGradTest, BadInputsAreErrors) {
  const Tensor w = FromDoubles({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  const Tensor ids = FromDoubles({0, 1}, {2}, DType::kInt64);
  StatusOr<Tensor> r = CEmbeddingGrad(w, ids, FromDoubles({1, 2}, {2, 1}, DType::kFloat32), 0);
  EXPECT_EQ(r.status().message(),
            "c_embedding_grad: out_grad float32[2, 1] should be float32[2, 2] (ids' shape, then "
            "the width of weight float32[2, 2])");
  r = CEmbeddingGrad(w, FromDoubles({0, 1}, {2}, DType::kFloat64),
                     FromDoubles({1, 2, 3, 4}, {2, 2}, DType::kFloat32), 0);
  EXPECT_EQ(r.status().message(), "c_embedding_grad: ids float64[2] must be int32 or int64");
}

// ---- c_softmax_with_cross_entropy --------------------------------------------------------------

// Softmax cross entropy over rows of `classes` values in float64, from the definition (shifted
// by the row max so that the reference stays finite).
struct NaiveCrossEntropy {
  Doubles softmax;
  Doubles loss;
};
NaiveCrossEntropy Naive(const Doubles& logits, const Doubles& labels, int64_t classes,
                        int64_t ignore_index) {
  NaiveCrossEntropy r;
  const size_t n = labels.size();
  for (size_t i = 0; i < n; ++i) {
    const double* row = logits.data() + i * static_cast<size_t>(classes);
    const double max = *std::max_element(row, row + classes);
    double sum = 0;
    for (int64_t j = 0; j < classes; ++j) sum += std::exp(row[j] - max);
    for (int64_t j = 0; j < classes; ++j) r.softmax.push_back(std::exp(row[j] - max) / sum);
    const int64_t label = static_cast<int64_t>(labels[i]);
    r.loss.push_back(label == ignore_index ? 0.0 : std::log(sum) - (row[label] - max));
  }
  return r;
}

// The columns [begin, begin + width) of every row of `rows` x `cols` values.
Doubles Columns(const Doubles& values, int64_t cols, int64_t begin, int64_t width) {
  Doubles out;
  for (size_t i = 0; i < values.size() / static_cast<size_t>(cols); ++i) {
    for (int64_t j = begin; j < begin + width; ++j) {
      out.push_back(values[i * static_cast<size_t>(cols) + static_cast<size_t>(j)]);
    }
  }
  return out;
}

TEST(CSoftmaxWithCrossEntropyTest, OneRankIsTheSoftmaxCrossEntropy) {
  const Doubles labels = {0, 6, 3, -100, 2, 5};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor logits = RandomTensor(dtype, {2, 3, 7}, 21, -4, 4);
    const NaiveCrossEntropy want = Naive(ToDoubles(logits), labels, 7, -100);
    for (DType label_type : {DType::kInt64, DType::kInt32}) {
      StatusOr<SoftmaxAndLoss> r = CSoftmaxWithCrossEntropy(
          logits, FromDoubles(labels, {2, 3, 1}, label_type), -100, 0, 1, kOneRank);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      // float16 rounds each of Paddle's intermediate steps: a few of its units.
      const double tol = dtype == DType::kFloat16 ? 1e-2 : ToleranceFor(dtype);
      ExpectClose(r->softmax, want.softmax, {2, 3, 7}, tol, "softmax");
      ExpectClose(r->loss, want.loss, {2, 3, 1}, tol, "loss");
      EXPECT_EQ(ToDoubles(r->loss)[3], 0.0);  // ignore_index
    }
  }
}

// Rank 1 of 2, its all-reduces adding what rank 0 (the first 3 columns) contributes, computed
// here in float64 from the global max the max all-reduce finds.
TEST(CSoftmaxWithCrossEntropyTest, RankOneGivesItsColumnsOfTheWholeSoftmax) {
  const Tensor whole = RandomTensor(DType::kFloat64, {4, 6}, 31, -3, 3);
  const Doubles wv = ToDoubles(whole);
  const Doubles labels = {1, 4, -1, 5};
  const NaiveCrossEntropy want = Naive(wv, labels, 6, -1);
  const Doubles rank0 = Columns(wv, 6, 0, 3);
  Doubles global_max;
  int sums = 0;
  const RowAllReduce reduce = {
      .max =
          [&](Tensor& t) {
            Doubles m = ToDoubles(t);
            for (size_t i = 0; i < m.size(); ++i) {
              m[i] = std::max({m[i], rank0[i * 3], rank0[i * 3 + 1], rank0[i * 3 + 2]});
            }
            global_max = m;
            t = FromDoubles(m, t.shape(), t.dtype());
            return Status::Ok();
          },
      .sum =
          [&](Tensor& t) {
            Doubles v = ToDoubles(t);
            for (size_t i = 0; i < v.size(); ++i) {
              double other = 0;
              if (sums == 0) {  // the label logit: rank 0 holds labels 0..2
                if (labels[i] >= 0 && labels[i] < 3) {
                  other = rank0[i * 3 + static_cast<size_t>(labels[i])] - global_max[i];
                }
              } else {  // the exp sum
                for (size_t j = 0; j < 3; ++j) other += std::exp(rank0[i * 3 + j] - global_max[i]);
              }
              v[i] = other + v[i];
            }
            ++sums;
            t = FromDoubles(v, t.shape(), t.dtype());
            return Status::Ok();
          }};
  const Tensor part1 = FromDoubles(Columns(wv, 6, 3, 3), {4, 3}, DType::kFloat64);
  StatusOr<SoftmaxAndLoss> r =
      CSoftmaxWithCrossEntropy(part1, FromDoubles(labels, {4, 1}, DType::kInt64), -1, 1, 2, reduce);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(sums, 2);
  ExpectClose(r->softmax, Columns(want.softmax, 6, 3, 3), {4, 3}, 1e-12, "rank 1 softmax");
  ExpectClose(r->loss, want.loss, {4, 1}, 1e-12, "loss");
  EXPECT_EQ(ToDoubles(r->loss)[2], 0.0);  // ignore_index -1
}

TEST(CSoftmaxWithCrossEntropyTest, AnInfiniteLossIsClippedAsPaddleClipsIt) {
  // The label's shifted logit -3e38 - 3e38 overflows to -inf in float32, so log(sum) - it is
  // +inf: Paddle's TolerableValue makes that 1e20 (a float32 1e20).
  const Tensor overflow = Tensor::FromVector<float>({3e38f, -3e38f}, {1, 2});
  StatusOr<SoftmaxAndLoss> r = CSoftmaxWithCrossEntropy(
      overflow, FromDoubles({1}, {1, 1}, DType::kInt64), -100, 0, 1, kOneRank);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ToDoubles(r->loss)[0], static_cast<double>(static_cast<float>(1e20)));
  // exp(-200) underflows to 0 in float32, yet the loss is the exact 200: it comes from the
  // shifted logit, not from log(softmax).
  const Tensor far = Tensor::FromVector<float>({0.0f, -200.0f}, {1, 2});
  r = CSoftmaxWithCrossEntropy(far, FromDoubles({1}, {1, 1}, DType::kInt64), -100, 0, 1, kOneRank);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ToDoubles(r->loss)[0], 200.0);
  EXPECT_EQ(ToDoubles(r->softmax), (Doubles{1.0, 0.0}));
}

TEST(CSoftmaxWithCrossEntropyTest, BadInputsAreErrors) {
  const Tensor logits = FromDoubles({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  const Tensor label = FromDoubles({0, 1}, {2, 1}, DType::kInt64);
  const auto message = [](const StatusOr<SoftmaxAndLoss>& r) { return r.status().message(); };
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(logits, label, -100, 2, 2, kOneRank)),
            "c_softmax_with_cross_entropy: rank 2 is not in [0, nranks 2)");
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(logits, label, -100, 0, 0, kOneRank)),
            "c_softmax_with_cross_entropy: rank 0 is not in [0, nranks 0)");
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(logits, FromDoubles({0, 1}, {2, 1}, DType::kFloat32),
                                             -100, 0, 1, kOneRank)),
            "label is float32, expected int64 or int32");
  EXPECT_EQ(
      message(CSoftmaxWithCrossEntropy(logits, FromDoubles({0, 1, 0, 1}, {2, 2}, DType::kInt64),
                                       -100, 0, 1, kOneRank)),
      "label has shape [2, 2], expected [2, 1] (logits's shape with the last dim 1: one global "
      "class per row)");
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(FromDoubles({1, 2}, {2}, DType::kInt32), label, -100,
                                             0, 1, kOneRank)),
            "logits is int32, expected float32, float64 or float16");
  // Two ranks of 2 classes: labels 0..3; 4 is no class.
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(logits, FromDoubles({4, 1}, {2, 1}, DType::kInt64),
                                             -100, 0, 2, kOneRank)),
            "c_softmax_with_cross_entropy: label[0] = 4 is not in [0, 4) nor ignore_index -100");
  // A failing all-reduce is the op's failure.
  const RowAllReduce broken = {
      .max = [](Tensor&) { return Status(StatusCode::kInternal, Location{}, "ring broke"); },
      .sum = [](Tensor&) { return Status::Ok(); }};
  EXPECT_EQ(message(CSoftmaxWithCrossEntropy(logits, label, -100, 0, 1, broken)), "ring broke");
}

TEST(CSoftmaxWithCrossEntropyGradTest, IsSoftmaxMinusTheLocalOneHotTimesTheLossGrad) {
  // Rank 1 of 2, 3 local classes: global labels 3..5 are its columns 0..2.
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor softmax = RandomTensor(dtype, {2, 2, 3}, 41, 0, 1);
    const Tensor loss_grad = RandomTensor(dtype, {2, 2, 1}, 42, -2, 2);
    const Doubles labels = {4, 0, -100, 5};
    const Doubles p = ToDoubles(softmax);
    const Doubles g = ToDoubles(loss_grad);
    Doubles want;
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 3; ++j) {
        const bool ignored = labels[i] == -100;
        const double one_hot = labels[i] == static_cast<double>(3 + j) ? 1.0 : 0.0;
        want.push_back(ignored ? 0.0 : (p[i * 3 + j] - one_hot) * g[i]);
      }
    }
    StatusOr<Tensor> r = CSoftmaxWithCrossEntropyGrad(
        softmax, FromDoubles(labels, {2, 2, 1}, DType::kInt64), loss_grad, -100, 1, 2);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const double tol = dtype == DType::kFloat16 ? 2e-3 : ToleranceFor(dtype);
    ExpectClose(*r, want, {2, 2, 3}, tol, "logits_grad");
  }
}

TEST(CSoftmaxWithCrossEntropyGradTest, BadInputsAreErrors) {
  const Tensor softmax = FromDoubles({0.5, 0.5}, {1, 2}, DType::kFloat32);
  const Tensor label = FromDoubles({1}, {1, 1}, DType::kInt64);
  StatusOr<Tensor> r = CSoftmaxWithCrossEntropyGrad(
      softmax, label, FromDoubles({1}, {1, 1}, DType::kFloat64), -100, 0, 1);
  EXPECT_EQ(r.status().message(), "loss_grad is float64, expected float32");
  r = CSoftmaxWithCrossEntropyGrad(softmax, label, FromDoubles({1, 1}, {2, 1}, DType::kFloat32),
                                   -100, 0, 1);
  EXPECT_EQ(r.status().message(),
            "loss_grad has shape [2, 1], expected [1, 1] (the shape of loss)");
  r = CSoftmaxWithCrossEntropyGrad(softmax, label, FromDoubles({1}, {1, 1}, DType::kFloat32), -100,
                                   3, 2);
  EXPECT_EQ(r.status().message(),
            "c_softmax_with_cross_entropy_grad: rank 3 is not in [0, nranks 2)");
}

}  // namespace
}  // namespace irm::rt
