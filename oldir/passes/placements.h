// Where the parameters of a serial program live on a one-dimensional model-parallel mesh: per
// parameter a dims_mapping (one entry per tensor dim: -1 replicated, 0 split over the mp ranks),
// as Paddle's shard_tensor annotations give them. The standard placements of the model zoo are
// Megatron's (column- and row-parallel linear pairs, a vocabulary-parallel word embedding); any
// other placement comes from a dist-attr sidecar (oldir/dist_sidecar.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/dist_sidecar.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

using DimsMapping = std::vector<int64_t>;
// Parameter name -> dims_mapping over the mp mesh.
using Placements = std::map<std::string, DimsMapping>;

inline bool IsSharded(const DimsMapping& mapping) {
  for (int64_t m : mapping) {
    if (m >= 0) return true;
  }
  return false;
}

// The Megatron placements of a zoo model (oldir/models), every parameter annotated:
// - gpt (the program has a lookup_table_v2): per decoder block q, k, v and fc1 column-parallel
//   (weight [in, out] as [-1, 0], bias [0]), proj and fc2 row-parallel (weight [0, -1], bias
//   replicated, added after the all-reduce); the head column-parallel; the word embedding
//   vocabulary-parallel ([0, -1]); the position embedding and the LayerNorms replicated.
// - mlp: the linears in pairs, column then row; an unpaired last linear stays replicated.
// The linears are recognised as the forward matmul_v2 ops whose Y is a parameter, in program
// order, each with the elementwise_add that adds its bias. kInvalidArgument for a program of
// another shape (a gpt whose linears do not come as 6 per block plus the head).
StatusOr<Placements> MegatronPlacements(const Program& main);

// The placements a sidecar gives the parameters of the program's root block: every parameter
// must have a var entry (kInvalidArgument naming the first that has none) on a one-dimensional
// mesh, with one dims_mapping entry per tensor dim, each -1 or 0.
StatusOr<Placements> PlacementsFromSidecar(const dist_proto::DistAttrSidecar& sidecar,
                                           const Program& main);

}  // namespace irm::oldir::passes
