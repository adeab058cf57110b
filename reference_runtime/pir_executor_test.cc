// Tests of the new-IR executor's bindings: for many pd_ops, which kernel runs, with which inputs
// in which order, which attributes (converted, defaulted, read from mutable operands) and dtype;
// in-place updates landing in the Scope; parameters, feeds, fetches, vectors, ordering ops, the
// observer, FeedSpecs/FetchNames, and a program as Paddle prints it. Kernels are the recording
// test kernels of pir_test_kernels.h.
#include "reference_runtime/pir_executor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/pir_test_kernels.h"

namespace irm::rt {
namespace {

using testing::KernelRecord;
using testing::RecordingKernels;
using testing::ToDoubles;
using Attrs = std::map<std::string, AttrValue, std::less<>>;
using Doubles = std::vector<double>;

class PirExecutorTest : public ::testing::Test {
 protected:
  PirExecutorTest() : options_(kernels_.Options()) {}

  StatusOr<std::vector<Fetch>> Run(const std::string& text, const FeedMap& feeds = {}) {
    program_ = std::make_unique<newir::Program>(testing::ParseVerified(text));
    PirExecutor executor(*program_, options_);
    return executor.Run(scope_, feeds);
  }
  // Runs and fails the test on an error.
  std::vector<Fetch> RunOk(const std::string& text, const FeedMap& feeds = {}) {
    StatusOr<std::vector<Fetch>> fetches = Run(text, feeds);
    EXPECT_TRUE(fetches.ok()) << fetches.status().ToString();
    return fetches.ok() ? *fetches : std::vector<Fetch>();
  }
  // The one record of kernel `name`.
  KernelRecord Only(std::string_view name) {
    std::vector<KernelRecord> found = kernels_.RecordsOf(name);
    EXPECT_EQ(found.size(), 1u) << name;
    return found.empty() ? KernelRecord{} : found.front();
  }
  std::vector<std::string> KernelSequence() const {
    std::vector<std::string> names;
    for (const KernelRecord& r : kernels_.records()) names.push_back(r.kernel);
    return names;
  }
  void Param(const std::string& name, Tensor t) { scope_.SetLocal(name, std::move(t)); }
  Doubles ParamValues(const std::string& name) {
    const Tensor* t = scope_.Find(name);
    EXPECT_NE(t, nullptr) << name;
    return t != nullptr ? ToDoubles(*t) : Doubles{};
  }

  RecordingKernels kernels_;
  ExecutorOptions options_;
  Scope scope_;
  std::unique_ptr<newir::Program> program_;
};

Tensor F32(Doubles values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), DType::kFloat32);
}

TEST_F(PirExecutorTest, MatmulGetsItsOperandsInOrderAndOnlyItsTableAttributes) {
  Param("w", F32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3}));
  RunOk(R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<4x3xf32>
    (%2) = "pd_op.matmul" (%0, %1) {legacy_var_names:["y"],op_role:0,stop_gradient:[false],transpose_y:true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
})",
        {{"x", F32({1, 2, 3, 4, 5, 6}, {2, 3})}});
  const KernelRecord r = Only("matmul");
  EXPECT_EQ(r.dtype, DType::kFloat32);
  EXPECT_EQ(r.inputs, (std::vector<std::string>{"float32[2, 3]", "float32[4, 3]"}));
  // transpose_x is absent from the op: the table's default.
  EXPECT_EQ(r.attrs, (Attrs{{"transpose_x", false}, {"transpose_y", true}}));
  EXPECT_EQ(r.outputs, (std::vector<bool>{true}));
  EXPECT_EQ(r.context.op_identity, 0u);  // not a random op
}

TEST_F(PirExecutorTest, TableAttributesAreConvertedToKernelTypes) {
  Param("x", F32({1, 2, 3, 4, 5, 6}, {2, 3}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3xf32>
    (%1, %2, %3) = "pd_op.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05} : (tensor<2x3xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>
    (%4) = "pd_op.cast" (%0) {dtype:float16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
    (%5) = "pd_op.transpose" (%0) {perm:[1,0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    (%6, %7) = "pd_op.dropout" (%0, <<NULL VALUE>>) {fix_seed:true,is_test:false,mode:"upscale_in_train",p:0.25,seed:7} : (tensor<2x3xf32>, <<NULL TYPE>>) -> tensor<2x3xf32>, tensor<2x3xu8>
    (%8) = "pd_op.mean" (%0) {axis:[0,-1],keepdim:true} : (tensor<2x3xf32>) -> tensor<1x1xf32>
    (%9) = "pd_op.assign_value" () {dtype:int64,place:Place(cpu),shape:[(Int32)3],values:[(pd_op.Scalar:int64)7,(pd_op.Scalar:int64)8,(pd_op.Scalar:int64)9]} : () -> tensor<3xi64>
    (%10) = "pd_op.increment" (%0) {value:2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
})");
  const KernelRecord layer_norm = Only("layer_norm");
  EXPECT_EQ(layer_norm.inputs, (std::vector<std::string>{"float32[2, 3]", "null", "null"}));
  EXPECT_EQ(layer_norm.attrs,
            (Attrs{{"begin_norm_axis", int64_t{1}}, {"epsilon", double{1e-05f}}}));
  EXPECT_EQ(Only("cast").attrs, (Attrs{{"dtype", DType::kFloat16}}));
  EXPECT_EQ(Only("transpose").attrs, (Attrs{{"perm", std::vector<int64_t>{1, 0}}}));
  const KernelRecord dropout = Only("dropout");
  EXPECT_EQ(dropout.inputs, (std::vector<std::string>{"float32[2, 3]", "null"}));
  EXPECT_EQ(dropout.attrs, (Attrs{{"fix_seed", true},
                                  {"is_test", false},
                                  {"mode", std::string("upscale_in_train")},
                                  {"p", double{0.25f}},
                                  {"seed", int64_t{7}}}));
  EXPECT_EQ(dropout.outputs, (std::vector<bool>{true, true}));
  EXPECT_EQ(Only("mean").attrs, (Attrs{{"axis", std::vector<int64_t>{0, -1}}, {"keepdim", true}}));
  const KernelRecord assign_value = Only("assign_value");
  EXPECT_EQ(assign_value.dtype, DType::kInt64);
  EXPECT_TRUE(assign_value.inputs.empty());
  EXPECT_EQ(assign_value.attrs, (Attrs{{"dtype", DType::kInt64},
                                       {"shape", std::vector<int64_t>{3}},
                                       {"values", std::vector<double>{7, 8, 9}}}));
  EXPECT_EQ(Only("increment").attrs, (Attrs{{"value", 2.0}}));
}

TEST_F(PirExecutorTest, AbsentOptionalResultsGetNoOutput) {
  Param("x", F32({1, 2}, {2}));
  Param("y", F32({3, 4}, {2}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2xf32>
    (%1) = "builtin.parameter" () {parameter_name:"y"} : () -> tensor<2xf32>
    (%2, %3) = "pd_op.add_grad" (%0, %1, %0) {axis:-1} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> <<NULL TYPE>>, tensor<2xf32>
})");
  const KernelRecord r = Only("add_grad");
  EXPECT_EQ(r.outputs, (std::vector<bool>{false, true}));
  EXPECT_EQ(r.attrs, (Attrs{{"axis", int64_t{-1}}}));
}

TEST_F(PirExecutorTest, MutableOperandsArriveAsAttributesOfTheirName) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  Param("x", F32(Doubles(24, 1.0), {2, 3, 4}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3x4xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2.5} : () -> tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:1,bias_after_scale:false} : (tensor<2x3x4xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[6,4]} : () -> tensor<2xi64>
    (%4, %5) = "pd_op.reshape" (%0, %3) {} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>, <<NULL TYPE>>
    (%6) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],value:3} : () -> tensor<1xi32>
    (%7) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],value:8} : () -> tensor<i64>
    (%8) = "builtin.combine" (%6, %7) {} : (tensor<1xi32>, tensor<i64>) -> vec[tensor<1xi32>,tensor<i64>]
    (%9, %10) = "pd_op.reshape" (%0, %8) {} : (tensor<2x3x4xf32>, vec[tensor<1xi32>,tensor<i64>]) -> tensor<3x8xf32>, <<NULL TYPE>>
    (%11) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1]} : () -> tensor<1xi64>
    (%12) = "pd_op.sum" (%0, %11) {dtype:Undefined,keepdim:false} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
    (%13) = "pd_op.full_like" (%0, %1) {dtype:Undefined,place:Place(cpu)} : (tensor<2x3x4xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
})");
  EXPECT_EQ(Only("scale").inputs, (std::vector<std::string>{"float32[2, 3, 4]"}));
  EXPECT_EQ(Only("scale").attrs,
            (Attrs{{"bias", 1.0}, {"bias_after_scale", false}, {"scale", 2.5}}));
  const std::vector<KernelRecord> reshapes = kernels_.RecordsOf("reshape");
  ASSERT_EQ(reshapes.size(), 2u);
  EXPECT_EQ(reshapes[0].inputs, (std::vector<std::string>{"float32[2, 3, 4]"}));
  EXPECT_EQ(reshapes[0].attrs, (Attrs{{"shape", std::vector<int64_t>{6, 4}}}));
  EXPECT_EQ(reshapes[0].outputs, (std::vector<bool>{true, false}));
  // A vector of one-value tensors, of any integer dtype and rank 0 or 1.
  EXPECT_EQ(reshapes[1].attrs, (Attrs{{"shape", std::vector<int64_t>{3, 8}}}));
  // An Undefined dtype is left out: the kernel uses x's.
  EXPECT_EQ(Only("sum").attrs, (Attrs{{"axis", std::vector<int64_t>{1}}, {"keepdim", false}}));
  EXPECT_EQ(Only("full_like").attrs, (Attrs{{"value", 2.5}}));
  EXPECT_EQ(Only("full_like").inputs, (std::vector<std::string>{"float32[2, 3, 4]"}));
}

TEST_F(PirExecutorTest, VectorOperandsAreFlattenedAndVectorResultsSplit) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  Param("a", F32({1, 2, 3, 4, 5, 6}, {2, 3}));
  Param("b", F32(Doubles(10, 2.0), {2, 5}));
  const std::vector<Fetch> fetches = RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"a"} : () -> tensor<2x3xf32>
    (%1) = "builtin.parameter" () {parameter_name:"b"} : () -> tensor<2x5xf32>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<2x3xf32>, tensor<2x5xf32>) -> vec[tensor<2x3xf32>,tensor<2x5xf32>]
    (%3) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xi32>
    (%4) = "pd_op.concat" (%2, %3) {} : (vec[tensor<2x3xf32>,tensor<2x5xf32>], tensor<1xi32>) -> tensor<2x8xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[3,5]} : () -> tensor<2xi64>
    (%6) = "pd_op.split" (%4, %5, %3) {} : (tensor<2x8xf32>, tensor<2xi64>, tensor<1xi32>) -> vec[tensor<2x3xf32>,tensor<2x5xf32>]
    (%7, %8) = "builtin.split" (%6) {legacy_var_names:["s0","s1"]} : (vec[tensor<2x3xf32>,tensor<2x5xf32>]) -> tensor<2x3xf32>, tensor<2x5xf32>
    (%9) = "builtin.slice" (%6) {index:1} : (vec[tensor<2x3xf32>,tensor<2x5xf32>]) -> tensor<2x5xf32>
    (%10) = "pd_op.concat_grad" (%2, %8, %3) {} : (vec[tensor<2x3xf32>,tensor<2x5xf32>], tensor<2x5xf32>, tensor<1xi32>) -> vec[tensor<2x3xf32>,tensor<2x5xf32>]
    (%11) = "pd_op.fetch" (%7) {col:0,name:"s0"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%12) = "pd_op.fetch" (%8) {col:1,name:"s1"} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    (%13) = "pd_op.fetch" (%9) {col:2,name:"e1"} : (tensor<2x5xf32>) -> tensor<2x5xf32>
})");
  const KernelRecord concat = Only("concat");
  EXPECT_EQ(concat.inputs, (std::vector<std::string>{"float32[2, 3]", "float32[2, 5]"}));
  EXPECT_EQ(concat.attrs, (Attrs{{"axis", int64_t{1}}}));
  const KernelRecord split = Only("split");
  EXPECT_EQ(split.inputs, (std::vector<std::string>{"float32[2, 3]"}));  // concat's default output
  EXPECT_EQ(split.attrs, (Attrs{{"axis", int64_t{1}}, {"sections", std::vector<int64_t>{3, 5}}}));
  EXPECT_EQ(split.outputs, (std::vector<bool>{true, true}));
  const KernelRecord concat_grad = Only("concat_grad");
  EXPECT_EQ(concat_grad.inputs,
            (std::vector<std::string>{"float32[2, 3]", "float32[2, 5]", "float32[2, 3]"}));
  EXPECT_EQ(concat_grad.outputs, (std::vector<bool>{true, true}));
  // The recording split's output k holds 100 + k: builtin.split and builtin.slice keep the order.
  ASSERT_EQ(fetches.size(), 3u);
  EXPECT_EQ(ToDoubles(fetches[0].tensor), Doubles(6, 100.0));
  EXPECT_EQ(ToDoubles(fetches[1].tensor), Doubles(6, 101.0));
  EXPECT_EQ(ToDoubles(fetches[2].tensor), Doubles(6, 101.0));
}

TEST_F(PirExecutorTest, SliceStartsAndEndsAndUniformShapeMinMax) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  Param("x", F32(Doubles(24, 1.0), {4, 6}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<4x6xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1]} : () -> tensor<1xi64>
    (%2) = "pd_op.full_int_array" () {dtype:int32,place:Place(cpu),value:[3]} : () -> tensor<1xi32>
    (%3) = "pd_op.slice" (%0, %1, %2) {axes:[1],decrease_axis:[],infer_flags:[1]} : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi32>) -> tensor<4x2xf32>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[4,8]} : () -> tensor<2xi64>
    (%5) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:-0.5} : () -> tensor<1xf32>
    (%6) = "pd_op.full" () {dtype:float64,place:Place(cpu),shape:[1],value:0.5} : () -> tensor<1xf64>
    (%7) = "pd_op.uniform" (%4, %5, %6) {dtype:float64,legacy_var_names:["w"],place:Place(cpu),seed:3} : (tensor<2xi64>, tensor<1xf32>, tensor<1xf64>) -> tensor<4x8xf64>
})");
  const KernelRecord slice = Only("slice");
  EXPECT_EQ(slice.inputs, (std::vector<std::string>{"float32[4, 6]"}));
  EXPECT_EQ(slice.attrs, (Attrs{{"axes", std::vector<int64_t>{1}},
                                {"decrease_axis", std::vector<int64_t>{}},
                                {"ends", std::vector<int64_t>{3}},
                                {"infer_flags", std::vector<int64_t>{1}},
                                {"starts", std::vector<int64_t>{1}}}));
  const KernelRecord uniform = Only("uniform");
  EXPECT_EQ(uniform.dtype, DType::kFloat64);
  EXPECT_TRUE(uniform.inputs.empty());
  EXPECT_EQ(uniform.attrs, (Attrs{{"dtype", DType::kFloat64},
                                  {"max", 0.5},
                                  {"min", -0.5},
                                  {"seed", int64_t{3}},
                                  {"shape", std::vector<int64_t>{4, 8}}}));
}

TEST_F(PirExecutorTest, GradAndShapeOpsReachTheirKernels) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  Param("x", F32(Doubles(6, 1.0), {2, 3}));
  Param("ids", testing::FromDoubles({0, 1}, {2}, DType::kInt32));
  Param("w", testing::FromDoubles(Doubles(8, 1.0), {4, 2}, DType::kBFloat16));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3xf32>
    (%1) = "pd_op.softmax_" (%0) {axis:0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%2) = "pd_op.gelu" (%0) {approximate:true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%3) = "pd_op.tril" (%0) {diagonal:-1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%4) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],value:1} : () -> tensor<i64>
    (%5) = "pd_op.split_with_num" (%0, %4) {num:3} : (tensor<2x3xf32>, tensor<i64>) -> vec[tensor<2x1xf32>,tensor<2x1xf32>,tensor<2x1xf32>]
    (%6, %7, %8) = "pd_op.layer_norm_grad" (%0, <<NULL VALUE>>, <<NULL VALUE>>, %0, %0, %0) {begin_norm_axis:1,epsilon:1e-05} : (tensor<2x3xf32>, <<NULL TYPE>>, <<NULL TYPE>>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>, <<NULL TYPE>>, <<NULL TYPE>>
    (%9) = "builtin.parameter" () {parameter_name:"ids"} : () -> tensor<2xi32>
    (%10) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<4x2xbf16>
    (%11) = "pd_op.embedding_grad" (%9, %10, %10) {padding_idx:0} : (tensor<2xi32>, tensor<4x2xbf16>, tensor<4x2xbf16>) -> tensor<4x2xbf16>
    (%12) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[0]} : () -> tensor<1xi64>
    (%13) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2]} : () -> tensor<1xi64>
    (%14) = "pd_op.slice_grad" (%0, %0, %12, %13) {axes:[1],decrease_axis:[],infer_flags:[1]} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
    (%15) = "pd_op.sum_grad" (%0, %0, %13) {keepdim:true,reduce_all:false} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
})");
  EXPECT_EQ(Only("softmax").attrs, (Attrs{{"axis", int64_t{0}}}));
  EXPECT_EQ(Only("gelu").attrs, (Attrs{{"approximate", true}}));
  EXPECT_EQ(Only("tril").attrs, (Attrs{{"diagonal", int64_t{-1}}}));
  const KernelRecord split = Only("split_with_num");
  EXPECT_EQ(split.inputs, (std::vector<std::string>{"float32[2, 3]"}));
  EXPECT_EQ(split.attrs, (Attrs{{"axis", int64_t{1}}, {"num", int64_t{3}}}));
  EXPECT_EQ(split.outputs, (std::vector<bool>{true, true, true}));
  const KernelRecord layer_norm_grad = Only("layer_norm_grad");
  EXPECT_EQ(layer_norm_grad.inputs,
            (std::vector<std::string>{"float32[2, 3]", "null", "null", "float32[2, 3]",
                                      "float32[2, 3]", "float32[2, 3]"}));
  EXPECT_EQ(layer_norm_grad.outputs, (std::vector<bool>{true, false, false}));
  const KernelRecord embedding_grad = Only("embedding_grad");
  EXPECT_EQ(embedding_grad.dtype, DType::kBFloat16);
  EXPECT_EQ(embedding_grad.inputs,
            (std::vector<std::string>{"int32[2]", "bfloat16[4, 2]", "bfloat16[4, 2]"}));
  EXPECT_EQ(embedding_grad.attrs, (Attrs{{"padding_idx", int64_t{0}}, {"sparse", false}}));
  const KernelRecord slice_grad = Only("slice_grad");
  EXPECT_EQ(slice_grad.inputs, (std::vector<std::string>{"float32[2, 3]", "float32[2, 3]"}));
  EXPECT_EQ(slice_grad.attrs.at("starts"), AttrValue(std::vector<int64_t>{0}));
  EXPECT_EQ(slice_grad.attrs.at("ends"), AttrValue(std::vector<int64_t>{2}));
  EXPECT_EQ(Only("sum_grad").attrs,
            (Attrs{{"axis", std::vector<int64_t>{2}}, {"keepdim", true}, {"reduce_all", false}}));
  // softmax_ wrote its result (the recording kernel's 100s) into x.
  EXPECT_EQ(ParamValues("x"), Doubles(6, 100.0));
}

TEST_F(PirExecutorTest, MomentumUpdatesParameterAndVelocityInPlace) {
  Param("p", F32({1, 2}, {2}));
  Param("v", F32({0, 0}, {2}));
  Param("lr", F32({0.1}, {1}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"p"} : () -> tensor<2xf32>
    (%1) = "builtin.parameter" () {parameter_name:"v"} : () -> tensor<2xf32>
    (%2) = "builtin.parameter" () {parameter_name:"lr"} : () -> tensor<1xf32>
    (%3, %4, %5) = "pd_op.momentum_" (%0, %0, %1, %2, <<NULL VALUE>>) {mu:0.5,use_nesterov:true} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1xf32>, <<NULL TYPE>>) -> tensor<2xf32>, tensor<2xf32>, <<NULL TYPE>>
})");
  const KernelRecord r = Only("momentum");
  EXPECT_EQ(r.inputs, (std::vector<std::string>{"float32[2]", "float32[2]", "float32[2]",
                                                "float32[1]", "null"}));
  EXPECT_EQ(r.attrs, (Attrs{{"mu", 0.5},
                            {"multi_precision", false},
                            {"regularization_coeff", 0.0},
                            {"regularization_method", std::string()},
                            {"rescale_grad", 1.0},
                            {"use_nesterov", true}}));
  EXPECT_EQ(r.outputs, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(ParamValues("p"), (Doubles{100, 100}));
  EXPECT_EQ(ParamValues("v"), (Doubles{101, 101}));
  EXPECT_EQ(ParamValues("lr"), (Doubles{0.1f}));
}

TEST_F(PirExecutorTest, KernelDTypeComesFromTheDataInput) {
  Param("ids", testing::FromDoubles({1, 2}, {2}, DType::kInt64));
  Param("w", testing::FromDoubles(Doubles(8, 1.0), {4, 2}, DType::kFloat64));
  Param("label", testing::FromDoubles({1, 0}, {2, 1}, DType::kInt64));
  Param("softmax", testing::FromDoubles(Doubles(6, 0.5), {2, 3}, DType::kBFloat16));
  Param("mask", testing::FromDoubles(Doubles(6, 1.0), {2, 3}, DType::kUInt8));
  Param("g", testing::FromDoubles(Doubles(6, 1.0), {2, 3}, DType::kFloat16));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"ids"} : () -> tensor<2xi64>
    (%1) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<4x2xf64>
    (%2) = "pd_op.embedding" (%0, %1) {padding_idx:-1,sparse:false} : (tensor<2xi64>, tensor<4x2xf64>) -> tensor<2x2xf64>
    (%3) = "builtin.parameter" () {parameter_name:"label"} : () -> tensor<2x1xi64>
    (%4) = "builtin.parameter" () {parameter_name:"softmax"} : () -> tensor<2x3xbf16>
    (%5) = "pd_op.cross_entropy_with_softmax_grad" (%3, %4, %4) {} : (tensor<2x1xi64>, tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
    (%6) = "builtin.parameter" () {parameter_name:"mask"} : () -> tensor<2x3xu8>
    (%7) = "builtin.parameter" () {parameter_name:"g"} : () -> tensor<2x3xf16>
    (%8) = "pd_op.dropout_grad" (%6, %7) {} : (tensor<2x3xu8>, tensor<2x3xf16>) -> tensor<2x3xf16>
    (%9) = "pd_op.reshape_grad" (%6, %7) {} : (tensor<2x3xu8>, tensor<2x3xf16>) -> tensor<2x3xf16>
    (%10) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[2],value:1} : () -> tensor<2xi32>
    (%11) = "pd_op.full_int_array" () {dtype:int32,place:Place(cpu),value:[1,2]} : () -> tensor<2xi32>
})");
  const KernelRecord embedding = Only("embedding");
  EXPECT_EQ(embedding.dtype, DType::kFloat64);
  EXPECT_EQ(embedding.inputs, (std::vector<std::string>{"int64[2]", "float64[4, 2]"}));
  EXPECT_EQ(embedding.attrs, (Attrs{{"padding_idx", int64_t{-1}}, {"sparse", false}}));
  EXPECT_EQ(Only("cross_entropy_with_softmax_grad").dtype, DType::kBFloat16);
  EXPECT_EQ(Only("dropout_grad").dtype, DType::kFloat16);
  EXPECT_EQ(Only("reshape_grad").dtype, DType::kFloat16);
  EXPECT_EQ(Only("full").dtype, DType::kInt32);
  EXPECT_EQ(Only("full_int_array").dtype, DType::kInt32);
}

TEST_F(PirExecutorTest, RandomOpsGetTheirIdentityAndTheProgramSeed) {
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  options_.seed = 42;
  options_.gemm = GemmMode::kReference;
  Param("x", F32({1, 2}, {2}));
  RunOk(R"({
    (%0) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2]} : () -> tensor<1xi64>
    (%1) = "pd_op.gaussian" (%0) {dtype:float32,legacy_var_names:["w"],mean:0,place:Place(cpu),seed:0,std:0.02} : (tensor<1xi64>) -> tensor<2xf32>
    (%2) = "pd_op.gaussian" (%0) {dtype:float32,mean:0,place:Place(cpu),seed:0,std:1} : (tensor<1xi64>) -> tensor<2xf32>
    (%3) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2xf32>
    (%4, %5) = "pd_op.dropout" (%3, <<NULL VALUE>>) {legacy_var_names:["","mask"],p:0.5} : (tensor<2xf32>, <<NULL TYPE>>) -> tensor<2xf32>, tensor<2xu8>
})");
  const std::vector<KernelRecord> gaussians = kernels_.RecordsOf("gaussian");
  ASSERT_EQ(gaussians.size(), 2u);
  EXPECT_EQ(gaussians[0].context.op_identity, OpIdentity("w"));
  EXPECT_EQ(gaussians[0].context.program_seed, 42u);
  EXPECT_EQ(gaussians[0].context.gemm, GemmMode::kReference);
  EXPECT_EQ(gaussians[0].attrs.at("std"), AttrValue(double{0.02f}));
  // Without a recorded name: "%<result>@<op index>"; an empty name counts as none.
  EXPECT_EQ(gaussians[1].context.op_identity, OpIdentity("%0@2"));
  EXPECT_EQ(Only("dropout").context.op_identity, OpIdentity("%0@4"));
}

// adam/adamw outputs as a test behaviour: output k shaped like the input it updates, all 100 + k.
Status AdamOutputs(KernelCall& call, DType) {
  constexpr size_t kInputOf[] = {0, 3, 4, 5, 6, 7, 8};  // param, moment1, ..., master_param
  for (size_t k = 0; k < 7; ++k) {
    if (!call.has_input(kInputOf[k])) continue;
    const Tensor& like = call.input(kInputOf[k]);
    call.SetOutput(k, testing::FromDoubles(Doubles(static_cast<size_t>(like.numel()), 100.0 + k),
                                           like.shape(), like.dtype()));
  }
  return Status::Ok();
}

TEST_F(PirExecutorTest, AdamwUpdatesItsParametersInPlace) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("adamw", AdamOutputs);
  Param("w", F32({1, 2, 3, 4}, {2, 2}));
  Param("lr", F32({0.1}, {1}));
  Param("m1", F32({0, 0, 0, 0}, {2, 2}));
  Param("m2", F32({0, 0, 0, 0}, {2, 2}));
  Param("b1p", F32({0.9}, {1}));
  Param("b2p", F32({0.99}, {1}));
  const Tensor w_before = *scope_.Find("w");
  RunOk(R"({
    (%0) = "builtin.parameter" () {legacy_var_names:["w"],parameter_name:"w"} : () -> tensor<2x2xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"g",place:Place(cpu),shape:[2,2]} : () -> tensor<2x2xf32>
    (%2) = "builtin.parameter" () {parameter_name:"lr"} : () -> tensor<1xf32>
    (%3) = "builtin.parameter" () {parameter_name:"m1"} : () -> tensor<2x2xf32>
    (%4) = "builtin.parameter" () {parameter_name:"m2"} : () -> tensor<2x2xf32>
    (%5) = "builtin.parameter" () {parameter_name:"b1p"} : () -> tensor<1xf32>
    (%6) = "builtin.parameter" () {parameter_name:"b2p"} : () -> tensor<1xf32>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:0.9} : () -> tensor<1xf32>
    (%8) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:0.999} : () -> tensor<1xf32>
    (%9) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:1e-08} : () -> tensor<1xf32>
    (%10, %11, %12, %13, %14, %15, %16) = "pd_op.adamw_" (%0, %1, %2, %3, %4, <<NULL VALUE>>, %5, %6, <<NULL VALUE>>, <<NULL VALUE>>, %7, %8, %9) {coeff:0.02,lazy_mode:false,legacy_var_names:["w","m1","m2","","b1p","b2p",""],with_decay:true} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<1xf32>, tensor<2x2xf32>, tensor<2x2xf32>, <<NULL TYPE>>, tensor<1xf32>, tensor<1xf32>, <<NULL TYPE>>, <<NULL TYPE>>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, <<NULL TYPE>>, tensor<1xf32>, tensor<1xf32>, <<NULL TYPE>>
    (%17) = "pd_op.fetch" (%10) {col:0,name:"w_out"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
})",
        {{"g", F32({1, 1, 1, 1}, {2, 2})}});
  const KernelRecord r = Only("adamw");
  EXPECT_EQ(r.dtype, DType::kFloat32);
  EXPECT_EQ(r.inputs, (std::vector<std::string>{"float32[2, 2]", "float32[2, 2]", "float32[1]",
                                                "float32[2, 2]", "float32[2, 2]", "null",
                                                "float32[1]", "float32[1]", "null", "null"}));
  EXPECT_EQ(r.attrs, (Attrs{{"amsgrad", false},
                            {"beta1", double{0.9f}},
                            {"beta2", double{0.999f}},
                            {"coeff", double{0.02f}},
                            {"epsilon", double{1e-08f}},
                            {"lazy_mode", false},
                            {"lr_ratio", 1.0},
                            {"min_row_size_to_use_multithread", int64_t{1000}},
                            {"multi_precision", false},
                            {"use_global_beta_pow", false},
                            {"with_decay", true}}));
  EXPECT_EQ(r.outputs, (std::vector<bool>{true, true, true, false, true, true, false}));
  // The results land in the parameters' own storage, with no set_parameter.
  EXPECT_EQ(ParamValues("w"), Doubles(4, 100.0));
  EXPECT_TRUE(scope_.Find("w")->SharesStorageWith(w_before));
  EXPECT_EQ(ParamValues("m1"), Doubles(4, 101.0));
  EXPECT_EQ(ParamValues("m2"), Doubles(4, 102.0));
  EXPECT_EQ(ParamValues("b1p"), Doubles(1, 104.0));
  EXPECT_EQ(ParamValues("b2p"), Doubles(1, 105.0));
  EXPECT_EQ(ParamValues("lr"), Doubles{0.1f});
}

TEST_F(PirExecutorTest, InPlaceWritesIntoTargetsThatAreNoKernelInput) {
  kernels_.SetBehaviour("full", testing::FullBehaviour);
  kernels_.SetBehaviour("assign_value", testing::AssignValueBehaviour);
  Param("p", F32({1, 2, 3}, {3}));
  Param("q", F32({4, 5, 6}, {3}));
  Param("v", testing::FromDoubles({0, 0}, {2}, DType::kInt64));
  Param("x", F32({7, 8, 9}, {3}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"p"} : () -> tensor<3xf32>
    (%1) = "pd_op.full_" (%0) {dtype:float32,place:Place(cpu),shape:[3],value:2} : (tensor<3xf32>) -> tensor<3xf32>
    (%2) = "builtin.parameter" () {parameter_name:"q"} : () -> tensor<3xf32>
    (%3) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<3xf32>
    (%4) = "pd_op.assign_out_" (%3, %2) {} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    (%5) = "builtin.parameter" () {parameter_name:"v"} : () -> tensor<2xi64>
    (%6) = "pd_op.assign_value_" (%5) {dtype:int64,place:Place(cpu),shape:[2],values:[5,6]} : (tensor<2xi64>) -> tensor<2xi64>
})");
  EXPECT_TRUE(Only("full").inputs.empty());
  EXPECT_EQ(ParamValues("p"), (Doubles{2, 2, 2}));
  // assign_out_ runs the assign kernel on x alone and writes the copy into q.
  EXPECT_EQ(Only("assign").inputs, (std::vector<std::string>{"float32[3]"}));
  EXPECT_EQ(ParamValues("q"), (Doubles{100, 100, 100}));
  const KernelRecord assign_value = Only("assign_value");
  EXPECT_TRUE(assign_value.inputs.empty());
  EXPECT_EQ(assign_value.attrs.at("values"), AttrValue(std::vector<double>{5, 6}));
  EXPECT_EQ(ParamValues("v"), (Doubles{5, 6}));
}

// reshape as a test behaviour: x + 1 under the shape attribute.
Status ReshapePlusOne(KernelCall& call, DType) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  Doubles x = ToDoubles(call.input(0));
  for (double& v : x) v += 1;
  call.SetOutput(0, testing::FromDoubles(x, shape, call.input(0).dtype()));
  return Status::Ok();
}

// add_n as a test behaviour: the elementwise sum of every input.
Status AddNSum(KernelCall& call, DType) {
  Doubles sum = ToDoubles(call.input(0));
  for (size_t i = 1; i < call.num_inputs(); ++i) {
    const Doubles x = ToDoubles(call.input(i));
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += x[k];
  }
  call.SetOutput(0, testing::FromDoubles(sum, call.input(0).shape(), call.input(0).dtype()));
  return Status::Ok();
}

TEST_F(PirExecutorTest, InPlaceReshapeKeepsTheStorageUnderTheNewShape) {
  kernels_.SetBehaviour("full_int_array", testing::FullIntArrayBehaviour);
  kernels_.SetBehaviour("reshape", ReshapePlusOne);
  Param("p", F32({1, 2, 3, 4, 5, 6}, {2, 3}));
  const Tensor before = *scope_.Find("p");
  const std::vector<Fetch> fetches = RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"p"} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[3,2]} : () -> tensor<2xi64>
    (%2, %3) = "pd_op.reshape_" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>, <<NULL TYPE>>
    (%4) = "pd_op.fetch" (%2) {col:0,name:"r"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
})");
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(fetches[0].tensor.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ToDoubles(fetches[0].tensor), (Doubles{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(scope_.Find("p")->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(scope_.Find("p")->SharesStorageWith(before));
  EXPECT_EQ(ParamValues("p"), (Doubles{2, 3, 4, 5, 6, 7}));
}

TEST_F(PirExecutorTest, IncrementOfAParameterIsVisibleInTheScope) {
  kernels_.SetBehaviour("increment", testing::IncrementBehaviour);
  Param("step", testing::FromDoubles({3}, {1}, DType::kInt64));
  RunOk(R"({
    (%0) = "builtin.parameter" () {legacy_var_names:["step"],parameter_name:"step"} : () -> tensor<1xi64>
    (%1) = "pd_op.increment_" (%0) {legacy_var_names:["step"],value:2} : (tensor<1xi64>) -> tensor<1xi64>
})");
  EXPECT_EQ(Only("increment").dtype, DType::kInt64);
  EXPECT_EQ(ParamValues("step"), (Doubles{5}));
}

TEST_F(PirExecutorTest, AddNInPlaceWritesTheElementNamedLikeItsResult) {
  kernels_.SetBehaviour("add_n", AddNSum);
  Param("g", F32({2, 2}, {2}));
  Param("acc", F32({1, 1}, {2}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {legacy_var_names:["g"],parameter_name:"g"} : () -> tensor<2xf32>
    (%1) = "builtin.parameter" () {legacy_var_names:["acc"],parameter_name:"acc"} : () -> tensor<2xf32>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<2xf32>, tensor<2xf32>) -> vec[tensor<2xf32>,tensor<2xf32>]
    (%3) = "pd_op.add_n_" (%2) {legacy_var_names:["acc"]} : (vec[tensor<2xf32>,tensor<2xf32>]) -> tensor<2xf32>
    (%4) = "pd_op.add_n_" (%2) {} : (vec[tensor<2xf32>,tensor<2xf32>]) -> tensor<2xf32>
})");
  // acc = g + acc; then, without a name, the first element: g = g + acc.
  EXPECT_EQ(ParamValues("acc"), (Doubles{3, 3}));
  EXPECT_EQ(ParamValues("g"), (Doubles{5, 5}));
}

TEST_F(PirExecutorTest, FeedsAreCopiedAndFetchesAreCopiesOrderedByCol) {
  kernels_.SetBehaviour("relu", testing::IncrementBehaviour);  // x + 1: tells the writes apart
  const FeedMap feeds = {{"x", F32({1, 2, 3, 4, 5, 6}, {2, 3})},
                         {"y", testing::FromDoubles({7, 8}, {2}, DType::kInt64)}};
  const std::vector<Fetch> fetches = RunOk(R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,3]} : () -> tensor<-1x3xf32>
    (%1) = "pd_op.relu_" (%0) {} : (tensor<-1x3xf32>) -> tensor<-1x3xf32>
    (%2) = "pd_op.feed" () {col:0,name:"y"} : () -> tensor<2xi64>
    (%3) = "pd_op.fetch" (%2) {col:1,name:"y"} : (tensor<2xi64>) -> tensor<2xi64>
    (%4) = "pd_op.fetch" (%1) {col:0,name:"x1"} : (tensor<-1x3xf32>) -> tensor<-1x3xf32>
    (%5) = "pd_op.relu_" (%1) {} : (tensor<-1x3xf32>) -> tensor<-1x3xf32>
    (%6) = "pd_op.fetch" (%5) {col:2,name:"x2"} : (tensor<-1x3xf32>) -> tensor<-1x3xf32>
})",
                                           feeds);
  ASSERT_EQ(fetches.size(), 3u);
  EXPECT_EQ(fetches[0].name, "x1");
  EXPECT_EQ(ToDoubles(fetches[0].tensor), (Doubles{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(fetches[1].name, "y");
  EXPECT_EQ(fetches[1].tensor.dtype(), DType::kInt64);
  EXPECT_EQ(ToDoubles(fetches[1].tensor), (Doubles{7, 8}));
  EXPECT_EQ(fetches[2].name, "x2");
  EXPECT_EQ(ToDoubles(fetches[2].tensor), (Doubles{3, 4, 5, 6, 7, 8}));
  // In-place ops on a program input never reach the caller's tensor.
  EXPECT_EQ(ToDoubles(feeds.at("x")), (Doubles{1, 2, 3, 4, 5, 6}));
}

TEST_F(PirExecutorTest, ParametersShareTheScopeAndScopeWritesStoreTheValue) {
  kernels_.SetBehaviour("relu", testing::IncrementBehaviour);
  Param("w", F32({1, 2}, {2}));
  const Tensor w = *scope_.Find("w");
  RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
    () = "builtin.set_parameter" (%1) {parameter_name:"w2"} : (tensor<2xf32>) ->
    () = "builtin.shadow_output" (%0) {output_name:"w_out"} : (tensor<2xf32>) ->
    (%2) = "pd_op.relu_" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
})");
  EXPECT_EQ(ParamValues("w2"), (Doubles{2, 3}));
  // shadow_output stores the value itself: the later in-place relu_ shows through it.
  EXPECT_TRUE(scope_.Find("w_out")->SharesStorageWith(w));
  EXPECT_EQ(ParamValues("w_out"), (Doubles{2, 3}));
  EXPECT_EQ(ParamValues("w"), (Doubles{2, 3}));
}

TEST_F(PirExecutorTest, OrderingOpsPassTheirOperandsThrough) {
  Param("a", F32({1, 2}, {2}));
  const std::vector<Fetch> fetches = RunOk(R"({
    (%0) = "builtin.parameter" () {parameter_name:"a"} : () -> tensor<2xf32>
    (%1) = "pd_op.sync_calc_stream_" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<2xf32>, tensor<2xf32>) -> vec[tensor<2xf32>,tensor<2xf32>]
    (%3) = "pd_op.sync_comm_stream_" (%2) {ring_id:0} : (vec[tensor<2xf32>,tensor<2xf32>]) -> vec[tensor<2xf32>,tensor<2xf32>]
    (%4) = "builtin.slice" (%3) {index:1} : (vec[tensor<2xf32>,tensor<2xf32>]) -> tensor<2xf32>
    (%5) = "pd_op.fetch" (%4) {col:0,name:"a"} : (tensor<2xf32>) -> tensor<2xf32>
})");
  EXPECT_TRUE(kernels_.records().empty());
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(ToDoubles(fetches[0].tensor), (Doubles{1, 2}));
}

struct SeenOp {
  int block;
  int op_index;
  std::string op_type;
  std::vector<std::string> names;
  std::vector<bool> tensors;  // whether each output came with a tensor
  bool operator==(const SeenOp&) const = default;
};

std::ostream& operator<<(std::ostream& os, const SeenOp& op) {
  os << op.block << "/" << op.op_index << " " << op.op_type << " [";
  for (const std::string& name : op.names) os << name << " ";
  return os << "]";
}

TEST_F(PirExecutorTest, TheObserverSeesEveryOpWithItsLogicalOutputNames) {
  std::vector<SeenOp> seen;
  std::vector<Doubles> tanh_values;
  const OpObserver observer = [&](const OpEvent& event) {
    SeenOp op{event.block, event.op_index, std::string(event.op_type), {}, {}};
    for (const auto& [name, tensor] : event.outputs) {
      op.names.emplace_back(name);
      op.tensors.push_back(tensor != nullptr);
      if (event.op_type == "pd_op.tanh" && tensor != nullptr) {
        tanh_values.push_back(ToDoubles(*tensor));
      }
    }
    seen.push_back(std::move(op));
  };
  options_.observer = &observer;
  Param("w", F32({1, 2}, {2}));
  RunOk(R"({
    (%0) = "builtin.parameter" () {legacy_var_names:["w"],parameter_name:"w"} : () -> tensor<2xf32>
    (%1) = "pd_op.data" () {dtype:bool,name:"c",place:Place(cpu),shape:[1]} : () -> tensor<1xb>
    (%2) = "pd_op.relu" (%0) {legacy_var_names:[""]} : (tensor<2xf32>) -> tensor<2xf32>
    (%3) = "builtin.combine" (%0, %2) {} : (tensor<2xf32>, tensor<2xf32>) -> vec[tensor<2xf32>,tensor<2xf32>]
    (%4) = "pd_op.if" (%1) {legacy_var_names:["h"]} -> tensor<2xf32> {
        (%5) = "pd_op.tanh" (%2) {legacy_var_names:["z"]} : (tensor<2xf32>) -> tensor<2xf32>
        () = "cf.yield" (%5) {} : (tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%2) {} : (tensor<2xf32>) ->
    }
})",
        {{"c", testing::FromDoubles({1}, {1}, DType::kBool)}});
  const std::vector<SeenOp> expected = {
      {0, 0, "builtin.parameter", {"w"}, {true}},
      {0, 1, "pd_op.data", {"%0@1"}, {true}},
      {0, 2, "pd_op.relu", {"%0@2"}, {true}},
      {0, 3, "builtin.combine", {"%0@3"}, {false}},  // a vector, not a tensor
      {1, 0, "pd_op.tanh", {"z"}, {true}},
      {0, 4, "pd_op.if", {"h"}, {true}},
  };
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(tanh_values, (std::vector<Doubles>{{100, 100}}));
}

TEST_F(PirExecutorTest, FeedSpecsAndFetchNames) {
  const newir::Program program = testing::ParseVerified(R"({
    (%0) = "pd_op.data" () {dtype:int64,name:"ids",place:Place(cpu),shape:[-1,5]} : () -> tensor<-1x5xi64>
    (%1) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,4]} : () -> tensor<-1x4xf32>
    (%2) = "builtin.parameter" () {parameter_name:"emb.w"} : () -> tensor<100x8xf32>
    (%3) = "pd_op.embedding" (%0, %2) {} : (tensor<-1x5xi64>, tensor<100x8xf32>) -> tensor<-1x5x8xf32>
    (%4) = "pd_op.feed" () {col:0,name:"label"} : () -> tensor<-1x1xi64>
    (%5) = "pd_op.fetch" (%3) {col:1,name:"out"} : (tensor<-1x5x8xf32>) -> tensor<-1x5x8xf32>
    (%6) = "pd_op.fetch" (%1) {col:0,name:"x"} : (tensor<-1x4xf32>) -> tensor<-1x4xf32>
    (%7) = "pd_op.data" () {dtype:int64,name:"classes",place:Place(cpu),shape:[-1,1]} : () -> tensor<-1x1xi64>
    (%8, %9) = "pd_op.cross_entropy_with_softmax" (%1, %7) {} : (tensor<-1x4xf32>, tensor<-1x1xi64>) -> tensor<-1x4xf32>, tensor<-1x1xf32>
})");
  const PirExecutor executor(program, options_);
  const std::vector<FeedSpec> specs = executor.FeedSpecs();
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "ids");
  EXPECT_EQ(specs[0].dtype, DType::kInt64);
  EXPECT_EQ(specs[0].shape, (std::vector<int64_t>{-1, 5}));
  EXPECT_EQ(specs[0].index_bound, 100);
  EXPECT_EQ(specs[1].name, "x");
  EXPECT_EQ(specs[1].dtype, DType::kFloat32);
  EXPECT_EQ(specs[1].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(specs[1].index_bound, 0);
  EXPECT_EQ(specs[2].name, "label");
  EXPECT_EQ(specs[2].dtype, DType::kInt64);
  EXPECT_EQ(specs[2].shape, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(specs[2].index_bound, 0);  // read by no embedding
  EXPECT_EQ(specs[3].name, "classes");
  EXPECT_EQ(specs[3].index_bound, 4);  // hard labels of a 4-class cross entropy
  EXPECT_EQ(executor.FetchNames(), (std::vector<std::string>{"x", "out"}));
}

// A training step as Paddle prints it (the untyped 3.0 style): every op reaches its kernel and
// the sgd_ updates land in the parameters.
TEST_F(PirExecutorTest, RunsAnMlpTrainingStepAsPaddlePrintsIt) {
  const char* root = std::getenv("IRM_SOURCE_DIR");
  std::ifstream in(std::string(root != nullptr ? root : ".") +
                   "/newir/testdata/text/untyped_mlp.pir");
  ASSERT_TRUE(in) << "cannot read newir/testdata/text/untyped_mlp.pir";
  std::stringstream text;
  text << in.rdbuf();
  Param("linear_0.w_0", F32(Doubles(32, 0.5), {4, 8}));
  Param("linear_0.b_0", F32(Doubles(8, 0.5), {8}));
  Param("linear_1.w_0", F32(Doubles(16, 0.5), {8, 2}));
  Param("linear_1.b_0", F32(Doubles(2, 0.5), {2}));
  RunOk(text.str(), {{"x", F32(Doubles(12, 1.0), {3, 4})}});
  EXPECT_EQ(KernelSequence(), (std::vector<std::string>{
                                  "matmul", "add", "relu", "matmul", "add", "mean", "full",
                                  "mean_grad", "add_grad", "matmul_grad", "relu_grad", "add_grad",
                                  "matmul_grad", "full", "sgd", "sgd", "sgd", "sgd"}));
  const std::vector<KernelRecord> sgd = kernels_.RecordsOf("sgd");
  ASSERT_EQ(sgd.size(), 4u);
  EXPECT_EQ(sgd[1].inputs[0], "float32[8, 2]");  // the parameter taken out of a vector
  EXPECT_EQ(sgd[1].inputs[3], "null");
  EXPECT_EQ(sgd[1].outputs, (std::vector<bool>{true, false}));
  for (const char* name : {"linear_0.w_0", "linear_0.b_0", "linear_1.w_0", "linear_1.b_0"}) {
    const Doubles values = ParamValues(name);
    EXPECT_EQ(values, Doubles(values.size(), 100.0)) << name;
  }
  EXPECT_NE(scope_.Find("loss"), nullptr);
}

}  // namespace
}  // namespace irm::rt
