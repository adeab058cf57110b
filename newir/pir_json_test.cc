// Tests of the JSON form: write ∘ read is the identity (same printed text, byte-identical JSON
// on a second write) for programs covering every type and attribute kind, nested regions with
// block arguments, special floats and dist attributes; the bytes written for small programs; and
// small hand-written documents in Paddle's layout. Malformed documents: pir_json_errors_test.cc.
#include "newir/pir_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "newir/builder.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}
Attribute Flags(bool v) { return Attribute::Array({Attribute::Bool(v)}); }

ProcessMesh Mesh2x2() { return ProcessMesh{{2, 2}, {0, 1, 2, 3}, {"x", "y"}}; }

// Every scalar type, every composite type, every attribute kind, special floats, a compressed
// and a non-compressible parameter, dist attributes and types, nested regions with arguments and
// keyword arguments, and an empty operand slot.
void BuildEverything(Program& program) {
  Builder b(program.block());
  b.Create("builtin.parameter", {}, {T({8, 2})},
           {{"parameter_name", Attribute::String("w")},
            {"is_distributed", Flags(false)},
            {"is_parameter", Flags(true)},
            {"need_clip", Flags(false)},
            {"persistable", Flags(true)},
            {"stop_gradient", Flags(false)},
            {"trainable", Flags(true)}});
  // Missing flags: written generically, not as `p` (which would add the defaults).
  b.Create("builtin.parameter", {}, {T({3})}, {{"parameter_name", Attribute::String("v")}});
  std::vector<Type> scalars = {Type::BF16(), Type::F16(),      Type::F32(),    Type::F64(),
                               Type::Bool(), Type::I8(),       Type::U8(),     Type::I16(),
                               Type::I32(),  Type::I64(),      Type::Index(),  Type::C64(),
                               Type::C128(), Type::F8E4M3FN(), Type::F8E5M2(), Type::Undefined()};
  std::vector<Type> composite = {
      Type::DenseTensor(Type::F16(), {-1, 3}, DataLayout::kNHWC, {{0, 2, 5}, {0, 1}}, 7),
      Type::DenseTensor(Type::I64(), {}),
      Type::Vector({T({2}), Type::I32()}),
      Type::Vector({}),
      Type::DenseTensorArray(Type::F32(), {-1, 4}, DataLayout::kUndefined),
      Type::SelectedRows(Type::F64(), {10, 20}, DataLayout::kNCHW, {{0, 10}}, 1),
      Type()};
  scalars.insert(scalars.end(), composite.begin(), composite.end());
  const TensorDistAttr dist{Mesh2x2(), {0, -1}, {{1, ReduceType::kAvg}}, std::nullopt};
  TensorDistAttr placed{ProcessMesh{{2}, {4, 5}, {}}, {-1}, {}, std::vector<Placement>{}};
  placed.placements = {Placement::Shard(0), Placement::Replicate(),
                       Placement::Partial(ReduceType::kMax)};
  StatusOr<Type> dist_type = Type::DistDenseTensor(T({8, 6}), dist);
  ASSERT_TRUE(dist_type.ok()) << dist_type.status().ToString();
  StatusOr<Type> uneven = Type::DistDenseTensor(T({7}), placed, std::vector<int64_t>{7});
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  scalars.push_back(*dist_type);
  scalars.push_back(*uneven);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  AttributeMap attrs = {
      {"a_bool", Attribute::Bool(true)},
      {"a_i32", Attribute::Int32(-2147483647 - 1)},
      {"a_i64", Attribute::Int64(9007199254740993)},
      {"a_f32", Attribute::Float(0.1f)},
      {"a_f32_nan", Attribute::Float(std::numeric_limits<float>::quiet_NaN())},
      {"a_f32_neg_zero", Attribute::Float(-0.0f)},
      {"a_f64", Attribute::Double(1e-300)},
      {"a_f64_inf", Attribute::Double(inf)},
      {"a_f64_ninf", Attribute::Double(-inf)},
      {"a_f64_nan", Attribute::Double(nan)},
      {"a_str", Attribute::String("q\"uo/te\\\n\u00e9")},
      {"a_array", Attribute::Array({Attribute::Int32(1), Attribute::Array({}), Attribute()})},
      {"a_type", Attribute::TypeAttr(Type::Vector({T({1, 2}), Type::Bool()}))},
      {"intarray", Attribute::IntArrayAttr({-1, 30})},
      {"dtype", Attribute::DataTypeAttr(DataType::kBFloat16)},
      {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 3))},
      {"place_custom", Attribute::PlaceAttr(Place{AllocationType::kCustom, 1, "npu"})},
      {"layout", Attribute::DataLayoutAttr(DataLayout::kNHWC)},
      {"scalar_f", Attribute::Scalar({DataType::kFloat64, 2.5})},
      {"scalar_nan", Attribute::Scalar({DataType::kFloat32, nan})},
      {"scalar_i", Attribute::Scalar({DataType::kInt64, int64_t{-7}})},
      {"scalar_b", Attribute::Scalar({DataType::kBool, true})},
      {"scalar_whole", Attribute::Scalar({DataType::kFloat32, 3.0})},
      {"mesh", Attribute::ProcessMeshAttr(Mesh2x2())},
      {"tdist", Attribute::TensorDist(placed)},
      {"stop_gradient",
       Attribute::Array(std::vector<Attribute>(scalars.size(), Attribute::Bool(true)))},
  };
  Operation* all = b.Create("pd_op.everything", {}, scalars, attrs);
  b.Create("pd_op.use", {all->result(2), nullptr, all->result(0)}, {},
           {{"op_dist_attr",
             Attribute::OperationDist({Mesh2x2(),
                                       {Attribute::TensorDist(dist), Attribute(),
                                        Attribute::Array({Attribute::TensorDist(placed)})},
                                       {},
                                       3})},
            {"op_role", Attribute::Int32(1)},
            {"persistable", Flags(false)}});
  // pd_op.if with two branches, each yielding; the then branch reads an outer value.
  Operation* cond = b.Create("pd_op.full", {}, {T({1}, Type::Bool())}, {});
  Operation* if_op = b.Create("pd_op.if", {cond->result(0)}, {T({2})}, {}, 2);
  {
    Builder then_b(if_op->region(0).AddBlock());
    Operation* r = then_b.Create("pd_op.relu", {all->result(2)}, {T({2})}, {});
    then_b.Create("cf.yield", {r->result(0)}, {}, {});
    Builder else_b(if_op->region(1).AddBlock());
    else_b.Create("cf.yield", {all->result(2)}, {}, {});
  }
  // pd_op.while with body arguments (one with attributes) and a keyword argument, nested if.
  Operation* wh = b.Create("pd_op.while", {cond->result(0), if_op->result(0)}, {T({2})}, {}, 1);
  {
    Block& body = wh->region(0).AddBlock();
    Value* a0 = body.AddArgument(T({1}, Type::Bool()));
    Value* a1 = body.AddArgument(T({2}));
    a1->SetAttribute("stop_gradient", Flags(true));
    StatusOr<Value*> kw = body.AddKwarg("lr", Type::F32());
    ASSERT_TRUE(kw.ok());
    Builder bb(body);
    Operation* inner = bb.Create("pd_op.if", {a0}, {T({2})}, {}, 1);
    Block& ib = inner->region(0).AddBlock();
    ib.AddArgument(Type::I32());
    Builder(ib).Create("cf.yield", {a1}, {}, {});
    Operation* add = bb.Create("pd_op.scale", {inner->result(0), *kw}, {T({2})}, {});
    bb.Create("cf.yield", {a0, add->result(0)}, {}, {});
  }
  b.Create("mydialect.opaque_op", {wh->result(0)}, {}, {{"x", Attribute::Int64(1)}});
  b.Create("dist_op.reshard", {all->result(scalars.size() - 2)}, {*dist_type}, {});
}

void ExpectRoundTrip(const Program& program, int indent) {
  const std::string json = WritePirJson(program, {.trainable = true, .indent = indent});
  StatusOr<Program> back = ReadPirJson(json, "rt.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << json;
  EXPECT_EQ(PrintProgram(*back), PrintProgram(program));
  EXPECT_EQ(WritePirJson(*back, {.trainable = true, .indent = indent}), json);
}

TEST(PirJsonTest, RoundTripEverything) {
  Program program;
  BuildEverything(program);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  ExpectRoundTrip(program, -1);
  ExpectRoundTrip(program, 4);
}

// The writer prints text itself (no nlohmann tree): it must be exactly what nlohmann's dump of the
// same document prints, for every indent — keys sorted, separators, escapes, numbers.
TEST(PirJsonTest, WritesWhatNlohmannWouldDump) {
  Program program;
  BuildEverything(program);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  Builder(program.block())
      .Create("pd_op.strings", {}, {},
              {{"control", Attribute::String(std::string("\x01\x1f\x7f\t\b\f\r", 7))},
               {"utf8", Attribute::String("\u00e9\u4e2d\U0001F600")},
               {"invalid", Attribute::String("a\xc3(\xff")},
               {"floats",
                Attribute::Array({Attribute::Double(1e15), Attribute::Double(1e16),
                                  Attribute::Double(-1e-5), Attribute::Double(123.0),
                                  Attribute::Float(3.4028235e38f), Attribute::Double(5e-324)})}});
  for (int indent : {-1, 0, 2, 4}) {
    const std::string written = WritePirJson(program, {.trainable = true, .indent = indent});
    EXPECT_EQ(nlohmann::json::parse(written).dump(indent), written) << "indent " << indent;
  }
  EXPECT_EQ(nlohmann::json::parse(WritePirJson(Program())).dump(), WritePirJson(Program()));
}

TEST(PirJsonTest, RoundTripEmptyProgram) {
  Program program;
  ExpectRoundTrip(program, -1);
}

TEST(PirJsonTest, SpecialFloatsKeepTheirValues) {
  Program program;
  Builder(program.block())
      .Create("pd_op.x", {}, {},
              {{"n", Attribute::Float(std::numeric_limits<float>::quiet_NaN())},
               {"p", Attribute::Double(std::numeric_limits<double>::infinity())},
               {"z", Attribute::Double(-0.0)}});
  const std::string json = WritePirJson(program);
  EXPECT_NE(json.find(R"({"#":"0.a_f32","VD":"NaN"})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"#":"0.a_f64","VD":"INF"})"), std::string::npos) << json;
  StatusOr<Program> back = ReadPirJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const Operation& op = *back->block().front();
  EXPECT_TRUE(std::isnan(*op.attribute("n").AsFloat()));
  EXPECT_EQ(*op.attribute("p").AsDouble(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(*op.attribute("z").AsDouble()));
}

// JSON strings are Unicode; the writer must not fail (nlohmann would throw) on other bytes.
TEST(PirJsonTest, WritesInvalidUtf8WithReplacementCharacters) {
  Program program;
  Builder(program.block()).Create("pd_op.x", {}, {}, {{"s", Attribute::String("a\xff")}});
  const std::string json = WritePirJson(program);
  EXPECT_NE(json.find("{\"AT\":{\"#\":\"0.a_str\",\"D\":\"a\xEF\xBF\xBD\"},\"N\":\"s\"}"),
            std::string::npos)
      << json;
}

// The whole document of a small program, written by hand from Paddle's
// paddle/fluid/pir/serialize_deserialize/.
TEST(PirJsonTest, WritesPaddleLayout) {
  Program program;
  Builder b(program.block());
  Operation* w = b.Create("builtin.parameter", {}, {T({2})},
                          {{"parameter_name", Attribute::String("w")},
                           {"is_distributed", Flags(false)},
                           {"is_parameter", Flags(true)},
                           {"need_clip", Flags(true)},
                           {"persistable", Flags(true)},
                           {"stop_gradient", Flags(false)},
                           {"trainable", Flags(true)}});
  b.Create("pd_op.relu", {w->result(0)}, {T({2})}, {{"stop_gradient", Flags(false)}});
  const std::string tensor = R"({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]})";
  EXPECT_EQ(WritePirJson(program),
            R"({"base_code":{"magic":"pir","trainable":true,"version":1},)"
            R"("program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[)"
            R"({"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":1,"TT":)" +
                tensor +
                R"(},"OA":[1,0,1],"QA":[]},)"
                R"({"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":)" +
                tensor +
                R"(}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":false}]},)"
                R"("N":"stop_gradient"}]}]}]}]}})");
  // Not trainable: no OA on ordinary ops, stop_gradient dropped.
  const std::string inference = WritePirJson(program, {.trainable = false});
  EXPECT_NE(
      inference.find(R"({"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":)" + tensor + "}]}"),
      std::string::npos)
      << inference;
}

// A parameter's dist and quant attributes go to its DA and QA lists as named attributes, in
// Paddle's order (op_dist_attr, op_role; struct_name), and read back into the same op.
TEST(PirJsonTest, WritesParameterDistAttrsAsNamedLists) {
  Program program;
  const ProcessMesh mesh{{2}, {0, 1}, {"x"}};
  const TensorDistAttr replicated{mesh, {-1}, {}, std::nullopt};
  Builder(program.block())
      .Create("builtin.parameter", {}, {T({2})},
              {{"parameter_name", Attribute::String("w")},
               {"is_distributed", Flags(false)},
               {"is_parameter", Flags(true)},
               {"need_clip", Flags(true)},
               {"persistable", Flags(true)},
               {"stop_gradient", Flags(false)},
               {"trainable", Flags(true)},
               {"struct_name", Attribute::String("/Linear/")},
               {"op_role", Attribute::Int32(0)},
               {"op_dist_attr",
                Attribute::OperationDist({mesh, {}, {Attribute::TensorDist(replicated)}, -1})}});
  const std::string mesh_json = R"({"#":"4.a_process_mesh","D":[[2],[0,1],["x"]]})";
  const std::string json = WritePirJson(program);
  EXPECT_NE(json.find(R"({"#":"p","A":[0,1,1,"w"],"DA":[{"AT":{"#":"4.a_op_dist","D":[)" +
                      mesh_json + R"(,[],[{"#":"4.a_tensor_dist","D":[)" + mesh_json +
                      R"(,[-1],[]]}],-1]},"N":"op_dist_attr"},)"
                      R"({"AT":{"#":"0.a_i32","D":0},"N":"op_role"}],"O":)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("OA":[1,0,1],"QA":[{"AT":{"#":"0.a_str","D":"/Linear/"},)"
                      R"("N":"struct_name"}]})"),
            std::string::npos)
      << json;
  ExpectRoundTrip(program, -1);
}

// Paddle's writer compresses dialect names only: dist ops keep their "dist_op." prefix, and
// "pd_dist.x" (which is not the dist op "dist_op.x") must not be written as "4.x".
TEST(PirJsonTest, KeepsOpNamesThatOnlyLookLikeADialect) {
  Program program;
  Builder b(program.block());
  b.Create("pd_dist.x", {}, {}, {});
  b.Create("dist_op.reshard", {}, {}, {});
  const std::string json = WritePirJson(program);
  EXPECT_NE(json.find(R"({"#":"pd_dist.x",)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"#":"dist_op.reshard",)"), std::string::npos) << json;
  ExpectRoundTrip(program, -1);
}

constexpr char kParamFixture[] = R"({
  "base_code": {"magic": "pir", "version": 2, "trainable": true},
  "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "kwargs": [],
    "ops": [
      {"#": "p", "A": [0, 1, 1, "linear_0.w_0"],
       "O": {"%": 1, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 8], "NCHW", [], 0]}},
       "OA": [1, 0, 1], "QA": []},
      {"#": "p", "A": [1, 0, 0, "b"],
       "O": {"%": 2, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [8], "NCHW", [], 0]}}},
      {"#": "1.data", "I": [],
       "O": [{"%": 3, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-1, 4], "NCHW", [], 0]}}],
       "A": [{"N": "dtype", "AT": {"#": "1.a_dtype", "D": "float32"}},
             {"N": "name", "AT": {"#": "0.a_str", "D": "x"}},
             {"N": "place", "AT": {"#": "1.a_place", "D": [1, 0, ""]}},
             {"N": "shape", "AT": {"#": "1.a_intarray", "D": [-1, 4]}}],
       "OA": [{"N": "stop_gradient", "AT": {"#": "0.a_array", "D": [{"#": "0.a_bool", "D": true}]}}]},
      {"#": "1.matmul", "I": [{"%": 3}, {"%": 1}],
       "O": [{"%": 4, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-1, 8], "NCHW", [], 0]}}],
       "A": [{"N": "transpose_x", "AT": {"#": "0.a_bool", "D": false}},
             {"N": "transpose_y", "AT": {"#": "0.a_bool", "D": false}}]},
      {"#": "0.shadow_output", "I": [{"%": 4}], "O": [],
       "A": [{"N": "output_name", "AT": {"#": "0.a_str", "D": "out"}}]}
    ]}]}]}
})";

TEST(PirJsonTest, ReadsCompressedParameterFixture) {
  StatusOr<Program> program = ReadPirJson(kParamFixture, "fixture.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(PrintProgram(*program),
            "{\n"
            "    (%0) = \"builtin.parameter\" () {is_distributed:[false],is_parameter:[true],"
            "need_clip:[true],parameter_name:\"linear_0.w_0\",persistable:[true],"
            "stop_gradient:[false],trainable:[true]} : () -> builtin.tensor<4x8xf32>\n"
            "    (%1) = \"builtin.parameter\" () {is_distributed:[true],is_parameter:[false],"
            "need_clip:[false],parameter_name:\"b\",persistable:[true],stop_gradient:[true],"
            "trainable:[true]} : () -> builtin.tensor<8xf32>\n"
            "    (%2) = \"pd_op.data\" () {dtype:(pd_op.DataType)float32,name:\"x\","
            "place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[-1,4],stop_gradient:[true]} : "
            "() -> builtin.tensor<-1x4xf32>\n"
            "    (%3) = \"pd_op.matmul\" (%2, %0) {transpose_x:false,transpose_y:false} : "
            "(builtin.tensor<-1x4xf32>, builtin.tensor<4x8xf32>) -> builtin.tensor<-1x8xf32>\n"
            "    () = \"builtin.shadow_output\" (%3) {output_name:\"out\"} : "
            "(builtin.tensor<-1x8xf32>) -> \n"
            "}\n");
  EXPECT_NE(program->block().front()->info(), nullptr);
}

// Dist attributes and types in Paddle's layout, and Paddle's writer quirk of repeating the block
// arguments under "kwargs" (without a "key"), which the reader skips.
constexpr char kDistFixture[] = R"({
  "base_code": {"magic": "pir", "version": 1, "trainable": false},
  "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0",
    "args": [{"%": -1, "TT": {"#": "0.t_f32"}}],
    "kwargs": [{"%": -1, "TT": {"#": "0.t_f32"}}],
    "ops": [
      {"#": "4.shard_tensor", "I": [{"%": -1}],
       "O": [{"%": 1, "TT": {"#": "4.t_dist_dtensor", "D": [
         {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [8, 8], "NCHW", [], 0]},
         {"#": "4.a_tensor_dist", "D": [{"#": "4.a_process_mesh", "D": [[2], [0, 1], ["x"]]},
                                        [0, -1], []]},
         [4, 8]]}}],
       "A": [{"N": "op_dist_attr", "AT": {"#": "4.a_op_dist", "D": [
         {"#": "4.a_process_mesh", "D": [[2], [0, 1], ["x"]]},
         [{"#": "NULL"}],
         [{"#": "4.a_tensor_dist", "D": [{"#": "4.a_process_mesh", "D": [[2], [0, 1], ["x"]]},
                                         [-1, -1], [[0, 4]]]}],
         -1]}}]}
    ]}]}]}
})";

TEST(PirJsonTest, ReadsDistFixture) {
  StatusOr<Program> program = ReadPirJson(kDistFixture, "dist.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->block().num_arguments(), 1u);
  EXPECT_EQ(program->block().num_kwargs(), 0u);
  const Operation& op = *program->block().front();
  EXPECT_EQ(op.name(), "dist_op.shard_tensor");
  EXPECT_EQ(op.result(0)->type().local_dims(), (std::vector<int64_t>{4, 8}));
  const TensorDistAttr* dist = op.result(0)->type().dist_attr();
  ASSERT_NE(dist, nullptr);
  EXPECT_EQ(dist->mesh, (ProcessMesh{{2}, {0, 1}, {"x"}}));
  EXPECT_EQ(dist->dims_mapping, (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(dist->partial_status.size(), 0u);
  const OperationDistAttr* od = op.attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(od, nullptr);
  EXPECT_EQ(od->chunk_id, -1);
  ASSERT_EQ(od->operands.size(), 1u);
  EXPECT_TRUE(od->operands[0].IsNull());
  ASSERT_EQ(od->results.size(), 1u);
  const TensorDistAttr* result = od->results[0].AsTensorDist();
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->dims_mapping, (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(result->partial_status, (std::map<int64_t, ReduceType>{{0, ReduceType::kAvg}}));
  EXPECT_FALSE(result->placements.has_value());
}

}  // namespace
}  // namespace irm::newir
