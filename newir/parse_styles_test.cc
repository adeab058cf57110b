// Tests of the parser on the other forms Paddle has printed: untyped 3.0+ attribute values whose
// kinds come from the op table (and the fallback where the table says nothing), the 2023 and
// 2024 spellings, the pd_dist forms of every era, the fixtures of every era (load, verify, text
// and JSON round trips), and malformed input of those forms with their exact diagnostics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>

#include "common/file_io.h"
#include "newir/block.h"
#include "newir/parser.h"
#include "newir/parser_test_support.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using testing::ErrorOf;
using testing::Reprint;
using testing::T;
using testing::Unregistered;

// Today's Paddle prints attribute values without kinds; the op table gives them back.
TEST(ParserTest, UntypedValuesTakeTheOpTablesKinds) {
  const std::string current =
      "{\n"
      "    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(gpu:0),shape:[-1,4],"
      "stop_gradient:[true]} : () -> tensor<-1x4xf32>\n"
      "    (%1) = \"pd_op.embedding\" (%0, %0) {padding_idx:-1,sparse:false} : "
      "(tensor<-1x4xf32>, tensor<-1x4xf32>) -> tensor<-1x4xf32>\n"
      "    (%2, %3, %4) = \"pd_op.layer_norm\" (%1, <<NULL VALUE>>, <<NULL VALUE>>) "
      "{begin_norm_axis:1,epsilon:1e-05} : (tensor<-1x4xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> "
      "tensor<-1x4xf32>, tensor<-1xf32>, tensor<-1xf32>\n"
      "    (%5) = \"pd_op.full\" () {dtype:int64,place:Place(cpu),shape:[1],value:2} : () -> "
      "tensor<1xi64>\n"
      "    (%6) = \"pd_op.scale\" (%2, %5) {bias:2,bias_after_scale:true} : (tensor<-1x4xf32>, "
      "tensor<1xi64>) -> tensor<-1x4xf32>\n"
      "    (%7) = \"pd_op.fetch\" (%6) {col:0,name:\"out\",persistable:[true]} : "
      "(tensor<-1x4xf32>) -> tensor<-1x4xf32>\n"
      "}\n";
  StatusOr<Program> program = ParseProgram(current, "current.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<Operation*> ops = program->block().ops();
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops[0]->attribute("dtype"), Attribute::DataTypeAttr(DataType::kFloat32));
  EXPECT_EQ(ops[0]->attribute("place"), Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0)));
  EXPECT_EQ(ops[0]->attribute("shape"), Attribute::IntArrayAttr({-1, 4}));
  EXPECT_EQ(ops[0]->attribute("stop_gradient"), Attribute::Array({Attribute::Bool(true)}));
  EXPECT_EQ(ops[1]->attribute("padding_idx"), Attribute::Int64(-1));  // an int64 in the table
  EXPECT_EQ(ops[2]->attribute("begin_norm_axis"), Attribute::Int32(1));
  EXPECT_EQ(ops[2]->attribute("epsilon"), Attribute::Float(1e-5f));
  // full's value accepts any kind; the table says an untyped one is a Double (Scalar(double)).
  EXPECT_EQ(ops[3]->attribute("value"), Attribute::Double(2.0));
  EXPECT_EQ(ops[4]->attribute("bias"), Attribute::Float(2.0f));  // a float in the table
  EXPECT_EQ(ops[5]->attribute("col"), Attribute::Int32(0));
  // The current style prints back exactly; the typed style shows the kinds recovered.
  EXPECT_EQ(PrintProgram(*program, {.style = TypeStyle::kCurrent}), current);
  EXPECT_EQ(
      PrintProgram(*program),
      "{\n"
      "    (%0) = \"pd_op.data\" () {dtype:(pd_op.DataType)float32,name:\"x\","
      "place:(pd_op.Place)Place(gpu:0),shape:(pd_op.IntArray)[-1,4],stop_gradient:[true]} : "
      "() -> builtin.tensor<-1x4xf32>\n"
      "    (%1) = \"pd_op.embedding\" (%0, %0) {padding_idx:(Int64)-1,sparse:false} : "
      "(builtin.tensor<-1x4xf32>, builtin.tensor<-1x4xf32>) -> builtin.tensor<-1x4xf32>\n"
      "    (%2, %3, %4) = \"pd_op.layer_norm\" (%1, <<NULL VALUE>>, <<NULL VALUE>>) "
      "{begin_norm_axis:(Int32)1,epsilon:(Float)1e-05} : (builtin.tensor<-1x4xf32>, "
      "<<NULL TYPE>>, <<NULL TYPE>>) -> builtin.tensor<-1x4xf32>, builtin.tensor<-1xf32>, "
      "builtin.tensor<-1xf32>\n"
      "    (%5) = \"pd_op.full\" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),"
      "shape:(pd_op.IntArray)[1],value:(Double)2} : () -> builtin.tensor<1xi64>\n"
      "    (%6) = \"pd_op.scale\" (%2, %5) {bias:(Float)2,bias_after_scale:true} : "
      "(builtin.tensor<-1x4xf32>, builtin.tensor<1xi64>) -> builtin.tensor<-1x4xf32>\n"
      "    (%7) = \"pd_op.fetch\" (%6) {col:(Int32)0,name:\"out\",persistable:[true]} : "
      "(builtin.tensor<-1x4xf32>) -> builtin.tensor<-1x4xf32>\n"
      "}\n");
}

// An empty default says nothing about an array's elements; the table's element kind does.
TEST(ParserTest, UntypedArrayElementsTakeTheTablesElementKind) {
  StatusOr<Program> program = ParseProgram(
      "{\n"
      "    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(cpu),shape:[2,3]} : () "
      "-> tensor<2x3xf32>\n"
      "    (%1) = \"pd_op.transpose\" (%0) {perm:[1,0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "}\n",
      "arrays.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->block().back()->attribute("perm"),
            Attribute::Array({Attribute::Int32(1), Attribute::Int32(0)}));
  StatusOr<Program> slice = ParseProgram(
      "{\n"
      "    (%0) = \"pd_op.full_int_array\" () {dtype:int64,place:Place(cpu),value:[4,8]} : () -> "
      "tensor<2xi64>\n"
      "}\n",
      "arrays.pir");
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->block().front()->attribute("value"),
            Attribute::Array({Attribute::Int64(4), Attribute::Int64(8)}));
}

// An explicit kind wins over the table (the verifier judges it).
TEST(ParserTest, KindPrefixWinsOverTheTable) {
  StatusOr<Program> program = ParseProgram(
      "{\n(%0) = \"builtin.parameter\" () {parameter_name:\"p\"} : () -> f32\n"
      "(%1) = \"pd_op.fetch\" (%0) {col:(Int64)0,name:\"o\"} : (f32) -> f32\n}");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->block().back()->attribute("col"), Attribute::Int64(0));
}

// No op table entry to ask: the fallback documented in parser.h.
TEST(ParserTest, UntypedFallbackKinds) {
  StatusOr<Program> program = ParseProgram(
      "{\n() = \"test.any\" (%arg_0 {stop_gradient:[false],n:3}) {a:3,b:3000000000,c:1.5,"
      "d:1e+300,e:float32,f:NCHW,g:Place(gpu:0),h:[1,-2],i:\"s\",j:true,k:tensor<2xf32>,"
      "l:Undefined(AnyLayout),m:Undefined,n:bool,o:-nan,p:inf,q:[],r:f32,s:<<NULL TYPE>>,"
      "t:Place(npu:2)} : (f32) -> \n}",
      "f.pir", Unregistered());
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Operation& op = *program->block().front();
  EXPECT_EQ(op.attribute("a"), Attribute::Int32(3));
  EXPECT_EQ(op.attribute("b"), Attribute::Int64(3000000000));
  EXPECT_EQ(op.attribute("c"), Attribute::Float(1.5f));
  EXPECT_EQ(op.attribute("d"), Attribute::Double(1e300));  // too large for a float
  EXPECT_EQ(op.attribute("e"), Attribute::DataTypeAttr(DataType::kFloat32));
  EXPECT_EQ(op.attribute("f"), Attribute::DataLayoutAttr(DataLayout::kNCHW));
  EXPECT_EQ(op.attribute("g"), Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0)));
  EXPECT_EQ(op.attribute("h"), Attribute::Array({Attribute::Int32(1), Attribute::Int32(-2)}));
  EXPECT_EQ(op.attribute("i"), Attribute::String("s"));
  EXPECT_EQ(op.attribute("j"), Attribute::Bool(true));
  EXPECT_EQ(op.attribute("k"), Attribute::TypeAttr(T({2})));
  EXPECT_EQ(op.attribute("l"), Attribute::DataLayoutAttr(DataLayout::kUndefined));
  EXPECT_EQ(op.attribute("m"), Attribute::DataTypeAttr(DataType::kUndefined));
  EXPECT_EQ(op.attribute("n"), Attribute::DataTypeAttr(DataType::kBool));
  ASSERT_NE(op.attribute("o").AsFloat(), nullptr);
  EXPECT_TRUE(std::isnan(*op.attribute("o").AsFloat()));
  EXPECT_TRUE(std::signbit(*op.attribute("o").AsFloat()));
  EXPECT_EQ(op.attribute("p"), Attribute::Float(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(op.attribute("q"), Attribute::Array({}));
  EXPECT_EQ(op.attribute("r"), Attribute::TypeAttr(Type::F32()));
  EXPECT_EQ(op.attribute("s"), Attribute::TypeAttr(Type()));
  Place npu{AllocationType::kCustom, 2, "npu"};
  EXPECT_EQ(op.attribute("t"), Attribute::PlaceAttr(npu));
  // Block argument attributes have no table either.
  EXPECT_EQ(op.operand(0)->attributes().at("n"), Attribute::Int32(3));
  EXPECT_EQ(op.operand(0)->attributes().at("stop_gradient"),
            Attribute::Array({Attribute::Bool(false)}));
}

// An op table written for the test: every expectable kind, and an array whose default tells its
// elements' kind.
const OpRegistry& KindsRegistry() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    OpInfo info{.name = "test.kinds"};
    info.attributes = {
        {"d", AttrKind::kDouble, false, {}},
        {"f", AttrKind::kFloat, false, {}},
        {"i64", AttrKind::kInt64, false, {}},
        {"ints", AttrKind::kArray, false, Attribute::Array({Attribute::Int64(0)})},
        {"lay", AttrKind::kDataLayout, false, {}},
        {"mesh", AttrKind::kProcessMesh, false, {}},
        {"sc", AttrKind::kScalar, false, {}},
        {"td", AttrKind::kTensorDist, false, {}},
        {"ty", AttrKind::kType, false, {}},
    };
    Status s = r->Register(std::move(info));
    EXPECT_TRUE(s.ok());
    return r;
  }();
  return *registry;
}

TEST(ParserTest, EveryExpectableKind) {
  ParseOptions options;
  options.registry = &KindsRegistry();
  StatusOr<Program> program = ParseProgram(
      "{() = \"test.kinds\" () {d:2,f:nan,i64:-3,ints:[1,-2],lay:NHWC,"
      "mesh:mesh_shape:[2],process_ids:[0,1],sc:0.5,td:mesh_shape:[2],process_ids:[0,1],"
      "dims_mappings:[0],ty:vec[f32,tensor<i8>]} : () -> }",
      "k.pir", options);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Operation& op = *program->block().front();
  EXPECT_EQ(op.attribute("d"), Attribute::Double(2.0));
  ASSERT_NE(op.attribute("f").AsFloat(), nullptr);
  EXPECT_TRUE(std::isnan(*op.attribute("f").AsFloat()));
  EXPECT_EQ(op.attribute("i64"), Attribute::Int64(-3));
  EXPECT_EQ(op.attribute("ints"), Attribute::Array({Attribute::Int64(1), Attribute::Int64(-2)}));
  EXPECT_EQ(op.attribute("lay"), Attribute::DataLayoutAttr(DataLayout::kNHWC));
  const ProcessMesh mesh{{2}, {0, 1}, {}};
  EXPECT_EQ(op.attribute("mesh"), Attribute::ProcessMeshAttr(mesh));
  EXPECT_EQ(op.attribute("sc"), Attribute::Scalar({DataType::kFloat64, 0.5}));
  EXPECT_EQ(op.attribute("td"), Attribute::TensorDist(TensorDistAttr{mesh, {0}, {}, {}}));
  EXPECT_EQ(op.attribute("ty"),
            Attribute::TypeAttr(Type::Vector({Type::F32(), T({}, Type::I8())})));
  // A Scalar without a dtype in the text takes one from the value's own form.
  EXPECT_EQ(*ParseAttribute("3", "s", AttrKind::kScalar),
            Attribute::Scalar({DataType::kInt64, int64_t{3}}));
  EXPECT_EQ(*ParseAttribute("true", "s", AttrKind::kScalar),
            Attribute::Scalar({DataType::kBool, true}));
  EXPECT_EQ(*ParseAttribute("NCHW", "s", AttrKind::kDataLayout),
            Attribute::DataLayoutAttr(DataLayout::kNCHW));
}

// The 2023 spellings: `pd_op.tensor<…>` and `(Array)[…]`.
TEST(ParserTest, Style2023) {
  const std::string text =
      "{\n"
      "    (%0) = \"pd_op.full\" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),"
      "shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)1} : () -> pd_op.tensor<1xf32>\n"
      "    (%1) = \"pd_op.assign_value_\" (%0) {dtype:(pd_op.DataType)int64,"
      "place:(pd_op.Place)Place(undefined:0),shape:(Array)[(Int32)2],stop_gradient:[true],"
      "values:(Array)[(Double)3,(Double)3]} : (pd_op.tensor<1xf32>) -> pd_op.tensor<2xi64>\n"
      "}\n";
  EXPECT_EQ(Reprint(text),
            "{\n"
            "    (%0) = \"pd_op.full\" () {dtype:(pd_op.DataType)float32,"
            "place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],"
            "value:(Float)1} : () -> builtin.tensor<1xf32>\n"
            "    (%1) = \"pd_op.assign_value_\" (%0) {dtype:(pd_op.DataType)int64,"
            "place:(pd_op.Place)Place(undefined:0),shape:[(Int32)2],stop_gradient:[true],"
            "values:[(Double)3,(Double)3]} : (builtin.tensor<1xf32>) -> builtin.tensor<2xi64>\n"
            "}\n");
}

TEST(ParserTest, TensorSpellingsOfEveryEra) {
  EXPECT_EQ(*ParseType("pd_op.tensor<f32>"), T({}));
  EXPECT_EQ(*ParseType("tensor<2x3xf32>"), T({2, 3}));
  // One 2024 version printed the layout after the dtype.
  EXPECT_EQ(*ParseType("builtin.tensor<2x3xf32 NCHW>"), T({2, 3}));
  EXPECT_EQ(*ParseType("builtin.tensor<2xf32 Undefined(AnyLayout)>"),
            Type::DenseTensor(Type::F32(), {2}, DataLayout::kUndefined));
  EXPECT_EQ(*ParseType("pd_op.tensor_array<f32>"), Type::DenseTensorArray(Type::F32(), {}));
  EXPECT_EQ(*ParseType("pd_op.tensor_array<3xf32>"), Type::DenseTensorArray(Type::F32(), {3}));
  EXPECT_EQ(*ParseType("tensor<2xf32, lod:[[0,1,2],[]], offset:7>"),
            Type::DenseTensor(Type::F32(), {2}, DataLayout::kNCHW, {{0, 1, 2}, {}}, 7));
}

// The pd_dist print forms, oldest first (paddle/fluid/pir/dialect/distributed/ir/; Paddle PRs
// 62603, 63072, 69262), and their canonical re-print.
TEST(ParserTest, DistFormsOfEveryEra) {
  // March 2024: a brace-less op_dist_attr with mesh-less entries; types without process ids.
  const std::string march =
      "{\n"
      "    (%0) = \"pd_op.data\" () {dtype:(pd_op.DataType)float32,name:\"input\","
      "place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[2,4,8],stop_gradient:[true]} "
      ": () -> builtin.tensor<2x4x8xf32>\n"
      "    (%1) = \"dist_op.shard_tensor\" (%0) {op_dist_attr:mesh_shape:[2],process_ids:[0,1],"
      "result(0):{dims_maping:[-1,0,-1]}} : (builtin.tensor<2x4x8xf32>) -> "
      "pd_dist.tensor<2x4x8xf32, mesh_shape:[2],dims_mappings:[-1,0,-1]>\n"
      "}\n";
  StatusOr<Program> program = ParseProgram(march, "march.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Operation& shard = *program->block().back();
  const OperationDistAttr* od = shard.attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(od, nullptr);
  const ProcessMesh mesh{{2}, {0, 1}, {}};
  EXPECT_EQ(od->mesh, mesh);
  EXPECT_EQ(od->chunk_id, -1);
  ASSERT_EQ(od->results.size(), 1u);
  // A mesh-less entry is on the op's mesh.
  EXPECT_EQ(od->results[0], Attribute::TensorDist(TensorDistAttr{mesh, {-1, 0, -1}, {}, {}}));
  // The type did not say its process ids: they stay unknown (empty).
  const TensorDistAttr* td = shard.result(0)->type().dist_attr();
  ASSERT_NE(td, nullptr);
  EXPECT_EQ(td->mesh.shape, std::vector<int64_t>{2});
  EXPECT_TRUE(td->mesh.process_ids.empty());
  EXPECT_EQ(shard.result(0)->type().local_dims(), (std::vector<int64_t>{2, 2, 8}));
  EXPECT_EQ(PrintProgram(*program),
            "{\n"
            "    (%0) = \"pd_op.data\" () {dtype:(pd_op.DataType)float32,name:\"input\","
            "place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[2,4,8],"
            "stop_gradient:[true]} : () -> builtin.tensor<2x4x8xf32>\n"
            "    (%1) = \"dist_op.shard_tensor\" (%0) {op_dist_attr:{mesh:{shape:[2],"
            "process_ids:[0,1]},result(0):{mesh_shape:[2],process_ids:[0,1],"
            "dims_mappings:[-1,0,-1]},chunk_id:-1}} : (builtin.tensor<2x4x8xf32>) -> "
            "pd_dist.tensor<2x4x8xf32, mesh_shape:[2],process_ids:[],dims_mappings:[-1,0,-1]>\n"
            "}\n");

  // April 2024: braces, no chunk_id, mesh-less entries.
  const std::string april =
      "{\n"
      "    (%0) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> "
      "pd_dist.tensor<4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1]>\n"
      "    (%1) = \"builtin.parameter\" () {parameter_name:\"g\"} : () -> "
      "pd_dist.tensor<f32, mesh_shape:[2],dims_mappings:[]>\n"
      "    (%2) = \"pd_op.mean_grad\" (%0, %1) {axis:(pd_op.IntArray)[],keepdim:false,"
      "op_dist_attr:{mesh:{shape:[2],process_ids:[0,1]},operand(0):{dims_maping:[-1,-1]},"
      "operand(1):{dims_maping:[]},result(0):{dims_maping:[-1,-1]}},reduce_all:false,"
      "stop_gradient:[false]} : (pd_dist.tensor<4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1]>, "
      "pd_dist.tensor<f32, mesh_shape:[2],dims_mappings:[]>) -> "
      "pd_dist.tensor<4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1]>\n"
      "}\n";
  program = ParseProgram(april, "april.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  od = program->block().back()->attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(od, nullptr);
  EXPECT_EQ(od->chunk_id, -1);
  ASSERT_EQ(od->operands.size(), 2u);
  EXPECT_EQ(od->operands[1], Attribute::TensorDist(TensorDistAttr{mesh, {}, {}, {}}));

  // Today: partial status joined by ',' and placements.
  StatusOr<Type> partial = ParseType(
      "pd_dist.tensor<4xf32, mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[-1], "
      "partial(0,SUM),partial(1,AVG), placements:[Partial(reduce_type=SUM), "
      "Partial(reduce_type=AVG)]>");
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  const TensorDistAttr* pd = partial->dist_attr();
  EXPECT_EQ(pd->partial_status,
            (std::map<int64_t, ReduceType>{{0, ReduceType::kSum}, {1, ReduceType::kAvg}}));
  EXPECT_EQ(pd->placements, (std::vector<Placement>{Placement::Partial(ReduceType::kSum),
                                                    Placement::Partial(ReduceType::kAvg)}));
}

// ---- Fixtures of every era (newir/testdata/text/README.md says which Paddle printed each) -----

std::string Fixture(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/newir/testdata/text/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

struct EraFixture {
  const char* file;
  const char* printed_by;
  bool unregistered;  // holds ops of a dialect this project does not register (cinn_op)
};

// Oldest first. Each loads, verifies, prints canonically, and goes text -> JSON -> text without
// a change (JSON where every op's dialect has a JSON id: Paddle's DialectIdMap has no cinn_op).
constexpr EraFixture kEraFixtures[] = {
    {"while_2023.pir", "Paddle 2.6-era develop, late 2023 (WhileOp::Print, PR #58089)", false},
    {"if_2023.pir", "Paddle 2.6-era develop, late 2023 (IfOp::Print, get_parameter)", false},
    {"cinn_2024.pir", "Paddle develop, February 2024 (CINN IR dump, PR #62130)", true},
    {"dist_early2024.pir", "Paddle develop, March-April 2024 (PRs #62603, #63072)", false},
    {"typed_beta.pir", "Paddle 3.0-beta, 2024", false},
    {"dist.pir", "Paddle develop, late 2024 (PR #69262)", false},
    {"untyped_mlp.pir", "Paddle 3.0, 2025 (after PR #70534)", false},
    {"if.pir", "Paddle 3.0, 2025", false},
    {"while.pir", "Paddle 3.0, 2025", false},
    {"catalog_ops_3.0.pir", "Paddle 3.0, 2025 (ops only the catalog registers)", false},
};

TEST(ParserTest, FixturesOfEveryEraLoadVerifyAndRoundTrip) {
  for (const EraFixture& f : kEraFixtures) {
    SCOPED_TRACE(std::string(f.file) + ", printed by " + f.printed_by);
    ParseOptions options;
    options.allow_unregistered = f.unregistered;
    StatusOr<Program> program = ParseProgram(Fixture(f.file), f.file, options);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    VerifyOptions verify;
    verify.allow_unregistered = f.unregistered;
    const Status verified = VerifyProgram(*program, verify);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    const std::string canonical = PrintProgram(*program);
    StatusOr<Program> again = ParseProgram(canonical, "canonical.pir", options);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    // The printer leaves out what Paddle's does (sym_shape_str, op_callstack): JSON keeps them.
    EXPECT_EQ(
        FindStructuralDifference(*program, *again, {.ignore_hidden_attributes = true}).value_or(""),
        "");
    EXPECT_EQ(PrintProgram(*again), canonical);
    if (f.unregistered) continue;
    const std::string json = WritePirJson(*program);
    StatusOr<Program> back = ReadPirJson(json, "fixture.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(FindStructuralDifference(*program, *back).value_or(""), "");
    EXPECT_EQ(PrintProgram(*back), canonical);
    EXPECT_EQ(WritePirJson(*back), json);
  }
}

// Late 2023: pd_op.while's body arguments on a line of their own, without attributes.
TEST(ParserTest, Style2023WhileHeaderWithoutAttributes) {
  StatusOr<Program> program = ParseProgram(Fixture("while_2023.pir"), "while_2023.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Operation& loop = *program->block().ops()[3];
  ASSERT_EQ(loop.name(), "pd_op.while");
  const Block& body = loop.region(0).front();
  ASSERT_EQ(body.num_arguments(), 2u);
  EXPECT_EQ(body.argument(0)->type(), T({1}, Type::I64()));  // the loop input's type
  EXPECT_TRUE(body.argument(0)->attributes().empty());
  EXPECT_EQ(body.ops()[1]->operand(0), body.argument(0));
  EXPECT_EQ(body.back()->operand(2), body.argument(1));
  EXPECT_EQ(loop.result(1)->type(), T({1}, Type::I64()));
}

// Late 2023: builtin.get_parameter (renamed builtin.parameter by PR #59239) and a comparison op
// only the catalog registers (the pd_op.greater_equal).
TEST(ParserTest, Style2023IfWithGetParameter) {
  StatusOr<Program> program = ParseProgram(Fixture("if_2023.pir"), "if_2023.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<Operation*> ops = program->block().ops();
  EXPECT_EQ(ops[0]->name(), "builtin.parameter");
  EXPECT_EQ(ops[0]->attribute("parameter_name"), Attribute::String("fc_0.w_0"));
  EXPECT_EQ(ops[4]->name(), "pd_op.greater_equal");
  ASSERT_NE(ops[4]->info(), nullptr);
  EXPECT_EQ(ops[2]->attribute("value"), Attribute::Float(0.0f));
  ASSERT_EQ(ops[5]->name(), "pd_op.if");
  EXPECT_EQ(ops[5]->region(1).front().ops().size(), 2u);
  EXPECT_TRUE(PrintProgram(*program).starts_with(
      "{\n    (%0) = \"builtin.parameter\" () {parameter_name:\"fc_0.w_0\"} : () -> "
      "builtin.tensor<4x4xf32>\n"));
}

// February 2024: CINN's custom form (a bare op name, no attribute map, a region after the
// result types) and sym_shape_str attributes.
TEST(ParserTest, Style2024CinnRegionOps) {
  StatusOr<Program> program =
      ParseProgram(Fixture("cinn_2024.pir"), "cinn_2024.pir", Unregistered());
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Operation& fusion = *program->block().ops()[1];
  EXPECT_EQ(fusion.name(), "cinn_op.fusion");
  EXPECT_EQ(fusion.info(), nullptr);
  ASSERT_EQ(fusion.num_regions(), 1u);
  EXPECT_EQ(fusion.region(0).front().ops().size(), 2u);
  EXPECT_EQ(fusion.result(0)->type(), T({1, -1, 768}));
  EXPECT_EQ(program->block().front()->attribute("sym_shape_str"),
            Attribute::String("shape[1, S0, 768], data[NULL]"));
  // Without --allow-unregistered the unknown dialect is named where it stands.
  EXPECT_EQ(ParseProgram(Fixture("cinn_2024.pir"), "cinn_2024.pir").status().ToString(),
            "cinn_2024.pir:3:12: error: unknown op 'cinn_op.fusion' (--allow-unregistered keeps "
            "it opaquely)");
}

// 3.0: untyped values of catalog ops take the catalog's kinds (ops.yaml at the catalog's commit).
TEST(ParserTest, Style30CatalogOpsTakeTheCatalogsKinds) {
  StatusOr<Program> program = ParseProgram(Fixture("catalog_ops_3.0.pir"), "c.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<Operation*> ops = program->block().ops();
  EXPECT_EQ(ops[2]->attribute("axis"), Attribute::Int32(-1));  // argsort: int axis
  EXPECT_EQ(ops[2]->attribute("descending"), Attribute::Bool(true));
  EXPECT_EQ(ops[3]->attribute("y"), Attribute::Double(2.0));        // pow: Scalar y = 1.0f
  EXPECT_EQ(ops[5]->attribute("reverse"), Attribute::Bool(true));   // cumsum: axis an operand
  EXPECT_EQ(ops[6]->attribute("start_axis"), Attribute::Int32(0));  // flatten
}

// ---- Malformed input ------------------------------------------------------------------------

TEST(ParserErrorTest, MalformedInputOfEachEra) {
  const std::string head2023 =
      "{\n    (%0) = \"pd_op.full\" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),"
      "shape:(pd_op.IntArray)[1],value:(Float)0} : () -> pd_op.tensor<1xi64>\n";
  // 2023 while header: two arguments without the comma.
  EXPECT_EQ(
      ErrorOf(head2023 +
              "    (%1, %2) = \"pd_op.while\" (cond=%0, inputs=%0, %0) { \n    ^%arg_0 %arg_1\n"
              "    }\n}"),
      "bad.pir:4:12: error: expected ' {' after a block argument, found ' '");
  // 2023 get_parameter without its attribute map.
  EXPECT_EQ(ErrorOf(head2023 + "    (%1) = \"builtin.get_parameter\" () : () -> f32\n}"),
            "bad.pir:3:39: error: expected '{' for op attributes, found ':'");
  // 2024 CINN form: a bare name must be dialect-qualified; the region must close.
  EXPECT_EQ(
      ErrorOf(head2023 + "    (%1) = fusion () -> pd_op.tensor<1xi64> {\n    }\n}", Unregistered()),
      "bad.pir:3:12: error: expected an op name in quotes, found 'fusion'");
  EXPECT_EQ(
      ErrorOf(head2023 + "    (%1) = cinn_op.fusion () -> pd_op.tensor<1xi64> {\n", Unregistered()),
      "bad.pir:4:1: error: expected '}' to close block, found end of input");
  // 3.0: an untyped value the catalog's kind refuses, and a misspelt catalog op.
  const std::string head30 =
      "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(cpu),shape:[4]} : "
      "() -> tensor<4xf32>\n";
  EXPECT_EQ(
      ErrorOf(head30 + "    (%1, %2) = \"pd_op.argsort\" (%0) {axis:1.5} : (tensor<4xf32>) -> "
                       "tensor<4xf32>, tensor<4xi64>\n}"),
      "bad.pir:3:43: error: attribute 'axis' of 'pd_op.argsort' takes an int32, found '1.5'");
  EXPECT_EQ(ErrorOf(head30 + "    (%1) = \"pd_op.greater_equall\" (%0, %0) {} : (tensor<4xf32>, "
                             "tensor<4xf32>) -> tensor<4xb>\n}"),
            "bad.pir:3:12: error: unknown op 'pd_op.greater_equall' (--allow-unregistered keeps it "
            "opaquely)");
}

TEST(ParserErrorTest, ValueDoesNotFitTheOpTable) {
  const std::string def =
      "{\n(%0) = \"builtin.parameter\" () {parameter_name:\"p\"} : () -> tensor<f32>\n";
  EXPECT_EQ(ErrorOf(def + "() = \"pd_op.matmul\" (%0, %0) {transpose_x:3} : (tensor<f32>, "
                          "tensor<f32>) -> \n}"),
            "bad.pir:3:43: error: attribute 'transpose_x' of 'pd_op.matmul' takes a bool, "
            "found '3'");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"pd_op.fetch\" (%0) {col:1.5,name:\"o\"} : (tensor<f32>) -> "
                          "tensor<f32>\n}"),
            "bad.pir:3:32: error: attribute 'col' of 'pd_op.fetch' takes an int32, found '1.5'");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"pd_op.fetch\" (%0) {col:3000000000,name:\"o\"} : "
                          "(tensor<f32>) -> tensor<f32>\n}"),
            "bad.pir:3:32: error: a 32-bit integer '3000000000' is out of range");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"pd_op.data\" () {dtype:float33,name:\"x\",shape:[1]} : () -> "
                          "tensor<1xf32>\n}"),
            "bad.pir:3:31: error: attribute 'dtype' of 'pd_op.data' takes a DataType, found "
            "'float33'");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"pd_op.data\" () {dtype:float32,name:\"x\",shape:4} : () -> "
                          "tensor<1xf32>\n}"),
            "bad.pir:3:54: error: attribute 'shape' of 'pd_op.data' takes an IntArray, found '4'");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"pd_op.data\" () {dtype:float32,name:x,shape:[1]} : () -> "
                          "tensor<1xf32>\n}"),
            "bad.pir:3:44: error: attribute 'name' of 'pd_op.data' takes a string, found 'x'");
  EXPECT_EQ(ErrorOf(def + "(%1) = \"dist_op.shard_tensor\" (%0) {op_dist_attr:mesh_shape:[2],"
                          "process_ids:[0,1],dims_mappings:[]} : (tensor<f32>) -> tensor<f32>\n}"),
            "bad.pir:3:50: error: attribute 'op_dist_attr' of 'dist_op.shard_tensor' takes an "
            "operation dist attribute, found 'mesh_shape'");
  EXPECT_EQ(ParseAttribute("1.5", "a.pir", AttrKind::kInt32).status().ToString(),
            "a.pir:1:1: error: the attribute takes an int32, found '1.5'");
}

TEST(ParserErrorTest, MalformedUntypedValue) {
  const ParseOptions options = Unregistered();
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:@} : () -> \n}", options),
            "bad.pir:2:18: error: expected an attribute value, found '@'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:1x} : () -> \n}", options),
            "bad.pir:2:18: error: expected an attribute value, found '1x'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:[1,} : () -> \n}", options),
            "bad.pir:2:21: error: expected an attribute value, found '}'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:99999999999999999999} : () -> \n}", options),
            "bad.pir:2:18: error: integer '99999999999999999999' is out of range");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:Place(gpu)} : () -> \n}", options),
            "bad.pir:2:27: error: expected ':' after device kind, found ')'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {s:(pd_op.Scalar:int64)x} : () -> \n}", options),
            "bad.pir:2:38: error: expected a scalar value, found 'x'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {m:mesh_shape:[2],process_ids:[0,1],dim_names:[x]} : () "
                    "-> \n}",
                    options),
            "bad.pir:2:62: error: expected a quoted dim name, found 'x'");
  EXPECT_EQ(ErrorOf("{\n() = \"t.x\" () {a:{mesh:{shape:[2],process_ids:[0,1]},"
                    "result(0):{dims_maping:[0],junk}} : () -> \n}",
                    options),
            "bad.pir:2:80: error: expected '}' to close operation dist entry, found ','");
}

TEST(ParserErrorTest, BadDistPieces) {
  const ParseOptions options = Unregistered();
  const std::string head = "{\n() = \"t.x\" () {} : () -> pd_dist.tensor<2xf32, ";
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2],process_ids:[0,1],dims_mappings:[0], "
                           "placements:[Shard(dim=0), Spread()]>\n}",
                    options),
            "bad.pir:2:126: error: unknown placement 'Spread' (expected Shard(dim=N), Replicate() "
            "or Partial(reduce_type=T))");
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], "
                           "partial(0,SUMM)>\n}",
                    options),
            "bad.pir:2:111: error: unknown reduce type 'SUMM' (expected SUM, MAX, MIN, PRODUCT, "
            "AVG, ANY or ALL)");
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], "
                           "partial(x,SUM)>\n}",
                    options),
            "bad.pir:2:109: error: expected a mesh dimension, found 'x'");
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2,2],process_ids:[0,1,2,3],dims_mappings:[-1], "
                           "partial(1,SUM),partial(1,MAX)>\n}",
                    options),
            "bad.pir:2:130: error: mesh dim 1 is partial twice");
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2],process_ids:[0,1],dims_mappings:[0], "
                           "placements:[Shard(dim=0, split_factor=2)]>\n}",
                    options),
            "bad.pir:2:123: error: Shard split_factor and shard_order are not supported");
  // The dist type's own checks are reported at the type.
  EXPECT_EQ(ErrorOf(head + "mesh_shape:[2],process_ids:[0,1],dims_mappings:[0], "
                           "partial(0,SUM)>\n}",
                    options),
            "bad.pir:2:26: error: mesh dim 0 is both partial and sharding tensor dim 0");
}

}  // namespace
}  // namespace irm::newir
