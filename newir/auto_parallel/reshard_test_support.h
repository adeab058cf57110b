// Test support for the auto-parallel passes: a program that takes one rank's local tensor `x`,
// wraps it as a distributed tensor of layout `src` (dtensor_from_local), reshards it to `dst`,
// unwraps it (dtensor_to_local) and fetches it as "out"; and what a lowered reshard became.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/builder.h"
#include "newir/program.h"

namespace irm::newir::testing {

inline TensorDistAttr Layout(std::vector<int64_t> mesh_shape, std::vector<int64_t> process_ids,
                             std::vector<int64_t> dims_mapping,
                             std::map<int64_t, ReduceType> partial = {}) {
  TensorDistAttr dist;
  dist.mesh.shape = std::move(mesh_shape);
  dist.mesh.process_ids = std::move(process_ids);
  dist.dims_mapping = std::move(dims_mapping);
  dist.partial_status = std::move(partial);
  return dist;
}

// The pd_dist.tensor of `global` f32 dims laid out by `dist`, with `rank`'s local dims (the
// rank's own when it is in the mesh, else the mesh's first process's).
inline Type DistF32(const std::vector<int64_t>& global, const TensorDistAttr& dist, int64_t rank) {
  const int64_t holder = MeshCoordinate(dist.mesh, rank) ? rank : dist.mesh.process_ids.front();
  StatusOr<std::vector<int64_t>> local = LocalDimsOn(global, dist, holder);
  EXPECT_TRUE(local.ok()) << local.status().ToString();
  StatusOr<Type> type = Type::DistDenseTensor(Type::DenseTensor(Type::F32(), global), dist,
                                              local.ok() ? *local : global);
  EXPECT_TRUE(type.ok()) << type.status().ToString();
  return type.ok() ? *type : Type();
}

inline Program ReshardProgram(const std::vector<int64_t>& global, const TensorDistAttr& src,
                              const TensorDistAttr& dst, int64_t rank) {
  Program program;
  Builder b(program.block());
  const Type src_type = DistF32(global, src, rank);
  const Type dst_type = DistF32(global, dst, rank);
  const Type local_in = Type::DenseTensor(Type::F32(), src_type.local_dims());
  const Type local_out = Type::DenseTensor(Type::F32(), dst_type.local_dims());
  Value* x = b.Create("pd_op.data", {}, {local_in},
                      {{"name", Attribute::String("x")},
                       {"shape", Attribute::IntArrayFrom(local_in.dims())},
                       {"dtype", Attribute::DataTypeAttr(DataType::kFloat32)},
                       {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))}})
                 ->result(0);
  Value* d = b.Create("dist_op.dtensor_from_local", {x}, {src_type})->result(0);
  OperationDistAttr op_dist;
  op_dist.mesh = dst.mesh;
  op_dist.operands = {Attribute::TensorDist(src)};
  op_dist.results = {Attribute::TensorDist(dst)};
  Value* r = b.Create("dist_op.reshard", {d}, {dst_type},
                      {{"op_dist_attr", Attribute::OperationDist(op_dist)}})
                 ->result(0);
  Value* out = b.Create("dist_op.dtensor_to_local", {r}, {local_out})->result(0);
  b.Create("pd_op.fetch", {out}, {local_out},
           {{"name", Attribute::String("out")}, {"col", Attribute::Int32(0)}});
  return program;
}

// The names of the ops between dtensor_from_local and dtensor_to_local: what the reshard became.
inline std::vector<std::string> LoweredOps(const Program& program) {
  std::vector<std::string> names;
  bool inside = false;
  for (Operation* op = program.block().front(); op != nullptr; op = op->next()) {
    if (op->name() == "dist_op.dtensor_to_local") break;
    if (inside) names.emplace_back(op->name());
    if (op->name() == "dist_op.dtensor_from_local") inside = true;
  }
  return names;
}

}  // namespace irm::newir::testing
