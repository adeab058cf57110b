// The new-IR communication ops on the thread world: hand-written programs on 2 and 3 ranks for the
// phi-style ops, the tensor-parallel ops and the legacy-named forms, with results checked against
// values the tests compute; in-place forms writing into their operand; errors with their exact
// diagnostics; and a hang through the executor reported with op names and indices.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::Fetched;
using testing::MakeWorld;
using testing::RankRuns;
using testing::RunPir;
using testing::ToDoubles;
using Doubles = std::vector<double>;

Tensor F32(const Doubles& values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), DType::kFloat32);
}

std::vector<FeedMap> Feeds(const std::vector<Tensor>& xs) {
  std::vector<FeedMap> feeds;
  for (const Tensor& x : xs) feeds.push_back({{"x", x}});
  return feeds;
}

// feed x of type `type` as %0, then `body`, then fetch `fetched` (of type `out_type`) as "out".
std::string Program(const std::string& type, const std::string& body, const std::string& fetched,
                    const std::string& out_type, const std::string& shape) {
  return fmt::format(R"({{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(cpu),shape:{},stop_gradient:[true]}} : () -> {}
    {}
    (%99) = "pd_op.fetch" ({}) {{col:0,name:"out"}} : ({}) -> {}
}})",
                     shape, type, body, fetched, out_type, out_type);
}

// One op of x (tensor<`dims`xf32>) into %1 of `out_type`.
std::string OneOp(const std::string& op, const std::string& attrs, const std::string& dims,
                  const std::string& out_dims, const std::string& shape) {
  const std::string in = "tensor<" + dims + "xf32>";
  const std::string out = "tensor<" + out_dims + "xf32>";
  return Program(in,
                 fmt::format(R"((%1) = "pd_op.{}" (%0) {{{}}} : ({}) -> {})", op, attrs, in, out),
                 "%1", out, shape);
}

TEST(PirCommOpsTest, AllReduceEveryReduceTypeInRankOrder) {
  auto world = MakeWorld(3);
  ASSERT_NE(world, nullptr);
  const std::vector<Tensor> xs = {F32({1e8, 2, -1}, {3}), F32({1, 4, 3}, {3}),
                                  F32({-1e8, 0.5, 2}, {3})};
  // Rank-order float32: (1e8 + 1) + -1e8 = 0; avg divides that sum by 3 in float32.
  const std::pair<int, Doubles> cases[] = {
      {0, {0, 6.5, 4}},
      {1, {1e8, 4, 3}},
      {2, {-1e8, 0.5, -1}},
      {3, {-1e16, 4, -6}},
      {4, {0, static_cast<float>(6.5f / 3.0f), static_cast<float>(4.0f / 3.0f)}}};
  for (const auto& [type, want] : cases) {
    const RankRuns runs =
        RunPir(*world, {OneOp("all_reduce", fmt::format("reduce_type:{}", type), "3", "3", "[3]")},
               Feeds(xs));
    ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
    const Tensor expected = F32(want, {3});
    for (int r = 0; r < 3; ++r) {
      EXPECT_TRUE(Fetched(runs, r, "out").BitwiseEqual(expected))
          << "reduce_type " << type << ": " << ToDoubles(Fetched(runs, r, "out"))[0];
    }
  }
}

TEST(PirCommOpsTest, InPlaceFormsWriteIntoTheirOperand) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  // The fetch reads the operand %0, which the in-place op must have updated.
  for (const char* op : {"c_allreduce_sum_", "all_reduce_"}) {
    const std::string text = Program(
        "tensor<2xf32>",
        fmt::format(R"((%1) = "pd_op.{}" (%0) {{ring_id:0}} : (tensor<2xf32>) -> tensor<2xf32>)",
                    op),
        "%0", "tensor<2xf32>", "[2]");
    const RankRuns runs = RunPir(*world, {text}, Feeds({F32({1, 2}, {2}), F32({10, 20}, {2})}));
    ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
    EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), (Doubles{11, 22})) << op;
  }
  // The out-of-place form leaves it alone.
  const std::string text = Program(
      "tensor<2xf32>",
      R"((%1) = "pd_op.c_allreduce_sum" (%0) {ring_id:0} : (tensor<2xf32>) -> tensor<2xf32>)", "%0",
      "tensor<2xf32>", "[2]");
  const RankRuns runs = RunPir(*world, {text}, Feeds({F32({1, 2}, {2}), F32({10, 20}, {2})}));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), (Doubles{10, 20}));
}

TEST(PirCommOpsTest, GatherScatterBroadcastAllToAll) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const std::vector<FeedMap> feeds =
      Feeds({F32({1, 2, 3, 4}, {2, 2}), F32({10, 20, 30, 40}, {2, 2})});
  struct Case {
    const char* op;
    const char* attrs;
    const char* out_dims;
    Doubles rank0, rank1;
  };
  const Case cases[] = {
      {"all_gather", "nranks:2", "4x2", {1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 3, 4, 10, 20, 30, 40}},
      {"c_allgather",
       "nranks:2",
       "4x2",
       {1, 2, 3, 4, 10, 20, 30, 40},
       {1, 2, 3, 4, 10, 20, 30, 40}},
      {"reduce_scatter", "nranks:2", "1x2", {11, 22}, {33, 44}},
      {"c_reducescatter", "nranks:2", "1x2", {11, 22}, {33, 44}},
      {"broadcast", "root:1", "2x2", {10, 20, 30, 40}, {10, 20, 30, 40}},
      {"c_broadcast", "root:0", "2x2", {1, 2, 3, 4}, {1, 2, 3, 4}},
      {"all_to_all", "", "2x2", {1, 2, 10, 20}, {3, 4, 30, 40}},
      {"c_identity", "", "2x2", {1, 2, 3, 4}, {10, 20, 30, 40}},
  };
  for (const Case& c : cases) {
    const RankRuns runs = RunPir(*world, {OneOp(c.op, c.attrs, "2x2", c.out_dims, "[2,2]")}, feeds);
    ASSERT_TRUE(runs.status.ok()) << c.op << ": " << runs.status.ToString();
    EXPECT_EQ(ToDoubles(Fetched(runs, 0, "out")), c.rank0) << c.op;
    EXPECT_EQ(ToDoubles(Fetched(runs, 1, "out")), c.rank1) << c.op;
  }
}

TEST(PirCommOpsTest, SplitAndConcatTheLastDim) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4});
  std::vector<std::string> texts;
  for (int r = 0; r < 2; ++r) {
    texts.push_back(Program(
        "tensor<2x4xf32>",
        fmt::format(
            R"((%1) = "pd_op.c_split" (%0) {{nranks:2,rank:{}}} : (tensor<2x4xf32>) -> tensor<2x2xf32>
    (%2) = "pd_op.c_concat" (%1) {{nranks:2,rank:{}}} : (tensor<2x2xf32>) -> tensor<2x4xf32>
    (%3) = "pd_op.fetch" (%1) {{col:1,name:"part"}} : (tensor<2x2xf32>) -> tensor<2x2xf32>)",
            r, r),
        "%2", "tensor<2x4xf32>", "[2,4]"));
  }
  const RankRuns runs = RunPir(*world, texts, Feeds({x, x}));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "part")), (Doubles{0, 1, 4, 5}));
  EXPECT_EQ(ToDoubles(Fetched(runs, 1, "part")), (Doubles{2, 3, 6, 7}));
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(Fetched(runs, r, "out").BitwiseEqual(x));
}

TEST(PirCommOpsTest, PointToPointInBothSpellings) {
  auto world = MakeWorld(3, {{1, {2, 0}}});
  ASSERT_NE(world, nullptr);
  const std::string type = "tensor<3xf32>";
  // Global 2 sends to global 0 on ring 1 (peer 1), first with p_send/p_recv, then send_v2/recv_v2;
  // everyone meets at a barrier.
  const std::string send =
      Program(type, R"(() = "pd_op.p_send" (%0) {ring_id:1,peer:1} : (tensor<3xf32>) ->
    () = "pd_op.send_v2" (%0) {ring_id:1,peer:1} : (tensor<3xf32>) ->
    (%1) = "pd_op.barrier" (%0) {ring_id:0} : (tensor<3xf32>) -> tensor<3xf32>)",
              "%1", type, "[3]");
  const std::string recv = Program(
      type, R"((%1) = "pd_op.p_recv" () {ring_id:1,peer:0,dtype:float32} : () -> tensor<3xf32>
    (%2) = "pd_op.recv_v2" () {ring_id:1,peer:0,dtype:float32,out_shape:[3]} : () -> tensor<3xf32>
    (%3) = "pd_op.add" (%1, %2) {} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    (%4) = "pd_op.barrier" (%3) {ring_id:0} : (tensor<3xf32>) -> tensor<3xf32>)",
      "%4", type, "[3]");
  const std::string idle =
      Program(type, R"((%1) = "pd_op.barrier" (%0) {ring_id:0} : (tensor<3xf32>) -> tensor<3xf32>)",
              "%1", type, "[3]");
  const RankRuns runs =
      RunPir(*world, {recv, idle, send},
             Feeds({F32({0, 0, 0}, {3}), F32({0, 0, 0}, {3}), F32({1.5, 2.5, 3.5}, {3})}));
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString();
  EXPECT_EQ(ToDoubles(Fetched(runs, 0, "out")), (Doubles{3, 5, 7}));
}

// ---- errors ---------------------------------------------------------------------------------

TEST(PirCommOpsTest, ErrorsAreLocatedAtTheOp) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const std::vector<FeedMap> feeds = Feeds({F32({1, 2}, {2}), F32({3, 4}, {2})});
  RankRuns runs = RunPir(*world, {OneOp("all_reduce", "reduce_type:5", "2", "2", "[2]")}, feeds);
  EXPECT_EQ(runs.status.code(), StatusCode::kInvalid);
  EXPECT_EQ(runs.status.ToString(),
            "t.pir: op 1 (pd_op.all_reduce): error: reduce_type 5 is not sum, max, min, prod or "
            "avg (0-4)");
  runs = RunPir(*world, {OneOp("all_gather", "nranks:3", "2", "6", "[2]")}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.pir: op 1 (pd_op.all_gather): error: nranks 3 is not the 2 ranks of process "
            "group 0");
  runs = RunPir(*world, {OneOp("c_identity", "ring_id:9", "2", "2", "[2]")}, feeds);
  EXPECT_EQ(runs.status.ToString(),
            "t.pir: op 1 (pd_op.c_identity): error: ring_id 9 names no process group");
}

TEST(PirCommOpsTest, BothRanksSendFirstHangsWithOpNamesAndIndices) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  std::vector<std::string> texts;
  for (int r = 0; r < 2; ++r) {
    texts.push_back(Program("tensor<2xf32>",
                            fmt::format(R"(() = "pd_op.p_send" (%0) {{peer:{}}} : (tensor<2xf32>) ->
    (%1) = "pd_op.p_recv" () {{peer:{},dtype:float32}} : () -> tensor<2xf32>)",
                                        1 - r, 1 - r),
                            "%1", "tensor<2xf32>", "[2]"));
  }
  const RankRuns runs = RunPir(*world, texts, Feeds({F32({1, 2}, {2}), F32({3, 4}, {2})}));
  EXPECT_EQ(runs.status.code(), StatusCode::kInternal);
  EXPECT_EQ(runs.status.ToString(),
            "t.pir: op 1 (pd_op.p_send): error: hang: no rank can progress: rank 0 waits in "
            "pd_op.p_send to rank 1 (ring 0, op 1); rank 1 waits in pd_op.p_send to rank 0 (ring "
            "0, op 1)");
}

}  // namespace
}  // namespace irm::rt
