// The auto-parallel passes of the new IR as the pass manager runs them:
//   spmd-completion                     every op's layouts by its SPMD rule, reshards where an
//                                       operand needs another layout (spmd_completion.h);
// then one rank at a time:
//   lower-reshard{rank=R world-size=N}  every dist_op.reshard becomes rank R's collectives
//                                       (reshard_lowering.h), rings planned for all ranks alike;
//   remove-other-ranks{rank=R}         the ops of meshes without rank R go
//                                       (remove_other_ranks.h);
//   dist-to-dense{rank=R}               rank R's dense program (dist_to_dense.h).
// and on a rank's dense program:
//   gradient-merge{k-steps=K avg=B}     Paddle's PIR gradient merge, the optimizer gated by a
//                                       pd_op.if every K steps (gradient_merge.h).
#pragma once

#include "common/status.h"
#include "newir/pass_registry.h"

namespace irm::newir {

Status RegisterAutoParallelPasses(PassRegistry& registry);

}  // namespace irm::newir
