// The vocabulary-parallel ops on 2 and 4 ranks of the thread world, in both executors: the sharded
// c_embedding + c_allreduce_sum equals lookup_table_v2 on the whole table and c_embedding_grad
// equals the whole table's gradient rows (bit for bit: one rank contributes each value); the
// parallel cross entropy's loss and softmax equal softmax_with_cross_entropy on the concatenated
// logits, and its grad the serial grad's columns, within the reordered tier of docs/parity.md
// (the global sums run in another order); the legacy and the hand-written new-IR programs agree
// bit for bit with the same communication trace; and bad attributes or ids are located errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::DenseVar;
using testing::FeedOp;
using testing::Fetched;
using testing::FetchOp;
using testing::IntAttr;
using testing::LongAttr;
using testing::MakeWorld;
using testing::OneBlock;
using testing::OpText;
using testing::RankRuns;
using testing::RunLegacy;
using testing::RunPir;
using testing::ToDoubles;
using Doubles = std::vector<double>;

constexpr int64_t kVocab = 12;
constexpr int64_t kWidth = 4;
constexpr int64_t kRows = 6;  // cross-entropy rows

// The columns [begin, begin + width) of a [rows, cols] tensor.
Tensor Columns(const Tensor& t, int64_t begin, int64_t width) {
  const Doubles v = ToDoubles(t);
  const int64_t cols = t.shape().back();
  Doubles out;
  for (int64_t i = 0; i < t.numel() / cols; ++i) {
    for (int64_t j = begin; j < begin + width; ++j)
      out.push_back(v[static_cast<size_t>(i * cols + j)]);
  }
  std::vector<int64_t> shape = t.shape();
  shape.back() = width;
  return testing::FromDoubles(out, shape, t.dtype());
}

// Rows [begin, begin + count) of a [rows, cols] tensor.
Tensor Rows(const Tensor& t, int64_t begin, int64_t count) {
  StatusOr<Tensor> rows = t.Slice(begin, begin + count);
  EXPECT_TRUE(rows.ok());
  return rows.ok() ? rows->Clone() : Tensor();
}

// The reordered tier for float32 (docs/parity.md): ||a - b|| / ||b|| <= 1e-5 and every
// |a - b| <= 1e-5 * max|b| + 1e-4 * |b|.
void ExpectReordered(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const Doubles a = ToDoubles(actual);
  const Doubles b = ToDoubles(expected);
  double diff2 = 0;
  double norm2 = 0;
  double max_b = 0;
  for (double v : b) max_b = std::max(max_b, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    diff2 += (a[i] - b[i]) * (a[i] - b[i]);
    norm2 += b[i] * b[i];
    EXPECT_LE(std::abs(a[i] - b[i]), 1e-5 * max_b + 1e-4 * std::abs(b[i]))
        << what << " [" << i << "]: " << a[i] << " vs " << b[i];
  }
  EXPECT_LE(std::sqrt(diff2), 1e-5 * std::sqrt(norm2)) << what;
}

// ---- c_embedding ----------------------------------------------------------------------------

// Rank r of n: its rows of the table as W; out all-reduced; the table gradient of dout.
std::string LegacyEmbedding(int rank, int n) {
  const int64_t rows = kVocab / n;
  const std::vector<std::string> attrs = {LongAttr("start_index", rank * rows),
                                          LongAttr("vocab_size", kVocab)};
  return OneBlock(
      DenseVar("ids", "INT64", {2, 3}) + DenseVar("w", "FP32", {rows, kWidth}) +
      DenseVar("dout", "FP32", {2, 3, kWidth}) + DenseVar("out", "FP32", {2, 3, kWidth}) +
      DenseVar("w@GRAD", "FP32", {rows, kWidth}) + FeedOp("ids", 0) + FeedOp("w", 1) +
      FeedOp("dout", 2) +
      OpText("c_embedding", {{"W", {"w"}}, {"Ids", {"ids"}}}, {{"Out", {"out"}}}, attrs) +
      OpText("c_allreduce_sum", {{"X", {"out"}}}, {{"Out", {"out"}}}, {IntAttr("ring_id", 0)}) +
      OpText("c_embedding_grad", {{"W", {"w"}}, {"Ids", {"ids"}}, {"Out@GRAD", {"dout"}}},
             {{"W@GRAD", {"w@GRAD"}}}, attrs) +
      FetchOp("out", 0) + FetchOp("w@GRAD", 1));
}

std::string PirEmbedding(int rank, int n) {
  const int64_t rows = kVocab / n;
  return fmt::format(R"({{
    (%0) = "pd_op.data" () {{dtype:int64,name:"ids",place:Place(cpu),shape:[2,3],stop_gradient:[true]}} : () -> tensor<2x3xi64>
    (%1) = "pd_op.data" () {{dtype:float32,name:"w",place:Place(cpu),shape:[{0},4],stop_gradient:[true]}} : () -> tensor<{0}x4xf32>
    (%2) = "pd_op.data" () {{dtype:float32,name:"dout",place:Place(cpu),shape:[2,3,4],stop_gradient:[true]}} : () -> tensor<2x3x4xf32>
    (%3) = "pd_op.c_embedding" (%1, %0) {{start_index:(Int64){1},vocab_size:(Int64)12}} : (tensor<{0}x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    (%4) = "pd_op.c_allreduce_sum_" (%3) {{ring_id:0}} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    (%5) = "pd_op.c_embedding_grad" (%1, %0, %2) {{start_index:(Int64){1}}} : (tensor<{0}x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<{0}x4xf32>
    (%6) = "pd_op.fetch" (%4) {{col:0,name:"out"}} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    (%7) = "pd_op.fetch" (%5) {{col:1,name:"w@GRAD"}} : (tensor<{0}x4xf32>) -> tensor<{0}x4xf32>
}})",
                     rows, rank * rows);
}

TEST(VocabParallelTest, ShardedEmbeddingIsTheWholeTablesLookupBitForBit) {
  const Tensor table = testing::RandomTensor(DType::kFloat32, {kVocab, kWidth}, 51);
  // Every id of the vocabulary at least once; 7 and 2 twice, so that gradient rows accumulate.
  const Tensor ids = testing::FromDoubles({0, 7, 11, 2, 5, 9}, {2, 3}, DType::kInt64);
  const Tensor ids2 = testing::FromDoubles({3, 7, 2, 10, 1, 4}, {2, 3}, DType::kInt64);
  const Tensor dout = testing::RandomTensor(DType::kFloat32, {2, 3, kWidth}, 52, -2, 2);
  for (const Tensor* x : {&ids, &ids2}) {
    // The serial program: lookup_table_v2 and its grad on the whole table.
    auto serial_world = MakeWorld(1);
    ASSERT_NE(serial_world, nullptr);
    const std::string serial = OneBlock(
        DenseVar("ids", "INT64", {2, 3}) + DenseVar("w", "FP32", {kVocab, kWidth}) +
        DenseVar("dout", "FP32", {2, 3, kWidth}) + DenseVar("out", "FP32", {2, 3, kWidth}) +
        DenseVar("w@GRAD", "FP32", {kVocab, kWidth}) + FeedOp("ids", 0) + FeedOp("w", 1) +
        FeedOp("dout", 2) +
        OpText("lookup_table_v2", {{"W", {"w"}}, {"Ids", {"ids"}}}, {{"Out", {"out"}}}, {}) +
        OpText("lookup_table_v2_grad", {{"W", {"w"}}, {"Ids", {"ids"}}, {"Out@GRAD", {"dout"}}},
               {{"W@GRAD", {"w@GRAD"}}}, {}) +
        FetchOp("out", 0) + FetchOp("w@GRAD", 1));
    const RankRuns whole =
        RunLegacy(*serial_world, {serial}, {{{"ids", *x}, {"w", table}, {"dout", dout}}});
    ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();

    for (int n : {2, 4}) {
      SCOPED_TRACE(fmt::format("{} ranks", n));
      ThreadWorldOptions options;
      options.trace = true;
      auto world = MakeWorld(n, {}, options);
      ASSERT_NE(world, nullptr);
      const int64_t rows = kVocab / n;
      std::vector<std::string> legacy_texts;
      std::vector<std::string> pir_texts;
      std::vector<FeedMap> feeds;
      for (int r = 0; r < n; ++r) {
        legacy_texts.push_back(LegacyEmbedding(r, n));
        pir_texts.push_back(PirEmbedding(r, n));
        feeds.push_back({{"ids", *x}, {"w", Rows(table, r * rows, rows)}, {"dout", dout}});
      }
      const RankRuns legacy = RunLegacy(*world, legacy_texts, feeds);
      ASSERT_TRUE(legacy.status.ok()) << legacy.status.ToString();
      std::vector<CommTrace> legacy_traces;
      for (int r = 0; r < n; ++r) legacy_traces.push_back(*world->trace(r));
      const RankRuns pir = RunPir(*world, pir_texts, feeds);
      ASSERT_TRUE(pir.status.ok()) << pir.status.ToString();
      for (int r = 0; r < n; ++r) {
        const Tensor out = Fetched(legacy, r, "out");
        EXPECT_TRUE(out.BitwiseEqual(Fetched(whole, 0, "out"))) << "rank " << r;
        EXPECT_TRUE(Fetched(legacy, r, "w@GRAD")
                        .BitwiseEqual(Rows(Fetched(whole, 0, "w@GRAD"), r * rows, rows)))
            << "rank " << r;
        EXPECT_TRUE(Fetched(pir, r, "out").BitwiseEqual(out)) << "rank " << r;
        EXPECT_TRUE(Fetched(pir, r, "w@GRAD").BitwiseEqual(Fetched(legacy, r, "w@GRAD")))
            << "rank " << r;
        EXPECT_EQ(FirstCommDifference(legacy_traces[static_cast<size_t>(r)], *world->trace(r)),
                  std::nullopt);
        EXPECT_EQ(world->trace(r)->records().size(), 1u);  // c_embedding itself is local
      }
    }
  }
}

// ---- c_softmax_with_cross_entropy -----------------------------------------------------------

std::vector<std::string> CrossEntropyAttrs(int rank, int n, int ring_id = 0) {
  return {IntAttr("ring_id", ring_id), IntAttr("rank", rank), IntAttr("nranks", n),
          LongAttr("ignore_index", -100)};
}

std::string LegacyCrossEntropy(int64_t classes, const std::vector<std::string>& attrs,
                               const std::string& label_type = "INT64") {
  return OneBlock(
      DenseVar("logits", "FP32", {kRows, classes}) + DenseVar("label", label_type, {kRows, 1}) +
      DenseVar("loss@GRAD", "FP32", {kRows, 1}) + DenseVar("softmax", "FP32", {kRows, classes}) +
      DenseVar("loss", "FP32", {kRows, 1}) + DenseVar("logits@GRAD", "FP32", {kRows, classes}) +
      FeedOp("logits", 0) + FeedOp("label", 1) + FeedOp("loss@GRAD", 2) +
      OpText("c_softmax_with_cross_entropy", {{"Logits", {"logits"}}, {"Label", {"label"}}},
             {{"Softmax", {"softmax"}}, {"Loss", {"loss"}}}, attrs) +
      OpText("c_softmax_with_cross_entropy_grad",
             {{"Softmax", {"softmax"}}, {"Label", {"label"}}, {"Loss@GRAD", {"loss@GRAD"}}},
             {{"Logits@GRAD", {"logits@GRAD"}}}, attrs) +
      FetchOp("loss", 0) + FetchOp("softmax", 1) + FetchOp("logits@GRAD", 2));
}

std::string PirCrossEntropy(int64_t classes, int rank, int n) {
  return fmt::format(R"({{
    (%0) = "pd_op.data" () {{dtype:float32,name:"logits",place:Place(cpu),shape:[6,{0}],stop_gradient:[true]}} : () -> tensor<6x{0}xf32>
    (%1) = "pd_op.data" () {{dtype:int64,name:"label",place:Place(cpu),shape:[6,1],stop_gradient:[true]}} : () -> tensor<6x1xi64>
    (%2) = "pd_op.data" () {{dtype:float32,name:"loss@GRAD",place:Place(cpu),shape:[6,1],stop_gradient:[true]}} : () -> tensor<6x1xf32>
    (%3, %4) = "pd_op.c_softmax_with_cross_entropy" (%0, %1) {{ignore_index:(Int64)-100,nranks:{2},rank:{1},ring_id:0}} : (tensor<6x{0}xf32>, tensor<6x1xi64>) -> tensor<6x{0}xf32>, tensor<6x1xf32>
    (%5) = "pd_op.c_softmax_with_cross_entropy_grad" (%3, %1, %2) {{ignore_index:(Int64)-100,nranks:{2},rank:{1},ring_id:0}} : (tensor<6x{0}xf32>, tensor<6x1xi64>, tensor<6x1xf32>) -> tensor<6x{0}xf32>
    (%6) = "pd_op.fetch" (%4) {{col:0,name:"loss"}} : (tensor<6x1xf32>) -> tensor<6x1xf32>
    (%7) = "pd_op.fetch" (%3) {{col:1,name:"softmax"}} : (tensor<6x{0}xf32>) -> tensor<6x{0}xf32>
    (%8) = "pd_op.fetch" (%5) {{col:2,name:"logits@GRAD"}} : (tensor<6x{0}xf32>) -> tensor<6x{0}xf32>
}})",
                     classes, rank, n);
}

TEST(VocabParallelTest, ParallelCrossEntropyIsTheSerialOneOnTheConcatenatedLogits) {
  const Tensor logits = testing::RandomTensor(DType::kFloat32, {kRows, kVocab}, 61, -6, 6);
  // Labels on every rank of 4 (3 classes each), one ignored row.
  const Tensor label = testing::FromDoubles({0, 11, 5, -100, 7, 3}, {kRows, 1}, DType::kInt64);
  const Tensor loss_grad = testing::RandomTensor(DType::kFloat32, {kRows, 1}, 62, 0.5, 2);

  auto serial_world = MakeWorld(1);
  ASSERT_NE(serial_world, nullptr);
  const std::string serial = OneBlock(
      DenseVar("logits", "FP32", {kRows, kVocab}) + DenseVar("label", "INT64", {kRows, 1}) +
      DenseVar("loss@GRAD", "FP32", {kRows, 1}) + DenseVar("softmax", "FP32", {kRows, kVocab}) +
      DenseVar("loss", "FP32", {kRows, 1}) + DenseVar("logits@GRAD", "FP32", {kRows, kVocab}) +
      FeedOp("logits", 0) + FeedOp("label", 1) + FeedOp("loss@GRAD", 2) +
      OpText("softmax_with_cross_entropy", {{"Logits", {"logits"}}, {"Label", {"label"}}},
             {{"Softmax", {"softmax"}}, {"Loss", {"loss"}}}, {IntAttr("ignore_index", -100)}) +
      OpText("softmax_with_cross_entropy_grad",
             {{"Label", {"label"}}, {"Softmax", {"softmax"}}, {"Loss@GRAD", {"loss@GRAD"}}},
             {{"Logits@GRAD", {"logits@GRAD"}}}, {IntAttr("ignore_index", -100)}) +
      FetchOp("loss", 0) + FetchOp("softmax", 1) + FetchOp("logits@GRAD", 2));
  const RankRuns whole = RunLegacy(
      *serial_world, {serial}, {{{"logits", logits}, {"label", label}, {"loss@GRAD", loss_grad}}});
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(whole, 0, "loss"))[3], 0.0);

  for (int n : {2, 4}) {
    SCOPED_TRACE(fmt::format("{} ranks", n));
    ThreadWorldOptions options;
    options.trace = true;
    auto world = MakeWorld(n, {}, options);
    ASSERT_NE(world, nullptr);
    const int64_t classes = kVocab / n;
    std::vector<std::string> legacy_texts;
    std::vector<std::string> pir_texts;
    std::vector<FeedMap> feeds;
    for (int r = 0; r < n; ++r) {
      legacy_texts.push_back(LegacyCrossEntropy(classes, CrossEntropyAttrs(r, n)));
      pir_texts.push_back(PirCrossEntropy(classes, r, n));
      feeds.push_back({{"logits", Columns(logits, r * classes, classes)},
                       {"label", label},
                       {"loss@GRAD", loss_grad}});
    }
    const RankRuns legacy = RunLegacy(*world, legacy_texts, feeds);
    ASSERT_TRUE(legacy.status.ok()) << legacy.status.ToString();
    std::vector<CommTrace> legacy_traces;
    for (int r = 0; r < n; ++r) legacy_traces.push_back(*world->trace(r));
    const RankRuns pir = RunPir(*world, pir_texts, feeds);
    ASSERT_TRUE(pir.status.ok()) << pir.status.ToString();
    for (int r = 0; r < n; ++r) {
      SCOPED_TRACE(fmt::format("rank {}", r));
      const Tensor loss = Fetched(legacy, r, "loss");
      ExpectReordered(loss, Fetched(whole, 0, "loss"), "loss");
      EXPECT_EQ(ToDoubles(loss)[3], 0.0);
      ExpectReordered(Fetched(legacy, r, "softmax"),
                      Columns(Fetched(whole, 0, "softmax"), r * classes, classes), "softmax");
      ExpectReordered(Fetched(legacy, r, "logits@GRAD"),
                      Columns(Fetched(whole, 0, "logits@GRAD"), r * classes, classes),
                      "logits@GRAD");
      // Every rank holds the same loss: the all-reduces give every rank the same bits.
      EXPECT_TRUE(loss.BitwiseEqual(Fetched(legacy, 0, "loss")));
      for (const char* name : {"loss", "softmax", "logits@GRAD"}) {
        EXPECT_TRUE(Fetched(pir, r, name).BitwiseEqual(Fetched(legacy, r, name))) << name;
      }
      EXPECT_EQ(FirstCommDifference(legacy_traces[static_cast<size_t>(r)], *world->trace(r)),
                std::nullopt);
      // max, then the label logit and the exp sums; the grad communicates nothing.
      ASSERT_EQ(world->trace(r)->records().size(), 3u);
    }
  }
}

// ---- errors ---------------------------------------------------------------------------------

TEST(VocabParallelTest, BadAttributesAndIdsAreLocatedErrors) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const Tensor logits = testing::RandomTensor(DType::kFloat32, {kRows, 6}, 71);
  const Tensor label = testing::FromDoubles({0, 1, 2, 3, 4, 5}, {kRows, 1}, DType::kInt64);
  const std::vector<FeedMap> feeds(
      2, FeedMap{{"logits", logits},
                 {"label", label},
                 {"loss@GRAD", testing::RandomTensor(DType::kFloat32, {kRows, 1}, 73)}});
  // rank >= nranks.
  RankRuns runs = RunLegacy(*world,
                            {LegacyCrossEntropy(6, CrossEntropyAttrs(0, 2)),
                             LegacyCrossEntropy(6, CrossEntropyAttrs(2, 2))},
                            feeds);
  EXPECT_EQ(runs.status.code(), StatusCode::kInvalid);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 3 (c_softmax_with_cross_entropy): error: rank 2 is not in "
            "[0, nranks 2)");
  // A rank attribute that is not the rank's place in the group (both claim rank 0).
  runs = RunLegacy(*world, {LegacyCrossEntropy(6, CrossEntropyAttrs(0, 2))}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 3 (c_softmax_with_cross_entropy): error: rank 0 of nranks 2 "
            "is not this rank (1 of 2) of process group 0");
  // The maker's nranks default (0) names no group.
  runs = RunLegacy(*world, {LegacyCrossEntropy(6, {IntAttr("rank", 0)})}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 3 (c_softmax_with_cross_entropy): error: rank 0 is not in "
            "[0, nranks 0)");
  // The same in the new IR: located at the op, with its name.
  runs = RunPir(*world, {PirCrossEntropy(6, 0, 2), PirCrossEntropy(6, 2, 2)}, feeds);
  EXPECT_EQ(runs.status.code(), StatusCode::kInvalid);
  EXPECT_EQ(runs.status.ToString(),
            "t.pir: op 3 (pd_op.c_softmax_with_cross_entropy): error: rank 2 is not in [0, "
            "nranks 2)");

  // Ids of a float dtype.
  const Tensor table = testing::RandomTensor(DType::kFloat32, {kVocab / 2, kWidth}, 72);
  const std::string float_ids =
      OneBlock(DenseVar("ids", "FP32", {2, 3}) + DenseVar("w", "FP32", {kVocab / 2, kWidth}) +
               DenseVar("out", "FP32", {2, 3, kWidth}) + FeedOp("ids", 0) + FeedOp("w", 1) +
               OpText("c_embedding", {{"W", {"w"}}, {"Ids", {"ids"}}}, {{"Out", {"out"}}},
                      {LongAttr("start_index", 0)}) +
               FetchOp("out", 0));
  const FeedMap embedding_feed = {
      {"ids", testing::FromDoubles({0, 1, 2, 3, 4, 5}, {2, 3}, DType::kFloat32)}, {"w", table}};
  runs = RunLegacy(*world, {float_ids}, {embedding_feed, embedding_feed});
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 2 (c_embedding): error: c_embedding: ids float32[2, 3] must "
            "be int32 or int64");
}

}  // namespace
}  // namespace irm::rt
