// Tests of control flow in the new-IR executor: pd_op.if taking either region (including an
// in-place write into an outer value, as translated conditional blocks do), pd_op.while looping
// until its condition fails (including zero iterations and in-place updates of the loop values),
// nested regions seen by the observer, and conditions that are no bool scalar.
#include <gtest/gtest.h>

#include <memory>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/pir_test_kernels.h"

namespace irm::rt {
namespace {

using testing::RecordingKernels;
using testing::ToDoubles;
using Doubles = std::vector<double>;

Tensor Of(DType dtype, Doubles values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), dtype);
}

class PirControlFlowTest : public ::testing::Test {
 protected:
  PirControlFlowTest() : options_(kernels_.Options()) {
    kernels_.SetBehaviour("full", testing::FullBehaviour);
    kernels_.SetBehaviour("less_than", testing::LessThanBehaviour);
    kernels_.SetBehaviour("scale", testing::ScaleBehaviour);
    kernels_.SetBehaviour("increment", testing::IncrementBehaviour);
  }

  StatusOr<std::vector<Fetch>> Run(const std::string& text, const FeedMap& feeds) {
    program_ = std::make_unique<newir::Program>(testing::ParseVerified(text));
    PirExecutor executor(*program_, options_);
    return executor.Run(scope_, feeds);
  }
  Doubles Fetched(const std::string& text, const FeedMap& feeds, size_t fetch = 0) {
    StatusOr<std::vector<Fetch>> fetches = Run(text, feeds);
    EXPECT_TRUE(fetches.ok()) << fetches.status().ToString();
    if (!fetches.ok() || fetches->size() <= fetch) return {};
    return ToDoubles((*fetches)[fetch].tensor);
  }

  RecordingKernels kernels_;
  ExecutorOptions options_;
  Scope scope_;
  std::unique_ptr<newir::Program> program_;
};

// if (i < 2) out = i * 2 + 0.5 else out = relu(i) (the recording relu: 100).
constexpr char kIf[] = R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"i",place:Place(cpu),shape:[1]} : () -> tensor<1xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
    (%2) = "pd_op.less_than" (%0, %1) {} : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xb>
    (%3) = "pd_op.if" (%2) {} -> tensor<1xf32> {
        (%4) = "pd_op.scale" (%0, %1) {bias:0.5,bias_after_scale:true} : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
        () = "cf.yield" (%4) {} : (tensor<1xf32>) ->
    } else {
        (%5) = "pd_op.relu" (%0) {} : (tensor<1xf32>) -> tensor<1xf32>
        () = "cf.yield" (%5) {} : (tensor<1xf32>) ->
    }
    (%6) = "pd_op.fetch" (%3) {col:0,name:"out"} : (tensor<1xf32>) -> tensor<1xf32>
})";

TEST_F(PirControlFlowTest, IfRunsTheTrueRegionWhenTheConditionHolds) {
  EXPECT_EQ(Fetched(kIf, {{"i", Of(DType::kFloat32, {1}, {1})}}), (Doubles{2.5}));
  EXPECT_EQ(kernels_.RecordsOf("relu").size(), 0u);
}

TEST_F(PirControlFlowTest, IfRunsTheFalseRegionOtherwise) {
  EXPECT_EQ(Fetched(kIf, {{"i", Of(DType::kFloat32, {3}, {1})}}), (Doubles{100}));
  EXPECT_EQ(kernels_.RecordsOf("scale").size(), 0u);
}

// A translated conditional block: the true region writes the outer h in place (assign_out_),
// the synthesized false region yields h as it is.
TEST_F(PirControlFlowTest, IfRegionWritesAnOuterValueInPlace) {
  const std::string text = R"({
    (%0) = "builtin.parameter" () {parameter_name:"h"} : () -> tensor<2xf32>
    (%1) = "pd_op.data" () {dtype:bool,name:"c",place:Place(cpu),shape:[1]} : () -> tensor<1xb>
    (%2, %3) = "pd_op.if" (%1) {fake_false_branch:true} -> tensor<2xf32>, tensor<2xf32> {
        (%4) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
        (%5) = "pd_op.scale" (%0, %4) {bias:0,bias_after_scale:true} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
        (%6) = "pd_op.assign_out_" (%5, %0) {} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        () = "cf.yield" (%6, %5) {} : (tensor<2xf32>, tensor<2xf32>) ->
    } else {
        (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],value:0} : () -> tensor<2xf32>
        () = "cf.yield" (%0, %7) {} : (tensor<2xf32>, tensor<2xf32>) ->
    }
    (%8) = "pd_op.fetch" (%2) {col:0,name:"h"} : (tensor<2xf32>) -> tensor<2xf32>
    (%9) = "pd_op.fetch" (%3) {col:1,name:"z"} : (tensor<2xf32>) -> tensor<2xf32>
})";
  kernels_.SetBehaviour("assign", testing::IncrementBehaviour);  // x + 1: a visible copy
  scope_.SetLocal("h", Of(DType::kFloat32, {1, 2}, {2}));
  EXPECT_EQ(Fetched(text, {{"c", Of(DType::kBool, {0}, {1})}}, 0), (Doubles{1, 2}));
  EXPECT_EQ(Fetched(text, {{"c", Of(DType::kBool, {0}, {1})}}, 1), (Doubles{0, 0}));
  EXPECT_EQ(ToDoubles(*scope_.Find("h")), (Doubles{1, 2}));
  EXPECT_EQ(Fetched(text, {{"c", Of(DType::kBool, {1}, {1})}}, 0), (Doubles{3, 5}));
  EXPECT_EQ(ToDoubles(*scope_.Find("h")), (Doubles{3, 5}));
}

// The translated legacy while: acc doubles and i counts up while i < n.
constexpr char kWhile[] = R"({
    (%0) = "pd_op.data" () {dtype:int64,name:"i",place:Place(cpu),shape:[1]} : () -> tensor<1xi64>
    (%1) = "pd_op.data" () {dtype:int64,name:"n",place:Place(cpu),shape:[1]} : () -> tensor<1xi64>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],value:1.5} : () -> tensor<2xf32>
    (%3) = "pd_op.less_than" (%0, %1) {} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
    (%4, %5) = "pd_op.while" (cond=%3, inputs=%2, %0) {legacy_var_names:["acc","i"]} {
    ^%arg_0 {legacy_var_name:"acc"}, %arg_1 {legacy_var_name:"i"}
        (%6) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
        (%7) = "pd_op.scale_" (%arg_0, %6) {bias:0,bias_after_scale:true,legacy_var_names:["acc"]} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
        (%8) = "pd_op.increment_" (%arg_1) {legacy_var_names:["i"],value:1} : (tensor<1xi64>) -> tensor<1xi64>
        (%9) = "pd_op.less_than" (%8, %1) {legacy_var_names:["cond"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
        () = "cf.yield" (%9, %7, %8) {} : (tensor<1xb>, tensor<2xf32>, tensor<1xi64>) ->
    }
    (%10) = "pd_op.fetch" (%4) {col:0,name:"acc"} : (tensor<2xf32>) -> tensor<2xf32>
    (%11) = "pd_op.fetch" (%5) {col:1,name:"i"} : (tensor<1xi64>) -> tensor<1xi64>
})";

TEST_F(PirControlFlowTest, WhileLoopsWhileTheConditionHolds) {
  const FeedMap feeds = {{"i", Of(DType::kInt64, {0}, {1})}, {"n", Of(DType::kInt64, {3}, {1})}};
  StatusOr<std::vector<Fetch>> fetches = Run(kWhile, feeds);
  ASSERT_TRUE(fetches.ok()) << fetches.status().ToString();
  ASSERT_EQ(fetches->size(), 2u);
  EXPECT_EQ(ToDoubles((*fetches)[0].tensor), (Doubles{12, 12}));
  EXPECT_EQ(ToDoubles((*fetches)[1].tensor), (Doubles{3}));
  EXPECT_EQ(kernels_.RecordsOf("increment").size(), 3u);
  // The in-place updates of the loop values never reach the caller's feed.
  EXPECT_EQ(ToDoubles(feeds.at("i")), (Doubles{0}));
}

TEST_F(PirControlFlowTest, WhileWhoseConditionFailsAtOnceYieldsItsInputs) {
  StatusOr<std::vector<Fetch>> fetches =
      Run(kWhile, {{"i", Of(DType::kInt64, {5}, {1})}, {"n", Of(DType::kInt64, {3}, {1})}});
  ASSERT_TRUE(fetches.ok()) << fetches.status().ToString();
  ASSERT_EQ(fetches->size(), 2u);
  EXPECT_EQ(ToDoubles((*fetches)[0].tensor), (Doubles{1.5, 1.5}));
  EXPECT_EQ(ToDoubles((*fetches)[1].tensor), (Doubles{5}));
  EXPECT_EQ(kernels_.RecordsOf("increment").size(), 0u);
}

TEST_F(PirControlFlowTest, TheObserverSeesTheBodyOncePerIteration) {
  std::vector<std::string> seen;
  const OpObserver observer = [&](const OpEvent& event) {
    std::string line = std::to_string(event.block) + "/" + std::to_string(event.op_index) + " " +
                       std::string(event.op_type);
    for (const auto& [name, tensor] : event.outputs) line += " " + std::string(name);
    seen.push_back(line);
  };
  options_.observer = &observer;
  ASSERT_TRUE(
      Run(kWhile, {{"i", Of(DType::kInt64, {1}, {1})}, {"n", Of(DType::kInt64, {3}, {1})}}).ok());
  const std::vector<std::string> body = {"1/0 pd_op.full %0@0", "1/1 pd_op.scale_ acc",
                                         "1/2 pd_op.increment_ i", "1/3 pd_op.less_than cond"};
  std::vector<std::string> expected = {"0/0 pd_op.data %0@0", "0/1 pd_op.data %0@1",
                                       "0/2 pd_op.full %0@2", "0/3 pd_op.less_than %0@3"};
  expected.insert(expected.end(), body.begin(), body.end());
  expected.insert(expected.end(), body.begin(), body.end());
  expected.insert(expected.end(),
                  {"0/4 pd_op.while acc i", "0/5 pd_op.fetch %0@5", "0/6 pd_op.fetch %0@6"});
  EXPECT_EQ(seen, expected);
}

TEST_F(PirControlFlowTest, AConditionThatIsNoBoolIsInvalid) {
  // The IR says bool; the kernel that computes the condition hands back float32.
  kernels_.SetBehaviour("less_than", testing::IncrementBehaviour);
  StatusOr<std::vector<Fetch>> fetches = Run(kIf, {{"i", Of(DType::kFloat32, {1}, {1})}});
  ASSERT_FALSE(fetches.ok());
  EXPECT_EQ(fetches.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(fetches.status().ToString(),
            "t.pir: op 3 (pd_op.if): error: cond (operand 0) must be a bool tensor holding one "
            "value, got float32[1]");
}

TEST_F(PirControlFlowTest, AConditionOfSeveralValuesIsInvalid) {
  const std::string text = R"({
    (%0) = "pd_op.data" () {dtype:bool,name:"c",place:Place(cpu),shape:[2]} : () -> tensor<2xb>
    (%1) = "pd_op.while" (cond=%0, inputs=%0) {} {
    ^%arg_0 {}
        () = "cf.yield" (%arg_0, %arg_0) {} : (tensor<2xb>, tensor<2xb>) ->
    }
})";
  StatusOr<std::vector<Fetch>> fetches = Run(text, {{"c", Of(DType::kBool, {1, 1}, {2})}});
  ASSERT_FALSE(fetches.ok());
  EXPECT_EQ(fetches.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(fetches.status().ToString(),
            "t.pir: op 1 (pd_op.while): error: cond (operand 0) must be a bool tensor holding "
            "one value, got bool[2]");
}

TEST_F(PirControlFlowTest, ANextConditionThatIsNoBoolIsInvalid) {
  // The body's less_than hands back float32 from the second evaluation on.
  kernels_.SetBehaviour("less_than", [](KernelCall& call, DType dtype) -> Status {
    static int calls = 0;
    if (++calls == 1) return testing::LessThanBehaviour(call, dtype);
    call.SetOutput(0, Of(DType::kFloat32, {1}, {1}));
    return Status::Ok();
  });
  StatusOr<std::vector<Fetch>> fetches =
      Run(kWhile, {{"i", Of(DType::kInt64, {0}, {1})}, {"n", Of(DType::kInt64, {3}, {1})}});
  ASSERT_FALSE(fetches.ok());
  EXPECT_EQ(fetches.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(fetches.status().ToString(),
            "t.pir: op 4 (pd_op.while): error: the body's next cond must be a bool tensor "
            "holding one value, got float32[1]");
}

}  // namespace
}  // namespace irm::rt
