// Compatibility of the JSON reader with documents in Paddle's own layout: the hand-written
// fixtures in newir/testdata/json/ (see its README) read, their facts checked against values
// written by hand here, and each program survives a write and a second read unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "newir/pir_json.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

std::string FixturePath(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  return root + "/newir/testdata/json/" + name;
}

// Reads the fixture, failing the test (with the reader's diagnostic) when it does not read.
StatusOr<Program> ReadFixture(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
  if (!in) {
    return Status(StatusCode::kNotFound, Location::File(FixturePath(name)),
                  "fixture not found: run from the repository root or set IRM_SOURCE_DIR");
  }
  std::stringstream text;
  text << in.rdbuf();
  return ReadPirJson(text.str(), name);
}

// Writing the program and reading it again gives the same program: the same printed text, and
// the same bytes when written once more.
void ExpectRoundTrip(const Program& program) {
  for (int indent : {-1, 4}) {
    const std::string written = WritePirJson(program, {.trainable = true, .indent = indent});
    StatusOr<Program> back = ReadPirJson(written, "written.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(PrintProgram(*back), PrintProgram(program));
    EXPECT_EQ(WritePirJson(*back, {.trainable = true, .indent = indent}), written);
  }
}

Attribute Flags(bool v) { return Attribute::Array({Attribute::Bool(v)}); }

std::vector<const Operation*> Ops(const Block& block) {
  std::vector<const Operation*> ops;
  for (const Operation& op : block) ops.push_back(&op);
  return ops;
}

TEST(PirJsonCompatTest, MlpTrainingProgram) {
  StatusOr<Program> program = ReadFixture("mlp_train.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->CountOps(), 27u);
  const std::vector<const Operation*> ops = Ops(program->block());
  ASSERT_EQ(ops.size(), 27u);
  for (const Operation* op : ops) EXPECT_NE(op->info(), nullptr) << op->name();

  // The first parameter, from {"#":"p","A":[0,1,1,"fc_0.w_0"],...,"OA":[1,0,1]}.
  const Operation& w = *ops[0];
  EXPECT_EQ(w.name(), "builtin.parameter");
  EXPECT_EQ(w.attribute("parameter_name"), Attribute::String("fc_0.w_0"));
  EXPECT_EQ(w.attribute("is_distributed"), Flags(false));
  EXPECT_EQ(w.attribute("is_parameter"), Flags(true));
  EXPECT_EQ(w.attribute("need_clip"), Flags(true));
  EXPECT_EQ(w.attribute("persistable"), Flags(true));
  EXPECT_EQ(w.attribute("stop_gradient"), Flags(false));
  EXPECT_EQ(w.attribute("trainable"), Flags(true));
  EXPECT_EQ(w.attributes().size(), 7u);
  EXPECT_EQ(w.result(0)->type(), Type::DenseTensor(Type::F32(), {4, 8}));
  // The learning rate: A [0,0,0,...], OA [1,1,0], a 0-D tensor.
  const Operation& lr = *ops[4];
  EXPECT_EQ(lr.attribute("parameter_name"), Attribute::String("learning_rate_0"));
  EXPECT_EQ(lr.attribute("is_parameter"), Flags(false));
  EXPECT_EQ(lr.attribute("need_clip"), Flags(false));
  EXPECT_EQ(lr.attribute("stop_gradient"), Flags(true));
  EXPECT_EQ(lr.attribute("trainable"), Flags(false));
  EXPECT_EQ(lr.result(0)->type().dims(), std::vector<int64_t>{});

  // pd_op.data: yaml-ordered A, OA flags, IntArray / DataType / Place.
  const Operation& x = *ops[5];
  EXPECT_EQ(x.name(), "pd_op.data");
  EXPECT_EQ(x.attribute("name"), Attribute::String("x"));
  EXPECT_EQ(x.attribute("shape"), Attribute::IntArrayAttr({-1, 4}));
  EXPECT_EQ(x.attribute("dtype"), Attribute::DataTypeAttr(DataType::kFloat32));
  EXPECT_EQ(x.attribute("place"), Attribute::PlaceAttr(Place{}));
  EXPECT_EQ(x.attribute("persistable"), Flags(false));
  EXPECT_EQ(x.attribute("stop_gradient"), Flags(true));
  EXPECT_EQ(x.result(0)->type(), Type::DenseTensor(Type::F32(), {-1, 4}));
  EXPECT_EQ(ops[6]->result(0)->type(), Type::DenseTensor(Type::I64(), {-1, 1}));

  // The first matmul reads x and fc_0.w_0.
  const Operation& matmul = *ops[7];
  EXPECT_EQ(matmul.name(), "pd_op.matmul");
  EXPECT_EQ(matmul.operand(0), x.result(0));
  EXPECT_EQ(matmul.operand(1), w.result(0));
  EXPECT_EQ(matmul.attribute("transpose_y"), Attribute::Bool(false));
  const Operation& loss = *ops[12];
  EXPECT_EQ(loss.name(), "pd_op.cross_entropy_with_softmax");
  EXPECT_EQ(loss.num_results(), 2u);
  EXPECT_EQ(loss.attribute("ignore_index"), Attribute::Int32(-100));
  const Operation& full = *ops[14];
  EXPECT_EQ(full.name(), "pd_op.full");
  EXPECT_EQ(full.attribute("value"), Attribute::Float(1.0f));
  EXPECT_EQ(full.attribute("place"), Attribute::PlaceAttr(Place::Of(AllocationType::kCpu)));

  // sgd_ of fc_0.w_0: no master weight (empty slot), and a result with no type.
  const Operation& sgd = *ops[22];
  EXPECT_EQ(sgd.name(), "pd_op.sgd_");
  ASSERT_EQ(sgd.num_operands(), 4u);
  EXPECT_EQ(sgd.operand(0), w.result(0));
  EXPECT_EQ(sgd.operand(1), lr.result(0));
  EXPECT_EQ(sgd.operand(2), ops[21]->result(1));  // matmul_grad's y_grad
  EXPECT_EQ(sgd.operand(3), nullptr);
  EXPECT_TRUE(sgd.result(1)->type().IsNull());
  EXPECT_EQ(sgd.attribute("persistable"),
            Attribute::Array({Attribute::Bool(true), Attribute::Bool(false)}));

  const Operation& fetch = *ops[26];
  EXPECT_EQ(fetch.name(), "builtin.shadow_output");
  EXPECT_EQ(fetch.operand(0), ops[13]->result(0));  // the mean
  EXPECT_EQ(fetch.attribute("output_name"), Attribute::String("mean_0.tmp_0"));

  ExpectRoundTrip(*program);
}

TEST(PirJsonCompatTest, DistributedProgram) {
  StatusOr<Program> program = ReadFixture("dist_mlp.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<const Operation*> ops = Ops(program->block());
  ASSERT_EQ(ops.size(), 11u);
  for (const Operation* op : ops) EXPECT_NE(op->info(), nullptr) << op->name();
  const ProcessMesh mesh{{2, 2}, {0, 1, 2, 3}, {"dp", "mp"}};

  // A parameter with its DA list: op_dist_attr and op_role.
  const Operation& w0 = *ops[0];
  EXPECT_EQ(w0.name(), "builtin.parameter");
  EXPECT_EQ(w0.attribute("is_distributed"), Flags(true));
  EXPECT_EQ(w0.attribute("op_role"), Attribute::Int32(0));
  const OperationDistAttr* w0_dist = w0.attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(w0_dist, nullptr);
  EXPECT_EQ(w0_dist->mesh, mesh);
  EXPECT_TRUE(w0_dist->operands.empty());
  ASSERT_EQ(w0_dist->results.size(), 1u);
  ASSERT_NE(w0_dist->results[0].AsTensorDist(), nullptr);
  EXPECT_EQ(w0_dist->results[0].AsTensorDist()->dims_mapping, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(w0_dist->chunk_id, -1);
  const Type& w0_type = w0.result(0)->type();
  EXPECT_EQ(w0_type.kind(), TypeKind::kDistDenseTensor);
  EXPECT_EQ(w0_type.dims(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(w0_type.local_dims(), (std::vector<int64_t>{8, 4}));
  ASSERT_NE(w0_type.dist_attr(), nullptr);
  EXPECT_EQ(w0_type.dist_attr()->mesh, mesh);

  // The row-parallel matmul leaves a pending SUM over mesh dim 1.
  const Operation& matmul = *ops[5];
  EXPECT_EQ(matmul.name(), "pd_op.matmul");
  const Type& partial = matmul.result(0)->type();
  ASSERT_NE(partial.dist_attr(), nullptr);
  EXPECT_EQ(partial.dist_attr()->dims_mapping, (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(partial.dist_attr()->partial_status,
            (std::map<int64_t, ReduceType>{{1, ReduceType::kSum}}));
  EXPECT_EQ(partial.local_dims(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(matmul.attribute("op_role"), Attribute::Int32(0));
  const OperationDistAttr* matmul_dist = matmul.attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(matmul_dist, nullptr);
  ASSERT_EQ(matmul_dist->operands.size(), 2u);
  EXPECT_EQ(matmul_dist->operands[1].AsTensorDist()->dims_mapping, (std::vector<int64_t>{1, -1}));

  const Operation& reshard = *ops[6];
  EXPECT_EQ(reshard.name(), "dist_op.reshard");
  EXPECT_EQ(reshard.operand(0), matmul.result(0));
  EXPECT_TRUE(reshard.result(0)->type().dist_attr()->partial_status.empty());

  // combine: a vector of dist tensors; its result's dist entry is an array.
  const Operation& combine = *ops[7];
  EXPECT_EQ(combine.name(), "builtin.combine");
  EXPECT_EQ(combine.result(0)->type().elements().size(), 2u);
  const AttributeSpan* vec =
      combine.attribute("op_dist_attr").AsOperationDist()->results[0].AsArray();
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(vec->size(), 2u);

  // dropout without a seed tensor: an empty slot, a NULL entry in its op dist attribute.
  const Operation& dropout = *ops[9];
  EXPECT_EQ(dropout.operand(1), nullptr);
  EXPECT_TRUE(dropout.attribute("op_dist_attr").AsOperationDist()->operands[1].IsNull());
  EXPECT_EQ(dropout.result(1)->type().dtype(), Type::U8());

  ExpectRoundTrip(*program);
}

TEST(PirJsonCompatTest, IfAndWhile) {
  StatusOr<Program> program = ReadFixture("control_flow.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(program->CountOps(), 20u);
  const std::vector<const Operation*> ops = Ops(program->block());
  ASSERT_EQ(ops.size(), 9u);
  const Operation& data = *ops[0];

  const Operation& if_op = *ops[2];
  EXPECT_EQ(if_op.name(), "pd_op.if");
  EXPECT_NE(if_op.info(), nullptr);
  EXPECT_EQ(if_op.operand(0), ops[1]->result(0));
  ASSERT_EQ(if_op.num_regions(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(if_op.region(r).num_blocks(), 1u);
    const std::vector<const Operation*> branch = Ops(if_op.region(r).front());
    ASSERT_EQ(branch.size(), 2u);
    EXPECT_EQ(branch[0]->name(), r == 0 ? "pd_op.relu" : "pd_op.tanh");
    EXPECT_EQ(branch[0]->operand(0), data.result(0));
    EXPECT_EQ(branch[1]->name(), "cf.yield");
    EXPECT_EQ(branch[1]->operand(0), branch[0]->result(0));
  }

  // The first loop: body arguments -1 and -2; the kwargs list repeating them is not read as
  // keyword arguments.
  const Operation& loop = *ops[6];
  EXPECT_EQ(loop.name(), "pd_op.while");
  ASSERT_EQ(loop.num_operands(), 3u);
  EXPECT_EQ(loop.operand(0), ops[5]->result(0));
  EXPECT_EQ(loop.operand(2), if_op.result(0));
  ASSERT_EQ(loop.num_regions(), 1u);
  const Block& body = loop.region(0).front();
  ASSERT_EQ(body.num_arguments(), 2u);
  EXPECT_EQ(body.num_kwargs(), 0u);
  EXPECT_EQ(body.argument(0)->type(), Type::DenseTensor(Type::I64(), {1}));
  EXPECT_EQ(body.argument(1)->type(), Type::DenseTensor(Type::F32(), {4}));
  const std::vector<const Operation*> body_ops = Ops(body);
  ASSERT_EQ(body_ops.size(), 5u);
  EXPECT_EQ(body_ops[1]->operand(0), body.argument(0));
  EXPECT_EQ(body_ops[2]->operand(0), body.argument(1));
  EXPECT_EQ(body_ops[3]->operand(1), ops[4]->result(0));  // the bound, defined outside
  const Operation& yield = *body_ops[4];
  ASSERT_EQ(yield.num_operands(), 3u);
  EXPECT_EQ(yield.operand(0), body_ops[3]->result(0));
  EXPECT_EQ(yield.operand(1), body_ops[1]->result(0));
  EXPECT_EQ(yield.operand(2), body_ops[2]->result(0));
  EXPECT_EQ(loop.result(1)->type(), Type::DenseTensor(Type::F32(), {4}));

  // The second loop's body argument is -4.
  const Operation& second = *ops[7];
  const Block& second_body = second.region(0).front();
  ASSERT_EQ(second_body.num_arguments(), 1u);
  EXPECT_EQ(second_body.back()->operand(1), second_body.argument(0));
  EXPECT_EQ(second.operand(1), loop.result(1));
  EXPECT_EQ(ops[8]->operand(0), second.result(0));

  ExpectRoundTrip(*program);
}

TEST(PirJsonCompatTest, SpecialFloats) {
  StatusOr<Program> program = ReadFixture("special_floats.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<const Operation*> ops = Ops(program->block());
  ASSERT_EQ(ops.size(), 7u);
  const double inf = std::numeric_limits<double>::infinity();
  const float* nan = ops[0]->attribute("value").AsFloat();
  ASSERT_NE(nan, nullptr);
  EXPECT_TRUE(std::isnan(*nan));
  EXPECT_EQ(ops[1]->attribute("value"), Attribute::Double(inf));
  EXPECT_EQ(ops[2]->attribute("value"), Attribute::Float(-std::numeric_limits<float>::infinity()));
  const float* neg_zero = ops[3]->attribute("value").AsFloat();
  ASSERT_NE(neg_zero, nullptr);
  EXPECT_EQ(*neg_zero, 0.0f);
  EXPECT_TRUE(std::signbit(*neg_zero));
  EXPECT_EQ(ops[4]->attribute("value"),
            Attribute::Double(std::numeric_limits<double>::denorm_min()));
  const AttributeSpan* values = ops[5]->attribute("values").AsArray();
  ASSERT_NE(values, nullptr);
  ASSERT_EQ(values->size(), 4u);
  EXPECT_EQ((*values)[0], Attribute::Double(-inf));
  EXPECT_EQ((*values)[1], Attribute::Double(1.5));
  ASSERT_NE((*values)[2].AsDouble(), nullptr);
  EXPECT_TRUE(std::isnan(*(*values)[2].AsDouble()));
  EXPECT_EQ((*values)[3], Attribute::Double(inf));
  EXPECT_EQ(ops[6]->attribute("bias"), Attribute::Float(std::numeric_limits<float>::infinity()));

  ExpectRoundTrip(*program);
  // Written back, the special values are VD again, never a JSON number or null.
  const std::string written = WritePirJson(*program);
  EXPECT_NE(written.find(R"({"#":"0.a_f32","VD":"NaN"})"), std::string::npos);
  EXPECT_NE(written.find(R"({"#":"0.a_f64","VD":"-INF"})"), std::string::npos);
  EXPECT_EQ(written.find("null"), std::string::npos);
}

// `0.get_parameter`, the op's name before PR #59239, reads as builtin.parameter, as the text
// parser reads `builtin.get_parameter`; it is written back under its current name.
TEST(PirJsonCompatTest, GetParameterReadsAsParameter) {
  const std::string doc =
      R"({"base_code":{"magic":"pir","trainable":true,"version":1},"program":{"regions":[)"
      R"({"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[)"
      R"({"#":"0.get_parameter","A":[{"AT":{"#":"0.a_str","D":"fc_0.w_0"},"N":"parameter_name"}],)"
      R"("I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4,4],"NCHW",[],0]}}]}]}]}]}})";
  StatusOr<Program> program = ReadPirJson(doc, "get_parameter.json");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const std::vector<const Operation*> ops = Ops(program->block());
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]->name(), "builtin.parameter");
  EXPECT_NE(ops[0]->info(), nullptr);
  EXPECT_EQ(ops[0]->attribute("parameter_name"), Attribute::String("fc_0.w_0"));
  EXPECT_EQ(WritePirJson(*program).find("get_parameter"), std::string::npos);
  ExpectRoundTrip(*program);
}

}  // namespace
}  // namespace irm::newir
