// Reshard lowering: every `dist_op.reshard` of a program becomes, for one rank, the ops Paddle's
// PIR reshard functions emit for that rank (reshard_plan.h says which; the op sequences of each
// kind are pinned in reshard_lowering_test.cc against test/auto_parallel/pir/pir_reshard_*.py).
// Like Paddle's reshard pass, the result is one rank's program: slice bounds, padding and the
// peers of send/recv depend on the rank.
//
// The ops work on the rank's local tensor. The values they make in between carry dense types of
// local dims; the last one takes the reshard's result type (a pd_dist.tensor), so that readers of
// the result are unchanged until dist-to-dense makes every type local. The collectives carry an
// op_dist_attr (mesh, operand and result layouts) as Paddle's do.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "newir/auto_parallel/process_groups.h"
#include "newir/program.h"

namespace irm::newir {

// The largest process id named by any mesh of `program` (its dist types and op_dist_attrs) plus
// one: the smallest world that runs it. 0 when nothing is distributed.
int64_t WorldSizeOf(const Program& program);

// Registers in `groups`, in program order and for every rank of each reshard's meshes in turn,
// every group the reshards of `program` communicate over, so that lowering the same program for
// each rank with copies of the table gives every rank the same rings. Fails with the reshard's
// location (op and value) on a reshard PlanReshard refuses.
Status PlanProcessGroups(const Program& program, ProcessGroupTable& groups);

// Lowers every dist_op.reshard of `program` (nested blocks too) for `rank`, taking rings from
// `groups` (new groups are registered; plan them first for rings that agree across ranks).
// Returns how many reshards were lowered. A reshard whose result has readers on a rank that holds
// none of it (outside the destination mesh) gets a zero tensor of the first destination rank's
// local dims there: Paddle removes such readers with the other ranks' ops. Fails, with the
// reshard's location, where PlanReshard refuses or a type is not a pd_dist.tensor.
StatusOr<size_t> LowerReshards(Program& program, int64_t rank, ProcessGroupTable& groups);

}  // namespace irm::newir
