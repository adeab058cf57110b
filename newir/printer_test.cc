// Tests of the text printer against hand-written PIR text: both styles, result/operand shapes,
// block arguments and keyword arguments, nested regions, the custom pd_op.if and pd_op.while
// forms, invalid IR, attribute order and hiding, debug ids and determinism.
#include "newir/printer.h"

#include <gtest/gtest.h>

#include <limits>

#include "newir/builder.h"
#include "newir/program.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}
Attribute False1() { return Attribute::Array({Attribute::Bool(false)}); }

// data x -> parameter w -> matmul -> relu -> fetch, shadow_output.
void BuildMlp(Program& program) {
  Builder b(program.block());
  Operation* x = b.Create("pd_op.data", {}, {T({4, 8})},
                          {{"name", Attribute::String("x")},
                           {"shape", Attribute::IntArrayAttr({4, 8})},
                           {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)},
                           {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))},
                           {"stop_gradient", False1()}});
  Operation* w =
      b.Create("builtin.parameter", {}, {T({8, 2})}, {{"parameter_name", Attribute::String("w")}});
  Operation* mm = b.Create("pd_op.matmul", {x->result(0), w->result(0)}, {T({4, 2})},
                           {{"transpose_y", Attribute::Bool(false)},
                            {"transpose_x", Attribute::Bool(false)},
                            {"stop_gradient", False1()}});
  Operation* relu =
      b.Create("pd_op.relu", {mm->result(0)}, {T({4, 2})}, {{"stop_gradient", False1()}});
  b.Create("pd_op.fetch", {relu->result(0)}, {T({4, 2})},
           {{"col", Attribute::Int32(0)},
            {"name", Attribute::String("out")},
            {"persistable", Attribute::Array({Attribute::Bool(true)})}});
  b.Create("builtin.shadow_output", {relu->result(0)}, {},
           {{"output_name", Attribute::String("out")}});
}

TEST(PrinterTest, ProgramTypedStyle) {
  Program program;
  BuildMlp(program);
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    (%0) = \"pd_op.data\" () "
            "{dtype:(pd_op.DataType)float32,name:\"x\",place:(pd_op.Place)Place(cpu),"
            "shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"w\"} : () -> "
            "builtin.tensor<8x2xf32>\n"
            "    (%2) = \"pd_op.matmul\" (%0, %1) "
            "{stop_gradient:[false],transpose_x:false,transpose_y:false} : "
            "(builtin.tensor<4x8xf32>, builtin.tensor<8x2xf32>) -> builtin.tensor<4x2xf32>\n"
            "    (%3) = \"pd_op.relu\" (%2) {stop_gradient:[false]} : (builtin.tensor<4x2xf32>) -> "
            "builtin.tensor<4x2xf32>\n"
            "    (%4) = \"pd_op.fetch\" (%3) {col:(Int32)0,name:\"out\",persistable:[true]} : "
            "(builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>\n"
            "    () = \"builtin.shadow_output\" (%3) {output_name:\"out\"} : "
            "(builtin.tensor<4x2xf32>) -> \n"
            "}\n");
}

TEST(PrinterTest, ProgramCurrentStyle) {
  Program program;
  BuildMlp(program);
  EXPECT_EQ(
      PrintProgram(program, {.style = TypeStyle::kCurrent}),
      "{\n"
      "    (%0) = \"pd_op.data\" () "
      "{dtype:float32,name:\"x\",place:Place(cpu),shape:[4,8],stop_gradient:[false]} : () "
      "-> tensor<4x8xf32>\n"
      "    (%1) = \"builtin.parameter\" () {parameter_name:\"w\"} : () -> tensor<8x2xf32>\n"
      "    (%2) = \"pd_op.matmul\" (%0, %1) "
      "{stop_gradient:[false],transpose_x:false,transpose_y:false} : "
      "(tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>\n"
      "    (%3) = \"pd_op.relu\" (%2) {stop_gradient:[false]} : (tensor<4x2xf32>) -> "
      "tensor<4x2xf32>\n"
      "    (%4) = \"pd_op.fetch\" (%3) {col:0,name:\"out\",persistable:[true]} : "
      "(tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "    () = \"builtin.shadow_output\" (%3) {output_name:\"out\"} : (tensor<4x2xf32>) -> \n"
      "}\n");
}

TEST(PrinterTest, EmptyProgram) {
  Program program;
  EXPECT_EQ(PrintProgram(program), "{\n}\n");
}

TEST(PrinterTest, MultiResultAndVectorTypes) {
  Program program;
  Builder b(program.block());
  Operation* a =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("a")}});
  Operation* c = b.Create("builtin.parameter", {}, {T({3}, Type::I64())},
                          {{"parameter_name", Attribute::String("c")}});
  Operation* combine = b.Create("builtin.combine", {a->result(0), c->result(0)},
                                {Type::Vector({T({2}), T({3}, Type::I64())})});
  Operation* split = b.Create("builtin.split", {combine->result(0)}, {T({2}), T({3}, Type::I64())});
  b.Create("pd_op.add_n", {split->result(1), split->result(0)}, {T({})});
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"a\"} : () -> "
            "builtin.tensor<2xf32>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"c\"} : () -> "
            "builtin.tensor<3xi64>\n"
            "    (%2) = \"builtin.combine\" (%0, %1) {} : (builtin.tensor<2xf32>, "
            "builtin.tensor<3xi64>) -> vec[builtin.tensor<2xf32>,builtin.tensor<3xi64>]\n"
            "    (%3, %4) = \"builtin.split\" (%2) {} : "
            "(vec[builtin.tensor<2xf32>,builtin.tensor<3xi64>]) -> builtin.tensor<2xf32>, "
            "builtin.tensor<3xi64>\n"
            "    (%5) = \"pd_op.add_n\" (%4, %3) {} : (builtin.tensor<3xi64>, "
            "builtin.tensor<2xf32>) -> builtin.tensor<f32>\n"
            "}\n");
}

TEST(PrinterTest, ZeroResultOpAlone) {
  Program program;
  Builder b(program.block());
  Operation* p =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("p")}});
  Operation* set = b.Create("builtin.set_parameter", {p->result(0)}, {},
                            {{"parameter_name", Attribute::String("p")}});
  // Printed alone, the operand defined outside takes the first number.
  EXPECT_EQ(PrintOperation(*set),
            "() = \"builtin.set_parameter\" (%0) {parameter_name:\"p\"} : "
            "(builtin.tensor<2xf32>) -> ");
}

// A generic region op whose block has positional and keyword arguments, with a region op nested
// one level deeper.
TEST(PrinterTest, NestedRegionsAndBlockArguments) {
  Program program;
  Builder b(program.block());
  Operation* a =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("a")}});
  Operation* scope = b.Create("test.scope", {a->result(0)}, {T({2})}, {}, 1);
  Block& body = scope->region(0).AddBlock();
  Value* arg0 = body.AddArgument(T({2}));
  arg0->SetAttribute("stop_gradient", Attribute::Array({Attribute::Bool(true)}));
  Value* arg1 = body.AddArgument(T({2}));
  StatusOr<Value*> lr = body.AddKwarg("lr", T({1}));
  ASSERT_TRUE(lr.ok());
  StatusOr<Value*> mom = body.AddKwarg("mom", T({1}));
  ASSERT_TRUE(mom.ok());
  (*mom)->SetAttribute("persistable", Attribute::Array({Attribute::Bool(true)}));
  Builder inner(body);
  Operation* add1 = inner.Create("pd_op.add", {arg0, arg1}, {T({2})});
  Operation* nested = inner.Create("test.inner", {}, {T({1})}, {}, 1);
  Builder deepest(nested->region(0).AddBlock());
  deepest.Create("cf.yield", {*lr}, {});
  inner.Create("cf.yield", {add1->result(0)}, {});
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"a\"} : () -> "
            "builtin.tensor<2xf32>\n"
            "    (%1) = \"test.scope\" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>\n"
            "    {\n"
            "        ^kw:\n"
            "            %kwarg_lr {}\n"
            // Never read: its type would be lost, so the line says it.
            "            %kwarg_mom {persistable:[true]} : builtin.tensor<1xf32>\n"
            "        (%2) = \"pd_op.add\" (%arg_0 {stop_gradient:[true]}, %arg_1 {}) {} : "
            "(builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<2xf32>\n"
            "        (%3) = \"test.inner\" () {} : () -> builtin.tensor<1xf32>\n"
            "        {\n"
            "            () = \"cf.yield\" (%kwarg_lr) {} : (builtin.tensor<1xf32>) -> \n"
            "        }\n"
            // Paddle's printer leaves an empty line after a generic op's regions.
            "\n"
            "        () = \"cf.yield\" (%2) {} : (builtin.tensor<2xf32>) -> \n"
            "    }\n"
            "\n"
            "}\n");
}

struct IfProgram {
  Program program;
  IfProgram() {
    Builder b(program.block());
    Operation* cond = b.Create("builtin.parameter", {}, {T({1}, Type::Bool())},
                               {{"parameter_name", Attribute::String("c")}});
    Operation* x =
        b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("x")}});
    Operation* if_op = b.Create("pd_op.if", {cond->result(0)}, {T({2})},
                                {{"stop_gradient", Attribute::Array({Attribute::Bool(true)})},
                                 {"fake_false_branch", Attribute::Bool(true)}},
                                2);
    Builder t(if_op->region(0).AddBlock());
    Operation* relu = t.Create("pd_op.relu", {x->result(0)}, {T({2})});
    t.Create("cf.yield", {relu->result(0)}, {});
    Builder f(if_op->region(1).AddBlock());
    f.Create("cf.yield", {x->result(0)}, {});
  }
};

TEST(PrinterTest, IfCustomForm) {
  IfProgram p;
  EXPECT_EQ(PrintProgram(p.program),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"c\"} : () -> "
            "builtin.tensor<1xb>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> "
            "builtin.tensor<2xf32>\n"
            "    (%2) = \"pd_op.if\" (%0) {fake_false_branch:true,stop_gradient:[true]} -> "
            "builtin.tensor<2xf32> {\n"
            "        (%3) = \"pd_op.relu\" (%1) {} : (builtin.tensor<2xf32>) -> "
            "builtin.tensor<2xf32>\n"
            "        () = \"cf.yield\" (%3) {} : (builtin.tensor<2xf32>) -> \n"
            "    } else {\n"
            "        () = \"cf.yield\" (%1) {} : (builtin.tensor<2xf32>) -> \n"
            "    }\n"
            "}\n");
}

TEST(PrinterTest, IfGenericForm) {
  IfProgram p;
  EXPECT_EQ(PrintProgram(p.program, {.style = TypeStyle::kCurrent, .generic = true}),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"c\"} : () -> tensor<1xb>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> tensor<2xf32>\n"
            "    (%2) = \"pd_op.if\" (%0) {fake_false_branch:true,stop_gradient:[true]} : "
            "(tensor<1xb>) -> tensor<2xf32>\n"
            "    {\n"
            "        (%3) = \"pd_op.relu\" (%1) {} : (tensor<2xf32>) -> tensor<2xf32>\n"
            "        () = \"cf.yield\" (%3) {} : (tensor<2xf32>) -> \n"
            "    }\n"
            "    {\n"
            "        () = \"cf.yield\" (%1) {} : (tensor<2xf32>) -> \n"
            "    }\n"
            "\n"
            "}\n");
}

TEST(PrinterTest, MalformedIfFallsBackToGeneric) {
  auto op = Operation::Create("pd_op.if", {}, {}, {}, 1);
  op->region(0).AddBlock();
  EXPECT_EQ(PrintOperation(*op), "() = \"pd_op.if\" () {} : () -> \n{\n}");
}

TEST(PrinterTest, WhileCustomForm) {
  Program program;
  Builder b(program.block());
  Operation* c = b.Create("builtin.parameter", {}, {T({1}, Type::Bool())},
                          {{"parameter_name", Attribute::String("c")}});
  Operation* x =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("x")}});
  Operation* loop = b.Create("pd_op.while", {c->result(0), x->result(0)}, {T({2})}, {}, 1);
  Block& body = loop->region(0).AddBlock();
  Value* arg = body.AddArgument(T({2}));
  arg->SetAttribute("stop_gradient", False1());
  Builder in(body);
  Operation* relu = in.Create("pd_op.relu", {arg}, {T({2})});
  Operation* less = in.Create("pd_op.less_than", {relu->result(0), arg}, {T({1}, Type::Bool())});
  in.Create("cf.yield", {less->result(0), relu->result(0)}, {});
  EXPECT_EQ(PrintProgram(program, {.style = TypeStyle::kCurrent}),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"c\"} : () -> tensor<1xb>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> tensor<2xf32>\n"
            // Paddle's WhileOp::Print: `{ ` and the `^` line at the op's own indentation.
            "    (%2) = \"pd_op.while\" (cond=%0, inputs=%1) { \n"
            "    ^%arg_0 {stop_gradient:[false]}\n"
            "        (%3) = \"pd_op.relu\" (%arg_0) {} : (tensor<2xf32>) -> tensor<2xf32>\n"
            "        (%4) = \"pd_op.less_than\" (%3, %arg_0) {} : (tensor<2xf32>, tensor<2xf32>) "
            "-> tensor<1xb>\n"
            "        () = \"cf.yield\" (%4, %3) {} : (tensor<1xb>, tensor<2xf32>) -> \n"
            "    }\n"
            "}\n");
}

TEST(PrinterTest, InvalidIrPrintsPlaceholders) {
  Program program;
  Builder b(program.block());
  Operation* p =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("p")}});
  Operation* op =
      b.Create("pd_op.bad", {nullptr, p->result(0)}, {Type(), T({2})}, {{"x", Attribute()}});
  EXPECT_EQ(PrintOperation(*op),
            "(%0, %1) = \"pd_op.bad\" (<<NULL VALUE>>, %2) {x:<#AttrNull>} : (<<NULL TYPE>>, "
            "builtin.tensor<2xf32>) -> <<NULL TYPE>>, builtin.tensor<2xf32>");
  // Erasing the producer leaves the slot empty; the program still prints.
  op->SetOperand(1, nullptr);
  EXPECT_EQ(PrintOperation(*op, {.style = TypeStyle::kCurrent}),
            "(%0, %1) = \"pd_op.bad\" (<<NULL VALUE>>, <<NULL VALUE>>) {x:<#AttrNull>} : "
            "(<<NULL TYPE>>, <<NULL TYPE>>) -> <<NULL TYPE>>, tensor<2xf32>");
}

TEST(PrinterTest, AttributesSortedAndHiddenOnesOmitted) {
  auto op = Operation::Create("pd_op.x", {}, {},
                              {{"zeta", Attribute::Int64(-3)},
                               {"op_callstack", Attribute::Array({Attribute::String("f.py:1")})},
                               {"alpha", Attribute::Float(0.5f)},
                               {"sym_shape_str", Attribute::String("s")},
                               {"Beta", Attribute::Double(1.0)},
                               {"mid", Attribute::String("a\"b")}});
  EXPECT_EQ(PrintOperation(*op),
            "() = \"pd_op.x\" () {Beta:(Double)1,alpha:(Float)0.5,mid:\"a\\\"b\",zeta:(Int64)-3} : "
            "() -> ");
  EXPECT_EQ(PrintOperation(*op, {.style = TypeStyle::kCurrent}),
            "() = \"pd_op.x\" () {Beta:1,alpha:0.5,mid:\"a\\\"b\",zeta:-3} : () -> ");
}

TEST(PrinterTest, CurrentStyleAttributeValues) {
  EXPECT_EQ(PrintAttribute(Attribute::Int32(7), TypeStyle::kCurrent), "7");
  EXPECT_EQ(PrintAttribute(Attribute::Double(std::numeric_limits<double>::infinity()),
                           TypeStyle::kCurrent),
            "inf");
  EXPECT_EQ(PrintAttribute(Attribute::Array({Attribute::TypeAttr(T({2, -1})), Attribute::Int64(1)}),
                           TypeStyle::kCurrent),
            "[tensor<2x-1xf32>,1]");
  EXPECT_EQ(
      PrintAttribute(Attribute::Array({Attribute::TypeAttr(T({2, -1})), Attribute::Int64(1)})),
      "[builtin.tensor<2x-1xf32>,(Int64)1]");
  EXPECT_EQ(PrintAttribute(Attribute::DataLayoutAttr(DataLayout::kNHWC), TypeStyle::kCurrent),
            "NHWC");
  EXPECT_EQ(PrintAttribute(Attribute::DataTypeAttr(DataType::kBFloat16), TypeStyle::kCurrent),
            "bfloat16");
  EXPECT_EQ(
      PrintAttribute(Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 1)), TypeStyle::kCurrent),
      "Place(gpu:1)");
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kInt64, int64_t{4}}), TypeStyle::kCurrent),
            "4");
}

TEST(PrinterTest, DebugInfoPrintsOpIds) {
  Program program;
  Builder b(program.block());
  Operation* p =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("p")}});
  Operation* r = b.Create("pd_op.relu", {p->result(0)}, {T({2})});
  EXPECT_EQ(PrintProgram(program, {.debug_info = true}),
            "{\n"
            "    (%0) = \"builtin.parameter\" [id:" +
                std::to_string(p->id()) +
                "] () {parameter_name:\"p\"} : () -> builtin.tensor<2xf32>\n"
                "    (%1) = \"pd_op.relu\" [id:" +
                std::to_string(r->id()) +
                "] (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>\n"
                "}\n");
  EXPECT_NE(p->id(), r->id());
}

TEST(PrinterTest, Deterministic) {
  Program a;
  BuildMlp(a);
  Program b;
  BuildMlp(b);
  const std::string first = PrintProgram(a);
  EXPECT_EQ(PrintProgram(a), first);
  // Another build of the same program (other pointers, other op ids) prints the same.
  EXPECT_EQ(PrintProgram(b), first);
  IfProgram c;
  EXPECT_EQ(PrintProgram(c.program), PrintProgram(c.program));
}

// ---- Extensions: the text stays lossless where Paddle's is not --------------------------------

// A block argument that is never read, arguments read out of order, and an argument first read
// inside a nested region: each block opens with the `^` header, which declares its arguments in
// order with their types.
TEST(PrinterTest, BlockArgumentHeader) {
  Program program;
  Builder b(program.block());
  Operation* unused = b.Create("test.a", {}, {}, {}, 1);
  Block& ub = unused->region(0).AddBlock();
  ub.AddArgument(T({2}));
  Value* read = ub.AddArgument(T({3}, Type::I64()));
  read->SetAttribute("stop_gradient", False1());
  Builder(ub).Create("test.use", {read}, {});
  Operation* nested = b.Create("test.b", {}, {}, {}, 1);
  Block& nb = nested->region(0).AddBlock();
  Value* deep = nb.AddArgument(T({}));
  Operation* inner = Builder(nb).Create("test.c", {}, {}, {}, 1);
  Builder(inner->region(0).AddBlock()).Create("test.use", {deep}, {});
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    () = \"test.a\" () {} : () -> \n"
            "    {\n"
            "        ^%arg_0 {} : builtin.tensor<2xf32>, %arg_1 {stop_gradient:[false]} : "
            "builtin.tensor<3xi64>\n"
            "        () = \"test.use\" (%arg_1) {} : (builtin.tensor<3xi64>) -> \n"
            "    }\n"
            "\n"
            "    () = \"test.b\" () {} : () -> \n"
            "    {\n"
            "        ^%arg_2 {} : builtin.tensor<f32>\n"
            "        () = \"test.c\" () {} : () -> \n"
            "        {\n"
            "            () = \"test.use\" (%arg_2) {} : (builtin.tensor<f32>) -> \n"
            "        }\n"
            "\n"
            "    }\n"
            "\n"
            "}\n");
}

// Arguments first read by the untyped operands of the custom forms are declared too.
TEST(PrinterTest, ArgumentFirstReadByIfConditionIsDeclared) {
  Program program;
  Builder b(program.block());
  Operation* scope = b.Create("test.scope", {}, {}, {}, 1);
  Block& body = scope->region(0).AddBlock();
  Value* cond = body.AddArgument(T({1}, Type::Bool()));
  Operation* if_op = Builder(body).Create("pd_op.if", {cond}, {}, {}, 2);
  Builder(if_op->region(0).AddBlock()).Create("cf.yield", {}, {});
  Builder(if_op->region(1).AddBlock()).Create("cf.yield", {}, {});
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    () = \"test.scope\" () {} : () -> \n"
            "    {\n"
            "        ^%arg_0 {} : builtin.tensor<1xb>\n"
            "        () = \"pd_op.if\" (%arg_0) {} ->  {\n"
            "            () = \"cf.yield\" () {} : () -> \n"
            "        } else {\n"
            "            () = \"cf.yield\" () {} : () -> \n"
            "        }\n"
            "    }\n"
            "\n"
            "}\n");
}

TEST(PrinterTest, RegionLayoutAnnotation) {
  auto op = Operation::Create("test.r", {}, {T({2})}, {}, 3);
  op->region(1).AddBlock();
  op->region(1).AddBlock();
  op->region(2).AddBlock();
  EXPECT_EQ(PrintOperation(*op),
            "(%0) = \"test.r\" () {} : () -> builtin.tensor<2xf32> [regions:0,2,1]\n"
            "{\n}\n{\n}\n{\n}");
  auto empty = Operation::Create("test.e", {}, {}, {}, 1);
  EXPECT_EQ(PrintOperation(*empty), "() = \"test.e\" () {} : () -> [regions:0]");
}

TEST(PrinterTest, TypeExtensionsOnlyWhenNotDefault) {
  EXPECT_EQ(PrintType(Type::DenseTensor(Type::F32(), {2, 3})), "builtin.tensor<2x3xf32>");
  EXPECT_EQ(PrintType(Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNHWC, {{0, 1, 2}}, 4)),
            "builtin.tensor<2x3xf32 NHWC, lod:[[0,1,2]], offset:4>");
  EXPECT_EQ(
      PrintType(Type::DenseTensor(Type::F16(), {}, DataLayout::kUndefined), TypeStyle::kCurrent),
      "tensor<f16 Undefined(AnyLayout)>");
  EXPECT_EQ(PrintType(Type::DenseTensor(Type::I8(), {5}, DataLayout::kNCHW, {{0, 5}, {0, 2, 5}})),
            "builtin.tensor<5xi8, lod:[[0,5],[0,2,5]]>");
  EXPECT_EQ(PrintType(Type::SelectedRows(Type::F32(), {10, 4}, DataLayout::kNCHW, {}, 2)),
            "pd_op.selectedrows<10x4xf32, offset:2>");
  // Paddle prints a tensor array's dtype only: dims and a layout are ours.
  EXPECT_EQ(PrintType(Type::DenseTensorArray(Type::F32(), {})), "pd_op.tensor_array<f32>");
  EXPECT_EQ(PrintType(Type::DenseTensorArray(Type::F32(), {-1, 4}, DataLayout::kNHWC)),
            "pd_op.tensor_array<-1x4xf32 NHWC>");

  TensorDistAttr dist{ProcessMesh{{2}, {0, 1}, {"dp"}}, {0}, {}, {}};
  StatusOr<Type> computed = Type::DistDenseTensor(T({8}), dist);
  ASSERT_TRUE(computed.ok());
  EXPECT_EQ(PrintType(*computed),
            "pd_dist.tensor<8xf32, mesh_shape:[2],process_ids:[0,1],dim_names:[\"dp\"],"
            "dims_mappings:[0]>");
  StatusOr<Type> uneven = Type::DistDenseTensor(T({7}), dist, std::vector<int64_t>{4});
  ASSERT_TRUE(uneven.ok());
  EXPECT_EQ(PrintType(*uneven),
            "pd_dist.tensor<7xf32, mesh_shape:[2],process_ids:[0,1],dim_names:[\"dp\"],"
            "dims_mappings:[0], local_dims:[4]>");
  StatusOr<Type> recorded = Type::DistDenseTensor(
      Type::DenseTensor(Type::F32(), {8}, DataLayout::kNHWC, {}, 1), dist, std::vector<int64_t>{4});
  ASSERT_TRUE(recorded.ok());
  // Local dims equal to the computed ones are not printed.
  EXPECT_EQ(PrintType(*recorded),
            "pd_dist.tensor<8xf32 NHWC, mesh_shape:[2],process_ids:[0,1],dim_names:[\"dp\"],"
            "dims_mappings:[0], offset:1>");
}

TEST(PrinterTest, DistAttributesInPaddlesSpelling) {
  TensorDistAttr d{ProcessMesh{{2, 2}, {0, 1, 2, 3}, {}}, {-1}, {}, {}};
  d.partial_status = {{1, ReduceType::kAvg}, {0, ReduceType::kSum}};
  d.placements = std::vector<Placement>{Placement::Partial(ReduceType::kSum),
                                        Placement::Partial(ReduceType::kAvg)};
  EXPECT_EQ(PrintAttribute(Attribute::TensorDist(d)),
            "mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[-1], "
            "partial(0,SUM),partial(1,AVG), "
            "placements:[Partial(reduce_type=SUM), Partial(reduce_type=AVG)]");
  OperationDistAttr op;
  op.mesh = d.mesh;
  op.operands = {Attribute::Array({Attribute::TensorDist(d), Attribute::TensorDist(d)})};
  op.chunk_id = 1;
  d.partial_status.clear();
  d.placements = std::vector<Placement>{Placement::Replicate(), Placement::Shard(0)};
  op.results = {Attribute::TensorDist(d)};
  EXPECT_EQ(PrintAttribute(Attribute::OperationDist(op), TypeStyle::kCurrent),
            "{mesh:{shape:[2,2],process_ids:[0,1,2,3]},operand(0):{[mesh_shape:[2,2],"
            "process_ids:[0,1,2,3],dims_mappings:[-1], partial(0,SUM),partial(1,AVG), "
            "placements:[Partial(reduce_type=SUM), Partial(reduce_type=AVG)],mesh_shape:[2,2],"
            "process_ids:[0,1,2,3],dims_mappings:[-1], partial(0,SUM),partial(1,AVG), "
            "placements:[Partial(reduce_type=SUM), Partial(reduce_type=AVG)]]},"
            "result(0):{mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[-1], "
            "placements:[Replicate(), Shard(dim=0)]},chunk_id:1}");
}

TEST(PrinterTest, ScalarsShowTheirAlternative) {
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kInt64, 2.0})), "(pd_op.Scalar:int64)2.0");
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kFloat32, int64_t{2}})),
            "(pd_op.Scalar:float32)2");
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kFloat64, 1e20})),
            "(pd_op.Scalar:float64)1e+20");
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kBool, false})),
            "(pd_op.Scalar:bool)false");
  EXPECT_EQ(PrintAttribute(Attribute::Scalar({DataType::kInt64, 2.0}), TypeStyle::kCurrent), "2");
}

TEST(PrinterTest, StringsEscapeQuotesAndBackslashes) {
  EXPECT_EQ(PrintAttribute(Attribute::String("C:\\dir \"x\"\n")), "\"C:\\\\dir \\\"x\\\"\n\"");
}

// A bare process mesh would run into a following attribute named like one of its keys.
TEST(PrinterTest, ProcessMeshBeforeACollidingNameIsDelimited) {
  const Attribute mesh = Attribute::ProcessMeshAttr(ProcessMesh{{2}, {0, 1}, {}});
  auto op = Operation::Create(
      "test.m", {}, {},
      {{"a", mesh}, {"dim_names", Attribute::Array({Attribute::String("x")})}, {"z", mesh}});
  EXPECT_EQ(PrintOperation(*op),
            "() = \"test.m\" () {a:(pd_dist.ProcessMesh){mesh_shape:[2],process_ids:[0,1]},"
            "dim_names:[\"x\"],z:mesh_shape:[2],process_ids:[0,1]} : () -> ");
}

TEST(PrinterTest, WhileExtensions) {
  Program program;
  Builder b(program.block());
  Operation* c = b.Create("builtin.parameter", {}, {T({1}, Type::Bool())},
                          {{"parameter_name", Attribute::String("c")}});
  Operation* x =
      b.Create("builtin.parameter", {}, {T({2})}, {{"parameter_name", Attribute::String("x")}});
  // Attributes Paddle's custom form drops, and a body argument of another type than its input.
  Operation* loop = b.Create("pd_op.while", {c->result(0), x->result(0)}, {T({2})},
                             {{"stop_gradient", False1()}}, 1);
  Block& body = loop->region(0).AddBlock();
  body.AddArgument(T({-1}));
  Builder(body).Create("cf.yield", {c->result(0), x->result(0)}, {});
  // Results of another type than the inputs: the generic form.
  Operation* other = b.Create("pd_op.while", {c->result(0), x->result(0)}, {T({-1})}, {}, 1);
  Builder(other->region(0).AddBlock()).Create("cf.yield", {c->result(0), x->result(0)}, {});
  EXPECT_EQ(PrintProgram(program),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {parameter_name:\"c\"} : () -> "
            "builtin.tensor<1xb>\n"
            "    (%1) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> "
            "builtin.tensor<2xf32>\n"
            "    (%2) = \"pd_op.while\" (cond=%0, inputs=%1) {stop_gradient:[false]} { \n"
            "    ^%arg_0 {} : builtin.tensor<-1xf32>\n"
            "        () = \"cf.yield\" (%0, %1) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) "
            "-> \n"
            "    }\n"
            "    (%3) = \"pd_op.while\" (%0, %1) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) "
            "-> builtin.tensor<-1xf32>\n"
            "    {\n"
            "        () = \"cf.yield\" (%0, %1) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) "
            "-> \n"
            "    }\n"
            "\n"
            "}\n");
}

}  // namespace
}  // namespace irm::newir
