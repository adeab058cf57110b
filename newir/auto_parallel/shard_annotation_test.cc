// Shard annotations: the file format and its located errors, the data-parallel standard, and the
// shard_tensor ops AnnotateShards puts into a program. Placements follow Paddle's
// shard_tensor(x, mesh, placements) (python/paddle/distributed/auto_parallel/api.py): one
// placement per mesh dim, Shard(d) putting tensor dim d on it.
#include "newir/auto_parallel/shard_annotation.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/spmd_test_support.h"
#include "newir/printer.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using Dims = std::vector<int64_t>;

constexpr const char* kTp2 = R"j({
  "mesh": {"shape": [2], "process_ids": [0, 1], "dim_names": ["mp"]},
  "values": {"w1": {"placements": ["Shard(1)"]}, "b1": {"dims_mapping": [0]},
             "w2": {"placements": ["Shard(dim=0)"]}}
})j";

TEST(ShardAnnotationTest, ParsesMeshPlacementsAndDimsMappings) {
  StatusOr<ShardAnnotations> parsed = ParseShardAnnotations(kTp2, "a.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->mesh.shape, Dims({2}));
  EXPECT_EQ(parsed->mesh.process_ids, Dims({0, 1}));
  EXPECT_EQ(parsed->mesh.dim_names, std::vector<std::string>({"mp"}));
  ASSERT_EQ(parsed->values.size(), 3u);
  EXPECT_TRUE(parsed->values.at("w1").by_placements);
  EXPECT_EQ(parsed->values.at("w1").shard_dim_of_mesh_dim, Dims({1}));
  EXPECT_EQ(parsed->values.at("w2").shard_dim_of_mesh_dim, Dims({0}));
  EXPECT_FALSE(parsed->values.at("b1").by_placements);
  EXPECT_EQ(parsed->values.at("b1").dims_mapping, Dims({0}));
}

TEST(ShardAnnotationTest, PlacementsBecomeDimsMappings) {
  ProcessMesh mesh{{2, 2}, {0, 1, 2, 3}, {"dp", "mp"}};
  ValueAnnotation annotation;
  annotation.by_placements = true;
  annotation.shard_dim_of_mesh_dim = {0, 1};  // [Shard(0), Shard(1)]
  StatusOr<Dims> mapping = DimsMappingOf(annotation, 2, mesh);
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  EXPECT_EQ(*mapping, Dims({0, 1}));
  annotation.shard_dim_of_mesh_dim = {-1, 0};  // [Replicate(), Shard(0)]
  mapping = DimsMappingOf(annotation, 3, mesh);
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ(*mapping, Dims({1, -1, -1}));
  annotation.shard_dim_of_mesh_dim = {0, 0};  // one tensor dim on two mesh dims
  EXPECT_FALSE(DimsMappingOf(annotation, 2, mesh).ok());
  annotation.shard_dim_of_mesh_dim = {2, -1};  // no dim 2
  EXPECT_FALSE(DimsMappingOf(annotation, 2, mesh).ok());
}

void ExpectError(const std::string& text, const std::string& where) {
  SCOPED_TRACE(text);
  StatusOr<ShardAnnotations> parsed = ParseShardAnnotations(text, "a.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().ToString().find(where), std::string::npos)
      << parsed.status().ToString();
}

TEST(ShardAnnotationTest, ErrorsAreLocatedByJsonPointer) {
  ExpectError("{", "a.json");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, 1]}, "values": {}, "extra": 1})j",
              "/extra");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, "1"]}, "values": {}})j",
              "/mesh/process_ids/1");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, 1, 2]}, "values": {}})j",
              "holds 2 processes, process_ids lists 3");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [1, 1]}, "values": {}})j",
              "appears twice");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, 1]},
                  "values": {"a/b": {"placements": ["Shard(0)", "Replicate()"]}}})j",
              "/values/a~1b/placements");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, 1]},
                  "values": {"w": {"placements": ["Partial()"]}}})j",
              "/values/w/placements/0");
  ExpectError(R"j({"mesh": {"shape": [2], "process_ids": [0, 1]},
                  "values": {"w": {"placements": ["Shard(0)"], "dims_mapping": [0]}}})j",
              "exactly one of");
}

TEST(ShardAnnotationTest, WrapsNamedDataInShardTensor) {
  Program program = testing::TwoLayerForward(4);
  StatusOr<ShardAnnotations> parsed = ParseShardAnnotations(kTp2, "a.json");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(AnnotateShards(program, *parsed).ok());
  ASSERT_TRUE(VerifyProgram(program).ok()) << PrintProgram(program);
  std::map<std::string, Dims> mappings;
  for (Operation* op : program.block().ops()) {
    if (op->name() != "dist_op.shard_tensor") continue;
    Operation* data = op->operand(0)->defining_op();
    ASSERT_NE(data, nullptr);
    const TensorDistAttr* dist = op->result(0)->type().dist_attr();
    ASSERT_NE(dist, nullptr);
    mappings[std::string(*data->attribute("name").AsString())] = dist->dims_mapping;
    // Every reader reads the distributed value, the shard_tensor alone the dense one.
    EXPECT_EQ(op->operand(0)->use_count(), 1u);
  }
  EXPECT_EQ(mappings, (std::map<std::string, Dims>{{"w1", {-1, 0}}, {"b1", {0}}, {"w2", {0, -1}}}));
}

TEST(ShardAnnotationTest, DataParallelShardsTheBatchOfEachFeed) {
  Program program = testing::TwoLayerForward(6);
  ASSERT_TRUE(AnnotateShards(program, DataParallelAnnotations(2, {"x"})).ok());
  size_t shards = 0;
  for (Operation* op : program.block().ops()) {
    if (op->name() != "dist_op.shard_tensor") continue;
    ++shards;
    const TensorDistAttr* dist = op->result(0)->type().dist_attr();
    ASSERT_NE(dist, nullptr);
    EXPECT_EQ(dist->dims_mapping, Dims({0, -1}));
    EXPECT_EQ(dist->mesh.dim_names, std::vector<std::string>({"dp"}));
    EXPECT_EQ(op->result(0)->type().dims(), Dims({6, 6}));
  }
  EXPECT_EQ(shards, 1u);
}

TEST(ShardAnnotationTest, RefusalsNameTheAnnotationAndTheValue) {
  // A value the program lacks.
  Program program = testing::TwoLayerForward(4);
  Status status = AnnotateShards(program, DataParallelAnnotations(2, {"image"}));
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.ToString().find("image"), std::string::npos) << status.ToString();
  // A dims_mapping of the wrong length, located at the file's pointer and the op's var.
  program = testing::TwoLayerForward(4);
  StatusOr<ShardAnnotations> parsed = ParseShardAnnotations(
      R"j({"mesh": {"shape": [2], "process_ids": [0, 1]}, "values": {"w1": {"dims_mapping": [0]}}})j",
      "a.json");
  ASSERT_TRUE(parsed.ok());
  status = AnnotateShards(program, *parsed);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("a.json: /values/w1"), std::string::npos) << status.ToString();
  EXPECT_NE(status.ToString().find("w1"), std::string::npos);
  // b1 has 8 elements: over 5 ranks pieces of 2 leave the last one empty (2,2,2,2,0), which
  // Paddle's split rule cannot lay out.
  program = testing::TwoLayerForward(4);
  parsed = ParseShardAnnotations(
      R"j({"mesh": {"shape": [5], "process_ids": [0, 1, 2, 3, 4]},
          "values": {"b1": {"placements": ["Shard(0)"]}}})j",
      "a.json");
  ASSERT_TRUE(parsed.ok());
  status = AnnotateShards(program, *parsed);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("/values/b1"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace irm::newir
