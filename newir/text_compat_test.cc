// Compatibility of the text parser and printer with the forms Paddle prints: hand-written
// fixtures in newir/testdata/text/ (README.md there) are parsed, checked fact by fact, and
// re-printed against hand-written expectations — in their own style (which must give the fixture
// back) and in the canonical typed style (the `.expected` files).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"
#include "newir/block.h"
#include "newir/parser.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"

namespace irm::newir {
namespace {

std::string Fixture(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/newir/testdata/text/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

Program MustParse(const std::string& name) {
  StatusOr<Program> program = ParseProgram(Fixture(name), name);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : Program();
}

Type T(std::vector<int64_t> dims, Type dtype = Type::F32()) {
  return Type::DenseTensor(std::move(dtype), std::move(dims));
}

// The canonical text parses back to the same program.
void ExpectCanonicalRoundTrip(const Program& program) {
  const std::string text = PrintProgram(program);
  StatusOr<Program> again = ParseProgram(text, "again.pir");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(
      FindStructuralDifference(program, *again, {.ignore_hidden_attributes = true}).value_or(""),
      "");
  EXPECT_EQ(PrintProgram(*again), text);
}

TEST(TextCompatTest, UntypedMlp) {
  Program program = MustParse("untyped_mlp.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 26u);
  EXPECT_EQ(ops[3]->attribute("parameter_name"), Attribute::String("linear_0.w_0"));
  EXPECT_EQ(ops[3]->result(0)->type(), T({4, 8}));
  EXPECT_EQ(ops[4]->attribute("shape"), Attribute::IntArrayAttr({-1, 4}));
  EXPECT_EQ(ops[4]->attribute("place"), Attribute::PlaceAttr(Place{}));
  EXPECT_EQ(ops[5]->operand(0), ops[4]->result(0));
  EXPECT_EQ(ops[10]->name(), "pd_op.mean");
  EXPECT_EQ(ops[10]->attribute("axis"), Attribute::IntArrayAttr({}));
  EXPECT_EQ(ops[10]->result(0)->type(), T({}));
  EXPECT_EQ(ops[13]->attribute("axis"), Attribute::Int32(-1));
  EXPECT_EQ(ops[18]->attribute("value"), Attribute::Double(0.01));  // full: the table says Double
  EXPECT_EQ(ops[19]->result(0)->type(), Type::Vector({T({4, 8}), T({8, 2})}));
  EXPECT_EQ(ops[20]->attribute("index"), Attribute::Int32(1));
  // sgd_ reads the learning rate, the gradient from matmul_grad and no master param.
  EXPECT_EQ(ops[21]->operand(1), ops[18]->result(0));
  EXPECT_EQ(ops[21]->operand(2), ops[17]->result(1));
  EXPECT_EQ(ops[21]->operand(3), nullptr);
  EXPECT_TRUE(ops[21]->result(1)->type().IsNull());
  EXPECT_EQ(ops[22]->operand(0), ops[20]->result(0));
  EXPECT_EQ(PrintProgram(program, {.style = TypeStyle::kCurrent}), Fixture("untyped_mlp.pir"));
  EXPECT_EQ(PrintProgram(program), Fixture("untyped_mlp.expected"));
  ExpectCanonicalRoundTrip(program);
}

TEST(TextCompatTest, TypedBeta) {
  Program program = MustParse("typed_beta.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 11u);
  EXPECT_EQ(ops[1]->attribute("dtype"), Attribute::DataTypeAttr(DataType::kBFloat16));
  EXPECT_EQ(ops[1]->attribute("place"), Attribute::PlaceAttr(Place::Of(AllocationType::kGpu, 0)));
  EXPECT_EQ(ops[2]->attribute("transpose_y"), Attribute::Bool(true));
  EXPECT_EQ(ops[4]->attribute("p"), Attribute::Float(0.1f));
  EXPECT_EQ(ops[4]->attribute("mode"), Attribute::String("upscale_in_train"));
  EXPECT_EQ(ops[4]->result(1)->type(), T({16, 1, 32}, Type::U8()));
  EXPECT_EQ(ops[6]->attribute("perm"),
            Attribute::Array({Attribute::Int32(1), Attribute::Int32(0), Attribute::Int32(2)}));
  EXPECT_EQ(ops[7]->attribute("value"), Attribute::Array({Attribute::Int64(-1)}));
  EXPECT_EQ(ops[8]->attribute("value"), Attribute::Double(2.0));
  // Paddle's numbers (%2, %38, …) are names only: the re-print numbers values afresh.
  EXPECT_EQ(PrintProgram(program), Fixture("typed_beta.expected"));
  ExpectCanonicalRoundTrip(program);
}

TEST(TextCompatTest, Dist) {
  Program program = MustParse("dist.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 7u);
  const ProcessMesh mesh{{2, 2}, {0, 1, 2, 3}, {}};
  // The PR #69262 line.
  const Type& x = ops[0]->result(0)->type();
  ASSERT_EQ(x.kind(), TypeKind::kDistDenseTensor);
  EXPECT_EQ(x.dims(), (std::vector<int64_t>{2, 64, 32}));
  EXPECT_EQ(x.local_dims(), (std::vector<int64_t>{1, 32, 32}));
  EXPECT_EQ(
      *x.dist_attr(),
      (TensorDistAttr{
          mesh, {0, 1, -1}, {}, std::vector<Placement>{Placement::Shard(0), Placement::Shard(1)}}));
  const OperationDistAttr* od = ops[0]->attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(od, nullptr);
  EXPECT_EQ(od->mesh, mesh);
  EXPECT_TRUE(od->operands.empty());
  ASSERT_EQ(od->results.size(), 1u);
  EXPECT_EQ(od->results[0], Attribute::TensorDist(*x.dist_attr()));
  EXPECT_EQ(od->chunk_id, -1);
  // The partial matmul result.
  const TensorDistAttr* partial = ops[3]->result(0)->type().dist_attr();
  ASSERT_NE(partial, nullptr);
  EXPECT_EQ(partial->partial_status, (std::map<int64_t, ReduceType>{{1, ReduceType::kSum}}));
  EXPECT_EQ(partial->placements,
            (std::vector<Placement>{Placement::Shard(0), Placement::Partial(ReduceType::kSum)}));
  EXPECT_EQ(ops[5]->attribute("op_dist_attr").AsOperationDist()->chunk_id, 0);
  EXPECT_EQ(ops[1]->name(), "dist_op.reshard");
  ASSERT_NE(ops[1]->info(), nullptr);
  // Canonical already: it prints back as it is.
  EXPECT_EQ(PrintProgram(program), Fixture("dist.pir"));
  ExpectCanonicalRoundTrip(program);
}

TEST(TextCompatTest, DistEarly2024) {
  Program program = MustParse("dist_early2024.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 5u);
  const ProcessMesh mesh{{2}, {0, 1}, {}};
  // The brace-less form of March 2024.
  const OperationDistAttr* shard = ops[2]->attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->mesh, mesh);
  EXPECT_EQ(shard->results, std::vector<Attribute>{
                                Attribute::TensorDist(TensorDistAttr{mesh, {-1, -1, -1}, {}, {}})});
  // Mesh-less `dims_maping` entries are on the op's mesh; no chunk_id means -1.
  const OperationDistAttr* mm = ops[4]->attribute("op_dist_attr").AsOperationDist();
  ASSERT_NE(mm, nullptr);
  ASSERT_EQ(mm->operands.size(), 2u);
  EXPECT_EQ(mm->operands[1], Attribute::TensorDist(TensorDistAttr{mesh, {0, -1}, {}, {}}));
  EXPECT_EQ(mm->chunk_id, -1);
  // Types of that time did not print process ids.
  const TensorDistAttr* w = ops[3]->result(0)->type().dist_attr();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->mesh.shape, std::vector<int64_t>{2});
  EXPECT_TRUE(w->mesh.process_ids.empty());
  EXPECT_EQ(ops[3]->result(0)->type().local_dims(), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(PrintProgram(program), Fixture("dist_early2024.expected"));
  ExpectCanonicalRoundTrip(program);
}

TEST(TextCompatTest, If) {
  Program program = MustParse("if.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 5u);
  Operation* if_op = ops[3];
  EXPECT_EQ(if_op->name(), "pd_op.if");
  ASSERT_EQ(if_op->num_regions(), 2u);
  EXPECT_EQ(if_op->operand(0), ops[2]->result(0));
  EXPECT_EQ(if_op->result(0)->type(), T({1}));
  EXPECT_EQ(if_op->attribute("stop_gradient"), Attribute::Array({Attribute::Bool(false)}));
  const Block& then_block = if_op->region(0).front();
  ASSERT_EQ(then_block.size(), 2u);
  EXPECT_EQ(then_block.front()->attribute("bias"), Attribute::Float(0.5f));
  // The branches read values defined before the if.
  EXPECT_EQ(then_block.front()->operand(0), ops[0]->result(0));
  EXPECT_EQ(if_op->region(1).front().back()->name(), "cf.yield");
  EXPECT_EQ(program.CountOps(), 9u);
  EXPECT_EQ(PrintProgram(program, {.style = TypeStyle::kCurrent}), Fixture("if.pir"));
  EXPECT_EQ(PrintProgram(program), Fixture("if.expected"));
  ExpectCanonicalRoundTrip(program);
}

TEST(TextCompatTest, While) {
  Program program = MustParse("while.pir");
  std::vector<Operation*> ops = program.block().ops();
  ASSERT_EQ(ops.size(), 5u);
  Operation* loop = ops[3];
  EXPECT_EQ(loop->name(), "pd_op.while");
  ASSERT_EQ(loop->num_operands(), 2u);
  EXPECT_EQ(loop->operand(0), ops[2]->result(0));
  EXPECT_EQ(loop->operand(1), ops[0]->result(0));
  // The custom form prints no types: results and body arguments take the inputs'.
  EXPECT_EQ(loop->result(0)->type(), T({1}, Type::I64()));
  const Block& body = loop->region(0).front();
  ASSERT_EQ(body.num_arguments(), 1u);
  EXPECT_EQ(body.argument(0)->type(), T({1}, Type::I64()));
  EXPECT_EQ(body.argument(0)->attributes().at("stop_gradient"),
            Attribute::Array({Attribute::Bool(true)}));
  EXPECT_EQ(body.front()->attribute("value"), Attribute::Float(1.0f));
  EXPECT_EQ(body.front()->operand(0), body.argument(0));
  EXPECT_EQ(body.back()->operand(1), body.front()->result(0));
  EXPECT_EQ(PrintProgram(program, {.style = TypeStyle::kCurrent}), Fixture("while.pir"));
  EXPECT_EQ(PrintProgram(program), Fixture("while.expected"));
  ExpectCanonicalRoundTrip(program);
}

}  // namespace
}  // namespace irm::newir
