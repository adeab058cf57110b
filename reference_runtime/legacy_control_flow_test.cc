// conditional_block and while in the legacy executor: taken and not taken, the scoping of a
// sub-block's vars, loops of N iterations driven by increment / less_than test kernels, bad
// conditions, errors inside a sub-block, and the hand-written control-flow fixtures of
// translator/testdata/legacy (a while loop, a conditional block without else, gradient merge).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/file_io.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::BlockAttr;
using testing::BoolAttr;
using testing::DenseVar;
using testing::FeedOp;
using testing::FetchOp;
using testing::FloatAttr;
using testing::LegacyHarness;
using testing::MakeTensor;
using testing::OpText;
using testing::ToDoubles;
using Strings = std::vector<std::string>;

std::string Fixture(const std::string& name) {
  StatusOr<std::string> text = ReadFile(std::string(IRM_LEGACY_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

class LegacyControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.kernels.Add("scale", {DType::kFloat32}, testing::TestScale);
    h_.kernels.Add("assign", {DType::kFloat32, DType::kInt64, DType::kBool}, testing::TestAssign);
    h_.kernels.Add("full", {DType::kFloat32, DType::kInt32, DType::kInt64}, testing::TestFull);
    h_.kernels.Add("increment", {DType::kInt32, DType::kInt64}, testing::TestIncrement);
    h_.kernels.Add("less_than", {DType::kFloat32, DType::kInt64},
                   testing::TestBinary([](double a, double b) { return a < b; }, true));
  }
  size_t CallsOf(const std::string& kernel) const {
    size_t n = 0;
    for (const testing::RecordedCall& call : h_.kernels.calls()) n += call.kernel == kernel;
    return n;
  }
  LegacyHarness h_;
};

// y = x; if (c) { t = 2 * x; y = t; z = t }; fetch y (col 0).
std::string ConditionalProgram(bool scalar_condition = true) {
  const std::string block0 =
      DenseVar("x", "FP32", {-1}) + DenseVar("c", "BOOL", {1}) + DenseVar("y", "FP32", {-1}) +
      DenseVar("z", "FP32", {-1}) + FeedOp("x", 0) + FeedOp("c", 1) +
      OpText("assign", {{"X", {"x"}}}, {{"Out", {"y"}}}) +
      OpText("conditional_block", {{"Cond", {"c"}}, {"Input", {"x"}}},
             {{"Out", {"y", "z"}}, {"Scope", {"scope"}}},
             {BlockAttr("sub_block", 1), BoolAttr("is_scalar_condition", scalar_condition)}) +
      FetchOp("y", 0);
  const std::string block1 =
      DenseVar("t", "FP32", {-1}) +
      OpText("scale", {{"X", {"x"}}}, {{"Out", {"t"}}}, {FloatAttr("scale", 2.0f)}) +
      OpText("assign", {{"X", {"t"}}}, {{"Out", {"y"}}}) +
      OpText("assign", {{"X", {"t"}}}, {{"Out", {"z"}}});
  return testing::Block(0, -1, block0) + testing::Block(1, 0, block1);
}

FeedMap CondFeeds(bool cond, std::vector<double> x = {1.0, 2.0}) {
  const int64_t n = static_cast<int64_t>(x.size());
  return {{"x", MakeTensor(DType::kFloat32, {n}, x)},
          {"c", MakeTensor(DType::kBool, {1}, {cond ? 1.0 : 0.0})}};
}

TEST_F(LegacyControlFlowTest, ConditionalBlockRunsItsBlockWhenTheConditionHolds) {
  StatusOr<std::vector<Fetch>> fetched = h_.Run(ConditionalProgram(), CondFeeds(true));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{2.0, 4.0}));
  EXPECT_EQ(CallsOf("scale"), 1u);
  EXPECT_EQ(
      h_.events,
      (Strings{"0/0 feed: x=float32[2]", "0/1 feed: c=bool[1]", "0/2 assign: y=float32[2]",
               "1/0 scale: t=float32[2]", "1/1 assign: y=float32[2]", "1/2 assign: z=float32[2]",
               "0/3 conditional_block: y=float32[2], z=float32[2], scope=null", "0/4 fetch: "}));
}

TEST_F(LegacyControlFlowTest, ConditionalBlockLeavesEverythingAloneOtherwise) {
  StatusOr<std::vector<Fetch>> fetched = h_.Run(ConditionalProgram(), CondFeeds(false));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(CallsOf("scale"), 0u);
  EXPECT_EQ(h_.events[3], "0/3 conditional_block: y=float32[2], z=null, scope=null");
}

TEST_F(LegacyControlFlowTest, ABlocksOwnVarsVanishWithItOuterVarsStay) {
  // z is declared in block 0 and written only in block 1: it outlives the block; t does not.
  std::string program = ConditionalProgram();
  program.insert(program.find("}\nblocks { idx: 1"), FetchOp("z", 1) + FetchOp("t", 2));
  const Status status = h_.Run(program, CondFeeds(true)).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 6 (fetch), var 't': error: var 't' is read before any op "
            "writes it");
}

TEST_F(LegacyControlFlowTest, WithoutAScalarConditionTheBlockRunsWhenItsInputsHoldElements) {
  StatusOr<std::vector<Fetch>> fetched =
      h_.Run(ConditionalProgram(/*scalar_condition=*/false), CondFeeds(false, {3.0}));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{6.0}));
  fetched = h_.Run(ConditionalProgram(/*scalar_condition=*/false), CondFeeds(true, {}));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ((*fetched)[0].tensor.Describe(), "float32[0]");
  EXPECT_EQ(CallsOf("scale"), 1u);
}

TEST_F(LegacyControlFlowTest, AConditionMustBeABoolScalar) {
  const std::string int_cond =
      testing::Block(
          0, -1,
          DenseVar("c", "INT64", {1}) + FeedOp("c", 0) +
              OpText("conditional_block", {{"Cond", {"c"}}, {"Input", {}}}, {{"Scope", {"scope"}}},
                     {BlockAttr("sub_block", 1), BoolAttr("is_scalar_condition", true)})) +
      testing::Block(1, 0, "");
  const Status status = h_.Run(int_cond, {{"c", MakeTensor(DType::kInt64, {1}, {1.0})}}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 1 (conditional_block), var 'c': error: condition 'c' is "
            "int64[1], not a bool scalar");
}

TEST_F(LegacyControlFlowTest, ASubBlockOutOfRange) {
  const std::string program =
      testing::OneBlock(OpText("conditional_block", {{"Cond", {"c"}}}, {{"Scope", {"scope"}}},
                               {BlockAttr("sub_block", 3), BoolAttr("is_scalar_condition", true)}));
  const Status status = h_.Run(program).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (conditional_block): error: sub_block 3 is out of range "
            "(the program has 1 blocks)");
}

TEST_F(LegacyControlFlowTest, AnErrorInsideASubBlockSaysWhoRanIt) {
  // Block 1 reads a var nobody wrote.
  const std::string program =
      testing::Block(
          0, -1,
          DenseVar("c", "BOOL", {1}) + FeedOp("c", 0) +
              OpText("conditional_block", {{"Cond", {"c"}}}, {{"Scope", {"scope"}}},
                     {BlockAttr("sub_block", 1), BoolAttr("is_scalar_condition", true)})) +
      testing::Block(1, 0, OpText("scale", {{"X", {"ghost"}}}, {{"Out", {"t"}}}));
  const Status status = h_.Run(program, {{"c", MakeTensor(DType::kBool, {1}, {1.0})}}).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 1, op 0 (scale), var 'ghost': error: var 'ghost' is read before "
            "any op writes it\n"
            "  note: in block 1, run by block 0, op 1 (conditional_block)");
}

// i = 0; while (i < n) { x = x * 2; i = i + 1 } with n fed.
std::string CountingLoop() {
  const std::string block0 =
      DenseVar("x", "FP32", {2}) + DenseVar("n", "INT64", {1}) + DenseVar("i", "INT64", {1}) +
      DenseVar("cond", "BOOL", {1}) + FeedOp("x", 0) + FeedOp("n", 1) +
      OpText("fill_constant", {}, {{"Out", {"i"}}},
             {testing::LongsAttr("shape", {1}), testing::IntAttr("dtype", 3)}) +
      OpText("less_than", {{"X", {"i"}}, {"Y", {"n"}}}, {{"Out", {"cond"}}}) +
      OpText("while", {{"X", {"x", "i", "n"}}, {"Condition", {"cond"}}},
             {{"Out", {"x", "i", "cond"}}, {"StepScopes", {"steps"}}},
             {BlockAttr("sub_block", 1)}) +
      FetchOp("x", 0) + FetchOp("i", 1);
  const std::string block1 =
      DenseVar("x2", "FP32", {2}) +
      OpText("scale", {{"X", {"x"}}}, {{"Out", {"x2"}}}, {FloatAttr("scale", 2.0f)}) +
      OpText("assign", {{"X", {"x2"}}}, {{"Out", {"x"}}}) +
      OpText("increment", {{"X", {"i"}}}, {{"Out", {"i"}}}) +
      OpText("less_than", {{"X", {"i"}}, {"Y", {"n"}}}, {{"Out", {"cond"}}});
  return testing::Block(0, -1, block0) + testing::Block(1, 0, block1);
}

TEST_F(LegacyControlFlowTest, WhileRunsItsBodyAsLongAsTheConditionHolds) {
  for (int n : {0, 1, 5}) {
    h_.kernels.ClearCalls();
    StatusOr<std::vector<Fetch>> fetched =
        h_.Run(CountingLoop(), {{"x", MakeTensor(DType::kFloat32, {2}, {1.0, -3.0})},
                                {"n", MakeTensor(DType::kInt64, {1}, {double(n)})}});
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    const double factor = std::pow(2.0, n);
    EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{factor, -3.0 * factor}));
    EXPECT_EQ(ToDoubles((*fetched)[1].tensor), (std::vector<double>{double(n)}));
    EXPECT_EQ(CallsOf("scale"), static_cast<size_t>(n));
    EXPECT_EQ(CallsOf("increment"), static_cast<size_t>(n));
  }
}

TEST_F(LegacyControlFlowTest, EachIterationHasAFreshScope) {
  // The body's x2 is gone once the loop ends.
  std::string program = CountingLoop();
  program.insert(program.find("}\nblocks { idx: 1"), FetchOp("x2", 2));
  const Status status = h_.Run(program, {{"x", MakeTensor(DType::kFloat32, {2})},
                                         {"n", MakeTensor(DType::kInt64, {1}, {2.0})}})
                            .status();
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 7 (fetch), var 'x2': error: var 'x2' is read before any op "
            "writes it");
}

TEST_F(LegacyControlFlowTest, AWhileConditionThatIsNotABoolScalar) {
  h_.kernels.Add("less_than", {DType::kFloat64},
                 testing::TestBinary([](double a, double b) { return a < b; }));
  const std::string program =
      testing::Block(0, -1,
                     DenseVar("a", "FP64", {1}) + FeedOp("a", 0) +
                         OpText("less_than", {{"X", {"a"}}, {"Y", {"a"}}}, {{"Out", {"c"}}}) +
                         OpText("while", {{"Condition", {"c"}}}, {{"StepScopes", {"s"}}},
                                {BlockAttr("sub_block", 1)})) +
      testing::Block(1, 0, "");
  const Status status = h_.Run(program, {{"a", MakeTensor(DType::kFloat64, {1})}}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 2 (while), var 'c': error: condition 'c' is float64[1], not "
            "a bool scalar");
}

// ---- the hand-written fixtures --------------------------------------------------------------

TEST_F(LegacyControlFlowTest, WhileLoopFixture) {
  // i from 0 while i < 3: x doubles three times.
  StatusOr<std::vector<Fetch>> fetched =
      h_.Run(Fixture("while_loop.prototxt"),
             {{"x", MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{8, 16, 24, 32, 40, 48}));
  EXPECT_EQ(CallsOf("scale"), 3u);
}

TEST_F(LegacyControlFlowTest, ConditionalBlockWithoutElseFixture) {
  h_.kernels.Add("mean_all", {DType::kFloat32}, [](KernelCall& call) {
    double sum = 0.0;
    for (double v : ToDoubles(call.input(0))) sum += v;
    call.SetOutput(0, MakeTensor(DType::kFloat32, {}, {sum / double(call.input(0).numel())}));
    return Status::Ok();
  });
  h_.kernels.Add("add", {DType::kFloat32},
                 testing::TestBinary([](double a, double b) { return a + b; }));
  // mean(x) < 10: y = 1 + 2x, z = 2x.
  StatusOr<std::vector<Fetch>> fetched =
      h_.Run(Fixture("cond_no_else.prototxt"),
             {{"x", MakeTensor(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5})}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(ToDoubles((*fetched)[1].tensor), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  // Otherwise y keeps its value and z, written only by the block, has none: fetching it fails.
  const Status status =
      h_.Run(Fixture("cond_no_else.prototxt"),
             {{"x", MakeTensor(DType::kFloat32, {2, 3}, {20, 20, 20, 20, 20, 20})}})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 7 (fetch), var 'z': error: var 'z' is read before any op "
            "writes it");
}

TEST_F(LegacyControlFlowTest, GradientMergeFixtureUpdatesEveryKthStep) {
  h_.kernels.Add("uniform");
  // The arithmetic is recorded, not computed: only the step counter's ops compute.
  for (const char* kernel :
       {"matmul", "add", "mean_all", "mean_all_grad", "add_grad", "matmul_grad"}) {
    h_.kernels.Add(kernel);
  }
  h_.kernels.Add("remainder", {DType::kInt32},
                 testing::TestBinary([](double a, double b) { return std::fmod(a, b); }));
  h_.kernels.Add("equal", {DType::kInt32},
                 testing::TestBinary([](double a, double b) { return a == b; }, true));
  h_.kernels.Add("sgd");
  ASSERT_OK(h_.Run(Fixture("gradient_merge_startup.prototxt")).status());
  EXPECT_EQ(h_.persistent.LocalNames(),
            (Strings{"b", "b@GRAD@MERGED", "gradient_merge_k", "gradient_merge_step",
                     "gradient_merge_zero", "learning_rate_0", "w", "w@GRAD@MERGED"}));
  // The main program has no feed op: x is found through the scope chain.
  h_.persistent.SetLocal("x", MakeTensor(DType::kFloat32, {3, 4}));
  const std::string main = Fixture("gradient_merge.prototxt");
  std::vector<double> steps;
  for (int step = 1; step <= 4; ++step) {
    ASSERT_OK(h_.Run(main).status());
    steps.push_back(ToDoubles(*h_.persistent.FindLocal("gradient_merge_step"))[0]);
  }
  // k = 2: the optimize block (two sgd ops) runs on steps 2 and 4.
  EXPECT_EQ(steps, (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(CallsOf("sgd"), 4u);
  EXPECT_EQ(CallsOf("matmul"), 4u);
}

}  // namespace
}  // namespace irm::rt
