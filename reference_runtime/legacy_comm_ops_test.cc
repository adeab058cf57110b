// The legacy communication ops on the thread world: hand-written legacy programs on 2 and 3 ranks,
// results checked against values the tests compute (rank-order float32 sums, gathered and split
// layouts written out by hand), the errors with their exact diagnostics, and a hang through the
// executor reported with op types and indices.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::DenseVar;
using testing::FeedOp;
using testing::Fetched;
using testing::FetchOp;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MakeWorld;
using testing::OneBlock;
using testing::OpText;
using testing::RankRuns;
using testing::RunLegacy;
using testing::ToDoubles;
using Doubles = std::vector<double>;

Tensor F32(const Doubles& values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), DType::kFloat32);
}

// feed x (float32 `dims`) -> `ops` -> fetch `out`.
std::string Program(const std::vector<int64_t>& dims, const std::string& ops,
                    const std::string& out = "out") {
  return OneBlock(DenseVar("x", "FP32", dims) + FeedOp("x", 0) + ops + FetchOp(out, 0));
}

std::string Op(std::string_view type, const std::vector<std::string>& attrs,
               const std::string& out = "out") {
  return OpText(type, {{"X", {"x"}}}, {{"Out", {out}}}, attrs);
}

std::vector<FeedMap> Feeds(const std::vector<Tensor>& xs) {
  std::vector<FeedMap> feeds;
  for (const Tensor& x : xs) feeds.push_back({{"x", x}});
  return feeds;
}

TEST(LegacyCommOpsTest, AllReduceInPlaceSumsInRankOrder) {
  for (int n : {2, 3}) {
    auto world = MakeWorld(n);
    ASSERT_NE(world, nullptr);
    // In float32 1e8 + 1 is 1e8: the rank-order sum of {1e8, 1, -1e8} is 0, other orders give 1.
    const std::vector<Tensor> xs = {F32({1e8, 0.25}, {2}), F32({1, 0.5}, {2}),
                                    F32({-1e8, 0.125}, {2})};
    const RankRuns runs =
        RunLegacy(*world, {Program({2}, Op("c_allreduce_sum", {IntAttr("ring_id", 0)}, "x"), "x")},
                  Feeds({xs.begin(), xs.begin() + n}));
    ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
    const Doubles want = n == 2 ? Doubles{1e8, 0.75} : Doubles{0, 0.875};
    for (int r = 0; r < n; ++r) EXPECT_EQ(ToDoubles(Fetched(runs, r, "x")), want);
  }
}

TEST(LegacyCommOpsTest, MaxMinProd) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const std::vector<Tensor> xs = {F32({1, -2, 3}, {3}), F32({4, -5, 0.5}, {3})};
  const std::pair<const char*, Doubles> cases[] = {{"c_allreduce_max", {4, -2, 3}},
                                                   {"c_allreduce_min", {1, -5, 0.5}},
                                                   {"c_allreduce_prod", {4, 10, 1.5}}};
  for (const auto& [type, want] : cases) {
    const RankRuns runs = RunLegacy(*world, {Program({3}, Op(type, {}))}, Feeds(xs));
    ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
    EXPECT_EQ(ToDoubles(Fetched(runs, 0, "out")), want) << type;
    EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), want) << type;
  }
}

TEST(LegacyCommOpsTest, BroadcastGatherScatterIdentity) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const std::vector<Tensor> xs = {F32({1, 2, 3, 4}, {2, 2}), F32({10, 20, 30, 40}, {2, 2})};
  RankRuns runs =
      RunLegacy(*world, {Program({2, 2}, Op("c_broadcast", {IntAttr("root", 1)}))}, Feeds(xs));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "out")), (Doubles{10, 20, 30, 40}));

  runs = RunLegacy(*world, {Program({2, 2}, Op("c_allgather", {IntAttr("nranks", 2)}))}, Feeds(xs));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  const Tensor gathered = Fetched(runs, 1, "out");
  EXPECT_EQ(gathered.shape(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(ToDoubles(gathered), (Doubles{1, 2, 3, 4, 10, 20, 30, 40}));

  runs = RunLegacy(*world, {Program({2, 2}, Op("c_reducescatter", {IntAttr("nranks", 2)}))},
                   Feeds(xs));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "out")), (Doubles{11, 22}));
  EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), (Doubles{33, 44}));

  runs = RunLegacy(*world, {Program({2, 2}, Op("c_identity", {}))}, Feeds(xs));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), (Doubles{10, 20, 30, 40}));
}

TEST(LegacyCommOpsTest, SplitAndConcatTheLastDim) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4});
  // c_split keeps part `rank` of the last dim; c_concat gathers the parts back in rank order.
  std::vector<std::string> texts;
  for (int r = 0; r < 2; ++r) {
    const std::vector<std::string> attrs = {IntAttr("rank", r), IntAttr("nranks", 2)};
    texts.push_back(OneBlock(DenseVar("x", "FP32", {2, 4}) + FeedOp("x", 0) +
                             Op("c_split", attrs, "part") +
                             OpText("c_concat", {{"X", {"part"}}}, {{"Out", {"whole"}}}, attrs) +
                             FetchOp("part", 0) + FetchOp("whole", 1)));
  }
  const RankRuns runs = RunLegacy(*world, texts, Feeds({x, x}));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "part")), (Doubles{0, 1, 4, 5}));
  EXPECT_EQ(ToDoubles(Fetched(runs, 1, "part")), (Doubles{2, 3, 6, 7}));
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(Fetched(runs, r, "whole").BitwiseEqual(x));
}

TEST(LegacyCommOpsTest, SendRecvAndBarrierOnASubGroup) {
  // Ring 1 = {2, 0}: on it, global rank 2 is peer 0 and global rank 0 is peer 1.
  auto world = MakeWorld(3, {{1, {2, 0}}});
  ASSERT_NE(world, nullptr);
  const std::string send =
      OneBlock(DenseVar("x", "FP32", {3}) + FeedOp("x", 0) +
               OpText("send_v2", {{"X", {"x"}}}, {}, {IntAttr("ring_id", 1), IntAttr("peer", 1)}) +
               OpText("barrier", {{"X", {"x"}}}, {{"Out", {"x"}}}, {}) + FetchOp("x", 0));
  const std::string recv =
      OneBlock(DenseVar("x", "FP32", {3}) + FeedOp("x", 0) +
               OpText("recv_v2", {}, {{"Out", {"got"}}},
                      {IntAttr("ring_id", 1), IntAttr("peer", 0), IntsAttr("out_shape", {3}),
                       IntAttr("dtype", 5)}) +
               OpText("barrier", {{"X", {"x"}}}, {{"Out", {"x"}}}, {}) + FetchOp("got", 0));
  const std::string idle =
      OneBlock(DenseVar("x", "FP32", {3}) + FeedOp("x", 0) +
               OpText("barrier", {{"X", {"x"}}}, {{"Out", {"x"}}}, {}) + FetchOp("x", 0));
  const RankRuns runs =
      RunLegacy(*world, {recv, idle, send},
                Feeds({F32({0, 0, 0}, {3}), F32({0, 0, 0}, {3}), F32({1.5, 2.5, 3.5}, {3})}));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "got")), (Doubles{1.5, 2.5, 3.5}));
}

// ---- errors ---------------------------------------------------------------------------------

TEST(LegacyCommOpsTest, ErrorsAreLocatedAtTheOp) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const std::vector<FeedMap> feeds = Feeds({F32({1, 2}, {2}), F32({3, 4}, {2})});
  RankRuns runs =
      RunLegacy(*world, {Program({2}, Op("c_allgather", {IntAttr("nranks", 4)}))}, feeds);
  EXPECT_EQ(runs.status.code(), StatusCode::kInvalid);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 1 (c_allgather): error: nranks 4 is not the 2 ranks of "
            "process group 0");

  runs = RunLegacy(*world, {Program({2}, Op("c_allreduce_sum", {IntAttr("ring_id", 3)}))}, feeds);
  EXPECT_EQ(runs.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 1 (c_allreduce_sum): error: ring_id 3 names no process "
            "group");

  runs = RunLegacy(
      *world, {Program({2}, Op("c_split", {IntAttr("rank", 2), IntAttr("nranks", 2)}))}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 1 (c_split): error: rank 2 is not in [0, nranks 2)");

  // A receive declared with another shape than the message: both ranks name both sides.
  const std::string send =
      Program({2}, OpText("send_v2", {{"X", {"x"}}}, {}, {IntAttr("peer", 1)}), "x");
  const std::string recv = Program(
      {2},
      OpText("recv_v2", {}, {{"Out", {"got"}}}, {IntAttr("peer", 0), IntsAttr("out_shape", {3})}),
      "got");
  runs = RunLegacy(*world, {send, recv}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 1 (send_v2): error: recv_v2 on rank 1 expects float32[3] "
            "from rank 0 (ring 0, op 1), but rank 0 sends float32[2] (send_v2, ring 0, op 1)");
}

TEST(LegacyCommOpsTest, WithoutAContextCommunicationNeedsTheMultiRankRuntime) {
  const oldir::Program program =
      testing::ParseLegacy(Program({2}, Op("c_allreduce_sum", {}, "x"), "x"));
  ExecutorOptions options;
  options.file = "t.prototxt";
  LegacyExecutor executor(program, options);
  EXPECT_EQ(executor.plan_status().ToString(),
            "t.prototxt: block 0, op 1 (c_allreduce_sum): error: 'c_allreduce_sum' needs the "
            "multi-rank runtime");
}

TEST(LegacyCommOpsTest, BothRanksSendFirstHangsWithOpTypesAndIndices) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  std::vector<std::string> texts;
  for (int r = 0; r < 2; ++r) {
    texts.push_back(Program({2},
                            OpText("send_v2", {{"X", {"x"}}}, {}, {IntAttr("peer", 1 - r)}) +
                                OpText("recv_v2", {}, {{"Out", {"got"}}},
                                       {IntAttr("peer", 1 - r), IntsAttr("out_shape", {2})}),
                            "got"));
  }
  const RankRuns runs = RunLegacy(*world, texts, Feeds({F32({1, 2}, {2}), F32({3, 4}, {2})}));
  EXPECT_EQ(runs.status.code(), StatusCode::kInternal);
  EXPECT_EQ(runs.status.ToString(),
            "t.prototxt: block 0, op 1 (send_v2): error: hang: no rank can progress: rank 0 "
            "waits in send_v2 to rank 1 (ring 0, op 1); rank 1 waits in send_v2 to rank 0 (ring "
            "0, op 1)");
}

}  // namespace
}  // namespace irm::rt
