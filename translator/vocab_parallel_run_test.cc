// Tensor-parallel legacy rank programs with the vocabulary-parallel ops — c_embedding,
// c_allreduce_sum and c_embedding_grad; c_softmax_with_cross_entropy and its grad — translated
// in both communication styles and run next to the legacy programs on 2 and 4 ranks of the
// thread world: every fetched tensor is bit-identical and every rank's communication trace is the
// same (parity tier 1, docs/parity.md). The op-compat rows are what is under test: a wrong slot
// or attribute mapping is a different number or a failed run here.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/pir_executor.h"
#include "translator/translate.h"

namespace irm::translator {
namespace {

using rt::testing::DenseVar;
using rt::testing::FeedOp;
using rt::testing::FetchOp;
using rt::testing::IntAttr;
using rt::testing::LongAttr;
using rt::testing::OneBlock;
using rt::testing::OpText;

constexpr int64_t kVocab = 12;

// Rank `rank` of `n`: the sharded embedding of ids, all-reduced, and the table gradient; then the
// parallel cross entropy of this rank's logits columns and its grad.
std::string RankProgram(int rank, int n, int cross_entropy_ring = 0) {
  const int64_t part = kVocab / n;
  const std::vector<std::string> embedding = {LongAttr("start_index", rank * part),
                                              LongAttr("vocab_size", kVocab)};
  const std::vector<std::string> cross_entropy = {IntAttr("ring_id", cross_entropy_ring),
                                                  IntAttr("rank", rank), IntAttr("nranks", n),
                                                  LongAttr("ignore_index", -100)};
  return OneBlock(
      DenseVar("ids", "INT64", {2, 3}) + DenseVar("w", "FP32", {part, 4}) +
      DenseVar("dout", "FP32", {2, 3, 4}) + DenseVar("out", "FP32", {2, 3, 4}) +
      DenseVar("w@GRAD", "FP32", {part, 4}) + DenseVar("logits", "FP32", {6, part}) +
      DenseVar("label", "INT32", {6, 1}) + DenseVar("loss@GRAD", "FP32", {6, 1}) +
      DenseVar("softmax", "FP32", {6, part}) + DenseVar("loss", "FP32", {6, 1}) +
      DenseVar("logits@GRAD", "FP32", {6, part}) + FeedOp("ids", 0) + FeedOp("w", 1) +
      FeedOp("dout", 2) + FeedOp("logits", 3) + FeedOp("label", 4) + FeedOp("loss@GRAD", 5) +
      OpText("c_embedding", {{"W", {"w"}}, {"Ids", {"ids"}}}, {{"Out", {"out"}}}, embedding) +
      OpText("c_allreduce_sum", {{"X", {"out"}}}, {{"Out", {"out"}}}, {IntAttr("ring_id", 0)}) +
      OpText("c_embedding_grad", {{"W", {"w"}}, {"Ids", {"ids"}}, {"Out@GRAD", {"dout"}}},
             {{"W@GRAD", {"w@GRAD"}}}, embedding) +
      OpText("c_softmax_with_cross_entropy", {{"Logits", {"logits"}}, {"Label", {"label"}}},
             {{"Softmax", {"softmax"}}, {"Loss", {"loss"}}}, cross_entropy) +
      OpText("c_softmax_with_cross_entropy_grad",
             {{"Softmax", {"softmax"}}, {"Label", {"label"}}, {"Loss@GRAD", {"loss@GRAD"}}},
             {{"Logits@GRAD", {"logits@GRAD"}}}, cross_entropy) +
      FetchOp("out", 0) + FetchOp("w@GRAD", 1) + FetchOp("loss", 2) + FetchOp("softmax", 3) +
      FetchOp("logits@GRAD", 4));
}

// Rows or columns [begin, begin + count) of a 2-D tensor.
rt::Tensor Part(const rt::Tensor& t, int64_t begin, int64_t count, bool columns) {
  const std::vector<double> v = rt::testing::ToDoubles(t);
  const int64_t rows = t.dim(0);
  const int64_t cols = t.dim(1);
  std::vector<double> out;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = columns ? j : i;
      if (k >= begin && k < begin + count) out.push_back(v[static_cast<size_t>(i * cols + j)]);
    }
  }
  return rt::testing::FromDoubles(
      out, columns ? std::vector<int64_t>{rows, count} : std::vector<int64_t>{count, cols},
      t.dtype());
}

TEST(VocabParallelRunTest, LegacyAndTranslatedRankProgramsRunBitIdentically) {
  const rt::Tensor table = rt::testing::RandomTensor(DType::kFloat32, {kVocab, 4}, 81);
  const rt::Tensor logits = rt::testing::RandomTensor(DType::kFloat32, {6, kVocab}, 82, -5, 5);
  const rt::Tensor ids = rt::testing::FromDoubles({0, 7, 11, 2, 7, 9}, {2, 3}, DType::kInt64);
  const rt::Tensor label = rt::testing::FromDoubles({0, 11, 5, -100, 7, 3}, {6, 1}, DType::kInt32);
  const rt::Tensor dout = rt::testing::RandomTensor(DType::kFloat32, {2, 3, 4}, 83);
  const rt::Tensor loss_grad = rt::testing::RandomTensor(DType::kFloat32, {6, 1}, 84);
  for (int n : {2, 4}) {
    rt::ThreadWorldOptions world_options;
    world_options.trace = true;
    auto world = rt::testing::MakeWorld(n, {}, world_options);
    ASSERT_NE(world, nullptr);
    const int64_t part = kVocab / n;
    std::vector<oldir::Program> legacy;
    std::vector<rt::FeedMap> feeds;
    for (int r = 0; r < n; ++r) {
      legacy.push_back(rt::testing::ParseLegacy(RankProgram(r, n)));
      feeds.push_back({{"ids", ids},
                       {"w", Part(table, r * part, part, false)},
                       {"dout", dout},
                       {"logits", Part(logits, r * part, part, true)},
                       {"label", label},
                       {"loss@GRAD", loss_grad}});
    }
    const rt::testing::RankRuns old_runs = rt::testing::RunOnRanks(
        *world,
        [&](int rank, const rt::ExecutorOptions& options) {
          return std::make_unique<rt::LegacyExecutor>(legacy[static_cast<size_t>(rank)], options);
        },
        feeds);
    ASSERT_TRUE(old_runs.status.ok()) << old_runs.status.ToString();
    std::vector<rt::CommTrace> old_traces;
    for (int r = 0; r < n; ++r) old_traces.push_back(*world->trace(r));

    for (CommOpStyle style : {CommOpStyle::kDist, CommOpStyle::kLegacy}) {
      SCOPED_TRACE(
          fmt::format("{} ranks, {} style", n, style == CommOpStyle::kDist ? "dist" : "legacy"));
      std::vector<newir::Program> translated;
      for (int r = 0; r < n; ++r) {
        TranslateOptions options;
        options.comm_ops = style;
        options.rank = r;
        StatusOr<Translation> t = TranslateProgram(legacy[static_cast<size_t>(r)], options);
        ASSERT_TRUE(t.ok()) << t.status().ToString();
        translated.push_back(std::move(t->program));
      }
      const rt::testing::RankRuns new_runs = rt::testing::RunOnRanks(
          *world,
          [&](int rank, const rt::ExecutorOptions& options) {
            return std::make_unique<rt::PirExecutor>(translated[static_cast<size_t>(rank)],
                                                     options);
          },
          feeds);
      ASSERT_TRUE(new_runs.status.ok()) << new_runs.status.ToString();
      for (int r = 0; r < n; ++r) {
        for (const char* name : {"out", "w@GRAD", "loss", "softmax", "logits@GRAD"}) {
          EXPECT_TRUE(rt::testing::Fetched(new_runs, r, name)
                          .BitwiseEqual(rt::testing::Fetched(old_runs, r, name)))
              << "rank " << r << ", " << name;
        }
        EXPECT_EQ(rt::FirstCommDifference(old_traces[static_cast<size_t>(r)], *world->trace(r)),
                  std::nullopt)
            << "rank " << r;
        // The embedding's all-reduce, then the cross entropy's three.
        EXPECT_EQ(world->trace(r)->records().size(), 4u) << "rank " << r;
      }
    }
  }
}

// The cross entropy communicates over its ring: in a bundle, the ring must be one of its groups
// and hold the rank, as for the collectives.
TEST(VocabParallelRunTest, TheCrossEntropysRingIsCheckedAgainstTheBundlesGroups) {
  const oldir::Program legacy = rt::testing::ParseLegacy(RankProgram(1, 2, 5));
  const std::vector<oldir::ProcessGroup> groups = {{.ring_id = 0, .ranks = {0, 1}},
                                                   {.ring_id = 5, .ranks = {0, 2}}};
  TranslateOptions options;
  options.process_groups = &groups;
  options.rank = 1;
  StatusOr<Translation> t = TranslateProgram(legacy, options);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "block 0, op 9 (c_softmax_with_cross_entropy): error: process group 5 (ranks [0, 2]) "
            "does not hold rank 1");
}

}  // namespace
}  // namespace irm::translator
