// The legacy binding table, continued (see legacy_bindings_test.cc): shape ops, creation and
// random ops, optimizers, and what a malformed op or a kernel that refuses turns into.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_bindings.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

using testing::BoolAttr;
using testing::FloatAttr;
using testing::FloatsAttr;
using testing::IntAttr;
using testing::IntsAttr;
using testing::LegacyHarness;
using testing::LongAttr;
using testing::LongsAttr;
using testing::MakeTensor;
using testing::OpText;
using testing::StrAttr;
using Strings = std::vector<std::string>;

class LegacyBindingMoreTest : public ::testing::Test {
 protected:
  void Put(const std::string& name, DType dtype, std::vector<int64_t> shape,
           const std::vector<double>& values = {}) {
    h_.persistent.SetLocal(name, MakeTensor(dtype, std::move(shape), values));
  }
  const testing::RecordedCall& Call(size_t i) const { return h_.kernels.calls().at(i); }
  LegacyHarness h_;
};

TEST_F(LegacyBindingMoreTest, Reshape2ShapeFromTheAttributeOrTheTensors) {
  h_.kernels.Add("reshape");
  Put("x", DType::kFloat32, {2, 3, 4});
  Put("shape", DType::kInt32, {2}, {6, 4});
  Put("d0", DType::kInt64, {1}, {4});
  Put("d1", DType::kInt32, {1}, {-1});
  const testing::SlotArgs outputs = {{"Out", {"y"}}, {"XShape", {"y.xshape"}}};
  ASSERT_OK(h_.RunOps(
      OpText("reshape2", {{"X", {"x"}}, {"Shape", {}}}, outputs, {IntsAttr("shape", {0, -1})})));
  ASSERT_OK(h_.RunOps(OpText("reshape2", {{"X", {"x"}}, {"Shape", {"shape"}}}, outputs,
                             {IntsAttr("shape", {24})})));
  // The ShapeTensor list wins over the Shape tensor.
  ASSERT_OK(h_.RunOps(OpText("reshape2",
                             {{"X", {"x"}}, {"Shape", {"shape"}}, {"ShapeTensor", {"d0", "d1"}}},
                             outputs, {IntsAttr("shape", {24})})));
  ASSERT_EQ(h_.kernels.calls().size(), 3u);
  EXPECT_EQ(Call(0).kernel, "reshape");
  EXPECT_EQ(Call(0).Inputs(), "float32[2, 3, 4]");
  EXPECT_EQ(Call(0).Attrs(), "shape=[0, -1]");
  EXPECT_EQ(Call(1).Attrs(), "shape=[6, 4]");
  EXPECT_EQ(Call(2).Attrs(), "shape=[4, -1]");
  EXPECT_EQ(h_.events[0], "0/0 reshape2: y=float32[1], y.xshape=float32[2]");
}

TEST_F(LegacyBindingMoreTest, ShapeTensorsMustHoldInts) {
  h_.kernels.Add("reshape");
  Put("x", DType::kFloat32, {2, 3});
  Put("shape", DType::kFloat32, {2}, {3, 2});
  Put("d0", DType::kInt64, {2}, {3, 2});
  Status status =
      h_.RunOps(OpText("reshape2", {{"X", {"x"}}, {"Shape", {"shape"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (reshape2), var 'shape': error: Shape 'shape' is "
            "float32[2], not an int32 or int64 tensor");
  status = h_.RunOps(OpText("reshape2", {{"X", {"x"}}, {"ShapeTensor", {"d0"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (reshape2), var 'd0': error: ShapeTensor 'd0' is int64[2], "
            "not a 1-element int32 or int64 tensor");
  EXPECT_TRUE(h_.kernels.calls().empty());
}

TEST_F(LegacyBindingMoreTest, Reshape2GradAndTranspose2) {
  h_.kernels.Add("reshape_grad");
  h_.kernels.Add("transpose");
  h_.kernels.Add("transpose_grad");
  Put("xshape", DType::kFloat32, {0, 2, 3});
  Put("g", DType::kFloat32, {3, 2});
  Put("x", DType::kFloat32, {2, 3});
  ASSERT_OK(h_.RunOps(OpText("reshape2_grad", {{"XShape", {"xshape"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}})));
  ASSERT_OK(
      h_.RunOps(OpText("transpose2", {{"X", {"x"}}}, {{"Out", {"t"}}, {"XShape", {"t.xshape"}}},
                       {IntsAttr("axis", {1, 0})})));
  ASSERT_OK(h_.RunOps(OpText("transpose2_grad", {{"XShape", {"xshape"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"x@GRAD"}}}, {IntsAttr("axis", {1, 0})})));
  EXPECT_EQ(Call(0).Inputs(), "float32[0, 2, 3], float32[3, 2]");
  EXPECT_EQ(Call(1).Attrs(), "perm=[1, 0]");
  EXPECT_EQ(Call(1).wanted, (std::vector<bool>{true}));
  // phi's transpose has no xshape: XShape stays unwritten.
  EXPECT_EQ(h_.events[1], "0/0 transpose2: t=float32[1], t.xshape=null");
  EXPECT_EQ(Call(2).Inputs(), "float32[3, 2]");
  EXPECT_EQ(Call(2).Attrs(), "perm=[1, 0]");
}

TEST_F(LegacyBindingMoreTest, ConcatAndItsGrad) {
  h_.kernels.Add("concat");
  h_.kernels.Add("concat_grad");
  Put("a", DType::kFloat32, {2, 3});
  Put("b", DType::kFloat32, {2, 5});
  Put("axis", DType::kInt32, {1}, {1});
  Put("g", DType::kFloat32, {2, 8});
  ASSERT_OK(h_.RunOps(OpText("concat", {{"X", {"a", "b"}}, {"AxisTensor", {}}}, {{"Out", {"c"}}},
                             {IntAttr("axis", -1)})));
  ASSERT_OK(
      h_.RunOps(OpText("concat", {{"X", {"a", "b"}}, {"AxisTensor", {"axis"}}}, {{"Out", {"c"}}})));
  ASSERT_OK(h_.RunOps(OpText("concat_grad", {{"X", {"a", "b"}}, {"Out@GRAD", {"g"}}},
                             {{"X@GRAD", {"@EMPTY@", "b@GRAD"}}}, {IntAttr("axis", 1)})));
  EXPECT_EQ(Call(0).Inputs(), "float32[2, 3], float32[2, 5]");
  EXPECT_EQ(Call(0).Attrs(), "axis=-1");
  EXPECT_EQ(Call(1).Attrs(), "axis=1");
  EXPECT_EQ(Call(2).Inputs(), "float32[2, 3], float32[2, 5], float32[2, 8]");
  EXPECT_EQ(Call(2).wanted, (std::vector<bool>{false, true}));
  EXPECT_EQ(h_.events[2], "0/0 concat_grad: b@GRAD=float32[2]");
}

TEST_F(LegacyBindingMoreTest, SplitByNumOrBySections) {
  h_.kernels.Add("split");
  h_.kernels.Add("split_with_num");
  Put("x", DType::kFloat32, {4, 6});
  Put("s0", DType::kInt64, {1}, {1});
  Put("s1", DType::kInt64, {1}, {5});
  ASSERT_OK(h_.RunOps(OpText("split", {{"X", {"x"}}}, {{"Out", {"p", "q"}}},
                             {IntAttr("axis", 1), IntAttr("num", 2), IntsAttr("sections", {})})));
  ASSERT_OK(
      h_.RunOps(OpText("split", {{"X", {"x"}}}, {{"Out", {"p", "q", "r"}}},
                       {IntAttr("axis", 1), IntAttr("num", 0), IntsAttr("sections", {1, -1, 2})})));
  ASSERT_OK(h_.RunOps(OpText("split", {{"X", {"x"}}, {"SectionsTensorList", {"s0", "s1"}}},
                             {{"Out", {"p", "q"}}}, {IntsAttr("sections", {3, 3})})));
  EXPECT_EQ(Call(0).kernel, "split_with_num");
  EXPECT_EQ(Call(0).Attrs(), "axis=1, num=2");
  EXPECT_EQ(h_.events[0], "0/0 split: p=float32[1], q=float32[2]");
  EXPECT_EQ(Call(1).kernel, "split");
  EXPECT_EQ(Call(1).Attrs(), "axis=1, sections=[1, -1, 2]");
  EXPECT_EQ(Call(1).wanted.size(), 3u);
  EXPECT_EQ(Call(2).Attrs(), "axis=0, sections=[1, 5]");
}

TEST_F(LegacyBindingMoreTest, SliceAttributesAndTensors) {
  h_.kernels.Add("slice");
  h_.kernels.Add("slice_grad");
  Put("x", DType::kFloat32, {4, 6});
  Put("starts", DType::kInt64, {1}, {2});
  Put("e0", DType::kInt32, {1}, {-1});
  Put("g", DType::kFloat32, {2, 6});
  ASSERT_OK(h_.RunOps(
      OpText("slice", {{"Input", {"x"}}, {"StartsTensor", {"starts"}}, {"EndsTensorList", {"e0"}}},
             {{"Out", {"y"}}},
             {IntsAttr("axes", {0}), IntsAttr("starts", {0}), IntsAttr("ends", {3}),
              IntsAttr("infer_flags", {-1}), IntsAttr("decrease_axis", {})})));
  ASSERT_OK(h_.RunOps(OpText("slice_grad", {{"Input", {"x"}}, {"Out@GRAD", {"g"}}},
                             {{"Input@GRAD", {"x@GRAD"}}},
                             {IntsAttr("axes", {0}), IntsAttr("starts", {1}), IntsAttr("ends", {3}),
                              IntsAttr("decrease_axis", {1})})));
  EXPECT_EQ(Call(0).Inputs(), "float32[4, 6]");
  EXPECT_EQ(Call(0).Attrs(), "axes=[0], decrease_axis=[], ends=[-1], infer_flags=[-1], starts=[2]");
  EXPECT_EQ(Call(1).Inputs(), "float32[4, 6], float32[2, 6]");
  EXPECT_EQ(Call(1).Attrs(), "axes=[0], decrease_axis=[1], ends=[3], infer_flags=[], starts=[1]");
}

std::vector<std::string> SetValueIndexAttrs() {
  return {LongsAttr("axes", {1}),  LongsAttr("starts", {0}),       LongsAttr("ends", {2}),
          LongsAttr("steps", {1}), LongsAttr("decrease_axes", {}), LongsAttr("none_axes", {}),
          IntAttr("dtype", 5)};
}

TEST_F(LegacyBindingMoreTest, SetValuePicksItsKernelAndItsValues) {
  for (const char* kernel : {"set_value", "set_value_with_tensor", "set_value_with_tensor_grad"}) {
    h_.kernels.Add(kernel);
  }
  Put("x", DType::kFloat32, {4, 6});
  Put("v", DType::kFloat32, {2});
  Put("g", DType::kFloat32, {4, 6});
  Put("s0", DType::kInt64, {1}, {3});
  Put("e0", DType::kInt32, {1}, {-1});
  Put("t0", DType::kInt64, {1}, {2});
  std::vector<std::string> constant = SetValueIndexAttrs();
  constant.push_back(LongsAttr("shape", {1}));
  std::vector<std::string> fp32 = constant;
  fp32.push_back(FloatsAttr("fp32_values", {2.5f}));
  fp32.push_back(LongsAttr("int64_values", {9}));  // fp32_values comes first
  ASSERT_OK(h_.RunOps(OpText("set_value", {{"Input", {"x"}}}, {{"Out", {"y"}}}, fp32)));
  std::vector<std::string> int64 = constant;
  int64.push_back(FloatsAttr("fp32_values", {}));
  int64.push_back(LongsAttr("int64_values", {9}));
  // The tensor lists win over the attributes.
  ASSERT_OK(h_.RunOps(OpText("set_value",
                             {{"Input", {"x"}},
                              {"StartsTensorList", {"s0"}},
                              {"EndsTensorList", {"e0"}},
                              {"StepsTensorList", {"t0"}}},
                             {{"Out", {"y"}}}, int64)));
  std::vector<std::string> bools = constant;
  bools.push_back(IntsAttr("bool_values", {1}));
  ASSERT_OK(h_.RunOps(OpText("set_value", {{"Input", {"x"}}}, {{"Out", {"y"}}}, bools)));
  ASSERT_OK(
      h_.RunOps(OpText("set_value", {{"Input", {"x"}}}, {{"Out", {"y"}}},
                       {LongsAttr("axes", {1}), LongsAttr("starts", {0}), LongsAttr("ends", {2}),
                        LongsAttr("steps", {1}), FloatsAttr("fp32_values", {1.0f}),
                        "name: \"values\" type: SCALARS scalars { type: FLOAT64 r: 0.25 }"})));
  ASSERT_OK(h_.RunOps(OpText("set_value", {{"Input", {"x"}}, {"ValueTensor", {"v"}}},
                             {{"Out", {"y"}}}, SetValueIndexAttrs())));
  ASSERT_OK(h_.RunOps(OpText("set_value_grad", {{"Out@GRAD", {"g"}}, {"ValueTensor", {"v"}}},
                             {{"Input@GRAD", {"x@GRAD"}}, {"ValueTensor@GRAD", {"v@GRAD"}}},
                             SetValueIndexAttrs())));
  ASSERT_EQ(h_.kernels.calls().size(), 6u);
  EXPECT_EQ(Call(0).kernel, "set_value");
  EXPECT_EQ(Call(0).Inputs(), "float32[4, 6], null");
  EXPECT_EQ(Call(0).Attrs(),
            "axes=[1], decrease_axes=[], ends=[2], none_axes=[], shape=[1], starts=[0], "
            "steps=[1], values=[2.5]");
  EXPECT_EQ(Call(1).Attrs(),
            "axes=[1], decrease_axes=[], ends=[-1], none_axes=[], shape=[1], starts=[3], "
            "steps=[2], values=[9]");
  EXPECT_EQ(Call(2).Attrs(),
            "axes=[1], decrease_axes=[], ends=[2], none_axes=[], shape=[1], starts=[0], "
            "steps=[1], values=[1]");
  // Paddle 3.x's SCALARS `values` wins over the typed lists.
  EXPECT_EQ(Call(3).Attrs(),
            "axes=[1], decrease_axes=[], ends=[2], none_axes=[], shape=[], starts=[0], "
            "steps=[1], values=[0.25]");
  EXPECT_EQ(Call(4).kernel, "set_value_with_tensor");
  EXPECT_EQ(Call(4).Inputs(), "float32[4, 6], float32[2]");
  EXPECT_EQ(Call(5).kernel, "set_value_with_tensor_grad");
  EXPECT_EQ(Call(5).dtype, DType::kFloat32);
  EXPECT_EQ(Call(5).Inputs(), "float32[2], float32[4, 6]");
  EXPECT_EQ(Call(5).Attrs(),
            "axes=[1], decrease_axes=[], ends=[2], none_axes=[], starts=[0], steps=[1]");
}

TEST_F(LegacyBindingMoreTest, SetValueWithoutValuesIsLocated) {
  h_.kernels.Add("set_value");
  Put("x", DType::kFloat32, {4, 6});
  const Status status =
      h_.RunOps(OpText("set_value", {{"Input", {"x"}}}, {{"Out", {"x"}}}, SetValueIndexAttrs()));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (set_value): error: set_value has no ValueTensor and no "
            "values (fp32_values, fp64_values, int32_values, int64_values, bool_values, "
            "fp16_values or values)");
}

// On the real kernels: x[:, 2:-4:-2] = v in place (columns 2 and 0, v broadcast over the rows).
TEST_F(LegacyBindingMoreTest, SetValueRunsOnTheRealKernelsInPlace) {
  h_.options.kernels = &KernelRegistry::Global();
  Put("x", DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  Put("v", DType::kFloat32, {2}, {10, 20});
  ASSERT_OK(h_.RunOps(OpText(
      "set_value", {{"Input", {"x"}}, {"ValueTensor", {"v"}}}, {{"Out", {"x"}}},
      {LongsAttr("axes", {1}), LongsAttr("starts", {2}), LongsAttr("ends", {-4}),
       LongsAttr("steps", {-2}), LongsAttr("decrease_axes", {}), LongsAttr("none_axes", {})})));
  const Tensor* x = h_.persistent.Find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(testing::ToDoubles(*x), (std::vector<double>{20, 1, 10, 20, 4, 10}));
}

TEST_F(LegacyBindingMoreTest, TrilTriuPicksTheTriangle) {
  for (const char* kernel : {"tril", "triu", "tril_grad", "triu_grad"}) h_.kernels.Add(kernel);
  Put("x", DType::kFloat32, {3, 3});
  ASSERT_OK(h_.RunOps(OpText("tril_triu", {{"X", {"x"}}}, {{"Out", {"y"}}},
                             {IntAttr("diagonal", -1), BoolAttr("lower", true)})));
  ASSERT_OK(
      h_.RunOps(OpText("tril_triu", {{"X", {"x"}}}, {{"Out", {"y"}}}, {BoolAttr("lower", false)})));
  ASSERT_OK(h_.RunOps(OpText("tril_triu_grad", {{"Out@GRAD", {"x"}}}, {{"X@GRAD", {"g"}}},
                             {IntAttr("diagonal", 1), BoolAttr("lower", true)})));
  ASSERT_OK(h_.RunOps(OpText("tril_triu_grad", {{"Out@GRAD", {"x"}}}, {{"X@GRAD", {"g"}}},
                             {IntAttr("diagonal", 1), BoolAttr("lower", false)})));
  EXPECT_EQ(Call(0).kernel, "tril");
  EXPECT_EQ(Call(0).Attrs(), "diagonal=-1");
  EXPECT_EQ(Call(1).kernel, "triu");
  EXPECT_EQ(Call(1).Attrs(), "diagonal=0");
  EXPECT_EQ(Call(2).kernel, "tril_grad");
  EXPECT_EQ(Call(3).kernel, "triu_grad");
  EXPECT_EQ(Call(3).Attrs(), "diagonal=1");
  const Status status = h_.RunOps(OpText("tril_triu", {{"X", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (tril_triu): error: attribute 'lower' is missing");
}

TEST_F(LegacyBindingMoreTest, FillConstantValueShapeAndDtype) {
  h_.kernels.Add("full", {DType::kFloat32, DType::kInt64});
  Put("shape", DType::kInt32, {2}, {3, 4});
  Put("d0", DType::kInt64, {1}, {5});
  Put("v", DType::kFloat32, {1}, {0.5});
  const testing::SlotArgs out = {{"Out", {"c"}}};
  // str_value holds the exact value; value is the float fallback.
  ASSERT_OK(h_.RunOps(OpText("fill_constant", {}, out,
                             {LongsAttr("shape", {2, 3}), IntAttr("dtype", 3),
                              FloatAttr("value", 1e10f), StrAttr("str_value", "10000000001")})));
  ASSERT_OK(h_.RunOps(
      OpText("fill_constant", {}, out, {LongsAttr("shape", {}), FloatAttr("value", 0.1f)})));
  ASSERT_OK(h_.RunOps(
      OpText("fill_constant", {}, out, {IntsAttr("shape", {2}), StrAttr("str_value", "-inf")})));
  // ShapeTensor wins over ShapeTensorList; ValueTensor over the attributes.
  ASSERT_OK(h_.RunOps(
      OpText("fill_constant",
             {{"ShapeTensor", {"shape"}}, {"ShapeTensorList", {"d0"}}, {"ValueTensor", {"v"}}}, out,
             {LongsAttr("shape", {1}), StrAttr("str_value", "2.0")})));
  ASSERT_OK(h_.RunOps(OpText("fill_constant", {{"ShapeTensorList", {"d0", "d0"}}}, out)));
  ASSERT_EQ(h_.kernels.calls().size(), 5u);
  EXPECT_EQ(Call(0).kernel, "full");
  EXPECT_EQ(Call(0).dtype, DType::kInt64);
  EXPECT_EQ(Call(0).Inputs(), "");
  EXPECT_EQ(Call(0).Attrs(), "dtype=int64, shape=[2, 3], value=10000000001.0");
  EXPECT_EQ(Call(1).dtype, DType::kFloat32);
  EXPECT_EQ(Call(1).Attrs(), "dtype=float32, shape=[], value=0.10000000149011612");
  EXPECT_EQ(Call(2).Attrs(), "dtype=float32, shape=[2], value=-inf");
  EXPECT_EQ(Call(3).Attrs(), "dtype=float32, shape=[3, 4], value=0.5");
  EXPECT_EQ(Call(4).Attrs(), "dtype=float32, shape=[5, 5], value=0.0");
  EXPECT_EQ(h_.events[0], "0/0 fill_constant: c=int64[1]");
}

TEST_F(LegacyBindingMoreTest, FillConstantStrValueMustBeANumber) {
  h_.kernels.Add("full");
  const Status status =
      h_.RunOps(OpText("fill_constant", {}, {{"Out", {"c"}}}, {StrAttr("str_value", "1.5x")}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (fill_constant): error: attribute 'str_value' holds "
            "'1.5x', which is no number");
}

TEST_F(LegacyBindingMoreTest, RandomOpsGetTheirStreamAndTheProgramSeed) {
  h_.kernels.Add("uniform", {DType::kFloat32, DType::kFloat64});
  h_.kernels.Add("gaussian", {DType::kFloat16});
  h_.options.seed = 1234;
  ASSERT_OK(
      h_.RunOps(OpText("uniform_random", {}, {{"Out", {"w"}}},
                       {LongsAttr("shape", {4, 2}), IntAttr("dtype", 6), FloatAttr("min", -0.5f),
                        FloatAttr("max", 0.5f), IntAttr("seed", 0), IntAttr("diag_num", 0)})));
  ASSERT_OK(h_.RunOps(OpText("uniform_random", {}, {{"Out", {"v"}}}, {LongsAttr("shape", {3})})));
  ASSERT_OK(h_.RunOps(OpText("gaussian_random", {}, {{"Out", {"g"}}},
                             {LongsAttr("shape", {2}), IntAttr("dtype", 4), FloatAttr("std", 0.02f),
                              IntAttr("seed", 9)})));
  ASSERT_EQ(h_.kernels.calls().size(), 3u);
  EXPECT_EQ(Call(0).kernel, "uniform");
  EXPECT_EQ(Call(0).dtype, DType::kFloat64);
  EXPECT_EQ(Call(0).Attrs(), "dtype=float64, max=0.5, min=-0.5, seed=0, shape=[4, 2]");
  EXPECT_EQ(Call(0).context.op_identity, OpIdentity("w"));
  EXPECT_EQ(Call(0).context.program_seed, 1234u);
  EXPECT_EQ(Call(1).Attrs(), "dtype=float32, max=1.0, min=-1.0, seed=0, shape=[3]");
  EXPECT_EQ(Call(1).context.op_identity, OpIdentity("v"));
  EXPECT_EQ(Call(2).kernel, "gaussian");
  EXPECT_EQ(Call(2).dtype, DType::kFloat16);
  EXPECT_EQ(Call(2).Attrs(),
            "dtype=float16, mean=0.0, seed=9, shape=[2], std=0.019999999552965164");
  EXPECT_EQ(Call(2).context.op_identity, OpIdentity("g"));
}

TEST_F(LegacyBindingMoreTest, UniformRandomWithADiagonalIsUnimplemented) {
  h_.kernels.Add("uniform");
  const Status status = h_.RunOps(OpText("uniform_random", {}, {{"Out", {"w"}}},
                                         {LongsAttr("shape", {2, 2}), IntAttr("diag_num", 2)}));
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (uniform_random): error: uniform_random with diag_num 2 "
            "(a diagonal initializer) is not supported");
}

TEST_F(LegacyBindingMoreTest, FillAnyLikeKeepsXsDtypeUnlessTold) {
  h_.kernels.Add("full_like", {DType::kInt32, DType::kFloat64});
  Put("x", DType::kInt32, {2});
  ASSERT_OK(h_.RunOps(OpText("fill_any_like", {{"X", {"x"}}}, {{"Out", {"o"}}},
                             {FloatAttr("value", 1.0f), IntAttr("dtype", -1)})));
  ASSERT_OK(h_.RunOps(OpText(
      "fill_any_like", {{"X", {"x"}}}, {{"Out", {"o"}}},
      {"name: \"value\" type: SCALAR scalar { type: FLOAT64 r: 2.5 }", IntAttr("dtype", 6)})));
  EXPECT_EQ(Call(0).kernel, "full_like");
  EXPECT_EQ(Call(0).dtype, DType::kInt32);
  EXPECT_EQ(Call(0).Inputs(), "int32[2]");
  EXPECT_EQ(Call(0).Attrs(), "value=1.0");
  EXPECT_EQ(Call(1).dtype, DType::kFloat64);
  EXPECT_EQ(Call(1).Attrs(), "dtype=float64, value=2.5");
}

TEST_F(LegacyBindingMoreTest, AssignValueReadsTheListOfItsDtype) {
  h_.kernels.Add("assign_value", {DType::kFloat32, DType::kInt64, DType::kBool});
  const testing::SlotArgs out = {{"Out", {"v"}}};
  ASSERT_OK(h_.RunOps(OpText(
      "assign_value", {}, out,
      {IntsAttr("shape", {2, 2}), IntAttr("dtype", 5),
       FloatsAttr("fp32_values", {1.0f, 2.0f, 3.0f, 4.5f}), LongsAttr("int64_values", {9})})));
  ASSERT_OK(h_.RunOps(
      OpText("assign_value", {}, out,
             {IntsAttr("shape", {3}), IntAttr("dtype", 3), LongsAttr("int64_values", {7, 8, 9})})));
  ASSERT_OK(h_.RunOps(
      OpText("assign_value", {}, out,
             {IntsAttr("shape", {2}), IntAttr("dtype", 0), IntsAttr("bool_values", {1, 0})})));
  ASSERT_OK(h_.RunOps(OpText(
      "assign_value", {}, out,
      {IntsAttr("shape", {2}), IntAttr("dtype", 3),
       "name: \"values\" type: SCALARS scalars { type: LONG i: 5 } scalars { type: LONG i: 6 }"})));
  EXPECT_EQ(Call(0).dtype, DType::kFloat32);
  EXPECT_EQ(Call(0).Attrs(), "dtype=float32, shape=[2, 2], values=[1.0, 2.0, 3.0, 4.5]");
  EXPECT_EQ(Call(1).dtype, DType::kInt64);
  EXPECT_EQ(Call(1).Attrs(), "dtype=int64, shape=[3], values=[7.0, 8.0, 9.0]");
  EXPECT_EQ(Call(2).dtype, DType::kBool);
  EXPECT_EQ(Call(2).Attrs(), "dtype=bool, shape=[2], values=[1.0, 0.0]");
  EXPECT_EQ(Call(3).Attrs(), "dtype=int64, shape=[2], values=[5.0, 6.0]");
}

TEST_F(LegacyBindingMoreTest, SgdAndMomentum) {
  h_.kernels.Add("sgd");
  h_.kernels.Add("momentum");
  Put("w", DType::kFloat32, {4, 2});
  Put("lr", DType::kFloat32, {1});
  Put("g", DType::kFloat32, {4, 3});
  Put("vel", DType::kFloat32, {4, 4});
  ASSERT_OK(h_.RunOps(OpText("sgd", {{"Param", {"w"}}, {"LearningRate", {"lr"}}, {"Grad", {"g"}}},
                             {{"ParamOut", {"w"}}}, {BoolAttr("multi_precision", false)})));
  Put("w", DType::kFloat32, {4, 2});  // sgd's recorded result replaced it
  ASSERT_OK(h_.RunOps(
      OpText("momentum",
             {{"Param", {"w"}}, {"Grad", {"g"}}, {"Velocity", {"vel"}}, {"LearningRate", {"lr"}}},
             {{"ParamOut", {"w"}}, {"VelocityOut", {"vel"}}},
             {FloatAttr("mu", 0.9f), BoolAttr("use_nesterov", true)})));
  EXPECT_EQ(Call(0).Inputs(), "float32[4, 2], float32[1], float32[4, 3], null");
  EXPECT_EQ(Call(0).wanted, (std::vector<bool>{true, false}));
  EXPECT_EQ(Call(0).Attrs(), "multi_precision=false");
  EXPECT_EQ(Call(1).Inputs(), "float32[4, 2], float32[4, 3], float32[4, 4], float32[1], null");
  EXPECT_EQ(Call(1).wanted, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(Call(1).Attrs(),
            "mu=0.8999999761581421, multi_precision=false, regularization_coeff=0.0, "
            "regularization_method='', rescale_grad=1.0, use_nesterov=true");
  const Status status = h_.RunOps(
      OpText("momentum",
             {{"Param", {"w"}}, {"Grad", {"g"}}, {"Velocity", {"vel"}}, {"LearningRate", {"lr"}}},
             {{"ParamOut", {"w"}}, {"VelocityOut", {"vel"}}}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (momentum): error: attribute 'mu' is missing");
}

TEST_F(LegacyBindingMoreTest, AdamTakesBetasFromTensorsOverAttributes) {
  h_.kernels.Add("adam");
  h_.kernels.Add("adamw");
  Put("w", DType::kFloat32, {4, 2});
  Put("g", DType::kFloat32, {4, 3});
  Put("lr", DType::kFloat32, {1});
  Put("m1", DType::kFloat32, {4, 4});
  Put("m2", DType::kFloat32, {4, 5});
  Put("b1p", DType::kFloat32, {2});
  Put("b2p", DType::kFloat32, {3});
  Put("b1t", DType::kFloat32, {1}, {0.5});
  Put("master", DType::kFloat32, {6});
  const testing::SlotArgs inputs = {
      {"Param", {"w"}},    {"Grad", {"g"}},       {"LearningRate", {"lr"}}, {"Moment1", {"m1"}},
      {"Moment2", {"m2"}}, {"Beta1Pow", {"b1p"}}, {"Beta2Pow", {"b2p"}}};
  const testing::SlotArgs outputs = {{"ParamOut", {"w"}},
                                     {"Moment1Out", {"m1"}},
                                     {"Moment2Out", {"m2"}},
                                     {"Beta1PowOut", {"b1p"}},
                                     {"Beta2PowOut", {"b2p"}}};
  testing::SlotArgs adam_inputs = inputs;
  adam_inputs.push_back({"Beta1Tensor", {"b1t"}});
  ASSERT_OK(h_.RunOps(
      OpText("adam", adam_inputs, outputs,
             {FloatAttr("beta1", 0.9f), FloatAttr("beta2", 0.95f), FloatAttr("epsilon", 1e-6f),
              LongAttr("min_row_size_to_use_multithread", 5)})));
  // adam's recorded results replaced its in-place operands.
  Put("w", DType::kFloat32, {4, 2});
  Put("m1", DType::kFloat32, {4, 4});
  Put("m2", DType::kFloat32, {4, 5});
  Put("b1p", DType::kFloat32, {2});
  Put("b2p", DType::kFloat32, {3});
  testing::SlotArgs adamw_inputs = inputs;
  adamw_inputs.push_back({"MasterParam", {"master"}});
  testing::SlotArgs adamw_outputs = outputs;
  adamw_outputs.push_back({"MasterParamOut", {"master"}});
  ASSERT_OK(h_.RunOps(OpText("adamw", adamw_inputs, adamw_outputs,
                             {FloatAttr("coeff", 0.1f), BoolAttr("with_decay", true),
                              BoolAttr("multi_precision", true)})));
  EXPECT_EQ(Call(0).Inputs(),
            "float32[4, 2], float32[4, 3], float32[1], float32[4, 4], float32[4, 5], null, "
            "float32[2], float32[3], null, null");
  EXPECT_EQ(Call(0).wanted, (std::vector<bool>{true, true, true, false, true, true, false}));
  EXPECT_EQ(Call(0).Attrs(),
            "amsgrad=false, beta1=0.5, beta2=0.949999988079071, epsilon=9.999999974752427e-07, "
            "lazy_mode=false, min_row_size_to_use_multithread=5, multi_precision=false, "
            "use_global_beta_pow=false");
  EXPECT_EQ(Call(1).kernel, "adamw");
  EXPECT_EQ(Call(1).Inputs(),
            "float32[4, 2], float32[4, 3], float32[1], float32[4, 4], float32[4, 5], null, "
            "float32[2], float32[3], float32[6], null");
  EXPECT_EQ(Call(1).wanted, (std::vector<bool>{true, true, true, false, true, true, true}));
  EXPECT_EQ(Call(1).Attrs(),
            "amsgrad=false, beta1=0.8999999761581421, beta2=0.9990000128746033, "
            "coeff=0.10000000149011612, epsilon=9.99999993922529e-09, lazy_mode=false, "
            "lr_ratio=1.0, min_row_size_to_use_multithread=1000, multi_precision=true, "
            "use_global_beta_pow=false, with_decay=true");
}

// ---- malformed ops and refusing kernels --------------------------------------------------------

TEST_F(LegacyBindingMoreTest, AnOpWithoutBindingIsUnimplemented) {
  const Status status = h_.RunOps(OpText("fancy_op", {{"X", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (fancy_op): error: no binding for legacy op 'fancy_op'");
}

TEST_F(LegacyBindingMoreTest, CommunicationOpsNeedTheMultiRankRuntime) {
  for (const char* type : {"c_allreduce_sum", "c_broadcast", "send_v2", "recv_v2", "barrier"}) {
    const Status status =
        h_.RunOps(OpText(type, {{"X", {"x"}}}, {{"Out", {"x"}}}, {IntAttr("ring_id", 0)}));
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
    EXPECT_EQ(status.ToString(), fmt::format("t.prototxt: block 0, op 0 ({}): error: '{}' needs "
                                             "the multi-rank runtime",
                                             type, type));
  }
}

TEST_F(LegacyBindingMoreTest, StreamSynchronisationIsANoOp) {
  Put("x", DType::kFloat32, {2});
  ASSERT_OK(h_.RunOps(
      OpText("c_sync_calc_stream", {{"X", {"x"}}}, {{"Out", {"x"}}}) +
      OpText("c_sync_comm_stream", {{"X", {"x"}}}, {{"Out", {"x"}}}, {IntAttr("ring_id", 0)})));
  EXPECT_TRUE(h_.kernels.calls().empty());
  EXPECT_EQ(h_.events, (Strings{"0/0 c_sync_calc_stream: x=float32[2]",
                                "0/1 c_sync_comm_stream: x=float32[2]"}));
}

TEST_F(LegacyBindingMoreTest, SlotsWithTheWrongNumberOfVars) {
  h_.kernels.Add("matmul");
  h_.kernels.Add("layer_norm");
  Put("x", DType::kFloat32, {2, 2});
  Status status = h_.RunOps(OpText("matmul_v2", {{"X", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (matmul_v2): error: input slot 'Y' holds 0 vars, needs 1");
  status = h_.RunOps(OpText("layer_norm", {{"X", {"x"}}, {"Scale", {"x", "x"}}}, {{"Y", {"y"}}}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (layer_norm): error: input slot 'Scale' holds 2 vars, "
            "needs at most 1");
  status = h_.RunOps(OpText("matmul_v2", {{"X", {"x"}}, {"Y", {"x"}}}, {{"Out", {"y", "z"}}}));
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (matmul_v2): error: output slot 'Out' holds 2 vars, takes "
            "at most 1");
  EXPECT_TRUE(h_.kernels.calls().empty());
}

TEST_F(LegacyBindingMoreTest, AKernelErrorKeepsItsMessageAndGetsTheOp) {
  h_.kernels.Add("add", {DType::kFloat32},
                 [](KernelCall&) { return KernelError("x [2, 3] and y [4] do not broadcast"); });
  Put("x", DType::kFloat32, {2, 3});
  Put("y", DType::kFloat32, {4});
  const Status status =
      h_.RunOps(OpText("elementwise_add", {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"z"}}}));
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (elementwise_add): error: x [2, 3] and y [4] do not "
            "broadcast");
}

TEST_F(LegacyBindingMoreTest, AMissingKernelIsUnimplemented) {
  Put("x", DType::kFloat32, {2, 3});
  const Status status = h_.RunOps(OpText("scale", {{"X", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (scale): error: there is no kernel 'scale' on cpu");
}

TEST_F(LegacyBindingMoreTest, AKernelWithoutTheDtypeSaysWhichItHas) {
  h_.kernels.Add("matmul", {DType::kFloat32, DType::kBFloat16});
  Put("x", DType::kFloat64, {2, 2});
  const Status status =
      h_.RunOps(OpText("matmul_v2", {{"X", {"x"}}, {"Y", {"x"}}}, {{"Out", {"y"}}}));
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "t.prototxt: block 0, op 0 (matmul_v2): error: kernel 'matmul' has no float64 version "
            "on cpu (it has: bfloat16, float32)");
}

}  // namespace
}  // namespace irm::rt
