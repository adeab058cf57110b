// The verifier ties an op's dist attributes to its mesh: an operand or result entry on a mesh with
// a process the op's mesh lacks is rejected (Paddle's OperationDistAttribute keeps them on the
// op's mesh, or a sub-mesh of it), except for a reshard across meshes, whose operand lies on the
// source mesh (dist_op.cc, ReshardOp::Build).
#include <gtest/gtest.h>

#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using testing::Layout;

// x on mesh `x_mesh` -> relu whose op_dist_attr says mesh `op_mesh` with entries on `entry_mesh`.
Program Relu(const TensorDistAttr& x_layout, const ProcessMesh& op_mesh,
             const TensorDistAttr& entry) {
  Program program;
  Builder b(program.block());
  const Type local = Type::DenseTensor(Type::F32(), {4, 3});
  Value* x = b.Create("pd_op.data", {}, {local},
                      {{"name", Attribute::String("x")},
                       {"shape", Attribute::IntArrayFrom(local.dims())},
                       {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)},
                       {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
                 ->result(0);
  Value* d = b.Create("dist_op.dtensor_from_local", {x}, {testing::DistF32({4, 3}, x_layout, 0)})
                 ->result(0);
  OperationDistAttr dist;
  dist.mesh = op_mesh;
  dist.operands = {Attribute::TensorDist(entry)};
  dist.results = {Attribute::TensorDist(entry)};
  b.Create("pd_op.relu", {d}, {testing::DistF32({4, 3}, entry, 0)},
           {{"op_dist_attr", Attribute::OperationDist(dist)}});
  return program;
}

TEST(DistAttrMeshTest, RejectsAnEntryOffTheOpsMesh) {
  const TensorDistAttr on01 = Layout({2}, {0, 1}, {-1, -1});
  const TensorDistAttr on23 = Layout({2}, {2, 3}, {-1, -1});
  EXPECT_TRUE(VerifyProgram(Relu(on01, on01.mesh, on01)).ok());
  const Status refused = VerifyProgram(Relu(on01, on23.mesh, on01));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("(pd_op.relu)"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.ToString().find("operand(0) lies on mesh mesh_shape:[2],process_ids:[0,1], "
                                    "which is neither the op's mesh "
                                    "mesh_shape:[2],process_ids:[2,3] nor a sub-mesh of it"),
            std::string::npos)
      << refused.ToString();
  // A sub-mesh of the op's mesh is accepted (Paddle's MoE ops place pieces so).
  const TensorDistAttr on1 = Layout({1}, {1}, {-1, -1});
  EXPECT_TRUE(VerifyProgram(Relu(on1, on01.mesh, on1)).ok());
}

TEST(DistAttrMeshTest, AReshardAcrossMeshesIsNotRefused) {
  const Program program = testing::ReshardProgram({5, 3}, Layout({2}, {0, 1}, {0, -1}),
                                                  Layout({2}, {2, 3}, {0, -1}), 2);
  const Status verified = VerifyProgram(program);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

}  // namespace
}  // namespace irm::newir
