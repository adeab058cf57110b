// SPMD completion: given a serial program whose parameters and inputs were made distributed
// (dist_op.shard_tensor), every op that reads a distributed value gets its layout decided by its
// SPMD rule (spmd_rules.h): the op records the decision in `op_dist_attr` (mesh, the layout of
// each operand as the op reads it, the layout of each result), its results become pd_dist.tensor
// types, and a `dist_op.reshard` is put before the op wherever the rule asks an operand for
// another layout than the one its producer made (Paddle's PIR completion, then the reshard
// insertion of apply_partition / reshard_pass). lower-reshard and dist-to-dense then make each
// rank's program.
//
// Ops that read no distributed value stay dense (pd_op.data, pd_op.full, builtin.parameter before
// its shard_tensor). A dense operand of an op that does read distributed values counts as
// replicated on the op's mesh; where the rule wants it sharded it is wrapped in a replicated
// shard_tensor and resharded. The dist_op.* ops keep the layouts they carry. A builtin.combine
// takes the types of what it combines, and add_n, which reads it, decides over those tensors
// (its reshards go before the combine). Ops without a rule of their own take Paddle's fallback,
// the replicated rule, when all their operands and results are tensors.
//
// Pipeline stages (pipeline_meshes.h): an op whose op_dist_attr holds only a mesh and a chunk_id
// (>= 0) is assigned to that stage mesh. A distributed operand on another mesh first crosses to
// it with its layout unchanged — a `dist_op.reshard` between the meshes (Paddle's same-status
// reshard) carrying the reader's op_role and chunk_id — then the op completes as above.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

struct SpmdCompletionResult {
  size_t ops_completed = 0;
  size_t reshards_inserted = 0;
};

// Completes `program`'s top block in op order. Fails, located at the op (and the operand), when
// an op not assigned to a stage reads distributed operands on different meshes, when an
// op_dist_attr it already carries names another mesh than its operands, when a rule refuses the
// layouts (a tensor axis sharded by two mesh dims, a softmax axis sharded where Paddle forbids it),
// or when an op with regions reads a distributed value. The cross entropy takes Paddle's
// dynamic-graph rule (a sharded vocabulary is gathered before it), which the reference kernels run
// locally.
StatusOr<SpmdCompletionResult> CompleteSpmd(Program& program);

}  // namespace irm::newir
