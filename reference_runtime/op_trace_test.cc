// The per-op trace on both executors with the real kernels: what each record holds (context,
// names read and written, shape, dtype, a hash of the bytes, float64 statistics), which outputs
// keep a full copy, statistics over NaN and Inf, and the keep patterns.
#include "reference_runtime/op_trace.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newir/parser.h"
#include "newir/verifier.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt {
namespace {

using testing::DenseVar;
using testing::FeedOp;
using testing::FetchOp;
using testing::FloatAttr;
using testing::MakeTensor;
using testing::OneBlock;
using testing::OpText;
using testing::ParseTestProgram;
using testing::ToDoubles;
using Strings = std::vector<std::string>;

// FNV-1a 64 written out here, so that the expected hashes do not come from the code under test.
uint64_t ExpectedHash(const std::vector<float>& values) {
  uint64_t h = 14695981039346656037ull;
  std::vector<unsigned char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  for (unsigned char b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

// y = 2 x; z = y + w (w persistable); fetch z.
std::string LegacyProgram() {
  return OneBlock(DenseVar("x", "FP32", {2, 2}) + DenseVar("w", "FP32", {2, 2}, true) +
                  DenseVar("y", "FP32", {2, 2}) + DenseVar("z", "FP32", {2, 2}) + FeedOp("x", 0) +
                  OpText("scale", {{"X", {"x"}}}, {{"Out", {"y"}}}, {FloatAttr("scale", 2.0f)}) +
                  OpText("elementwise_add", {{"X", {"y"}}, {"Y", {"w"}}}, {{"Out", {"z"}}}) +
                  FetchOp("z", 0));
}

// The same computation in the new IR; the scale factor's pd_op.full has no legacy name.
constexpr const char* kPirProgram = R"({
    (%0) = "builtin.parameter" () {legacy_var_names:["w"],parameter_name:"w"} : () -> tensor<2x2xf32>
    (%1) = "pd_op.data" () {dtype:float32,legacy_var_names:["x"],name:"x",place:Place(cpu),shape:[2,2]} : () -> tensor<2x2xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
    (%3) = "pd_op.scale" (%1, %2) {bias:0,bias_after_scale:true,legacy_var_names:["y"]} : (tensor<2x2xf32>, tensor<1xf32>) -> tensor<2x2xf32>
    (%4) = "pd_op.add" (%3, %0) {legacy_var_names:["z"]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    (%5) = "pd_op.fetch" (%4) {col:0,name:"z"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
})";

const OpRecord* FindRecord(const std::vector<OpRecord>& records, const std::string& type) {
  for (const OpRecord& r : records) {
    if (r.op_type == type) return &r;
  }
  return nullptr;
}

class OpTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    persistent_.SetLocal("w", MakeTensor(DType::kFloat32, {2, 2}, {10, 20, 30, 40}));
    feeds_["x"] = MakeTensor(DType::kFloat32, {2, 2}, {1, 2, 3, -4});
  }
  Scope persistent_;
  FeedMap feeds_;
};

TEST_F(OpTraceTest, LegacyRecordsNamesHashesStatsAndKeptCopies) {
  OpTraceRecorder recorder(KeepMatching({"z"}));
  recorder.SetContext(1, 3, 2, "forward");
  const oldir::Program program = ParseTestProgram(LegacyProgram());
  LegacyExecutor executor(program, {.observer = recorder.observer(), .file = "t.prototxt"});
  ASSERT_TRUE(executor.Run(persistent_, feeds_).ok());

  const std::vector<OpRecord>& records = recorder.records();
  Strings types;
  for (const OpRecord& r : records) types.push_back(r.op_type);
  EXPECT_EQ(types, (Strings{"feed", "scale", "elementwise_add", "fetch"}));

  const OpRecord* add = FindRecord(records, "elementwise_add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->rank, 1);
  EXPECT_EQ(add->step, 3);
  EXPECT_EQ(add->micro_batch, 2);
  EXPECT_EQ(add->job, "forward");
  EXPECT_EQ(add->block, 0);
  EXPECT_EQ(add->op_index, 2);
  EXPECT_EQ(add->inputs, (Strings{"y", "w"}));
  ASSERT_EQ(add->outputs.size(), 1u);
  const OutputRecord& z = add->outputs[0];
  EXPECT_EQ(z.name, "z");
  EXPECT_TRUE(z.produced);
  EXPECT_EQ(z.dtype, DType::kFloat32);
  EXPECT_EQ(z.shape, (std::vector<int64_t>{2, 2}));
  // z = 2 x + w = [12, 24, 36, 32].
  EXPECT_EQ(z.hash, ExpectedHash({12, 24, 36, 32}));
  EXPECT_EQ(z.stats.min, 12);
  EXPECT_EQ(z.stats.max, 36);
  EXPECT_EQ(z.stats.mean, 26);
  ASSERT_TRUE(z.tensor.has_value());
  EXPECT_EQ(ToDoubles(*z.tensor), (std::vector<double>{12, 24, 36, 32}));

  const OpRecord* scale = FindRecord(records, "scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->inputs, (Strings{"x"}));
  EXPECT_EQ(scale->outputs[0].hash, ExpectedHash({2, 4, 6, -8}));
  EXPECT_FALSE(scale->outputs[0].tensor.has_value());  // y is not kept
  EXPECT_EQ(FindRecord(records, "fetch")->inputs, (Strings{"z"}));
}

TEST_F(OpTraceTest, PirRecordsLogicalNamesOfInputsAndOutputs) {
  StatusOr<newir::Program> program = newir::ParseProgram(kPirProgram, "t.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_TRUE(newir::VerifyProgram(*program, {.file = "t.pir"}).ok());
  OpTraceRecorder recorder(KeepAll());
  recorder.SetContext(0, 1, 0, "");
  PirExecutor executor(*program, {.observer = recorder.observer(), .file = "t.pir"});
  ASSERT_TRUE(executor.Run(persistent_, feeds_).ok());

  const std::vector<OpRecord>& records = recorder.records();
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[2].op_type, "pd_op.full");
  EXPECT_EQ(records[2].outputs[0].name, "%0@2");
  EXPECT_EQ(records[3].op_type, "pd_op.scale");
  EXPECT_EQ(records[3].inputs, (Strings{"x", "%0@2"}));
  EXPECT_EQ(records[3].outputs[0].hash, ExpectedHash({2, 4, 6, -8}));
  EXPECT_EQ(records[4].inputs, (Strings{"y", "w"}));
  EXPECT_EQ(records[4].outputs[0].name, "z");
  EXPECT_EQ(records[4].outputs[0].hash, ExpectedHash({12, 24, 36, 32}));
  ASSERT_TRUE(records[4].outputs[0].tensor.has_value());
  EXPECT_EQ(records[5].inputs, (Strings{"z"}));
  for (const OpRecord& r : records) EXPECT_EQ(r.step, 1);
}

// acc doubles while i < n; the loop's second block argument has no legacy name.
constexpr const char* kPirWhile = R"({
    (%0) = "pd_op.data" () {dtype:int64,legacy_var_names:["i"],name:"i",place:Place(cpu),shape:[1]} : () -> tensor<1xi64>
    (%1) = "pd_op.data" () {dtype:int64,name:"n",place:Place(cpu),shape:[1]} : () -> tensor<1xi64>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],value:1.5} : () -> tensor<2xf32>
    (%3) = "pd_op.less_than" (%0, %1) {} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
    (%4, %5) = "pd_op.while" (cond=%3, inputs=%2, %0) {legacy_var_names:["acc","i"]} {
    ^%arg_0 {legacy_var_name:"acc"}, %arg_1 {}
        (%6) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
        (%7) = "pd_op.scale_" (%arg_0, %6) {bias:0,bias_after_scale:true,legacy_var_names:["acc"]} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
        (%8) = "pd_op.increment_" (%arg_1) {legacy_var_names:["i"],value:1} : (tensor<1xi64>) -> tensor<1xi64>
        (%9) = "pd_op.less_than" (%8, %1) {legacy_var_names:["cond"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
        () = "cf.yield" (%9, %7, %8) {} : (tensor<1xb>, tensor<2xf32>, tensor<1xi64>) ->
    }
    (%10) = "pd_op.fetch" (%4) {col:0,name:"acc"} : (tensor<2xf32>) -> tensor<2xf32>
})";

TEST_F(OpTraceTest, PirNamesBlockArgumentsAndValuesOfEnclosingBlocks) {
  StatusOr<newir::Program> program = newir::ParseProgram(kPirWhile, "t.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  OpTraceRecorder recorder;
  PirExecutor executor(*program, {.observer = recorder.observer(), .file = "t.pir"});
  const FeedMap feeds = {{"i", MakeTensor(DType::kInt64, {1}, {0})},
                         {"n", MakeTensor(DType::kInt64, {1}, {2})}};
  ASSERT_TRUE(executor.Run(persistent_, feeds).ok());
  Strings seen;
  for (const OpRecord& r : recorder.records()) {
    std::string line = r.op_type + "(";
    for (const std::string& name : r.inputs) line += name + (&name == &r.inputs.back() ? "" : ",");
    seen.push_back(line + ")");
  }
  // Two iterations; the body's full is op 0 of its block, the outer values keep their names.
  const Strings expected = {"pd_op.data()",
                            "pd_op.data()",
                            "pd_op.full()",
                            "pd_op.less_than(i,%0@1)",
                            "pd_op.full()",
                            "pd_op.scale_(acc,%0@0)",
                            "pd_op.increment_(%arg1)",
                            "pd_op.less_than(i,%0@1)",
                            "pd_op.full()",
                            "pd_op.scale_(acc,%0@0)",
                            "pd_op.increment_(%arg1)",
                            "pd_op.less_than(i,%0@1)",
                            "pd_op.while(%0@3,%0@2,i)",
                            "pd_op.fetch(acc)"};
  EXPECT_EQ(seen, expected);
}

TEST_F(OpTraceTest, AnOutputTheOpDidNotProduceHasNoTensor) {
  OpTraceRecorder recorder(KeepAll());
  OpEvent event;
  event.op_type = "dropout";
  event.outputs.emplace_back("mask", nullptr);
  (*recorder.observer())(event);
  ASSERT_EQ(recorder.records().size(), 1u);
  EXPECT_FALSE(recorder.records()[0].outputs[0].produced);
  EXPECT_FALSE(recorder.records()[0].outputs[0].tensor.has_value());
  EXPECT_EQ(recorder.TakeRecords().size(), 1u);
  EXPECT_TRUE(recorder.records().empty());
}

TEST(TensorStatsTest, FiniteValuesOnlyAndCountsOfNanAndInf) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const TensorStats s = ComputeStats(MakeTensor(DType::kFloat32, {6}, {1, nan, inf, -2, 4, -inf}));
  EXPECT_EQ(s.min, -2);
  EXPECT_EQ(s.max, 4);
  EXPECT_EQ(s.mean, 1);
  EXPECT_EQ(s.nan_count, 1);
  EXPECT_EQ(s.inf_count, 2);

  const TensorStats none = ComputeStats(MakeTensor(DType::kFloat64, {2}, {nan, nan}));
  EXPECT_EQ(none.nan_count, 2);
  EXPECT_EQ(none.min, 0);
  EXPECT_EQ(none.mean, 0);

  // float16 0.5 and 1.5 and an int tensor.
  const TensorStats half = ComputeStats(MakeTensor(DType::kFloat16, {2}, {0.5, 1.5}));
  EXPECT_EQ(half.mean, 1.0);
  const TensorStats ints = ComputeStats(MakeTensor(DType::kInt64, {3}, {-3, 0, 9}));
  EXPECT_EQ(ints.min, -3);
  EXPECT_EQ(ints.max, 9);
  EXPECT_EQ(ints.mean, 2);
}

TEST(KeepPredicateTest, GlobsMatchWholeNames) {
  EXPECT_TRUE(GlobMatch("fc_*", "fc_0.w_0"));
  EXPECT_TRUE(GlobMatch("*@GRAD", "fc_0.w_0@GRAD"));
  EXPECT_FALSE(GlobMatch("*@GRAD", "fc_0.w_0@GRAD.x"));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
  EXPECT_FALSE(GlobMatch("x", "xy"));
  const KeepPredicate keep = KeepMatching({"w", "*@GRAD"});
  EXPECT_TRUE(keep("w"));
  EXPECT_TRUE(keep("b@GRAD"));
  EXPECT_FALSE(keep("b"));
  EXPECT_TRUE(KeepAll()("anything"));
  EXPECT_FALSE(KeepNone()("anything"));
}

}  // namespace
}  // namespace irm::rt
