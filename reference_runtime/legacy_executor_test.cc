// The legacy executor around its ops: feeds and fetches, the persistent scope and the step's
// temporaries, in-place writes, the observer, options reaching the kernels, and the errors of
// planning and running with their locations.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::DenseVar;
using testing::FeedOp;
using testing::FetchOp;
using testing::FloatAttr;
using testing::IntAttr;
using testing::LegacyHarness;
using testing::LongsAttr;
using testing::MakeTensor;
using testing::OneBlock;
using testing::OpText;
using testing::ToDoubles;
using Strings = std::vector<std::string>;

// y = x * 2 (scale), fetched after y; feeds x [-1, 3] and y [2].
std::string FeedFetchProgram() {
  return OneBlock(DenseVar("x", "FP32", {-1, 3}) + DenseVar("y", "FP32", {2}) +
                  DenseVar("s", "FP32", {-1, 3}) + FeedOp("x", 0) + FeedOp("y", 1) +
                  OpText("scale", {{"X", {"x"}}}, {{"Out", {"s"}}}, {FloatAttr("scale", 2.0f)}) +
                  FetchOp("y", 1) + FetchOp("s", 0));
}

class LegacyExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.kernels.Add("scale", {DType::kFloat32}, testing::TestScale);
    h_.kernels.Add("full", {DType::kFloat32, DType::kInt64}, testing::TestFull);
    h_.kernels.Add("assign", {DType::kFloat32}, testing::TestAssign);
  }
  LegacyHarness h_;
};

TEST_F(LegacyExecutorTest, FeedsByNameFetchesByColumn) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = MakeTensor(DType::kFloat32, {2}, {7, 8});
  StatusOr<std::vector<Fetch>> fetched = h_.Run(FeedFetchProgram(), {{"x", x}, {"y", y}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->size(), 2u);
  EXPECT_EQ((*fetched)[0].name, "s");
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((*fetched)[1].name, "y");
  EXPECT_TRUE((*fetched)[1].tensor.BitwiseEqual(y));
  // Fetches are copies: nothing of the step (nor the caller's feed) is aliased.
  EXPECT_FALSE((*fetched)[1].tensor.SharesStorageWith(y));
}

// A program saved without feed ops (as Paddle's Executor.run(feed=...) receives it): its data
// vars (need_check_feed) are fed by name, checked like feed ops, or found in the scope.
TEST_F(LegacyExecutorTest, ProgramsWithoutFeedOpsAreFedTheirDataVarsByName) {
  const std::string program =
      "blocks { idx: 0 parent_idx: -1 "
      "vars { name: \"x\" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 "
      "dims: -1 dims: 3 } } } need_check_feed: true } " +
      DenseVar("s", "FP32", {-1, 3}) +
      OpText("scale", {{"X", {"x"}}}, {{"Out", {"s"}}}, {FloatAttr("scale", 2.0f)}) +
      FetchOp("s", 0) + "}";
  LegacyExecutor executor(testing::ParseTestProgram(program), h_.options);
  ASSERT_OK(executor.plan_status());
  ASSERT_EQ(executor.FeedSpecs().size(), 1u);
  EXPECT_EQ(executor.FeedSpecs()[0].name, "x");
  EXPECT_EQ(executor.FeedSpecs()[0].shape, (std::vector<int64_t>{-1, 3}));
  const Tensor x = MakeTensor(DType::kFloat32, {1, 3}, {1, 2, 3});
  StatusOr<std::vector<Fetch>> fetched = h_.Run(program, {{"x", x}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(h_.Run(program, {{"x", MakeTensor(DType::kFloat32, {3})}}).status().ToString(),
            "t.prototxt: block 0, var 'x': error: feed 'x' is float32[3], but the var is "
            "declared float32[-1, 3]");
  EXPECT_EQ(h_.Run(program, {}).status().ToString(),
            "t.prototxt: block 0, var 'x': error: no feed for 'x'");
  h_.persistent.SetLocal("x", x);
  EXPECT_TRUE(h_.Run(program, {}).ok());
}

TEST_F(LegacyExecutorTest, FeedSpecsAndFetchNames) {
  LegacyExecutor executor(testing::ParseTestProgram(FeedFetchProgram()), h_.options);
  ASSERT_OK(executor.plan_status());
  const std::vector<FeedSpec> specs = executor.FeedSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "x");
  EXPECT_EQ(specs[0].dtype, DType::kFloat32);
  EXPECT_EQ(specs[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(specs[0].index_bound, 0);
  EXPECT_EQ(specs[1].name, "y");
  EXPECT_EQ(executor.FetchNames(), (Strings{"s", "y"}));
}

TEST_F(LegacyExecutorTest, IdsFedToAnEmbeddingAreBoundByItsTable) {
  const std::string program =
      OneBlock(DenseVar("ids", "INT64", {-1, 8}) + DenseVar("x", "FP32", {2}) +
               DenseVar("table", "FP32", {100, 16}, /*persistable=*/true) + FeedOp("x", 1) +
               FeedOp("ids", 0) +
               OpText("lookup_table_v2", {{"Ids", {"ids"}}, {"W", {"table"}}}, {{"Out", {"emb"}}}));
  LegacyExecutor executor(testing::ParseTestProgram(program), h_.options);
  const std::vector<FeedSpec> specs = executor.FeedSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "ids");
  EXPECT_EQ(specs[0].dtype, DType::kInt64);
  EXPECT_EQ(specs[0].index_bound, 100);
  EXPECT_EQ(specs[1].name, "x");
  EXPECT_EQ(specs[1].index_bound, 0);
}

TEST_F(LegacyExecutorTest, FeedErrors) {
  const Tensor y = MakeTensor(DType::kFloat32, {2});
  Status status = h_.Run(FeedFetchProgram(), {{"y", y}}).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(), "t.prototxt: block 0, op 0 (feed), var 'x': error: no feed for 'x'");
  status =
      h_.Run(FeedFetchProgram(), {{"x", MakeTensor(DType::kInt64, {4, 3})}, {"y", y}}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (feed), var 'x': error: feed 'x' is int64[4, 3], but the "
            "var is declared float32[-1, 3]");
  status =
      h_.Run(FeedFetchProgram(), {{"x", MakeTensor(DType::kFloat32, {4, 2})}, {"y", y}}).status();
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (feed), var 'x': error: feed 'x' is float32[4, 2], but the "
            "var is declared float32[-1, 3]");
  status = h_.Run(FeedFetchProgram(), {{"x", MakeTensor(DType::kFloat32, {3})}, {"y", y}}).status();
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (feed), var 'x': error: feed 'x' is float32[3], but the "
            "var is declared float32[-1, 3]");
  EXPECT_TRUE(h_.kernels.calls().empty());
}

TEST_F(LegacyExecutorTest, AFeedTargetMustBeADeclaredTensor) {
  LegacyExecutor executor(testing::ParseTestProgram(OneBlock(FeedOp("x", 0))), h_.options);
  EXPECT_EQ(executor.plan_status().code(), StatusCode::kInvalid);
  EXPECT_EQ(executor.plan_status().ToString(),
            "t.prototxt: block 0, op 0 (feed), var 'x': error: feed target 'x' is not declared as "
            "a dense tensor of a runtime dtype");
  EXPECT_TRUE(executor.FeedSpecs().empty());
  const StatusOr<std::vector<Fetch>> run = executor.Run(h_.persistent, {});
  EXPECT_EQ(run.status().ToString(), executor.plan_status().ToString());
}

TEST_F(LegacyExecutorTest, TwoFetchesOfOneColumnAreAnError) {
  LegacyExecutor executor(
      testing::ParseTestProgram(OneBlock(FetchOp("a", 0) + FetchOp("b", 1) + FetchOp("c", 0))),
      h_.options);
  EXPECT_EQ(executor.plan_status().ToString(),
            "t.prototxt: block 0, op 2 (fetch): error: fetch column 0 is also written by op 0");
}

TEST_F(LegacyExecutorTest, AProgramWithoutBlocks) {
  LegacyExecutor executor(oldir::Program(), h_.options);
  EXPECT_EQ(executor.plan_status().ToString(), "t.prototxt: error: the program has no blocks");
}

TEST_F(LegacyExecutorTest, PersistableVarsLiveInThePersistentScope) {
  h_.kernels.Add("sgd", {DType::kFloat32}, [](KernelCall& call) {
    std::vector<double> w = ToDoubles(call.input(0));
    const double lr = ToDoubles(call.input(1))[0];
    const std::vector<double> g = ToDoubles(call.input(2));
    for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * g[i];
    call.SetOutput(0, testing::FromDoubles(w, call.input(0).shape(), DType::kFloat32));
    return Status::Ok();
  });
  const std::string program =
      OneBlock(DenseVar("w", "FP32", {2}, true) + DenseVar("lr", "FP32", {1}, true) +
               DenseVar("g", "FP32", {2}) + DenseVar("steps", "INT64", {1}, true) +
               OpText("fill_constant", {}, {{"Out", {"g"}}},
                      {LongsAttr("shape", {2}), IntAttr("dtype", 5), FloatAttr("value", 4.0f)}) +
               OpText("sgd", {{"Param", {"w"}}, {"LearningRate", {"lr"}}, {"Grad", {"g"}}},
                      {{"ParamOut", {"w"}}}) +
               OpText("fill_constant", {}, {{"Out", {"steps"}}},
                      {LongsAttr("shape", {1}), IntAttr("dtype", 3), FloatAttr("value", 1.0f)}));
  h_.persistent.SetLocal("w", MakeTensor(DType::kFloat32, {2}, {1.0, 2.0}));
  h_.persistent.SetLocal("lr", MakeTensor(DType::kFloat32, {1}, {0.5}));
  const Tensor before = *h_.persistent.FindLocal("w");
  ASSERT_OK(h_.Run(program).status());
  // sgd wrote w in place (ParamOut is Param): into the storage the scope already held.
  EXPECT_EQ(ToDoubles(*h_.persistent.FindLocal("w")), (std::vector<double>{-1.0, 0.0}));
  EXPECT_TRUE(h_.persistent.FindLocal("w")->SharesStorageWith(before));
  // A persistable var's first write lands in the persistent scope; temporaries do not.
  EXPECT_EQ(h_.persistent.LocalNames(), (Strings{"lr", "steps", "w"}));
  EXPECT_EQ(ToDoubles(*h_.persistent.FindLocal("steps")), (std::vector<double>{1.0}));
}

TEST_F(LegacyExecutorTest, AMissingParameterIsNotFound) {
  h_.kernels.Add("sgd");
  const std::string program =
      OneBlock(DenseVar("w", "FP32", {2}, true) + DenseVar("lr", "FP32", {1}, true) +
               OpText("sgd", {{"Param", {"w"}}, {"LearningRate", {"lr"}}, {"Grad", {"lr"}}},
                      {{"ParamOut", {"w"}}}));
  h_.persistent.SetLocal("lr", MakeTensor(DType::kFloat32, {1}));
  const Status status = h_.Run(program).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (sgd), var 'w': error: persistable var 'w' is not in the "
            "persistent scope");
  EXPECT_EQ(h_.persistent.LocalNames(), Strings{"lr"});
}

TEST_F(LegacyExecutorTest, AVarReadBeforeItIsWritten) {
  const std::string program =
      OneBlock(DenseVar("t", "FP32", {2}) + OpText("scale", {{"X", {"t"}}}, {{"Out", {"u"}}}));
  const Status status = h_.Run(program).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (scale), var 't': error: var 't' is read before any op "
            "writes it");
}

TEST_F(LegacyExecutorTest, InPlaceWritesKeepFeedsIntactAndRebindOnANewShape) {
  h_.kernels.Add("reshape");  // a recording kernel: out is float32[1], xshape float32[2]
  const std::string program = OneBlock(
      DenseVar("x", "FP32", {2}) + DenseVar("p", "FP32", {2}, true) + FeedOp("x", 0) +
      OpText("scale", {{"X", {"x"}}}, {{"Out", {"x"}}}, {FloatAttr("scale", 3.0f)}) +
      OpText("reshape2", {{"X", {"p"}}}, {{"Out", {"p"}}}, {testing::IntsAttr("shape", {1})}) +
      FetchOp("x", 0));
  const Tensor x = MakeTensor(DType::kFloat32, {2}, {1.0, 2.0});
  h_.persistent.SetLocal("p", MakeTensor(DType::kFloat32, {2}, {5.0, 6.0}));
  const Tensor p_before = *h_.persistent.FindLocal("p");
  StatusOr<std::vector<Fetch>> fetched = h_.Run(program, {{"x", x}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{3.0, 6.0}));
  EXPECT_EQ(ToDoubles(x), (std::vector<double>{1.0, 2.0}));
  // A result of another shape rebinds the var; the old storage keeps its values.
  EXPECT_EQ(h_.persistent.FindLocal("p")->Describe(), "float32[1]");
  EXPECT_EQ(ToDoubles(p_before), (std::vector<double>{5.0, 6.0}));
}

TEST_F(LegacyExecutorTest, TheObserverSeesEveryOpInOrder) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3});
  const Tensor y = MakeTensor(DType::kFloat32, {2});
  ASSERT_OK(h_.Run(FeedFetchProgram(), {{"x", x}, {"y", y}}).status());
  EXPECT_EQ(h_.events, (Strings{"0/0 feed: x=float32[2, 3]", "0/1 feed: y=float32[2]",
                                "0/2 scale: s=float32[2, 3]", "0/3 fetch: ", "0/4 fetch: "}));
}

TEST_F(LegacyExecutorTest, RunsWithoutAnObserver) {
  h_.options.observer = nullptr;
  const Tensor x = MakeTensor(DType::kFloat32, {1, 3}, {1, 1, 1});
  const Tensor y = MakeTensor(DType::kFloat32, {2});
  StatusOr<std::vector<Fetch>> fetched = h_.Run(FeedFetchProgram(), {{"x", x}, {"y", y}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (std::vector<double>{2, 2, 2}));
  EXPECT_TRUE(h_.events.empty());
}

TEST_F(LegacyExecutorTest, APlanningErrorStopsTheRunBeforeAnyOp) {
  const std::string program =
      OneBlock(DenseVar("w", "FP32", {2}, true) +
               OpText("scale", {{"X", {"w"}}}, {{"Out", {"w"}}}, {FloatAttr("scale", 3.0f)}) +
               OpText("mystery", {{"X", {"w"}}}, {{"Out", {"w"}}}));
  h_.persistent.SetLocal("w", MakeTensor(DType::kFloat32, {2}, {1.0, 2.0}));
  const Status status = h_.Run(program).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 1 (mystery): error: no binding for legacy op 'mystery'");
  EXPECT_TRUE(h_.kernels.calls().empty());
  EXPECT_EQ(ToDoubles(*h_.persistent.FindLocal("w")), (std::vector<double>{1.0, 2.0}));
}

TEST_F(LegacyExecutorTest, OptionsReachTheKernelContext) {
  h_.kernels.Add("matmul");
  h_.options.gemm = GemmMode::kReference;
  h_.options.seed = 42;
  h_.persistent.SetLocal("x", MakeTensor(DType::kFloat32, {2, 2}));
  ASSERT_OK(h_.RunOps(OpText("matmul_v2", {{"X", {"x"}}, {"Y", {"x"}}}, {{"Out", {"y"}}})));
  EXPECT_EQ(h_.OnlyCall().context.gemm, GemmMode::kReference);
  EXPECT_EQ(h_.OnlyCall().context.program_seed, 42u);
}

TEST_F(LegacyExecutorTest, RunsAreRepeatableAndIndependent) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  const Tensor y = MakeTensor(DType::kFloat32, {2});
  LegacyExecutor executor(testing::ParseTestProgram(FeedFetchProgram()), h_.options);
  Scope first;
  Scope second;
  StatusOr<std::vector<Fetch>> a = executor.Run(first, {{"x", x}, {"y", y}});
  StatusOr<std::vector<Fetch>> b = executor.Run(second, {{"x", x}, {"y", y}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE((*a)[0].tensor.BitwiseEqual((*b)[0].tensor));
  EXPECT_TRUE(first.LocalNames().empty());
}

TEST_F(LegacyExecutorTest, AJobKeepsItsTemporariesForTheLaterJobs) {
  // Run drops a step's vars after their last use; RunJob must not: a later job of the
  // micro-batch reads them by name from the job scope.
  const Tensor x = MakeTensor(DType::kFloat32, {1, 3}, {1, 2, 3});
  const Tensor y = MakeTensor(DType::kFloat32, {2});
  LegacyExecutor executor(testing::ParseTestProgram(FeedFetchProgram()), h_.options);
  Scope persistent;
  Scope job(&persistent);
  ASSERT_OK(executor.RunJob(persistent, job, {{"x", x}, {"y", y}}).status());
  EXPECT_EQ(job.LocalNames(), (Strings{"s", "x", "y"}));
  EXPECT_EQ(ToDoubles(*job.FindLocal("s")), (std::vector<double>{2, 4, 6}));
}

}  // namespace
}  // namespace irm::rt
