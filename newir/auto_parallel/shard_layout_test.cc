// Paddle's split rule and mesh geometry: pieces of ceil(size/n) with the rest on the last rank
// (r_to_s_reshard_func.py: piece_len = (total + n - 1) // n, the last rank's end is the total),
// coordinates and the 1-D sub-meshes of get_1D_sub_process_mesh's docstring
// (nd_mesh_reshard_func.py).
#include "newir/auto_parallel/shard_layout.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/reshard_test_support.h"

namespace irm::newir {
namespace {

TEST(ShardLayoutTest, PiecesOfCeilSizeAndTheRestOnTheLastRank) {
  const std::pair<int64_t, int64_t> nine_over_two[] = {{0, 5}, {5, 4}};
  for (int64_t i = 0; i < 2; ++i) {
    StatusOr<ShardPiece> piece = PieceOf(9, 2, i);
    ASSERT_TRUE(piece.ok());
    EXPECT_EQ(piece->offset, nine_over_two[i].first);
    EXPECT_EQ(piece->size, nine_over_two[i].second);
  }
  StatusOr<ShardPiece> last = PieceOf(10, 4, 3);  // 3, 3, 3, 1
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->offset, 9);
  EXPECT_EQ(last->size, 1);
  EXPECT_EQ(PieceOf(5, 4, 0).status().message(),
            "a dim of 5 does not split over 4 ranks: pieces of 2 leave the last one -1");
}

TEST(ShardLayoutTest, SubMeshesFollowPaddlesExample) {
  // get_1D_sub_process_mesh: mesh [[0, 1, 2], [3, 4, 5]]; along 0 rank 4 is in [1, 4], along 1
  // in [3, 4, 5].
  ProcessMesh mesh;
  mesh.shape = {2, 3};
  mesh.process_ids = {0, 1, 2, 3, 4, 5};
  const std::vector<int64_t> at = *MeshCoordinate(mesh, 4);
  EXPECT_EQ(at, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(SubMeshAlong(mesh, 0, at), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(SubMeshAlong(mesh, 1, at), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_FALSE(MeshCoordinate(mesh, 6).has_value());
}

TEST(ShardLayoutTest, LocalDimsOfEachRank) {
  const TensorDistAttr dist = testing::Layout({2, 2}, {0, 1, 2, 3}, {1, -1, 0});
  EXPECT_EQ(*LocalDimsOn({7, 3, 4}, dist, 0), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(*LocalDimsOn({7, 3, 4}, dist, 3), (std::vector<int64_t>{3, 3, 2}));
  EXPECT_EQ(LocalDimsOn({7, 3, 4}, dist, 4).status().message(),
            "rank 4 is not in the mesh (process_ids [0,1,2,3])");
}

}  // namespace
}  // namespace irm::newir
