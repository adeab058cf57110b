// The legacy binding table, op by op: each legacy op reaches the right kernel with its inputs in
// kernel order, its attributes renamed, converted and defaulted, the right kernel dtype, and its
// outputs on the right vars. Recording kernels stand in for the real ones: output i of a call is
// a zero tensor of shape [i + 1], so where it lands says which output it was. Math, activations,
// nn and loss ops here; shapes, creation and optimizers in legacy_bindings_more_test.cc.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "oldir/op_schema.h"
#include "reference_runtime/legacy_bindings.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

using testing::BoolAttr;
using testing::FloatAttr;
using testing::IntAttr;
using testing::IntsAttr;
using testing::LegacyHarness;
using testing::LongAttr;
using testing::MakeTensor;
using testing::OpText;
using testing::StrAttr;
using Strings = std::vector<std::string>;

class LegacyBindingTest : public ::testing::Test {
 protected:
  void Put(const std::string& name, DType dtype, std::vector<int64_t> shape) {
    h_.persistent.SetLocal(name, MakeTensor(dtype, std::move(shape)));
  }
  LegacyHarness h_;
};

TEST_F(LegacyBindingTest, MatmulV2RenamesTransposeAttributes) {
  h_.kernels.Add("matmul");
  Put("x", DType::kFloat32, {2, 3});
  Put("w", DType::kFloat32, {4, 3});
  ASSERT_OK(h_.RunOps(OpText("matmul_v2", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"out"}}},
                             {BoolAttr("trans_y", true), BoolAttr("use_mkldnn", false)})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.kernel, "matmul");
  EXPECT_EQ(call.dtype, DType::kFloat32);
  EXPECT_EQ(call.Inputs(), "float32[2, 3], float32[4, 3]");
  EXPECT_EQ(call.Attrs(), "transpose_x=false, transpose_y=true");
  EXPECT_EQ(h_.events, Strings{"0/0 matmul_v2: out=float32[1]"});
}

TEST_F(LegacyBindingTest, MatmulV2GradSkipsAnEmptyGradient) {
  h_.kernels.Add("matmul_grad");
  Put("x", DType::kFloat32, {2, 3});
  Put("w", DType::kFloat32, {3, 4});
  Put("out@GRAD", DType::kFloat32, {2, 4});
  ASSERT_OK(h_.RunOps(
      OpText("matmul_v2_grad", {{"X", {"x"}}, {"Y", {"w"}}, {"Out@GRAD", {"out@GRAD"}}},
             {{"X@GRAD", {"@EMPTY@"}}, {"Y@GRAD", {"w@GRAD"}}}, {BoolAttr("trans_x", true)})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.kernel, "matmul_grad");
  EXPECT_EQ(call.Inputs(), "float32[2, 3], float32[3, 4], float32[2, 4]");
  EXPECT_EQ(call.wanted, (std::vector<bool>{false, true}));
  EXPECT_EQ(call.Attrs(), "transpose_x=true, transpose_y=false");
  EXPECT_EQ(h_.events, Strings{"0/0 matmul_v2_grad: w@GRAD=float32[2]"});
}

TEST_F(LegacyBindingTest, ElementwiseOpsBindTheirKernels) {
  const std::pair<std::string, std::string> ops[] = {{"elementwise_add", "add"},
                                                     {"elementwise_sub", "subtract"},
                                                     {"elementwise_mul", "multiply"},
                                                     {"elementwise_div", "divide"},
                                                     {"elementwise_max", "maximum"},
                                                     {"elementwise_mod", "remainder"},
                                                     {"elementwise_floordiv", "floor_divide"}};
  Put("x", DType::kFloat32, {2, 3});
  Put("y", DType::kFloat32, {2, 3});
  for (const auto& [type, kernel] : ops) h_.kernels.Add(kernel);
  for (const auto& [type, kernel] : ops) {
    h_.kernels.ClearCalls();
    ASSERT_OK(h_.RunOps(
        OpText(type, {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}}, {IntAttr("axis", -1)})));
    const testing::RecordedCall& call = h_.OnlyCall();
    EXPECT_EQ(call.kernel, kernel) << type;
    EXPECT_EQ(call.Inputs(), "float32[2, 3], float32[2, 3]") << type;
    EXPECT_EQ(call.Attrs(), "") << type;
  }
}

TEST_F(LegacyBindingTest, ElementwiseAxisAlignsTheLowerRankOperand) {
  h_.kernels.Add("add");
  Put("a", DType::kFloat32, {2, 3, 4});
  Put("b", DType::kFloat32, {3});
  Put("c", DType::kFloat32, {3, 4});
  // Y [3] at axis 1 of X [2, 3, 4]: seen as [3, 1].
  ASSERT_OK(h_.RunOps(OpText("elementwise_add", {{"X", {"a"}}, {"Y", {"b"}}}, {{"Out", {"o"}}},
                             {IntAttr("axis", 1)})));
  // X lower-rank than Y aligns the same way.
  ASSERT_OK(h_.RunOps(OpText("elementwise_add", {{"X", {"b"}}, {"Y", {"a"}}}, {{"Out", {"o"}}},
                             {IntAttr("axis", 1)})));
  // axis = the rank difference is the trailing alignment: nothing to do.
  ASSERT_OK(h_.RunOps(OpText("elementwise_add", {{"X", {"a"}}, {"Y", {"c"}}}, {{"Out", {"o"}}},
                             {IntAttr("axis", 1)})));
  // Equal ranks ignore axis.
  ASSERT_OK(h_.RunOps(OpText("elementwise_add", {{"X", {"c"}}, {"Y", {"c"}}}, {{"Out", {"o"}}},
                             {IntAttr("axis", 0)})));
  ASSERT_EQ(h_.kernels.calls().size(), 4u);
  EXPECT_EQ(h_.kernels.calls()[0].Inputs(), "float32[2, 3, 4], float32[3, 1]");
  EXPECT_EQ(h_.kernels.calls()[1].Inputs(), "float32[3, 1], float32[2, 3, 4]");
  EXPECT_EQ(h_.kernels.calls()[2].Inputs(), "float32[2, 3, 4], float32[3, 4]");
  EXPECT_EQ(h_.kernels.calls()[3].Inputs(), "float32[3, 4], float32[3, 4]");
}

TEST_F(LegacyBindingTest, ElementwiseAxisOutsideTheOperandIsAnError) {
  h_.kernels.Add("add");
  Put("a", DType::kFloat32, {2, 3, 4});
  Put("c", DType::kFloat32, {3, 4});
  const Status status = h_.RunOps(OpText("elementwise_add", {{"X", {"a"}}, {"Y", {"c"}}},
                                         {{"Out", {"o"}}}, {IntAttr("axis", 2)}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (elementwise_add), var 'c': error: axis 2 does not place "
            "Y float32[3, 4] inside X float32[2, 3, 4]");
  EXPECT_TRUE(h_.kernels.calls().empty());
}

TEST_F(LegacyBindingTest, ElementwiseGradMovesTheAlignedGradientBack) {
  // The kernel's gradients have its operands' shapes: y_grad is [3, 1] for the aligned Y.
  h_.kernels.Add("add_grad", {DType::kFloat32}, [](KernelCall& call) {
    call.SetOutput(0, MakeTensor(DType::kFloat32, call.input(0).shape()));
    call.SetOutput(1, MakeTensor(DType::kFloat32, call.input(1).shape()));
    return Status::Ok();
  });
  Put("a", DType::kFloat32, {2, 3, 4});
  Put("b", DType::kFloat32, {3});
  Put("o@GRAD", DType::kFloat32, {2, 3, 4});
  ASSERT_OK(h_.RunOps(
      OpText("elementwise_add_grad", {{"X", {"a"}}, {"Y", {"b"}}, {"Out@GRAD", {"o@GRAD"}}},
             {{"X@GRAD", {"a@GRAD"}}, {"Y@GRAD", {"b@GRAD"}}}, {IntAttr("axis", 1)})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.Inputs(), "float32[2, 3, 4], float32[3, 1], float32[2, 3, 4]");
  EXPECT_EQ(call.Attrs(), "axis=-1");
  EXPECT_EQ(h_.events,
            Strings{"0/0 elementwise_add_grad: a@GRAD=float32[2, 3, 4], b@GRAD=float32[3]"});
}

TEST_F(LegacyBindingTest, ElementwiseGradsBindTheirKernels) {
  for (const char* kernel : {"subtract_grad", "multiply_grad", "divide_grad"}) {
    h_.kernels.Add(kernel);
  }
  Put("x", DType::kFloat32, {2});
  Put("y", DType::kFloat32, {2});
  Put("out", DType::kFloat32, {2});
  Put("g", DType::kFloat32, {2});
  const testing::SlotArgs outputs = {{"X@GRAD", {"x@GRAD"}}, {"Y@GRAD", {"y@GRAD"}}};
  ASSERT_OK(h_.RunOps(
      OpText("elementwise_sub_grad", {{"X", {"x"}}, {"Y", {"y"}}, {"Out@GRAD", {"g"}}}, outputs)));
  ASSERT_OK(h_.RunOps(
      OpText("elementwise_mul_grad", {{"X", {"x"}}, {"Y", {"y"}}, {"Out@GRAD", {"g"}}}, outputs)));
  Put("g", DType::kFloat32, {1, 2});  // tells out_grad from out
  ASSERT_OK(h_.RunOps(OpText("elementwise_div_grad",
                             {{"X", {"x"}}, {"Y", {"y"}}, {"Out", {"out"}}, {"Out@GRAD", {"g"}}},
                             outputs)));
  ASSERT_EQ(h_.kernels.calls().size(), 3u);
  EXPECT_EQ(h_.kernels.calls()[0].kernel, "subtract_grad");
  EXPECT_EQ(h_.kernels.calls()[1].kernel, "multiply_grad");
  EXPECT_EQ(h_.kernels.calls()[2].kernel, "divide_grad");
  EXPECT_EQ(h_.kernels.calls()[2].Inputs(), "float32[2], float32[2], float32[2], float32[1, 2]");
  EXPECT_EQ(h_.kernels.calls()[2].wanted, (std::vector<bool>{true, true}));
}

TEST_F(LegacyBindingTest, CompareAndLogicalOps) {
  for (const char* kernel :
       {"equal", "not_equal", "less_than", "greater_than", "logical_and", "logical_not"}) {
    h_.kernels.Add(kernel, {DType::kInt64, DType::kBool});
  }
  Put("i", DType::kInt64, {2, 3});
  Put("n", DType::kInt64, {2});
  Put("p", DType::kBool, {2});
  for (const char* type : {"equal", "not_equal", "less_than", "greater_than"}) {
    // Compare ops align by axis like the elementwise ops.
    ASSERT_OK(h_.RunOps(OpText(type, {{"X", {"i"}}, {"Y", {"n"}}}, {{"Out", {"o"}}},
                               {IntAttr("axis", 0), BoolAttr("force_cpu", false)})));
  }
  ASSERT_OK(h_.RunOps(OpText("logical_and", {{"X", {"p"}}, {"Y", {"p"}}}, {{"Out", {"o"}}})));
  ASSERT_OK(h_.RunOps(OpText("logical_not", {{"X", {"p"}}}, {{"Out", {"o"}}})));
  ASSERT_EQ(h_.kernels.calls().size(), 6u);
  const char* kernels[] = {"equal", "not_equal", "less_than", "greater_than"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(h_.kernels.calls()[i].kernel, kernels[i]);
    EXPECT_EQ(h_.kernels.calls()[i].dtype, DType::kInt64);
    EXPECT_EQ(h_.kernels.calls()[i].Inputs(), "int64[2, 3], int64[2, 1]");
    EXPECT_EQ(h_.kernels.calls()[i].Attrs(), "");
  }
  EXPECT_EQ(h_.kernels.calls()[4].Inputs(), "bool[2], bool[2]");
  EXPECT_EQ(h_.kernels.calls()[5].kernel, "logical_not");
  EXPECT_EQ(h_.kernels.calls()[5].dtype, DType::kBool);
}

TEST_F(LegacyBindingTest, ScaleDefaultsAndScaleTensor) {
  h_.kernels.Add("scale");
  Put("x", DType::kFloat32, {2});
  h_.persistent.SetLocal("s", MakeTensor(DType::kFloat64, {1}, {3.5}));
  ASSERT_OK(h_.RunOps(OpText("scale", {{"X", {"x"}}}, {{"Out", {"o"}}})));
  ASSERT_OK(h_.RunOps(OpText(
      "scale", {{"X", {"x"}}, {"ScaleTensor", {"s"}}}, {{"Out", {"o"}}},
      {FloatAttr("scale", 2.0f), FloatAttr("bias", 0.1f), BoolAttr("bias_after_scale", false)})));
  ASSERT_EQ(h_.kernels.calls().size(), 2u);
  EXPECT_EQ(h_.kernels.calls()[0].Inputs(), "float32[2]");
  EXPECT_EQ(h_.kernels.calls()[0].Attrs(), "bias=0.0, bias_after_scale=true, scale=1.0");
  // The float attribute reaches the kernel as the float the program holds; ScaleTensor wins.
  EXPECT_EQ(h_.kernels.calls()[1].Inputs(), "float32[2]");
  EXPECT_EQ(h_.kernels.calls()[1].Attrs(),
            "bias=0.10000000149011612, bias_after_scale=false, scale=3.5");
}

TEST_F(LegacyBindingTest, ScaleTensorOfTwoElementsIsAnError) {
  h_.kernels.Add("scale");
  Put("x", DType::kFloat32, {2});
  Put("s", DType::kFloat32, {2});
  const Status status =
      h_.RunOps(OpText("scale", {{"X", {"x"}}, {"ScaleTensor", {"s"}}}, {{"Out", {"o"}}}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (scale), var 's': error: ScaleTensor 's' is float32[2], "
            "not a 1-element tensor");
}

TEST_F(LegacyBindingTest, CastTakesOutDtypeAndTheInputsKernel) {
  h_.kernels.Add("cast", {DType::kInt64});
  Put("x", DType::kInt64, {3});
  ASSERT_OK(h_.RunOps(OpText("cast", {{"X", {"x"}}}, {{"Out", {"y"}}},
                             {IntAttr("in_dtype", 3), IntAttr("out_dtype", 6)})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.dtype, DType::kInt64);
  EXPECT_EQ(call.Attrs(), "dtype=float64");
}

TEST_F(LegacyBindingTest, CastWithoutOutDtypeOrWithAnUnknownCodeIsAnError) {
  h_.kernels.Add("cast");
  Put("x", DType::kFloat32, {3});
  Status status = h_.RunOps(OpText("cast", {{"X", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (cast): error: attribute 'out_dtype' is missing");
  status = h_.RunOps(OpText("cast", {{"X", {"x"}}}, {{"Out", {"y"}}}, {IntAttr("out_dtype", 19)}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (cast): error: attribute 'out_dtype' holds dtype code 19, "
            "which is no runtime dtype");
}

TEST_F(LegacyBindingTest, SumIsAddNOverEveryInput) {
  h_.kernels.Add("add_n");
  Put("a", DType::kFloat32, {2});
  Put("b", DType::kFloat32, {2});
  Put("c", DType::kFloat32, {2});
  ASSERT_OK(h_.RunOps(OpText("sum", {{"X", {"a", "b", "c"}}}, {{"Out", {"s"}}})));
  EXPECT_EQ(h_.OnlyCall().kernel, "add_n");
  EXPECT_EQ(h_.OnlyCall().Inputs(), "float32[2], float32[2], float32[2]");
  EXPECT_EQ(h_.events, Strings{"0/0 sum: s=float32[1]"});
}

TEST_F(LegacyBindingTest, UnaryOpsBindTheirKernels) {
  const std::pair<std::string, std::string> ops[] = {
      {"relu", "relu"},     {"sigmoid", "sigmoid"},      {"tanh", "tanh"},
      {"sqrt", "sqrt"},     {"mean", "mean_all"},        {"squared_l2_norm", "squared_l2_norm"},
      {"assign", "assign"}, {"share_data", "share_data"}};
  Put("x", DType::kFloat32, {2, 3});
  for (const auto& [type, kernel] : ops) h_.kernels.Add(kernel);
  for (const auto& [type, kernel] : ops) {
    h_.kernels.ClearCalls();
    h_.events.clear();
    ASSERT_OK(h_.RunOps(OpText(type, {{"X", {"x"}}}, {{"Out", {"out"}}})));
    EXPECT_EQ(h_.OnlyCall().kernel, kernel) << type;
    EXPECT_EQ(h_.OnlyCall().Inputs(), "float32[2, 3]") << type;
    EXPECT_EQ(h_.OnlyCall().Attrs(), "") << type;
    EXPECT_EQ(h_.events, Strings{"0/0 " + type + ": out=float32[1]"});
  }
}

TEST_F(LegacyBindingTest, ActivationGradsReadOutOrX) {
  for (const char* kernel : {"relu_grad", "sigmoid_grad", "tanh_grad", "gelu_grad", "gelu",
                             "softmax", "softmax_grad", "mean_all_grad"}) {
    h_.kernels.Add(kernel);
  }
  Put("x", DType::kFloat32, {2});
  Put("out", DType::kFloat32, {3});
  Put("g", DType::kFloat32, {4});
  for (const char* type : {"relu_grad", "sigmoid_grad", "tanh_grad"}) {
    ASSERT_OK(
        h_.RunOps(OpText(type, {{"Out", {"out"}}, {"Out@GRAD", {"g"}}}, {{"X@GRAD", {"x@GRAD"}}})));
  }
  ASSERT_OK(h_.RunOps(OpText("gelu_grad", {{"X", {"x"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}}, {BoolAttr("approximate", true)})));
  ASSERT_OK(h_.RunOps(OpText("gelu", {{"X", {"x"}}}, {{"Out", {"y"}}})));
  ASSERT_OK(h_.RunOps(OpText("softmax", {{"X", {"x"}}}, {{"Out", {"y"}}})));
  ASSERT_OK(h_.RunOps(OpText("softmax_grad", {{"Out", {"out"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}}, {IntAttr("axis", 0)})));
  ASSERT_OK(h_.RunOps(
      OpText("mean_grad", {{"X", {"x"}}, {"Out@GRAD", {"g"}}}, {{"X@GRAD", {"x@GRAD"}}})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 8u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(calls[i].Inputs(), "float32[3], float32[4]");
  EXPECT_EQ(calls[3].Inputs(), "float32[2], float32[4]");
  EXPECT_EQ(calls[3].Attrs(), "approximate=true");
  EXPECT_EQ(calls[4].Attrs(), "approximate=false");
  EXPECT_EQ(calls[5].Attrs(), "axis=-1");
  EXPECT_EQ(calls[6].kernel, "softmax_grad");
  EXPECT_EQ(calls[6].Inputs(), "float32[3], float32[4]");
  EXPECT_EQ(calls[6].Attrs(), "axis=0");
  EXPECT_EQ(calls[7].kernel, "mean_all_grad");
  EXPECT_EQ(calls[7].Inputs(), "float32[2], float32[4]");
}

TEST_F(LegacyBindingTest, ReduceOpsTurnDimIntoAxis) {
  h_.kernels.Add("mean");
  h_.kernels.Add("sum");
  Put("x", DType::kFloat32, {2, 3});
  ASSERT_OK(h_.RunOps(
      OpText("reduce_mean", {{"X", {"x"}}}, {{"Out", {"o"}}},
             {IntsAttr("dim", {1}), BoolAttr("keep_dim", true), BoolAttr("reduce_all", false)})));
  // reduce_all reduces everything whatever dim says; an empty dim too; no dim is {0}.
  ASSERT_OK(h_.RunOps(OpText("reduce_mean", {{"X", {"x"}}}, {{"Out", {"o"}}},
                             {IntsAttr("dim", {1}), BoolAttr("reduce_all", true)})));
  ASSERT_OK(h_.RunOps(OpText("reduce_sum", {{"X", {"x"}}}, {{"Out", {"o"}}},
                             {IntsAttr("dim", {}), IntAttr("out_dtype", -1)})));
  ASSERT_OK(
      h_.RunOps(OpText("reduce_sum", {{"X", {"x"}}}, {{"Out", {"o"}}}, {IntAttr("out_dtype", 6)})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].kernel, "mean");
  EXPECT_EQ(calls[0].Attrs(), "axis=[1], keepdim=true");
  EXPECT_EQ(calls[1].Attrs(), "axis=[], keepdim=false");
  EXPECT_EQ(calls[2].kernel, "sum");
  EXPECT_EQ(calls[2].Attrs(), "axis=[], keepdim=false");
  // out_dtype is the sum's dtype; the kernel is still x's.
  EXPECT_EQ(calls[3].Attrs(), "axis=[0], dtype=float64, keepdim=false");
  EXPECT_EQ(calls[3].dtype, DType::kFloat32);
}

TEST_F(LegacyBindingTest, ReduceGradsCarryReduceAll) {
  h_.kernels.Add("mean_grad");
  h_.kernels.Add("sum_grad");
  Put("x", DType::kFloat32, {2, 3});
  Put("g", DType::kFloat32, {2});
  ASSERT_OK(h_.RunOps(OpText("reduce_mean_grad", {{"X", {"x"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}},
                             {IntsAttr("dim", {-1}), BoolAttr("keep_dim", false)})));
  ASSERT_OK(h_.RunOps(OpText("reduce_sum_grad", {{"X", {"x"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}}, {BoolAttr("reduce_all", true)})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].kernel, "mean_grad");
  EXPECT_EQ(calls[0].Inputs(), "float32[2, 3], float32[2]");
  EXPECT_EQ(calls[0].Attrs(), "axis=[-1], keepdim=false, reduce_all=false");
  EXPECT_EQ(calls[1].kernel, "sum_grad");
  EXPECT_EQ(calls[1].Attrs(), "axis=[], keepdim=false, reduce_all=true");
}

TEST_F(LegacyBindingTest, IncrementStepIsValue) {
  h_.kernels.Add("increment", {DType::kInt64});
  Put("i", DType::kInt64, {1});
  ASSERT_OK(h_.RunOps(OpText("increment", {{"X", {"i"}}}, {{"Out", {"i"}}})));
  ASSERT_OK(
      h_.RunOps(OpText("increment", {{"X", {"i"}}}, {{"Out", {"j"}}}, {FloatAttr("step", -2.0f)})));
  ASSERT_EQ(h_.kernels.calls().size(), 2u);
  EXPECT_EQ(h_.kernels.calls()[0].Attrs(), "value=1.0");
  EXPECT_EQ(h_.kernels.calls()[1].Attrs(), "value=-2.0");
  EXPECT_EQ(h_.kernels.calls()[1].dtype, DType::kInt64);
}

TEST_F(LegacyBindingTest, LayerNormWithAndWithoutScaleAndBias) {
  h_.kernels.Add("layer_norm");
  Put("x", DType::kFloat32, {2, 4});
  Put("s", DType::kFloat32, {4});
  Put("b", DType::kFloat32, {5});
  ASSERT_OK(h_.RunOps(OpText("layer_norm", {{"X", {"x"}}, {"Scale", {"s"}}, {"Bias", {"b"}}},
                             {{"Y", {"y"}}, {"Mean", {"m"}}, {"Variance", {"v"}}},
                             {FloatAttr("epsilon", 1e-6f), IntAttr("begin_norm_axis", 1)})));
  ASSERT_OK(h_.RunOps(OpText("layer_norm", {{"X", {"x"}}, {"Bias", {}}},
                             {{"Y", {"y"}}, {"Mean", {"m"}}, {"Variance", {"v"}}})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].Inputs(), "float32[2, 4], float32[4], float32[5]");
  EXPECT_EQ(calls[0].Attrs(), "begin_norm_axis=1, epsilon=9.999999974752427e-07");
  EXPECT_EQ(calls[1].Inputs(), "float32[2, 4], null, null");
  EXPECT_EQ(calls[1].Attrs(), "begin_norm_axis=1, epsilon=9.999999747378752e-06");
  EXPECT_EQ(h_.events[1], "0/0 layer_norm: y=float32[1], m=float32[2], v=float32[3]");
}

TEST_F(LegacyBindingTest, LayerNormGrad) {
  h_.kernels.Add("layer_norm_grad");
  Put("x", DType::kFloat32, {2, 4});
  Put("s", DType::kFloat32, {4});
  Put("m", DType::kFloat32, {2});
  Put("v", DType::kFloat32, {3});
  Put("g", DType::kFloat32, {2, 5});
  ASSERT_OK(h_.RunOps(OpText(
      "layer_norm_grad",
      {{"X", {"x"}}, {"Scale", {"s"}}, {"Mean", {"m"}}, {"Variance", {"v"}}, {"Y@GRAD", {"g"}}},
      {{"X@GRAD", {"x@GRAD"}}, {"Scale@GRAD", {"s@GRAD"}}}, {IntAttr("begin_norm_axis", 1)})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.Inputs(),
            "float32[2, 4], float32[4], null, float32[2], float32[3], float32[2, 5]");
  EXPECT_EQ(call.wanted, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(h_.events, Strings{"0/0 layer_norm_grad: x@GRAD=float32[1], s@GRAD=float32[2]"});
}

TEST_F(LegacyBindingTest, LookupTableV2IsEmbeddingOfTheWeightsDtype) {
  // Only a float32 kernel: choosing the ids' int64 would miss it.
  h_.kernels.Add("embedding");
  h_.kernels.Add("embedding_grad");
  Put("ids", DType::kInt64, {2, 3});
  Put("w", DType::kFloat32, {10, 4});
  Put("g", DType::kFloat32, {2, 3, 4});
  ASSERT_OK(
      h_.RunOps(OpText("lookup_table_v2", {{"Ids", {"ids"}}, {"W", {"w"}}}, {{"Out", {"emb"}}},
                       {LongAttr("padding_idx", 0), BoolAttr("is_sparse", false)})));
  ASSERT_OK(h_.RunOps(OpText("lookup_table_v2_grad",
                             {{"W", {"w"}}, {"Ids", {"ids"}}, {"Out@GRAD", {"g"}}},
                             {{"W@GRAD", {"w@GRAD"}}})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].kernel, "embedding");
  EXPECT_EQ(calls[0].dtype, DType::kFloat32);
  EXPECT_EQ(calls[0].Inputs(), "int64[2, 3], float32[10, 4]");
  EXPECT_EQ(calls[0].Attrs(), "padding_idx=0, sparse=false");
  EXPECT_EQ(calls[1].kernel, "embedding_grad");
  EXPECT_EQ(calls[1].Inputs(), "int64[2, 3], float32[10, 4], float32[2, 3, 4]");
  EXPECT_EQ(calls[1].Attrs(), "padding_idx=-1, sparse=false");
}

TEST_F(LegacyBindingTest, DropoutAttributesSeedAndStream) {
  h_.kernels.Add("dropout");
  h_.options.seed = 77;
  Put("x", DType::kFloat32, {2, 3});
  ASSERT_OK(h_.RunOps(OpText(
      "dropout", {{"X", {"x"}}, {"Seed", {}}}, {{"Out", {"d.out"}}, {"Mask", {"d.mask"}}},
      {FloatAttr("dropout_prob", 0.25f), BoolAttr("is_test", false), BoolAttr("fix_seed", true),
       IntAttr("seed", 5), StrAttr("dropout_implementation", "upscale_in_train")})));
  ASSERT_OK(h_.RunOps(OpText("dropout", {{"X", {"x"}}}, {{"Out", {"e.out"}}})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].Inputs(), "float32[2, 3], null");
  EXPECT_EQ(calls[0].Attrs(),
            "fix_seed=true, is_test=false, mode='upscale_in_train', p=0.25, seed=5");
  EXPECT_EQ(calls[0].wanted, (std::vector<bool>{true, true}));
  EXPECT_EQ(calls[0].context.program_seed, 77u);
  EXPECT_EQ(calls[0].context.op_identity, OpIdentity("d.out"));
  // The maker's defaults; the mask is not wanted when the program drops it.
  EXPECT_EQ(calls[1].Attrs(),
            "fix_seed=false, is_test=false, mode='downgrade_in_infer', p=0.5, seed=0");
  EXPECT_EQ(calls[1].wanted, (std::vector<bool>{true, false}));
  EXPECT_EQ(calls[1].context.op_identity, OpIdentity("e.out"));
  EXPECT_EQ(h_.events[0], "0/0 dropout: d.out=float32[1], d.mask=float32[2]");
}

TEST_F(LegacyBindingTest, DropoutGradTakesTheGradientsDtype) {
  h_.kernels.Add("dropout_grad");
  Put("mask", DType::kUInt8, {2});
  Put("g", DType::kFloat32, {2});
  ASSERT_OK(h_.RunOps(OpText("dropout_grad", {{"Mask", {"mask"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}},
                             {FloatAttr("dropout_prob", 0.5f), BoolAttr("is_test", false),
                              StrAttr("dropout_implementation", "upscale_in_train")})));
  const testing::RecordedCall& call = h_.OnlyCall();
  EXPECT_EQ(call.dtype, DType::kFloat32);
  EXPECT_EQ(call.Inputs(), "uint8[2], float32[2]");
  EXPECT_EQ(call.Attrs(), "is_test=false, mode='upscale_in_train', p=0.5");
}

TEST_F(LegacyBindingTest, SoftmaxWithCrossEntropy) {
  h_.kernels.Add("cross_entropy_with_softmax");
  h_.kernels.Add("cross_entropy_with_softmax_grad");
  Put("logits", DType::kFloat32, {4, 10});
  Put("label", DType::kInt64, {4, 1});
  Put("sm", DType::kFloat32, {4, 10});
  Put("g", DType::kFloat32, {4, 1});
  ASSERT_OK(h_.RunOps(
      OpText("softmax_with_cross_entropy", {{"Logits", {"logits"}}, {"Label", {"label"}}},
             {{"Softmax", {"sm.out"}}, {"Loss", {"loss"}}}, {IntAttr("ignore_index", 3)})));
  ASSERT_OK(h_.RunOps(OpText("softmax_with_cross_entropy_grad",
                             {{"Label", {"label"}}, {"Softmax", {"sm"}}, {"Loss@GRAD", {"g"}}},
                             {{"Logits@GRAD", {"logits@GRAD"}}})));
  const auto& calls = h_.kernels.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].Inputs(), "float32[4, 10], int64[4, 1]");
  EXPECT_EQ(calls[0].Attrs(),
            "axis=-1, ignore_index=3, numeric_stable_mode=true, soft_label=false, "
            "use_softmax=true");
  EXPECT_EQ(h_.events[0], "0/0 softmax_with_cross_entropy: sm.out=float32[1], loss=float32[2]");
  EXPECT_EQ(calls[1].dtype, DType::kFloat32);
  EXPECT_EQ(calls[1].Inputs(), "int64[4, 1], float32[4, 10], float32[4, 1]");
}

// ---- the table and attribute conversion --------------------------------------------------------

TEST(LegacyBindingTableTest, EverySlotOfEveryRowIsOneTheLegacyOpHas) {
  for (const LegacyBinding& binding : AllLegacyBindings()) {
    const oldir::OpSchema* schema = oldir::FindOpSchema(binding.op_type);
    ASSERT_NE(schema, nullptr) << binding.op_type;
    for (const SlotRule& rule : binding.inputs) {
      EXPECT_NE(schema->FindInput(rule.slot), nullptr) << binding.op_type << " " << rule.slot;
    }
    for (const TensorAttrRule& rule : binding.tensor_attrs) {
      EXPECT_NE(schema->FindInput(rule.slot), nullptr) << binding.op_type << " " << rule.slot;
    }
    for (const SlotRule& rule : binding.outputs) {
      EXPECT_NE(schema->FindOutput(rule.slot), nullptr) << binding.op_type << " " << rule.slot;
    }
    for (const AttrRule& rule : binding.attrs) {
      if (rule.legacy.empty()) continue;
      EXPECT_NE(schema->FindAttr(rule.legacy), nullptr) << binding.op_type << " " << rule.legacy;
    }
  }
}

TEST(LegacyBindingTableTest, EveryModelledOpIsBoundOrRunByTheExecutor) {
  // The control-flow grads re-enter the forward op's step scopes; no kernel does that.
  const std::vector<std::string> unsupported = {"conditional_block_grad", "while_grad"};
  for (const oldir::OpSchema& schema : oldir::AllOpSchemas()) {
    const bool known =
        FindLegacyBinding(schema.type) != nullptr || FindLegacyBuiltin(schema.type).has_value() ||
        std::find(unsupported.begin(), unsupported.end(), schema.type) != unsupported.end() ||
        // Parameter-server (RPC) ops are validated, never run: the planner says so by name.
        oldir::IsParameterServerOp(schema.type);
    EXPECT_TRUE(known) << schema.type;
  }
  EXPECT_EQ(FindLegacyBinding("conditional_block_grad"), nullptr);
  EXPECT_EQ(FindLegacyBuiltin("matmul_v2"), std::nullopt);
}

TEST(LegacyAttrConversionTest, WidensAndConverts) {
  using oldir::AttrValue;
  const auto convert = [](const AttrValue& v, AttrKind kind) {
    StatusOr<rt::AttrValue> out = ConvertLegacyAttr("a", v, kind);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : rt::AttrValue(false);
  };
  EXPECT_EQ(std::get<int64_t>(convert(AttrValue(int32_t{-3}), AttrKind::kInt)), -3);
  EXPECT_EQ(std::get<int64_t>(convert(AttrValue(int64_t{1} << 40), AttrKind::kInt)),
            int64_t{1} << 40);
  EXPECT_EQ(std::get<double>(convert(AttrValue(0.1f), AttrKind::kFloat)),
            static_cast<double>(0.1f));
  EXPECT_EQ(std::get<double>(convert(AttrValue(0.1), AttrKind::kFloat)), 0.1);
  EXPECT_EQ(std::get<double>(convert(AttrValue(oldir::MakeScalar(2.5)), AttrKind::kFloat)), 2.5);
  EXPECT_EQ(std::get<double>(convert(AttrValue(oldir::MakeScalar(int64_t{7})), AttrKind::kFloat)),
            7.0);
  EXPECT_EQ(std::get<std::vector<int64_t>>(
                convert(AttrValue(std::vector<int32_t>{1, -1}), AttrKind::kInts)),
            (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(std::get<std::vector<double>>(
                convert(AttrValue(std::vector<int64_t>{3, 4}), AttrKind::kFloats)),
            (std::vector<double>{3.0, 4.0}));
  EXPECT_EQ(std::get<DType>(convert(AttrValue(int32_t{22}), AttrKind::kDType)), DType::kBFloat16);
  EXPECT_EQ(std::get<DType>(convert(AttrValue(int32_t{20}), AttrKind::kDType)), DType::kUInt8);
}

TEST(LegacyAttrConversionTest, MismatchesNameTheAttribute) {
  StatusOr<AttrValue> out =
      ConvertLegacyAttr("trans_x", oldir::AttrValue(int32_t{1}), AttrKind::kBool);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(out.status().message(), "attribute 'trans_x' is INT, which does not convert to a bool");
  out = ConvertLegacyAttr("dim", oldir::AttrValue(std::vector<float>{1.0f}), AttrKind::kInts);
  EXPECT_EQ(out.status().message(),
            "attribute 'dim' is FLOATS, which does not convert to an int array");
  out = ConvertLegacyAttr("dtype", oldir::AttrValue(int32_t{23}), AttrKind::kDType);
  EXPECT_EQ(out.status().message(),
            "attribute 'dtype' holds dtype code 23, which is no runtime dtype");
}

TEST_F(LegacyBindingTest, AnAttributeOfTheWrongTypeIsLocated) {
  h_.kernels.Add("matmul");
  Put("x", DType::kFloat32, {2, 2});
  const Status status = h_.RunOps(
      OpText("matmul_v2", {{"X", {"x"}}, {"Y", {"x"}}}, {{"Out", {"o"}}}, {IntAttr("trans_x", 1)}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (matmul_v2): error: attribute 'trans_x' is INT, which does "
            "not convert to a bool");
}

}  // namespace
}  // namespace irm::rt
