// Dist to dense: one rank's dense program from a distributed one whose reshards are lowered
// (Paddle's dist_to_dense_pass.cc, which runs after the reshard pass and remove_other_rank_op):
// every pd_dist.tensor type becomes the dense type of the rank's local dims (shard_layout.h's
// split rule), dist_op.shard_tensor leaves its operand in place holding the local tensor (the
// parameter or input is created with its local shape, as Paddle's mix-to-dist does; a
// pd_op.data's shape follows), dist_op.dtensor_from_local and dist_op.dtensor_to_local become
// the tensor they wrap or unwrap, and op_dist_attr attributes go.
//
// A value laid out on a mesh without the rank (Paddle erases its ops on that rank) keeps the
// local dims of its mesh's first process, so that the program stays well typed.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// Makes `program` the dense program of `rank`. Fails, located at the op, when a dist_op.reshard
// is left (lower them first) or a layout does not split (shard_layout.h).
Status DistToDense(Program& program, int64_t rank);

}  // namespace irm::newir
