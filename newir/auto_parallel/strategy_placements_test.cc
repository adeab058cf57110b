// Standard placements read off a new-IR program: Megatron's column/row pairs (the layouts of
// Paddle's mp_layers.py, as oldir/passes/placements.cc gives them), optimizer state placed as its
// parameter, the meshes of DP, TP and DP x TP (Paddle's topology.py: dp outer, mp inner), and the
// refusals. The zoo programs themselves, translated, are checked against the legacy placements in
// diff_tests/newir_parallelize_test.cc.
#include "newir/auto_parallel/strategy_placements.h"

#include <gtest/gtest.h>

#include "newir/parser.h"

namespace irm::newir {
namespace {

using Dims = std::vector<int64_t>;

// Three linears (x @ w0 + b0, @ w1 + b1, @ w2) and an AdamW update of w0 with its moments; a
// backward matmul_grad reads w1 too (it must not count as a linear).
constexpr const char* kThreeLinears = R"pir({
    (%0) = "builtin.parameter" () {parameter_name:"w0"} : () -> builtin.tensor<4x8xf32>
    (%1) = "builtin.parameter" () {parameter_name:"b0"} : () -> builtin.tensor<8xf32>
    (%2) = "builtin.parameter" () {parameter_name:"w1"} : () -> builtin.tensor<8x6xf32>
    (%3) = "builtin.parameter" () {parameter_name:"b1"} : () -> builtin.tensor<6xf32>
    (%4) = "builtin.parameter" () {parameter_name:"w2"} : () -> builtin.tensor<6x3xf32>
    (%5) = "builtin.parameter" () {parameter_name:"lr"} : () -> builtin.tensor<1xf32>
    (%6) = "builtin.parameter" () {parameter_name:"w0_moment1"} : () -> builtin.tensor<4x8xf32>
    (%7) = "builtin.parameter" () {parameter_name:"w0_moment2"} : () -> builtin.tensor<4x8xf32>
    (%8) = "builtin.parameter" () {parameter_name:"w0_beta1_pow"} : () -> builtin.tensor<1xf32>
    (%9) = "builtin.parameter" () {parameter_name:"w0_beta2_pow"} : () -> builtin.tensor<1xf32>
    (%10) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[-1,4]} : () -> builtin.tensor<-1x4xf32>
    (%11) = "pd_op.matmul" (%10, %0) {transpose_x:false,transpose_y:false} : (builtin.tensor<-1x4xf32>, builtin.tensor<4x8xf32>) -> builtin.tensor<-1x8xf32>
    (%12) = "pd_op.add" (%11, %1) {} : (builtin.tensor<-1x8xf32>, builtin.tensor<8xf32>) -> builtin.tensor<-1x8xf32>
    (%13) = "pd_op.matmul" (%12, %2) {transpose_x:false,transpose_y:false} : (builtin.tensor<-1x8xf32>, builtin.tensor<8x6xf32>) -> builtin.tensor<-1x6xf32>
    (%14) = "pd_op.add" (%13, %3) {} : (builtin.tensor<-1x6xf32>, builtin.tensor<6xf32>) -> builtin.tensor<-1x6xf32>
    (%15) = "pd_op.matmul" (%14, %4) {transpose_x:false,transpose_y:false} : (builtin.tensor<-1x6xf32>, builtin.tensor<6x3xf32>) -> builtin.tensor<-1x3xf32>
    (%16, %17) = "pd_op.matmul_grad" (%12, %2, %13) {op_role:(Int32)1,transpose_x:false,transpose_y:false} : (builtin.tensor<-1x8xf32>, builtin.tensor<8x6xf32>, builtin.tensor<-1x6xf32>) -> builtin.tensor<-1x8xf32>, builtin.tensor<8x6xf32>
    (%18, %19, %20, %21, %22, %23, %24) = "pd_op.adamw_" (%0, %0, %5, %6, %7, <<NULL VALUE>>, %8, %9, <<NULL VALUE>>, <<NULL VALUE>>, %5, %5, %5) {op_role:(Int32)2} : (builtin.tensor<4x8xf32>, builtin.tensor<4x8xf32>, builtin.tensor<1xf32>, builtin.tensor<4x8xf32>, builtin.tensor<4x8xf32>, <<NULL TYPE>>, builtin.tensor<1xf32>, builtin.tensor<1xf32>, <<NULL TYPE>>, <<NULL TYPE>>, builtin.tensor<1xf32>, builtin.tensor<1xf32>, builtin.tensor<1xf32>) -> builtin.tensor<4x8xf32>, builtin.tensor<4x8xf32>, builtin.tensor<4x8xf32>, <<NULL TYPE>>, builtin.tensor<1xf32>, builtin.tensor<1xf32>, <<NULL TYPE>>
})pir";

Program Parse(const std::string& text) {
  StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return Program();
  return std::move(program).value();
}

TEST(StrategyPlacementsTest, MlpLinearsInColumnRowPairsWithTheirOptimizerState) {
  const Program main = Parse(kThreeLinears);
  StatusOr<std::map<std::string, Dims>> placements = MegatronPlacements(main);
  ASSERT_TRUE(placements.ok()) << placements.status().ToString();
  const std::map<std::string, Dims> want = {
      {"w0", {-1, 0}},         {"b0", {0}},
      {"w1", {0, -1}},         {"b1", {-1}},
      {"w2", {-1, -1}},        {"lr", {-1}},
      {"w0_moment1", {-1, 0}}, {"w0_moment2", {-1, 0}},
      {"w0_beta1_pow", {-1}},  {"w0_beta2_pow", {-1}},
  };
  EXPECT_EQ(*placements, want);
}

TEST(StrategyPlacementsTest, MeshesOfDataTensorAndHybridParallelism) {
  const Program main = Parse(kThreeLinears);
  // DP2: the batch feed on a 1-D dp mesh, nothing else annotated.
  StatusOr<ShardAnnotations> dp = StandardAnnotations(main, {2, 1, 1}, {"x"});
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  EXPECT_EQ(dp->mesh.shape, Dims({2}));
  EXPECT_EQ(dp->mesh.dim_names, std::vector<std::string>({"dp"}));
  ASSERT_EQ(dp->values.size(), 1u);
  EXPECT_EQ(dp->values.at("x").shard_dim_of_mesh_dim, Dims({0}));

  // TP2: the sharded parameters only, on a 1-D mp mesh; the feed stays replicated.
  StatusOr<ShardAnnotations> tp = StandardAnnotations(main, {1, 2, 1}, {"x"});
  ASSERT_TRUE(tp.ok()) << tp.status().ToString();
  EXPECT_EQ(tp->mesh.shape, Dims({2}));
  EXPECT_EQ(tp->mesh.dim_names, std::vector<std::string>({"mp"}));
  EXPECT_EQ(tp->values.count("x"), 0u);
  EXPECT_EQ(tp->values.count("b1"), 0u);
  EXPECT_EQ(tp->values.at("w0").shard_dim_of_mesh_dim, Dims({1}));
  EXPECT_EQ(tp->values.at("w1").shard_dim_of_mesh_dim, Dims({0}));
  EXPECT_EQ(tp->values.size(), 5u);  // w0, b0, w1 and w0's two moments

  // DP2 x TP2: mesh [dp, mp] of ranks 0..3 row-major, so rank 1 is (dp 0, mp 1) and rank 2
  // (dp 1, mp 0), as Paddle's topology orders them.
  StatusOr<ShardAnnotations> hybrid = StandardAnnotations(main, {2, 2, 1}, {"x"});
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_EQ(hybrid->mesh.shape, Dims({2, 2}));
  EXPECT_EQ(hybrid->mesh.process_ids, Dims({0, 1, 2, 3}));
  EXPECT_EQ(hybrid->mesh.dim_names, std::vector<std::string>({"dp", "mp"}));
  EXPECT_EQ(hybrid->values.at("x").shard_dim_of_mesh_dim, Dims({0, -1}));
  EXPECT_EQ(hybrid->values.at("w0").shard_dim_of_mesh_dim, Dims({-1, 1}));
  EXPECT_EQ(hybrid->values.at("w1").shard_dim_of_mesh_dim, Dims({-1, 0}));
  EXPECT_EQ(hybrid->values.at("w0_moment2").shard_dim_of_mesh_dim, Dims({-1, 1}));

  // The annotations fit the program: AnnotateShards accepts them.
  Program annotated = Parse(kThreeLinears);
  const Status applied = AnnotateShards(annotated, *hybrid);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
}

TEST(StrategyPlacementsTest, RefusesPipelinesAndProgramsOfAnotherShape) {
  const Program main = Parse(kThreeLinears);
  StatusOr<ShardAnnotations> pp = StandardAnnotations(main, {1, 1, 2}, {"x"});
  ASSERT_FALSE(pp.ok());
  EXPECT_EQ(pp.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(pp.status().ToString().find("pipeline parallelism (pp_degree 2)"), std::string::npos)
      << pp.status().ToString();
  EXPECT_NE(pp.status().ToString().find("note:"), std::string::npos) << pp.status().ToString();
  EXPECT_FALSE(StandardAnnotations(main, {0, 1, 1}, {}).ok());

  // TP3: w0's 8 columns do not split over 3 ranks; refused at the matmul that reads it, as
  // Paddle's ColumnParallelLinear asserts.
  StatusOr<ShardAnnotations> tp3 = StandardAnnotations(main, {1, 3, 1}, {"x"});
  ASSERT_FALSE(tp3.ok());
  EXPECT_NE(tp3.status().ToString().find("op 11 (pd_op.matmul), var 'w0': error: Megatron "
                                         "placement splits dim 1 of 'w0' (size 8) over 3 "
                                         "model-parallel ranks, which does not divide it"),
            std::string::npos)
      << tp3.status().ToString();

  // A transposed linear weight: located at the matmul, naming the parameter.
  std::string transposed = kThreeLinears;
  const std::string first = "(%10, %0) {transpose_x:false,transpose_y:false}";
  transposed.replace(transposed.find(first), first.size(),
                     "(%10, %0) {transpose_x:false,transpose_y:true}");
  StatusOr<std::map<std::string, Dims>> refused = MegatronPlacements(Parse(transposed));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().ToString().find("pd_op.matmul"), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("'w0'"), std::string::npos)
      << refused.status().ToString();

  // An embedding makes it a gpt, whose 3 linears are not 6 per block plus a head.
  std::string gpt = kThreeLinears;
  const std::string data = "    (%10) = \"pd_op.data\"";
  gpt.insert(gpt.find(data),
             "    (%30) = \"builtin.parameter\" () {parameter_name:\"table\"} : () -> "
             "builtin.tensor<12x4xf32>\n"
             "    (%31) = \"pd_op.data\" () {dtype:(pd_op.DataType)int64,name:\"tokens\","
             "place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[-1]} : () -> "
             "builtin.tensor<-1xi64>\n"
             "    (%32) = \"pd_op.embedding\" (%31, %30) {padding_idx:(Int64)-1,sparse:false} : "
             "(builtin.tensor<-1xi64>, builtin.tensor<12x4xf32>) -> builtin.tensor<-1x4xf32>\n");
  refused = MegatronPlacements(Parse(gpt));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("6 linears per decoder block and a head; the "
                                             "program has 3 linears"),
            std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace irm::newir
