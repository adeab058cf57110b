// Remove other ranks' ops: after reshard lowering, one rank's program still holds the ops of every
// mesh of the serial program; an op whose mesh does not hold the rank is another rank's work and
// goes, with the dense ops (a parameter, a feed, a constant) that only fed it. This is Paddle's
// remove_other_rank_op_pass (python/paddle/distributed/auto_parallel/static/pir_pass.py), run
// between the reshard pass and dist-to-dense as Paddle's engine runs it. An op's mesh is its
// op_dist_attr's, or, for a dist op without one (dtensor_from_local / dtensor_to_local), the mesh
// of its distributed side.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// Erases from `program`'s top block every op on a mesh without `rank`, then every dense op without
// regions whose results were read only by erased ops. Returns how many ops went. Fails, located at
// the reader, when an op the rank keeps reads a value made only by another rank's op (a
// cross-mesh read that is not a lowered reshard); nothing is erased then.
StatusOr<size_t> RemoveOtherRankOps(Program& program, int64_t rank);

}  // namespace irm::newir
