// What one rank does to carry out a `dist_op.reshard`, as data: the list of 1-D steps Paddle's
// PIR reshard functions (python/paddle/distributed/auto_parallel/static/reshard_funcs/) choose
// between two distributions, for that rank. reshard_lowering.h turns the steps into ops; the
// process-group planner walks them for every rank so that every rank numbers the rings alike.
//
// The choice follows Paddle:
//   * different meshes of one shape: the same-status send/recv between the ranks at the same
//     mesh position (same_status_reshard_func.py), then the reshard on the destination mesh;
//   * 1-D mesh: p->r all_reduce, p->s reduce_scatter (sum only), r->s slice, s->r all_gather,
//     s->s all_to_all (the *_reshard_func.py of each pair);
//   * N-D mesh (nd_mesh_reshard_func.py): every partial mesh dim the destination drops becomes
//     replicated (p->r on the 1-D sub-mesh through the rank), then, from the last differing
//     tensor dim down to dim 0, each shard that changes becomes replicated (s->r), then each
//     dim the destination shards is sliced (r->s).
// A destination that adds a partial status (r->p) is not supported (Paddle's N-D function raises
// NotImplementedError for it too).
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "newir/dist_attr.h"

namespace irm::newir {

struct ReshardStep {
  enum class Kind { kPToR, kPToS, kRToS, kSToR, kSToS, kSend, kRecv };
  Kind kind = Kind::kPToR;
  // The ranks of the collective in group order; for kSend and kRecv the pair [src, dst].
  std::vector<int64_t> group = {};
  // This rank's index in `group`.
  int64_t position = 0;
  // The tensor dim split or gathered (kSToS: the dim sharded afterwards).
  int64_t axis = -1;
  // kSToS: the dim sharded before.
  int64_t in_axis = -1;
  // kPToR: the pending reduction.
  ReduceType reduce = ReduceType::kSum;
  // The global sizes of the tensor's dims.
  std::vector<int64_t> global_dims = {};
  // kRecv: the dist attribute of the received tensor (the source layout on the destination mesh).
  TensorDistAttr received = {};
};

const char* ReshardStepKindName(ReshardStep::Kind kind);

// The steps `rank` takes to bring a tensor of `global_dims` from `src` to `dst`. Empty when the
// rank takes no part (not in either mesh) or the distributions are equal. Fails (unlocated) for
// a change Paddle does not lower (meshes of different shapes, r->p, p->s of another reduction
// than sum, a mesh naming the rank at two positions) or a dim that does not split where Paddle
// needs it to (s->s needs both dims divisible by the mesh; any split needs non-empty pieces).
StatusOr<std::vector<ReshardStep>> PlanReshard(const std::vector<int64_t>& global_dims,
                                               const TensorDistAttr& src, const TensorDistAttr& dst,
                                               int64_t rank);

}  // namespace irm::newir
