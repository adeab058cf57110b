// Dist to dense on completed programs: what a rank's dense program makes of a distributed reshape
// (its full_int_array shape becomes the rank's local dims, as Paddle's dist_to_dense_pass.cc
// does) and of a lookup in a table sharded by rows (c_embedding from the rank's first row, the
// kernel Paddle's EmbeddingInferSpmd leaves the Partial sum to).
#include "newir/auto_parallel/dist_to_dense.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/process_groups.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/auto_parallel/spmd_test_support.h"
#include "newir/printer.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using Dims = std::vector<int64_t>;

TensorDistAttr OnTwo(Dims mapping) { return testing::Layout({2}, {0, 1}, std::move(mapping)); }

Value* Ints(Builder& b, const std::string& name, const Dims& dims) {
  const Type type = Type::DenseTensor(Type::I64(), dims);
  return b
      .Create("pd_op.data", {}, {type},
              {{"name", Attribute::String(name)},
               {"shape", Attribute::IntArrayFrom(dims)},
               {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
               {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
      ->result(0);
}

// Completes `program`, then lowers and makes it dense for `rank`; it verifies.
void Densify(Program& program, int64_t rank) {
  ASSERT_TRUE(CompleteSpmd(program).ok());
  ProcessGroupTable groups(2);
  ASSERT_TRUE(PlanProcessGroups(program, groups).ok());
  ASSERT_TRUE(LowerReshards(program, rank, groups).ok());
  const Status dense = DistToDense(program, rank);
  ASSERT_TRUE(dense.ok()) << dense.ToString();
  const Status verified = VerifyProgram(program);
  ASSERT_TRUE(verified.ok()) << verified.ToString() << "\n" << PrintProgram(program);
}

const Operation* OpNamed(const Program& program, std::string_view name) {
  for (const Operation* op : program.block().ops()) {
    if (op->name() == name) return op;
  }
  return nullptr;
}

Dims Int64s(const Attribute& attribute) {
  Dims out;
  if (const AttributeSpan* items = attribute.AsArray()) {
    for (const Attribute& item : *items) {
      if (const int64_t* v = item.AsInt64()) out.push_back(*v);
    }
  }
  return out;
}

TEST(DistToDenseTest, AReshapeOfShardedHeadsTakesTheRanksLocalShape) {
  // [b, s, 8] sharded on the hidden dim -> [b, s, 4, 2] ("0, 0, 4, 2" as the translator writes
  // it): each rank reshapes its [b, s, 4] into 2 heads; the dynamic batch stays -1.
  Program program;
  Builder b(program.block());
  Value* x = testing::Data(b, "x", {-1, 4, 8});
  Value* shape = b.Create("pd_op.full_int_array", {}, {Type::DenseTensor(Type::I64(), {4})},
                          {{"value", Attribute::Array({Attribute::Int64(0), Attribute::Int64(0),
                                                       Attribute::Int64(4), Attribute::Int64(2)})},
                           {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                           {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
                     ->result(0);
  const Type heads = Type::DenseTensor(Type::F32(), {-1, 4, 4, 2});
  Value* y = b.Create("pd_op.reshape", {x, shape}, {heads, Type()})->result(0);
  Value* r = b.Create("pd_op.relu", {y}, {heads})->result(0);
  b.Create("pd_op.fetch", {r}, {heads},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  testing::ShardInputs(program, {{"x", OnTwo({-1, -1, 0})}});
  Densify(program, 1);
  const Operation* reshape = OpNamed(program, "pd_op.reshape");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->result(0)->type().dims(), (Dims{-1, 4, 2, 2}));
  EXPECT_EQ(Int64s(reshape->operand(1)->defining_op()->attribute("value")), (Dims{-1, 4, 2, 2}));
}

TEST(DistToDenseTest, ALookupInRowsOfTheTableIsACEmbeddingFromTheRanksFirstRow) {
  // 11 rows over 2 ranks: rows 0-5 and 6-10; the Partial lookup is summed for the fetch.
  for (int64_t rank : {0, 1}) {
    SCOPED_TRACE(rank);
    Program program;
    Builder b(program.block());
    Value* ids = Ints(b, "ids", {-1, 4});
    Value* table = testing::Data(b, "table", {11, 8});
    const Type out = Type::DenseTensor(Type::F32(), {-1, 4, 8});
    Value* e = b.Create("pd_op.embedding", {ids, table}, {out},
                        {{"padding_idx", Attribute::Int64(-1)}, {"sparse", Attribute::Bool(false)}})
                   ->result(0);
    b.Create("pd_op.fetch", {e}, {out},
             {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
    testing::ShardInputs(program, {{"table", OnTwo({0, -1})}});
    Densify(program, rank);
    EXPECT_EQ(OpNamed(program, "pd_op.embedding"), nullptr);
    const Operation* lookup = OpNamed(program, "pd_op.c_embedding");
    ASSERT_NE(lookup, nullptr);
    EXPECT_EQ(lookup->operand(0)->type().dims(), (Dims{rank == 0 ? 6 : 5, 8}));
    EXPECT_EQ(lookup->operand(1)->type().dims(), (Dims{-1, 4}));
    EXPECT_EQ(*lookup->attribute("start_index").AsInt64(), rank == 0 ? 0 : 6);
    EXPECT_EQ(*lookup->attribute("vocab_size").AsInt64(), 11);
    EXPECT_NE(OpNamed(program, "pd_op.all_reduce"), nullptr);
  }
}

}  // namespace
}  // namespace irm::newir
