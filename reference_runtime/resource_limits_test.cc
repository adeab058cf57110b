// Resource limits as data, not crashes: a legacy program whose sub-blocks form a cycle or nest
// past the bound is refused before the executor recurses into it; a tensor larger than the
// machine's memory is refused before it is allocated, as a runtime failure (kInternal, exit 3)
// naming the op and the size; a random feed with a batch size below 1 or too large for memory is
// refused with the feed's name. Each case asserts the diagnostic and that the process survives.
#include <gtest/gtest.h>

#include <string>

#include "oldir/block_graph.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/run.h"
#include "reference_runtime/tensor.h"
#include "reference_runtime/tensor_limits.h"

namespace irm::rt {
namespace {

using testing::Block;
using testing::BlockAttr;
using testing::DenseVar;
using testing::FloatAttr;
using testing::IntAttr;
using testing::LongsAttr;
using testing::OpText;
using testing::ParseTestProgram;

std::string CondOp(int sub_block) {
  return OpText(
      "conditional_block", {{"Cond", {"c"}}}, {{"Scope", {"scope"}}},
      {BlockAttr("sub_block", sub_block), testing::BoolAttr("is_scalar_condition", true)});
}

StatusOr<std::vector<Fetch>> RunReal(const oldir::Program& program) {
  ExecutorOptions options;
  options.file = "t.prototxt";
  LegacyExecutor executor(program, options);
  Scope persistent;
  FeedMap feeds;
  feeds["c"] = testing::MakeTensor(DType::kBool, {1}, {1});
  return executor.Run(persistent, feeds);
}

TEST(LegacyResourceLimitsTest, SubBlockCycleIsRefusedBeforeRunning) {
  // Block 2 runs block 1, which runs block 2: the executor would recurse until the stack ends.
  const oldir::Program program = ParseTestProgram(
      Block(0, -1,
            DenseVar("c", "BOOL", {1}) + "vars { name: \"scope\" type { type: STEP_SCOPES } }" +
                CondOp(1)) +
      Block(1, 0, CondOp(2)) + Block(2, 1, CondOp(1)));
  StatusOr<std::vector<Fetch>> run = RunReal(program);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(run.status().ToString(),
            "t.prototxt: block 2, op 0 (conditional_block), attr 'sub_block': error: attribute "
            "'sub_block' runs block 1, which already runs this op: the sub-blocks form a cycle "
            "1 -> 2 -> 1");
}

TEST(LegacyResourceLimitsTest, NestingPastTheBoundIsRefusedBeforeRunning) {
  std::string text = Block(0, -1,
                           DenseVar("c", "BOOL", {1}) +
                               "vars { name: \"scope\" type { type: STEP_SCOPES } }" + CondOp(1));
  const int levels = 3000;
  for (int b = 1; b <= levels; ++b) text += Block(b, b - 1, b < levels ? CondOp(b + 1) : "");
  StatusOr<std::vector<Fetch>> run = RunReal(ParseTestProgram(text));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().ToString(),
            "t.prototxt: block 1024, op 0 (conditional_block), attr 'sub_block': error: block "
            "1025 is nested 1025 levels deep (its sub-blocks reach 3000); at most 1024 levels "
            "are supported");
}

TEST(TensorLimitsTest, TensorLargerThanMemoryIsRefusedBeforeAllocating) {
  StatusOr<Tensor> t = Tensor::Zeros(DType::kFloat32, {1000000000000});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInternal);
  EXPECT_EQ(t.status().message(),
            "a float32 tensor of shape [1000000000000] needs 4000000000000 bytes, more than this "
            "machine's memory (" +
                std::to_string(MaxTensorBytes()) + " bytes)");
  // Below the cap, allocations work as before.
  EXPECT_TRUE(Tensor::Zeros(DType::kFloat32, {4}).ok());
  EXPECT_EQ(TakeFailedAllocationBytes(), 0u);
}

TEST(TensorLimitsTest, FillConstantOfAHugeShapeFailsAtTheOp) {
  const oldir::Program program =
      ParseTestProgram(Block(0, -1,
                             DenseVar("c", "BOOL", {1}) + DenseVar("big", "FP32", {1000000000000}) +
                                 OpText("fill_constant", {}, {{"Out", {"big"}}},
                                        {LongsAttr("shape", {1000000000000}), IntAttr("dtype", 5),
                                         FloatAttr("value", 1.0f)})));
  StatusOr<std::vector<Fetch>> run = RunReal(program);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInternal);
  const std::string rendered = run.status().ToString();
  EXPECT_EQ(rendered.rfind("t.prototxt: block 0, op 0 (fill_constant): error: ", 0), 0u)
      << rendered;
  EXPECT_NE(rendered.find("a float32 tensor of shape [1000000000000] needs 4000000000000 bytes"),
            std::string::npos)
      << rendered;
}

TEST(TensorLimitsTest, RandomFeedBatchSizeIsChecked) {
  const FeedSpec spec{"x", DType::kFloat32, {-1, 4}, 0};
  EXPECT_TRUE(CheckRandomFeed(spec, 8).ok());
  const Status negative = CheckRandomFeed(spec, -3);
  EXPECT_EQ(negative.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(negative.diagnostic().Render(),
            "var 'x': error: batch size must be at least 1, got -3 (feed 'x' has a -1 dim)\n");
  const Status huge = CheckRandomFeed(spec, 1000000000000);
  EXPECT_EQ(huge.code(), StatusCode::kInternal);
  EXPECT_EQ(huge.message(),
            "feed 'x' (float32 of shape [1000000000000, 4]) needs 16000000000000 bytes, more than "
            "this machine's memory (" +
                std::to_string(MaxTensorBytes()) + " bytes)");
  // A feed without a -1 dim takes no batch size.
  EXPECT_TRUE(CheckRandomFeed({"y", DType::kFloat32, {2}, 0}, -1).ok());
}

}  // namespace
}  // namespace irm::rt
