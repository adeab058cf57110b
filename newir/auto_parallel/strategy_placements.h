// The standard placements of a strategy for the zoo models, read off the new-IR program itself:
// data parallelism shards every batch feed on a "dp" mesh axis (Paddle's shard_dataloader);
// tensor parallelism places the parameters as Megatron does (column-parallel then row-parallel
// linears, qkv and ffn-in by columns, attention-out and ffn-out by rows, the head by columns, the
// word embedding by vocabulary rows) on an "mp" axis; both together use a 2-D mesh [dp, mp] of
// ranks 0..dp*mp-1 in row-major order, so that rank = dp_index * mp + mp_index: Paddle's hybrid
// topology (python/paddle/distributed/fleet/base/topology.py: dp outermost, mp innermost), the
// layout the legacy passes give the same strategy. The parameters and linears are the same the
// legacy placements shard (oldir/passes/placements.h), recognised here from the ops that read
// them: a linear is a pd_op.matmul whose y is a builtin.parameter, its bias the parameter the
// pd_op.add after it adds, the word embedding the table of the first pd_op.embedding. An
// optimizer's state of the parameter's shape (AdamW's moments, momentum's velocity) is placed as
// its parameter, as Paddle's completion does for the optimizer ops (complete_update_annotation).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "newir/auto_parallel/shard_annotation.h"
#include "newir/program.h"

namespace irm::newir {

// The degrees of a strategy's axes (the legacy Strategy's dp_degree, mp_degree, pp_degree).
struct ParallelDegrees {
  int64_t dp = 1;
  int64_t mp = 1;
  int64_t pp = 1;
  int64_t world_size() const { return dp * mp * pp; }
};

// Parameter name -> dims mapping over one model-parallel axis (0: sharded over it, -1: not), for
// every builtin.parameter of the top block (replicated ones included). kInvalidArgument, located
// at the op, for a linear whose weight is not of rank 2 or read transposed, and for a gpt (a
// program with a pd_op.embedding) whose linears do not come as 6 per decoder block plus a head.
StatusOr<std::map<std::string, std::vector<int64_t>>> MegatronPlacements(const Program& main);

// MegatronPlacements for `mp` model-parallel ranks, refused (kInvalidArgument, located at the
// parameter's first reader) where a split dim does not divide by `mp`, as Paddle's
// tensor-parallel layers refuse it.
StatusOr<std::map<std::string, std::vector<int64_t>>> MegatronPlacementsOver(const Program& main,
                                                                             int64_t mp);

// The annotations of `degrees` for `main`, whose batch feeds (split by rows) are `batch_feeds`.
// kUnimplemented with a note for pipeline parallelism (pp > 1: its stages come from the legacy
// passes, not from placements); kInvalidArgument for a degree below 1, and MegatronPlacements'
// errors when mp > 1.
StatusOr<ShardAnnotations> StandardAnnotations(const Program& main, const ParallelDegrees& degrees,
                                               const std::vector<std::string>& batch_feeds);

}  // namespace irm::newir
