// Tests of the new-IR binding table against the op table it is written from: every pd_op is bound
// or interpreted, kernel names, the roles of mutable operands (cross-checked with the table's own
// int_array flags), in-place pairs, dtype sources, and the conversion of types and attributes.
#include "reference_runtime/pir_bindings.h"

#include <gtest/gtest.h>

#include "newir/op_info.h"
#include "newir/parser.h"
#include "newir/pd_op_catalog.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/pir_test_kernels.h"

namespace irm::rt {
namespace {

using Attrs = std::map<std::string, AttrValue, std::less<>>;

const OpBinding& Bound(std::string_view op) {
  const OpBinding* b = PirBindings::Global().Find(op);
  EXPECT_NE(b, nullptr) << op;
  static const OpBinding kNone;
  return b != nullptr ? *b : kNone;
}

TEST(PirBindingsTest, TheTableResolvesAgainstTheOpRegistry) {
  const StatusOr<PirBindings> table = PirBindings::Build(newir::OpRegistry::Global());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->OpNames(), PirBindings::Global().OpNames());
}

TEST(PirBindingsTest, AnOpMissingFromTheRegistryIsReported) {
  const newir::OpRegistry empty;
  const StatusOr<PirBindings> table = PirBindings::Build(empty);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), StatusCode::kInternal);
  EXPECT_EQ(table.status().message(),
            "new-IR binding table: 'pd_op.matmul' is not a registered op");
}

TEST(PirBindingsTest, EveryPdOpIsBoundOrInterpreted) {
  for (const newir::OpInfo* info : newir::OpRegistry::Global().OpsOfDialect("pd_op")) {
    // Ops only Paddle's catalog registers are read, verified and written, never run.
    if (newir::IsPdOpCatalogOnly(info->name)) {
      EXPECT_EQ(PirBindings::Global().Find(info->name), nullptr) << info->name;
      continue;
    }
    EXPECT_TRUE(IsInterpretedOp(info->name) || PirBindings::Global().Find(info->name) != nullptr)
        << info->name;
    EXPECT_FALSE(IsInterpretedOp(info->name) && PirBindings::Global().Find(info->name) != nullptr)
        << info->name;
  }
  EXPECT_TRUE(IsInterpretedOp("builtin.parameter"));
  EXPECT_TRUE(IsInterpretedOp("cf.yield"));
  EXPECT_FALSE(IsInterpretedOp("builtin.constant"));
  EXPECT_EQ(PirBindings::Global().Find("builtin.constant"), nullptr);
}

TEST(PirBindingsTest, KernelNamesDropThePrefixAndTheInPlaceSuffix) {
  EXPECT_EQ(Bound("pd_op.matmul").kernel, "matmul");
  EXPECT_EQ(Bound("pd_op.add_").kernel, "add");
  EXPECT_EQ(Bound("pd_op.adamw_").kernel, "adamw");
  EXPECT_EQ(Bound("pd_op.full_").kernel, "full");
  EXPECT_EQ(Bound("pd_op.assign_value_").kernel, "assign_value");
  // assign_out_ copies x into an existing tensor: the assign kernel, then the in-place write.
  EXPECT_EQ(Bound("pd_op.assign_out_").kernel, "assign");
  EXPECT_EQ(Bound("pd_op.c_allreduce_sum_").kind, BindingKind::kCommunication);
  EXPECT_EQ(Bound("pd_op.p_send").kind, BindingKind::kCommunication);
  EXPECT_EQ(Bound("pd_op.sync_comm_stream_").kind, BindingKind::kPassThrough);
}

// The table's int_array operands (pd_op_dialect.cc) must all be read as IntArrays.
TEST(PirBindingsTest, IntArrayOperandsOfTheOpTableAreReadAsIntArrays) {
  for (const std::string& name : PirBindings::Global().OpNames()) {
    const OpBinding& b = Bound(name);
    if (b.kind != BindingKind::kKernel) continue;
    for (size_t i = 0; i < b.info->operands.size(); ++i) {
      EXPECT_EQ(b.info->operands[i].int_array, b.roles[i] == OperandRole::kIntArray)
          << name << " operand " << b.info->operands[i].name;
    }
  }
}

TEST(PirBindingsTest, MutableScalarOperands) {
  using R = OperandRole;
  EXPECT_EQ(Bound("pd_op.scale").roles, (std::vector<R>{R::kInput, R::kFloat}));
  EXPECT_EQ(Bound("pd_op.concat").roles, (std::vector<R>{R::kInput, R::kInt}));
  EXPECT_EQ(Bound("pd_op.split").roles, (std::vector<R>{R::kInput, R::kIntArray, R::kInt}));
  EXPECT_EQ(Bound("pd_op.full_like").roles, (std::vector<R>{R::kInput, R::kFloat}));
  EXPECT_EQ(Bound("pd_op.uniform").roles, (std::vector<R>{R::kIntArray, R::kFloat, R::kFloat}));
  const std::vector<R> adam = Bound("pd_op.adam_").roles;
  ASSERT_EQ(adam.size(), 13u);
  EXPECT_EQ(std::vector<R>(adam.begin() + 10, adam.end()),
            (std::vector<R>{R::kFloat, R::kFloat, R::kFloat}));
  EXPECT_EQ(Bound("pd_op.full_").roles, (std::vector<R>{R::kTarget}));
  EXPECT_EQ(Bound("pd_op.assign_out_").roles, (std::vector<R>{R::kInput, R::kTarget}));
}

TEST(PirBindingsTest, InPlaceResultsAndTheOperandsTheyOverwrite) {
  EXPECT_EQ(Bound("pd_op.relu_").inplace_operand, (std::vector<int>{0}));
  EXPECT_EQ(Bound("pd_op.relu").inplace_operand, (std::vector<int>{-1}));
  EXPECT_EQ(Bound("pd_op.reshape_").inplace_operand, (std::vector<int>{0, -1}));
  EXPECT_EQ(Bound("pd_op.assign_out_").inplace_operand, (std::vector<int>{1}));
  EXPECT_EQ(Bound("pd_op.sgd_").inplace_operand, (std::vector<int>{0, 3}));
  EXPECT_EQ(Bound("pd_op.momentum_").inplace_operand, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(Bound("pd_op.adamw_").inplace_operand, (std::vector<int>{0, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(Bound("pd_op.add_n_").inplace_operand, (std::vector<int>{-1}));
  EXPECT_TRUE(Bound("pd_op.add_n_").inplace_into_named_element);
  // Every in-place kernel op writes something.
  for (const std::string& name : PirBindings::Global().OpNames()) {
    const OpBinding& b = Bound(name);
    if (b.kind != BindingKind::kKernel || !b.info->inplace) continue;
    bool writes = b.inplace_into_named_element;
    for (int o : b.inplace_operand) writes = writes || o >= 0;
    EXPECT_TRUE(writes) << name;
  }
}

TEST(PirBindingsTest, DTypeSourcesAndRandomOps) {
  EXPECT_EQ(Bound("pd_op.matmul").dtype_operand, 0);
  EXPECT_EQ(Bound("pd_op.embedding").dtype_operand, 1);
  EXPECT_EQ(Bound("pd_op.cross_entropy_with_softmax_grad").dtype_operand, 1);
  EXPECT_EQ(Bound("pd_op.uniform").dtype_operand, -1);
  EXPECT_EQ(Bound("pd_op.full_").dtype_operand, -1);
  // The first kernel input, past operands that are no input.
  EXPECT_EQ(Bound("pd_op.assign_out_").dtype_operand, 0);
  EXPECT_TRUE(Bound("pd_op.uniform").random);
  EXPECT_TRUE(Bound("pd_op.gaussian").random);
  EXPECT_TRUE(Bound("pd_op.dropout").random);
  EXPECT_FALSE(Bound("pd_op.dropout_grad").random);
}

TEST(PirBindingsTest, ElementTypesAndDataTypesMapToRuntimeDTypes) {
  EXPECT_EQ(DTypeOfElementType(newir::Type::F32()), DType::kFloat32);
  EXPECT_EQ(DTypeOfElementType(newir::Type::BF16()), DType::kBFloat16);
  EXPECT_EQ(DTypeOfElementType(newir::Type::F16()), DType::kFloat16);
  EXPECT_EQ(DTypeOfElementType(newir::Type::Bool()), DType::kBool);
  EXPECT_EQ(DTypeOfElementType(newir::Type::U8()), DType::kUInt8);
  EXPECT_EQ(DTypeOfElementType(newir::Type::I64()), DType::kInt64);
  EXPECT_EQ(DTypeOfElementType(newir::Type::Index()), std::nullopt);
  EXPECT_EQ(DTypeOfElementType(newir::Type::F8E4M3FN()), std::nullopt);
  EXPECT_EQ(DTypeOfDataType(newir::DataType::kFloat64), DType::kFloat64);
  EXPECT_EQ(DTypeOfDataType(newir::DataType::kInt8), DType::kInt8);
  EXPECT_EQ(DTypeOfDataType(newir::DataType::kUndefined), std::nullopt);
  EXPECT_EQ(DTypeOfDataType(newir::DataType::kUInt16), std::nullopt);
}

// The first op of `text`, parsed (not verified: attribute values the verifier would reject still
// reach the conversion).
StatusOr<Attrs> ConvertFirstOp(const std::string& text) {
  IRM_ASSIGN_OR_RETURN(newir::Program program, newir::ParseProgram(text, "t.pir"));
  const newir::Operation& op = *program.block().front();
  KernelAttrs attrs;
  IRM_RETURN_IF_ERROR(ConvertAttributes(op, Bound(op.name()), attrs));
  return Attrs(attrs.values().begin(), attrs.values().end());
}

TEST(PirBindingsTest, AttributesWidenToTheTableKind) {
  // full's value is a Scalar(double) in the table: an Int32 or a Float still arrives as a double.
  StatusOr<Attrs> full = ConvertFirstOp(
      R"({ (%0) = "pd_op.full" () {dtype:(pd_op.DataType)int32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2],value:(Int32)3} : () -> tensor<2xi32> })");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(*full,
            (Attrs{{"dtype", DType::kInt32}, {"shape", std::vector<int64_t>{2}}, {"value", 3.0}}));
  // An array of Scalars or Doubles: a float array; a Float attribute given an Int32: a double.
  StatusOr<Attrs> scale = ConvertFirstOp(
      R"({ (%0) = "pd_op.scale" () {bias:(Int32)2,bias_after_scale:true} : () -> tensor<2xf32> })");
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(*scale, (Attrs{{"bias", 2.0}, {"bias_after_scale", true}}));
  StatusOr<Attrs> values = ConvertFirstOp(
      R"({ (%0) = "pd_op.assign_value" () {dtype:(pd_op.DataType)float32,shape:[(Int32)2],values:[(pd_op.Scalar:float32)1.5,(Double)2]} : () -> tensor<2xf32> })");
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(values->at("values"), AttrValue(std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(values->at("shape"), AttrValue(std::vector<int64_t>{2}));
  // An empty array takes the table's element kind (slice's axes are Int64s).
  StatusOr<Attrs> slice = ConvertFirstOp(
      R"({ (%0) = "pd_op.slice" () {axes:[],decrease_axis:[],infer_flags:[]} : () -> tensor<2xf32> })");
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->at("axes"), AttrValue(std::vector<int64_t>{}));
}

TEST(PirBindingsTest, UnconvertibleAttributesAreErrors) {
  StatusOr<Attrs> dtype = ConvertFirstOp(
      R"({ (%0) = "pd_op.full" () {dtype:(pd_op.DataType)uint16,shape:(pd_op.IntArray)[2],value:(Double)1} : () -> tensor<2xf32> })");
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(dtype.status().message(),
            "attribute 'dtype' is uint16, which no kernel attribute can hold");
  StatusOr<Attrs> strings = ConvertFirstOp(
      R"({ (%0) = "pd_op.assign_value" () {dtype:(pd_op.DataType)float32,shape:[(Int32)1],values:["a"]} : () -> tensor<1xf32> })");
  ASSERT_FALSE(strings.ok());
  EXPECT_EQ(strings.status().message(),
            "attribute 'values' holds an array of string, which no kernel attribute can hold");
}

TEST(PirBindingsTest, SetValueOps) {
  using R = OperandRole;
  const std::vector<R> constant = {R::kInput, R::kIntArray, R::kIntArray, R::kIntArray};
  const std::vector<R> tensor = {R::kInput, R::kInput, R::kIntArray, R::kIntArray, R::kIntArray};
  EXPECT_EQ(Bound("pd_op.set_value").roles, constant);
  EXPECT_EQ(Bound("pd_op.set_value_").roles, constant);
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor").roles, tensor);
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor_").roles, tensor);
  EXPECT_EQ(Bound("pd_op.set_value_").kernel, "set_value");
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor_").kernel, "set_value_with_tensor");
  EXPECT_EQ(Bound("pd_op.set_value_").inplace_operand, (std::vector<int>{0}));
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor").inplace_operand, (std::vector<int>{-1}));
  // static_backward.yaml: set_value_grad is an assign of out_grad.
  EXPECT_EQ(Bound("pd_op.set_value_grad").kernel, "assign");
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor_grad").kernel, "set_value_with_tensor_grad");
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor_grad").roles,
            (std::vector<R>{R::kInput, R::kInput, R::kIntArray, R::kIntArray, R::kIntArray}));
  EXPECT_EQ(Bound("pd_op.set_value_with_tensor_grad").dtype_operand, 1);
  // Integer constants stay an int array (exact); any float makes a float array.
  StatusOr<Attrs> ints = ConvertFirstOp(
      R"({ (%0) = "pd_op.set_value" () {axes:[(Int64)0],decrease_axes:[],none_axes:[],shape:[(Int64)1],values:[(pd_op.Scalar:int64)1152921504606846977]} : () -> tensor<2xi64> })");
  ASSERT_TRUE(ints.ok()) << ints.status().ToString();
  EXPECT_EQ(ints->at("values"), AttrValue(std::vector<int64_t>{(int64_t{1} << 60) + 1}));
  StatusOr<Attrs> floats = ConvertFirstOp(
      R"({ (%0) = "pd_op.set_value" () {axes:[(Int64)0],decrease_axes:[],none_axes:[],shape:[(Int64)2],values:[(pd_op.Scalar:int64)1,(pd_op.Scalar:float32)0.5]} : () -> tensor<2xf32> })");
  ASSERT_TRUE(floats.ok()) << floats.status().ToString();
  EXPECT_EQ(floats->at("values"), AttrValue(std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(floats->at("axes"), AttrValue(std::vector<int64_t>{0}));
}

// On the real kernels: x[:, 2:-4:-2] = v in place (columns 2 and 0, v broadcast over the rows),
// the index lists read from pd_op.full_int_array, the start from a vector of one scalar tensor.
TEST(PirBindingsTest, SetValueRunsOnTheRealKernels) {
  const newir::Program program = testing::ParseVerified(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> tensor<2x3xf32>
    (%1) = "builtin.parameter" () {parameter_name:"v"} : () -> tensor<2xf32>
    (%2) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xi64>
    (%3) = "builtin.combine" (%2) {} : (tensor<1xi64>) -> vec[tensor<1xi64>]
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-4]} : () -> tensor<1xi64>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-2]} : () -> tensor<1xi64>
    (%6) = "pd_op.set_value_with_tensor_" (%0, %1, %3, %4, %5) {axes:[1],decrease_axes:[],none_axes:[]} : (tensor<2x3xf32>, tensor<2xf32>, vec[tensor<1xi64>], tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
})");
  Scope scope;
  scope.SetLocal("x", testing::FromDoubles({0, 1, 2, 3, 4, 5}, {2, 3}, DType::kFloat32));
  scope.SetLocal("v", testing::FromDoubles({10, 20}, {2}, DType::kFloat32));
  PirExecutor executor(program, {.file = "t.pir"});
  const StatusOr<std::vector<Fetch>> fetches = executor.Run(scope, {});
  ASSERT_TRUE(fetches.ok()) << fetches.status().ToString();
  ASSERT_NE(scope.Find("x"), nullptr);
  EXPECT_EQ(testing::ToDoubles(*scope.Find("x")), (std::vector<double>{20, 1, 10, 20, 4, 10}));
}

}  // namespace
}  // namespace irm::rt
