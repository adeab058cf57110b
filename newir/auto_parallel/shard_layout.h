// Where a rank's part of a distributed tensor lies: Paddle's split rule for a tensor dim sharded
// over a mesh dim (pieces of ceil(size/n), the last one takes what is left; reshard_funcs/
// r_to_s_reshard_func.py and s_to_r_reshard_func.py), a rank's coordinate in a process mesh, the
// 1-D sub-mesh through a rank along a mesh dim (get_1D_sub_process_mesh in
// nd_mesh_reshard_func.py) and the local dims a rank holds. Every distributed pass of newir/
// reads layouts through here, so that they agree on which elements a rank owns.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "newir/dist_attr.h"
#include "newir/types.h"

namespace irm::newir {

// One rank's piece of a dim of `size` split into `pieces`.
struct ShardPiece {
  int64_t offset = 0;
  int64_t size = 0;
};

// The piece at `index` (0-based) of a dim of `size` split into `pieces`: pieces of
// ceil(size/pieces), the last one what is left. Fails (unlocated) when that leaves the last piece
// empty (size 5 over 4 ranks: 2, 2, 2, -1), which Paddle's rule cannot lay out.
StatusOr<ShardPiece> PieceOf(int64_t size, int64_t pieces, int64_t index);

// `process`'s coordinate in `mesh` (row-major over process_ids), or nothing when it is not there.
std::optional<std::vector<int64_t>> MeshCoordinate(const ProcessMesh& mesh, int64_t process);

// The processes of `mesh` that share every coordinate of `coordinate` except the one along
// `mesh_dim`, in order along it: the 1-D group a collective over that mesh dim runs on.
std::vector<int64_t> SubMeshAlong(const ProcessMesh& mesh, int64_t mesh_dim,
                                  const std::vector<int64_t>& coordinate);

// The dims `process` holds of a tensor of `global` dims laid out by `dist`: a dim sharded over a
// mesh dim is the process's piece of it (PieceOf at its coordinate there); dynamic dims stay -1.
// Fails (unlocated) when the process is not in the mesh or a piece would be empty.
StatusOr<std::vector<int64_t>> LocalDimsOn(const std::vector<int64_t>& global,
                                           const TensorDistAttr& dist, int64_t process);

// The dense tensor type `process` holds of a pd_dist.tensor type.
StatusOr<Type> LocalDenseTypeOn(const Type& dist_type, int64_t process);

}  // namespace irm::newir
