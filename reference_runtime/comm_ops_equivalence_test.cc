// A data-parallel step written twice — as a legacy program (c_allreduce_sum of the gradient in
// place, then scale by 1/2) and as a new-IR program (pd_op.c_allreduce_sum_ or pd_op.all_reduce,
// then pd_op.scale) — run on two ranks of the thread world on the real kernels: both must give
// the bits the test computes (the float32 sum in rank order, halved), hence each other's, and the
// same communication trace.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::Fetched;
using testing::MakeWorld;
using testing::RankRuns;

constexpr char kPirStep[] = R"({{
    (%0) = "pd_op.data" () {{dtype:float32,name:"g",place:Place(cpu),shape:[4,3],stop_gradient:[true]}} : () -> tensor<4x3xf32>
    (%1) = "pd_op.{}" (%0) {{ring_id:0{}}} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    (%2) = "pd_op.full" () {{dtype:float32,place:Place(cpu),shape:[1],value:0.5}} : () -> tensor<1xf32>
    (%3) = "pd_op.scale" (%1, %2) {{bias:0,bias_after_scale:true}} : (tensor<4x3xf32>, tensor<1xf32>) -> tensor<4x3xf32>
    (%4) = "pd_op.fetch" (%3) {{col:0,name:"avg"}} : (tensor<4x3xf32>) -> tensor<4x3xf32>
}})";

std::string LegacyStep() {
  using namespace testing;  // NOLINT: the protobuf text helpers
  return OneBlock(DenseVar("g", "FP32", {4, 3}) + DenseVar("avg", "FP32", {4, 3}) + FeedOp("g", 0) +
                  OpText("c_allreduce_sum", {{"X", {"g"}}}, {{"Out", {"g"}}},
                         {IntAttr("ring_id", 0), BoolAttr("use_calc_stream", true)}) +
                  OpText("scale", {{"X", {"g"}}}, {{"Out", {"avg"}}},
                         {FloatAttr("scale", 0.5f), FloatAttr("bias", 0.0f)}) +
                  FetchOp("avg", 0));
}

TEST(CommOpsEquivalenceTest, DataParallelStepIsBitIdenticalAcrossIrs) {
  ThreadWorldOptions options;
  options.trace = true;
  auto world = MakeWorld(2, {}, options);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> grads;
  std::vector<FeedMap> feeds;
  for (int r = 0; r < 2; ++r) {
    grads.push_back(
        testing::RandomTensor(DType::kFloat32, {4, 3}, 40 + static_cast<uint64_t>(r), -3, 3));
    feeds.push_back({{"g", grads.back()}});
  }
  std::vector<float> want(12);
  for (size_t i = 0; i < want.size(); ++i) {
    const float sum = grads[0].data<float>()[i] + grads[1].data<float>()[i];
    want[i] = sum * 0.5f + 0.0f;
  }
  const Tensor expected = Tensor::FromVector<float>(want, {4, 3});

  const RankRuns legacy = testing::RunLegacy(*world, {LegacyStep()}, feeds);
  ASSERT_TRUE(legacy.status.ok()) << legacy.status.ToString();
  std::vector<CommTrace> legacy_traces = {*world->trace(0), *world->trace(1)};
  for (const auto& [op, attrs] : {std::pair<const char*, const char*>{"c_allreduce_sum_", ""},
                                  {"all_reduce", ",reduce_type:0"}}) {
    const RankRuns pir = testing::RunPir(*world, {fmt::format(kPirStep, op, attrs)}, feeds);
    ASSERT_TRUE(pir.status.ok()) << pir.status.ToString();
    for (int r = 0; r < 2; ++r) {
      const Tensor old_avg = Fetched(legacy, r, "avg");
      const Tensor new_avg = Fetched(pir, r, "avg");
      EXPECT_TRUE(old_avg.BitwiseEqual(expected)) << "legacy, rank " << r;
      EXPECT_TRUE(new_avg.BitwiseEqual(old_avg)) << op << ", rank " << r;
      ASSERT_NE(world->trace(r), nullptr);
      EXPECT_EQ(FirstCommDifference(legacy_traces[static_cast<size_t>(r)], *world->trace(r)),
                std::nullopt)
          << op;
      EXPECT_EQ(world->trace(r)->records().size(), 1u);
    }
  }
}

}  // namespace
}  // namespace irm::rt
