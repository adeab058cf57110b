// Parallelize: each rank's startup initialises its local shards (the initialiser's shape made
// local, as oldir/passes/tensor_parallel.cc declares a sharded parameter with its local shape and
// a shards entry), the shards say where each piece lies in the serial tensor, the main programs
// are dense, and a startup it cannot make local is refused with its location.
#include "newir/auto_parallel/parallelize.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "newir/parser.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

using Dims = std::vector<int64_t>;

// x [2, 4] @ w [4, 7] + b [7], w initialised by pd_op.uniform, b by pd_op.full.
constexpr const char* kMain = R"pir({
    (%0) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<4x7xf32>
    (%1) = "builtin.parameter" () {parameter_name:"b"} : () -> builtin.tensor<7xf32>
    (%2) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2,4]} : () -> builtin.tensor<2x4xf32>
    (%3) = "pd_op.matmul" (%2, %0) {transpose_x:false,transpose_y:false} : (builtin.tensor<2x4xf32>, builtin.tensor<4x7xf32>) -> builtin.tensor<2x7xf32>
    (%4) = "pd_op.add" (%3, %1) {} : (builtin.tensor<2x7xf32>, builtin.tensor<7xf32>) -> builtin.tensor<2x7xf32>
    (%5) = "pd_op.fetch" (%4) {col:(Int32)0,name:"out"} : (builtin.tensor<2x7xf32>) -> builtin.tensor<2x7xf32>
})pir";

constexpr const char* kStartup = R"pir({
    (%0) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),value:[(Int64)4,(Int64)7]} : () -> builtin.tensor<2xi64>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Double)-1} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Double)1} : () -> builtin.tensor<1xf32>
    (%3) = "pd_op.uniform" (%0, %1, %2) {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),seed:(Int32)0} : (builtin.tensor<2xi64>, builtin.tensor<1xf32>, builtin.tensor<1xf32>) -> builtin.tensor<4x7xf32>
    () = "builtin.set_parameter" (%3) {parameter_name:"w"} : (builtin.tensor<4x7xf32>) ->
    (%4) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[7],value:(Double)0} : () -> builtin.tensor<7xf32>
    () = "builtin.set_parameter" (%4) {parameter_name:"b"} : (builtin.tensor<7xf32>) ->
})pir";

ShardAnnotations ColumnParallelOver(int64_t n) {
  ShardAnnotations annotations;
  annotations.mesh.shape = {n};
  for (int64_t i = 0; i < n; ++i) annotations.mesh.process_ids.push_back(i);
  ValueAnnotation column;
  column.by_placements = true;
  column.shard_dim_of_mesh_dim = {1};
  annotations.values["w"] = column;
  column.shard_dim_of_mesh_dim = {0};
  annotations.values["b"] = column;
  return annotations;
}

Program Parse(const char* text) {
  StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return Program();
  return std::move(program).value();
}

const Operation* OpNamed(const Program& program, std::string_view name, size_t nth = 0) {
  for (Operation* op : program.block().ops()) {
    if (op->name() == name && nth-- == 0) return op;
  }
  return nullptr;
}

// An array of Int64 attributes (full_int_array's value) or an IntArray (full's shape); empty
// for anything else.
Dims IntsOf(const Attribute& attribute) {
  if (const IntArray* ints = attribute.AsIntArray(); ints != nullptr) return ints->values;
  Dims out;
  const AttributeSpan* items = attribute.AsArray();
  if (items == nullptr) return out;
  for (const Attribute& item : *items) {
    if (const int64_t* value = item.AsInt64(); value != nullptr) out.push_back(*value);
  }
  return out;
}

TEST(ParallelizeTest, EachRankInitialisesItsOwnPieceOfAnUnevenShard) {
  // 7 columns over 3 ranks: pieces of ceil(7/3) = 3, the last one the rest (3, 3, 1), as
  // Paddle's r_to_s_reshard_func.py cuts them.
  StatusOr<ParallelPrograms> parallel =
      Parallelize(Parse(kMain), Parse(kStartup), ColumnParallelOver(3));
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  EXPECT_EQ(parallel->world_size, 3);
  ASSERT_EQ(parallel->ranks.size(), 3u);
  const Dims offsets = {0, 3, 6};
  const Dims widths = {3, 3, 1};
  for (int64_t rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE(rank);
    const RankPrograms& programs = parallel->ranks[rank];
    EXPECT_EQ(programs.shards.at("w"), (ParameterShard{{4, 7}, {0, offsets[rank]}}));
    EXPECT_EQ(programs.shards.at("b"), (ParameterShard{{7}, {offsets[rank]}}));
    const Operation* shape = OpNamed(programs.startup, "pd_op.full_int_array");
    ASSERT_NE(shape, nullptr);
    EXPECT_EQ(IntsOf(shape->attribute("value")), Dims({4, widths[rank]}));
    const Operation* uniform = OpNamed(programs.startup, "pd_op.uniform");
    ASSERT_NE(uniform, nullptr);
    EXPECT_EQ(uniform->result(0)->type().dims(), Dims({4, widths[rank]}));
    const Operation* bias = OpNamed(programs.startup, "pd_op.full", 2);
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->result(0)->type().dims(), Dims({widths[rank]}));
    EXPECT_EQ(IntsOf(bias->attribute("shape")), Dims({widths[rank]}));
    // The main program is dense: local types, no dist ops.
    const std::string text = PrintProgram(programs.main);
    EXPECT_EQ(text.find("pd_dist"), std::string::npos) << text;
    EXPECT_EQ(text.find("dist_op."), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("builtin.tensor<4x{}xf32>", widths[rank])), std::string::npos)
        << text;
  }
}

TEST(ParallelizeTest, RowParallelWeightAndRefusedLayouts) {
  // 7 columns over 5 ranks: pieces of 2 leave the last one empty (2, 2, 2, 1, 0): refused,
  // naming the parameter.
  StatusOr<ParallelPrograms> parallel =
      Parallelize(Parse(kMain), Parse(kStartup), ColumnParallelOver(5));
  ASSERT_FALSE(parallel.ok());
  EXPECT_NE(parallel.status().ToString().find("'w'"), std::string::npos)
      << parallel.status().ToString();
  // w by rows over 2 ranks: its rows are the matmul's contraction dim, so the product is
  // Partial(sum) and all-reduced before the add (MatmulInferSpmd).
  ShardAnnotations annotations = ColumnParallelOver(2);
  annotations.values["w"].shard_dim_of_mesh_dim = {0};
  annotations.values.erase("b");
  parallel = Parallelize(Parse(kMain), Parse(kStartup), annotations);
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  EXPECT_EQ(parallel->ranks[1].shards.at("w"), (ParameterShard{{4, 7}, {2, 0}}));
  EXPECT_EQ(parallel->ranks[1].shards.count("b"), 0u);
  EXPECT_NE(PrintProgram(parallel->ranks[1].main).find("pd_op.all_reduce"), std::string::npos);
}

TEST(ParallelizeTest, RefusesAnInitialiserItCannotMakeLocal) {
  // The shape of w's initialiser is shared with another op: changing it would change both.
  std::string startup = kStartup;
  const std::string set_b = "    () = \"builtin.set_parameter\" (%4)";
  startup.insert(startup.find(set_b),
                 "    (%9) = \"pd_op.uniform\" (%0, %1, %2) "
                 "{dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),seed:(Int32)0} : "
                 "(builtin.tensor<2xi64>, builtin.tensor<1xf32>, builtin.tensor<1xf32>) -> "
                 "builtin.tensor<4x7xf32>\n");
  StatusOr<ParallelPrograms> parallel =
      Parallelize(Parse(kMain), Parse(startup.c_str()), ColumnParallelOver(2));
  ASSERT_FALSE(parallel.ok());
  EXPECT_EQ(parallel.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(parallel.status().ToString().find("full_int_array"), std::string::npos)
      << parallel.status().ToString();
}

}  // namespace
}  // namespace irm::newir
