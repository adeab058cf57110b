// Every failure of the new-IR executor, with its exact diagnostic: its code, the file, the op's
// index and name, the path of the regions around a nested op, and the message (a kernel's own
// message kept as it is).
#include <gtest/gtest.h>

#include <memory>

#include "newir/parser.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/pir_test_kernels.h"

namespace irm::rt {
namespace {

using testing::RecordingKernels;
using Doubles = std::vector<double>;

Tensor Of(DType dtype, Doubles values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), dtype);
}

class PirExecutorErrorsTest : public ::testing::Test {
 protected:
  PirExecutorErrorsTest() : options_(kernels_.Options()) {
    kernels_.SetBehaviour("full", testing::FullBehaviour);
    kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
    scope_.SetLocal("x", Of(DType::kFloat32, {1, 2, 3, 4, 5, 6}, {2, 3}));
  }

  // The status of running `text`, which must fail with `code`, rendered.
  std::string ErrorOf(const std::string& text, StatusCode code, const FeedMap& feeds = {},
                      bool verify = true) {
    if (verify) {
      program_ = std::make_unique<newir::Program>(testing::ParseVerified(text));
    } else {
      newir::ParseOptions parse;
      parse.allow_unregistered = true;
      StatusOr<newir::Program> parsed = newir::ParseProgram(text, "t.pir", parse);
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      if (!parsed.ok()) return "";
      program_ = std::make_unique<newir::Program>(std::move(parsed).value());
    }
    PirExecutor executor(*program_, options_);
    StatusOr<std::vector<Fetch>> fetches = executor.Run(scope_, feeds);
    if (fetches.ok()) return "ran";
    EXPECT_EQ(fetches.status().code(), code) << fetches.status().ToString();
    return fetches.status().ToString();
  }

  RecordingKernels kernels_;
  ExecutorOptions options_;
  Scope scope_;
  std::unique_ptr<newir::Program> program_;
};

constexpr char kX[] =
    R"((%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3xf32>)";

std::string Program(const std::string& body) {
  return std::string("{\n    ") + kX + "\n" + body + "\n}";
}

TEST_F(PirExecutorErrorsTest, AnOpWithoutABinding) {
  EXPECT_EQ(ErrorOf(Program(R"((%1) = "builtin.constant" () {value:1} : () -> tensor<1xf32>)"),
                    StatusCode::kUnimplemented),
            "t.pir: op 1 (builtin.constant): error: no binding for 'builtin.constant'");
  EXPECT_EQ(ErrorOf(Program(R"((%1) = "test.op" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>)"),
                    StatusCode::kUnimplemented, {}, /*verify=*/false),
            "t.pir: op 1 (test.op): error: no binding for 'test.op'");
}

TEST_F(PirExecutorErrorsTest, CommunicationNeedsTheMultiRankRuntime) {
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.c_allreduce_sum_" (%0) {ring_id:0} : (tensor<2x3xf32>) -> tensor<2x3xf32>)"),
          StatusCode::kUnimplemented),
      "t.pir: op 1 (pd_op.c_allreduce_sum_): error: 'pd_op.c_allreduce_sum_' needs the "
      "multi-rank runtime");
  EXPECT_EQ(ErrorOf(Program(R"(() = "pd_op.p_send" (%0) {peer:1} : (tensor<2x3xf32>) ->)"),
                    StatusCode::kUnimplemented),
            "t.pir: op 1 (pd_op.p_send): error: 'pd_op.p_send' needs the multi-rank runtime");
}

TEST_F(PirExecutorErrorsTest, AMissingParameter) {
  EXPECT_EQ(
      ErrorOf(
          Program(R"((%1) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<2xf32>)"),
          StatusCode::kNotFound),
      "t.pir: op 1 (builtin.parameter): error: parameter 'w' is not in the scope");
}

constexpr char kFeed[] = R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"f",place:Place(cpu),shape:[-1,3]} : () -> tensor<-1x3xf32>
    (%1) = "pd_op.feed" () {col:0,name:"g"} : () -> tensor<2xi64>
})";

TEST_F(PirExecutorErrorsTest, AMissingFeed) {
  EXPECT_EQ(ErrorOf(kFeed, StatusCode::kNotFound, {{"g", Of(DType::kInt64, {1, 2}, {2})}}),
            "t.pir: op 0 (pd_op.data): error: feed 'f' is missing");
  EXPECT_EQ(ErrorOf(kFeed, StatusCode::kNotFound, {{"f", Of(DType::kFloat32, {1, 2, 3}, {1, 3})}}),
            "t.pir: op 1 (pd_op.feed): error: feed 'g' is missing");
}

TEST_F(PirExecutorErrorsTest, AFeedOfAnotherDTypeOrShape) {
  const Tensor g = Of(DType::kInt64, {1, 2}, {2});
  EXPECT_EQ(
      ErrorOf(kFeed, StatusCode::kInvalidArgument, {{"f", Of(DType::kInt64, {1, 2, 3}, {1, 3})}}),
      "t.pir: op 0 (pd_op.data): error: feed 'f' is int64[1, 3] but the program declares "
      "builtin.tensor<-1x3xf32>");
  EXPECT_EQ(ErrorOf(kFeed, StatusCode::kInvalidArgument,
                    {{"f", Of(DType::kFloat32, {1, 2, 3, 4}, {1, 4})}}),
            "t.pir: op 0 (pd_op.data): error: feed 'f' is float32[1, 4] but the program declares "
            "builtin.tensor<-1x3xf32>");
  EXPECT_EQ(
      ErrorOf(kFeed, StatusCode::kInvalidArgument, {{"f", Of(DType::kFloat32, {1, 2, 3}, {3})}}),
      "t.pir: op 0 (pd_op.data): error: feed 'f' is float32[3] but the program declares "
      "builtin.tensor<-1x3xf32>");
  EXPECT_EQ(ErrorOf(kFeed, StatusCode::kInvalidArgument,
                    {{"f", Of(DType::kFloat32, {1, 2, 3}, {1, 3})}, {"g", Tensor()}}),
            "t.pir: op 1 (pd_op.feed): error: feed 'g' is undefined but the program declares "
            "builtin.tensor<2xi64>");
}

TEST_F(PirExecutorErrorsTest, AKernelErrorKeepsItsMessageAndGetsTheOpsLocation) {
  kernels_.SetBehaviour("maximum", [](KernelCall&, DType) -> Status {
    return KernelError("x [2, 3] and y [4] do not broadcast");
  });
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.maximum" (%0, %0) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>)"),
          StatusCode::kInvalid),
      "t.pir: op 1 (pd_op.maximum): error: x [2, 3] and y [4] do not broadcast");
}

TEST_F(PirExecutorErrorsTest, AKernelWithoutTheDType) {
  kernels_.Unregister("relu", DType::kFloat32);
  EXPECT_EQ(
      ErrorOf(Program(R"((%1) = "pd_op.relu" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>)"),
              StatusCode::kUnimplemented),
      "t.pir: op 1 (pd_op.relu): error: kernel 'relu' has no float32 version on cpu (it has: "
      "bool, int8, uint8, int16, int32, int64, float16, bfloat16, float64)");
}

TEST_F(PirExecutorErrorsTest, MutableOperandsOfTheWrongKind) {
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],value:3} : () -> tensor<2xf32>
    (%2, %3) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<3x2xf32>, <<NULL TYPE>>)"),
                    StatusCode::kInvalid),
            "t.pir: op 2 (pd_op.reshape): error: operand 1 ('shape') must be an integer tensor, "
            "got float32[2]");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],value:3} : () -> tensor<1xi64>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
    (%3) = "builtin.combine" (%1, %2) {} : (tensor<1xi64>, tensor<1xf32>) -> vec[tensor<1xi64>,tensor<1xf32>]
    (%4, %5) = "pd_op.reshape" (%0, %3) {} : (tensor<2x3xf32>, vec[tensor<1xi64>,tensor<1xf32>]) -> tensor<3x2xf32>, <<NULL TYPE>>)"),
                    StatusCode::kInvalid),
            "t.pir: op 4 (pd_op.reshape): error: element 1 of operand 1 ('shape') must be an "
            "integer tensor holding one value, got float32[1]");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],value:3} : () -> tensor<2xf32>
    (%2) = "pd_op.scale" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>)"),
                    StatusCode::kInvalid),
            "t.pir: op 2 (pd_op.scale): error: operand 1 ('scale') must be a real tensor holding "
            "one value, got float32[2]");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.split_with_num" (%0, %1) {num:3} : (tensor<2x3xf32>, tensor<1xf32>) -> vec[tensor<2x1xf32>,tensor<2x1xf32>,tensor<2x1xf32>])"),
                    StatusCode::kInvalid),
            "t.pir: op 2 (pd_op.split_with_num): error: operand 1 ('axis') must be an integer "
            "tensor holding one value, got float32[1]");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>
    (%2) = "builtin.combine" (%1) {} : (tensor<1xf32>) -> vec[tensor<1xf32>]
    (%3) = "pd_op.scale" (%0, %2) {} : (tensor<2x3xf32>, vec[tensor<1xf32>]) -> tensor<2x3xf32>)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 3 (pd_op.scale): error: operand 1 ('scale') must be a tensor holding one "
            "value, not a vector");
}

TEST_F(PirExecutorErrorsTest, AnInPlaceResultThatDoesNotFitItsOperand) {
  // cast_ to another dtype cannot be written into the storage it replaces.
  kernels_.SetBehaviour("cast", [](KernelCall& call, DType) -> Status {
    call.SetOutput(0, Tensor::ZerosUnchecked(DType::kInt32, call.input(0).shape()));
    return Status::Ok();
  });
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.cast_" (%0) {dtype:int32} : (tensor<2x3xf32>) -> tensor<2x3xi32>)"),
          StatusCode::kInvalid),
      "t.pir: op 1 (pd_op.cast_): error: result 0 ('out') is int32[2, 3] and cannot be written "
      "in place into operand 0 ('x'), which is float32[2, 3]");
}

TEST_F(PirExecutorErrorsTest, ADTypeAttributeNamingNoRuntimeDType) {
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.full" () {dtype:Undefined,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>)"),
          StatusCode::kInvalid),
      "t.pir: op 1 (pd_op.full): error: attribute 'dtype' names no dtype the runtime computes "
      "with");
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.full" () {dtype:uint16,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>)"),
          StatusCode::kUnimplemented),
      "t.pir: op 1 (pd_op.full): error: attribute 'dtype' is uint16, which no kernel attribute "
      "can hold");
}

TEST_F(PirExecutorErrorsTest, AnEmptyVectorSelectsNoDType) {
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "builtin.combine" () {} : () -> vec[]
    (%2) = "pd_op.add_n" (%1) {} : (vec[]) -> tensor<2x3xf32>)"),
                    StatusCode::kInvalid),
            "t.pir: op 2 (pd_op.add_n): error: operand 0 ('inputs') is an empty vector: no "
            "dtype for the kernel");
}

TEST_F(PirExecutorErrorsTest, AValueItsKernelDidNotProduce) {
  kernels_.SetBehaviour("tanh", [](KernelCall&, DType) { return Status::Ok(); });
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "pd_op.tanh" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%2) = "pd_op.relu" (%1) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>)"),
                    StatusCode::kInvalid),
            "t.pir: op 2 (pd_op.relu): error: operand 0 ('x') reads a value that was not "
            "computed");
}

// Checks the verifier makes, repeated where the executor depends on them, for programs run
// without verification.
TEST_F(PirExecutorErrorsTest, UnverifiedProgramsFailCleanly) {
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    (%2) = "builtin.slice" (%1) {index:1} : (vec[tensor<2x3xf32>]) -> tensor<2x3xf32>)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 2 (builtin.slice): error: index 1 is out of range for a vector of 1 "
            "tensors");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    (%2, %3) = "builtin.split" (%1) {} : (vec[tensor<2x3xf32>]) -> tensor<2x3xf32>, tensor<2x3xf32>)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 2 (builtin.split): error: has 2 results but its operand holds 1 tensors");
  EXPECT_EQ(ErrorOf(Program(R"(
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    (%2) = "pd_op.relu" (%1) {} : (vec[tensor<2x3xf32>]) -> tensor<2x3xf32>
    (%3) = "pd_op.add" (%2, %2) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    () = "builtin.set_parameter" (%1) {parameter_name:"v"} : (vec[tensor<2x3xf32>]) ->)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 4 (builtin.set_parameter): error: operand 0 ('parameter') is a vector, "
            "not a tensor");
  EXPECT_EQ(
      ErrorOf(
          Program(
              R"((%1) = "pd_op.relu" (%0, %0) {} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>)"),
          StatusCode::kInvalid, {}, /*verify=*/false),
      "t.pir: op 1 (pd_op.relu): error: has 2 operands and 1 results but its signature "
      "has 1 and 1");
  EXPECT_EQ(ErrorOf(Program(R"(() = "cf.yield" (%0) {} : (tensor<2x3xf32>) ->)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 1 (cf.yield): error: cf.yield ends a nested region; it cannot be in the "
            "top block");
  EXPECT_EQ(ErrorOf(Program(R"(() = "builtin.shadow_output" (%0) {} : (tensor<2x3xf32>) ->)"),
                    StatusCode::kInvalid, {}, /*verify=*/false),
            "t.pir: op 1 (builtin.shadow_output): error: needs a string attribute 'output_name'");
}

TEST_F(PirExecutorErrorsTest, AnErrorInANestedRegionNamesThePathToIt) {
  kernels_.SetBehaviour("less_than", testing::LessThanBehaviour);
  kernels_.SetBehaviour("increment", testing::IncrementBehaviour);
  kernels_.SetBehaviour("tanh",
                        [](KernelCall&, DType) -> Status { return KernelError("tanh refuses"); });
  const std::string text = R"({
    (%0) = "pd_op.data" () {dtype:int64,name:"i",place:Place(cpu),shape:[1]} : () -> tensor<1xi64>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xi64>
    (%2) = "pd_op.less_than" (%0, %1) {} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
    (%3) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3xf32>
    (%4, %5) = "pd_op.while" (cond=%2, inputs=%0, %3) {} {
    ^%arg_0 {}, %arg_1 {}
        (%6) = "pd_op.increment_" (%arg_0) {value:1} : (tensor<1xi64>) -> tensor<1xi64>
        (%7) = "pd_op.less_than" (%6, %1) {} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
        (%8) = "pd_op.if" (%7) {} -> tensor<2x3xf32> {
            () = "cf.yield" (%arg_1) {} : (tensor<2x3xf32>) ->
        } else {
            (%9) = "pd_op.relu" (%arg_1) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
            (%10) = "pd_op.tanh" (%9) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
            () = "cf.yield" (%10) {} : (tensor<2x3xf32>) ->
        }
        () = "cf.yield" (%7, %6, %8) {} : (tensor<1xb>, tensor<1xi64>, tensor<2x3xf32>) ->
    }
})";
  // The second iteration takes the false region, where tanh fails.
  EXPECT_EQ(ErrorOf(text, StatusCode::kInvalid, {{"i", Of(DType::kInt64, {0}, {1})}}),
            "t.pir: op 1 (pd_op.tanh), in region 1 of op 2 (pd_op.if) in region 0 of op 4 "
            "(pd_op.while): error: tanh refuses");
}

}  // namespace
}  // namespace irm::rt
