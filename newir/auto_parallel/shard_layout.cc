// Paddle's split rule and mesh geometry (shard_layout.h).
#include "newir/auto_parallel/shard_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace irm::newir {
namespace {

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalid, Location{}, std::move(message));
}

}  // namespace

StatusOr<ShardPiece> PieceOf(int64_t size, int64_t pieces, int64_t index) {
  if (pieces < 1 || index < 0 || index >= pieces) {
    return Invalid(fmt::format("piece {} of {} does not exist", index, pieces));
  }
  const int64_t piece = (size + pieces - 1) / pieces;
  const int64_t last = size - piece * (pieces - 1);
  if (last < 1) {
    return Invalid(
        fmt::format("a dim of {} does not split over {} ranks: pieces of {} leave the last one {}",
                    size, pieces, piece, last));
  }
  return ShardPiece{.offset = piece * index, .size = index == pieces - 1 ? last : piece};
}

std::optional<std::vector<int64_t>> MeshCoordinate(const ProcessMesh& mesh, int64_t process) {
  const auto it = std::find(mesh.process_ids.begin(), mesh.process_ids.end(), process);
  if (it == mesh.process_ids.end()) return std::nullopt;
  int64_t linear = it - mesh.process_ids.begin();
  std::vector<int64_t> coordinate(mesh.shape.size(), 0);
  for (size_t d = mesh.shape.size(); d-- > 0;) {
    coordinate[d] = linear % mesh.shape[d];
    linear /= mesh.shape[d];
  }
  return coordinate;
}

std::vector<int64_t> SubMeshAlong(const ProcessMesh& mesh, int64_t mesh_dim,
                                  const std::vector<int64_t>& coordinate) {
  std::vector<int64_t> processes;
  std::vector<int64_t> at = coordinate;
  for (int64_t i = 0; i < mesh.shape[mesh_dim]; ++i) {
    at[mesh_dim] = i;
    int64_t linear = 0;
    for (size_t d = 0; d < mesh.shape.size(); ++d) linear = linear * mesh.shape[d] + at[d];
    processes.push_back(mesh.process_ids[linear]);
  }
  return processes;
}

StatusOr<std::vector<int64_t>> LocalDimsOn(const std::vector<int64_t>& global,
                                           const TensorDistAttr& dist, int64_t process) {
  const std::optional<std::vector<int64_t>> coordinate = MeshCoordinate(dist.mesh, process);
  if (!coordinate) {
    return Invalid(fmt::format("rank {} is not in the mesh (process_ids [{}])", process,
                               fmt::join(dist.mesh.process_ids, ",")));
  }
  std::vector<int64_t> local = global;
  for (size_t i = 0; i < global.size() && i < dist.dims_mapping.size(); ++i) {
    const int64_t mesh_dim = dist.dims_mapping[i];
    if (mesh_dim < 0 || global[i] < 0) continue;
    IRM_ASSIGN_OR_RETURN(ShardPiece piece,
                         PieceOf(global[i], dist.mesh.shape[mesh_dim], (*coordinate)[mesh_dim]));
    local[i] = piece.size;
  }
  return local;
}

StatusOr<Type> LocalDenseTypeOn(const Type& dist_type, int64_t process) {
  const TensorDistAttr* dist = dist_type.dist_attr();
  if (dist == nullptr) return dist_type;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> local, LocalDimsOn(dist_type.dims(), *dist, process));
  return Type::DenseTensor(dist_type.dtype(), std::move(local), dist_type.layout(), dist_type.lod(),
                           dist_type.offset());
}

}  // namespace irm::newir
