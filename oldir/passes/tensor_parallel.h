// Tensor (model) parallelism as Paddle's legacy static auto-parallel applied it: a serial training
// program (startup + main with forward, backward and optimizer ops, op_role attributes, as
// oldir/models/training.h builds it) and the placements of its parameters become the programs of
// one rank of the mp group. Completion (tensor_parallel_completion.h) gives every var a
// dims_mapping and every op an implementation; the partition then writes the rank's programs:
// local shapes in every var desc, the communication Paddle's dist op implementations insert
// (c_identity / c_allreduce_sum around column- and row-parallel matmuls, c_embedding +
// c_allreduce_sum for the vocabulary-parallel embedding, c_softmax_with_cross_entropy for the
// parallel cross entropy, and their backward twins), and in the startup program the local shape
// of every sharded initialiser with the rank's `shards` entry (ShardSlice), so that the runtime
// draws exactly the serial numbers of the rank's elements.
//
// The output is an ordinary training program of the rank, for the pipeline and data-parallel
// passes to take next. Gradients of replicated parameters are equal on every mp rank and need no
// synchronisation in pure tensor parallelism.
#pragma once

#include "common/status.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/placements.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

struct TensorParallelOptions {
  int mp_degree = 1;
  int mp_rank = 0;
  int ring_id = 0;  // the mp group's ring
  Placements placements;
};

// The programs of rank `mp_rank` of the mp group. kInvalidArgument (located, nothing returned)
// for mp_rank outside [0, mp_degree), mp_degree not dividing a sharded dim (the vocabulary, the
// attention heads, a linear's width), a placement naming no parameter, or an op with a sharded
// input that the pass has no rule for.
StatusOr<RankPrograms> ApplyTensorParallel(const Program& startup, const Program& main,
                                           const TensorParallelOptions& options);

// The whole mp group as a world of its own: mp_degree ranks on one ring (0) of ranks
// 0..mp_degree-1, each rank's programs from ApplyTensorParallel.
StatusOr<DistributedPrograms> ApplyTensorParallelWorld(const Program& startup, const Program& main,
                                                       int mp_degree, const Placements& placements);

}  // namespace irm::oldir::passes
