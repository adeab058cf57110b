// SPMD completion on hand-written distributed programs: a column-parallel then row-parallel
// matmul pair (Megatron's MLP) gets its layouts from the rules, and the Partial sum the row
// matmul leaves becomes one reshard before the next add, which lower-reshard makes an all_reduce;
// the pass runs by name with the others; inconsistent meshes and refused layouts are located
// errors.
#include "newir/auto_parallel/spmd_completion.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "newir/auto_parallel/passes.h"
#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/auto_parallel/spmd_test_support.h"
#include "newir/pass_manager.h"
#include "newir/printer.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using testing::Layout;

TensorDistAttr OnTwo(std::vector<int64_t> mapping) {
  return Layout({2}, {0, 1}, std::move(mapping));
}

// w1 by columns, b1 with it, w2 by rows; x and b2 stay dense (replicated).
Program MegatronMlp() {
  Program program = testing::TwoLayerForward(4);
  testing::ShardInputs(program,
                       {{"w1", OnTwo({-1, 0})}, {"b1", OnTwo({0})}, {"w2", OnTwo({0, -1})}});
  return program;
}

std::vector<Operation*> OpsNamed(const Program& program, std::string_view name) {
  std::vector<Operation*> ops;
  for (Operation* op : program.block().ops()) {
    if (op->name() == name) ops.push_back(op);
  }
  return ops;
}

const OperationDistAttr& DistOf(const Operation& op) {
  static const OperationDistAttr kNone;
  const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist();
  EXPECT_NE(dist, nullptr) << op.name();
  return dist != nullptr ? *dist : kNone;
}

TensorDistAttr Entry(const std::vector<Attribute>& entries, size_t i) {
  if (i >= entries.size() || entries[i].AsTensorDist() == nullptr) {
    ADD_FAILURE() << "no tensor dist entry " << i;
    return {};
  }
  return *entries[i].AsTensorDist();
}

TEST(SpmdCompletionTest, ColumnThenRowParallelLeavesOnePartialToReplicatedReshard) {
  Program program = MegatronMlp();
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  // matmul, add, relu, matmul, add, fetch read distributed values.
  EXPECT_EQ(done->ops_completed, 6u);
  EXPECT_EQ(done->reshards_inserted, 1u);
  const Status verified = VerifyProgram(program);
  ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);

  const std::vector<Operation*> matmuls = OpsNamed(program, "pd_op.matmul");
  ASSERT_EQ(matmuls.size(), 2u);
  // Column parallel: mk[-1,-1], kn[-1,0] -> mn[-1,0] (test_matmul_rule.py's "n parallel").
  EXPECT_EQ(Entry(DistOf(*matmuls[0]).operands, 0), OnTwo({-1, -1}));
  EXPECT_EQ(Entry(DistOf(*matmuls[0]).results, 0), OnTwo({-1, 0}));
  // Row parallel: the relu output [-1,0] meets w2 [0,-1] on k: the result is Partial(sum).
  EXPECT_EQ(Entry(DistOf(*matmuls[1]).operands, 0), OnTwo({-1, 0}));
  TensorDistAttr partial = OnTwo({-1, -1});
  partial.partial_status = {{0, ReduceType::kSum}};
  EXPECT_EQ(Entry(DistOf(*matmuls[1]).results, 0), partial);
  ASSERT_NE(matmuls[1]->result(0)->type().dist_attr(), nullptr);
  EXPECT_EQ(*matmuls[1]->result(0)->type().dist_attr(), partial);

  // The one reshard sits right before the second add and takes the partial sum to replicated.
  const std::vector<Operation*> reshards = OpsNamed(program, "dist_op.reshard");
  ASSERT_EQ(reshards.size(), 1u);
  EXPECT_EQ(reshards[0]->operand(0), matmuls[1]->result(0));
  EXPECT_EQ(Entry(DistOf(*reshards[0]).operands, 0), partial);
  EXPECT_EQ(Entry(DistOf(*reshards[0]).results, 0), OnTwo({-1, -1}));
  ASSERT_NE(reshards[0]->next(), nullptr);
  EXPECT_EQ(reshards[0]->next()->name(), "pd_op.add");
  EXPECT_EQ(reshards[0]->next()->operand(0), reshards[0]->result(0));
  // The first add reads b1 as sharded with the columns: no reshard for it.
  const std::vector<Operation*> adds = OpsNamed(program, "pd_op.add");
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(Entry(DistOf(*adds[0]).operands, 1), OnTwo({0}));
  EXPECT_EQ(Entry(DistOf(*adds[0]).results, 0), OnTwo({-1, 0}));
}

PassRegistry Registry() {
  PassRegistry registry;
  EXPECT_TRUE(RegisterAutoParallelPasses(registry).ok());
  return registry;
}

TEST(SpmdCompletionTest, PipelineMakesEachRanksProgramWithOneAllReduce) {
  const PassRegistry registry = Registry();
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    Program program = MegatronMlp();
    PassManager pm;
    ASSERT_TRUE(pm.AddPipeline(fmt::format("spmd-completion,lower-reshard{{rank={0}}},"
                                           "dist-to-dense{{rank={0}}}",
                                           rank),
                               registry)
                    .ok());
    StatusOr<IrChange> change = pm.Run(program);
    ASSERT_TRUE(change.ok()) << change.status().ToString();
    const std::string text = PrintProgram(program);
    EXPECT_EQ(text.find("pd_dist"), std::string::npos) << text;
    EXPECT_EQ(text.find("dist_op."), std::string::npos) << text;
    EXPECT_EQ(OpsNamed(program, "pd_op.all_reduce").size(), 1u) << text;
    // Each rank holds its 4 columns of w1 and 4 rows of w2.
    EXPECT_NE(text.find("shape:(pd_op.IntArray)[6,4]"), std::string::npos) << text;
    EXPECT_NE(text.find("shape:(pd_op.IntArray)[4,6]"), std::string::npos) << text;
  }
}

TEST(SpmdCompletionTest, RefusesOperandsOnDifferentMeshes) {
  Program program = testing::TwoLayerForward(4);
  testing::ShardInputs(program, {{"x", OnTwo({-1, -1})}, {"w1", Layout({2}, {2, 3}, {-1, 0})}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().ToString(),
            "op 7 (pd_op.matmul), var 'w1': error: operand 1 lies on mesh "
            "mesh_shape:[2],process_ids:[2,3] but x lies on mesh mesh_shape:[2],process_ids:[0,1]; "
            "an op runs on one mesh");
}

TEST(SpmdCompletionTest, RefusesAnOpDistAttrOnAnotherMesh) {
  Program program = MegatronMlp();
  Operation* matmul = OpsNamed(program, "pd_op.matmul")[0];
  OperationDistAttr stale;
  stale.mesh = Layout({2}, {4, 5}, {}).mesh;
  matmul->SetAttribute("op_dist_attr", Attribute::OperationDist(stale));
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().ToString(),
            "op 8 (pd_op.matmul), attr 'op_dist_attr': error: op_dist_attr names mesh "
            "mesh_shape:[2],process_ids:[4,5] (or an entry on another mesh) but the op's "
            "distributed operands lie on mesh mesh_shape:[2],process_ids:[0,1]");
}

// A pipeline stage's op (an op_dist_attr of only a mesh and a chunk_id, pipeline_meshes.h) runs
// on its mesh: an operand made on another stage's mesh crosses by one reshard of the same layout,
// in the reader's op_role and chunk_id (Paddle creates reshards under their consumer's role,
// static/pir_pass.py pir_op_role_guard), which every later reader on that mesh shares.
TEST(SpmdCompletionTest, AnOpAssignedToAStageMeshBringsItsOperandsAcross) {
  Program program = testing::TwoLayerForward(4);
  const TensorDistAttr stage0 = Layout({1}, {0}, {-1, -1});
  testing::ShardInputs(program, {{"x", stage0}, {"w1", stage0}});
  Operation* second = OpsNamed(program, "pd_op.matmul")[1];
  OperationDistAttr assigned;
  assigned.mesh = Layout({1}, {1}, {}).mesh;
  assigned.chunk_id = 0;
  second->SetAttribute("op_dist_attr", Attribute::OperationDist(assigned));
  second->SetAttribute("op_role", Attribute::Int32(0));
  second->SetAttribute("chunk_id", Attribute::Int32(0));
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  const std::vector<Operation*> reshards = OpsNamed(program, "dist_op.reshard");
  ASSERT_EQ(reshards.size(), 1u);
  EXPECT_EQ(reshards[0]->next(), second);
  EXPECT_EQ(reshards[0]->operand(0)->type().dist_attr()->mesh, stage0.mesh);
  EXPECT_EQ(reshards[0]->result(0)->type().dist_attr()->mesh, assigned.mesh);
  EXPECT_EQ(reshards[0]->result(0)->type().dist_attr()->dims_mapping,
            (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ(*reshards[0]->attribute("op_role").AsInt32(), 0);
  EXPECT_EQ(*reshards[0]->attribute("chunk_id").AsInt32(), 0);
  EXPECT_EQ(second->result(0)->type().dist_attr()->mesh, assigned.mesh);
}

TEST(SpmdCompletionTest, RefusesLayoutsTheRuleRefuses) {
  // x sharded on k by mesh dim 0 of a 2x2 mesh, w1 sharded on k by mesh dim 1: one tensor axis,
  // two mesh dims (test_matmul_rule.py's NotImplementedError case).
  Program program = testing::TwoLayerForward(4);
  TensorDistAttr x = Layout({2, 2}, {0, 1, 2, 3}, {-1, 0});
  TensorDistAttr w1 = Layout({2, 2}, {0, 1, 2, 3}, {1, -1});
  testing::ShardInputs(program, {{"x", x}, {"w1", w1}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().ToString(),
            "op 7 (pd_op.matmul), var 'x': error: the SPMD rule of pd_op.matmul refuses its "
            "operands' layouts: tensor axis 'k' is sharded by two mesh dims, 0 and 1");
}

TEST(SpmdCompletionTest, GathersAShardedVocabularyBeforeTheCrossEntropy) {
  // Paddle's static rule keeps the vocab sharded here (test_cross_entropy_with_softmax_rule.py,
  // "GPT MP case") for c_softmax_with_cross_entropy; completion takes the dynamic-graph rule
  // (CrossEntropyWithSoftmaxInferSpmd), whose input is asked with whole rows: one reshard to
  // replicated, which the reference kernel runs locally.
  Program program;
  Builder b(program.block());
  Value* logits = testing::Data(b, "logits", {4, 6});
  const Type label_type = Type::DenseTensor(Type::I64(), {4, 1});
  Value* label = b.Create("pd_op.data", {}, {label_type},
                          {{"name", Attribute::String("label")},
                           {"shape", Attribute::IntArrayFrom(label_type.dims())},
                           {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                           {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
                     ->result(0);
  b.Create("pd_op.cross_entropy_with_softmax", {logits, label},
           {Type::DenseTensor(Type::F32(), {4, 6}), Type::DenseTensor(Type::F32(), {4, 1})},
           {{"axis", Attribute::Int32(-1)}, {"soft_label", Attribute::Bool(false)}});
  testing::ShardInputs(program, {{"logits", OnTwo({-1, 0})}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->reshards_inserted, 1u);
  const std::vector<Operation*> reshards = OpsNamed(program, "dist_op.reshard");
  ASSERT_EQ(reshards.size(), 1u);
  EXPECT_EQ(reshards[0]->result(0)->type().dist_attr()->dims_mapping,
            (std::vector<int64_t>{-1, -1}));
  const std::vector<Operation*> ce = OpsNamed(program, "pd_op.cross_entropy_with_softmax");
  ASSERT_EQ(ce.size(), 1u);
  EXPECT_EQ(ce[0]->operand(0), reshards[0]->result(0));
  EXPECT_EQ(Entry(DistOf(*ce[0]).results, 0).dims_mapping, (std::vector<int64_t>{-1, -1}));
  EXPECT_TRUE(VerifyProgram(program).ok());
}

// x [4, 6] read by dtensor_to_local (local type [2, 6]) whose op_dist_attr, when given, asks for
// `wanted`; its local tensor relu'd and wrapped back by dtensor_from_local as `out`.
Program LocalRegion(const std::optional<TensorDistAttr>& wanted, const TensorDistAttr& out) {
  Program program;
  Builder b(program.block());
  Value* x = testing::Data(b, "x", {4, 6});
  AttributeMap attrs;
  if (wanted) {
    OperationDistAttr asked;
    asked.mesh = wanted->mesh;
    asked.operands = {Attribute::TensorDist(*wanted)};
    asked.results = {Attribute::TensorDist(*wanted)};
    attrs.emplace("op_dist_attr", Attribute::OperationDist(std::move(asked)));
  }
  const Type local = Type::DenseTensor(Type::F32(), {2, 6});
  Value* lx = b.Create("dist_op.dtensor_to_local", {x}, {local}, std::move(attrs))->result(0);
  Value* r = b.Create("pd_op.relu", {lx}, {local})->result(0);
  StatusOr<Type> type = Type::DistDenseTensor(Type::DenseTensor(Type::F32(), {4, 6}), out,
                                              std::vector<int64_t>{2, 6});
  EXPECT_TRUE(type.ok());
  b.Create("dist_op.dtensor_from_local", {r}, {*type});
  return program;
}

TEST(SpmdCompletionTest, LocalMapRegionKeepsItsLayoutsAndReshardsItsInput) {
  // local_map.py: the region reads the in_placements' pieces (x arrives replicated and is
  // resharded to rows: reshard_inputs) and its result is wrapped with the out_placements; the
  // dense ops between are left alone.
  Program program = LocalRegion(OnTwo({0, -1}), OnTwo({0, -1}));
  testing::ShardInputs(program, {{"x", OnTwo({-1, -1})}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->reshards_inserted, 1u);
  const std::vector<Operation*> to_local = OpsNamed(program, "dist_op.dtensor_to_local");
  ASSERT_EQ(to_local.size(), 1u);
  EXPECT_EQ(to_local[0]->operand(0)->defining_op()->name(), "dist_op.reshard");
  EXPECT_EQ(Entry(DistOf(*to_local[0]).operands, 0).dims_mapping, (std::vector<int64_t>{0, -1}));
  EXPECT_FALSE(OpsNamed(program, "pd_op.relu")[0]->HasAttribute("op_dist_attr"));
  const std::vector<Operation*> from_local = OpsNamed(program, "dist_op.dtensor_from_local");
  ASSERT_EQ(from_local.size(), 1u);
  EXPECT_EQ(Entry(DistOf(*from_local[0]).results, 0).dims_mapping, (std::vector<int64_t>{0, -1}));
  const Status verified = VerifyProgram(program);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

TEST(SpmdCompletionTest, RefusesALocalRegionOverAPartialOrAWrongPiece) {
  TensorDistAttr partial = OnTwo({-1, -1});
  partial.partial_status[0] = ReduceType::kSum;
  Program program = LocalRegion(partial, OnTwo({0, -1}));
  testing::ShardInputs(program, {{"x", OnTwo({-1, -1})}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().ToString(),
            "op 2 (dist_op.dtensor_to_local), var 'x': error: dtensor_to_local of a Partial layout "
            "(mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1,-1], partial(0,SUM)): reshard "
            "it first");
  // The local type [2, 6] is no piece of a replicated x.
  program = LocalRegion(std::nullopt, OnTwo({0, -1}));
  testing::ShardInputs(program, {{"x", OnTwo({-1, -1})}});
  done = CompleteSpmd(program);
  ASSERT_FALSE(done.ok());
  EXPECT_NE(done.status().ToString().find("is not the local tensor of"), std::string::npos)
      << done.status().ToString();
}

}  // namespace
}  // namespace irm::newir
