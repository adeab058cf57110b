// Completion for the tensor-parallel pass: from the parameters' placements, the dims_mapping of
// every var of a serial training program's root block and the distributed implementation each op
// needs, as Paddle's legacy auto-parallel completion (python/paddle/distributed/auto_parallel/
// static/completion.py) followed by the choice of a dist op impl per op (operators/dist_*.py).
// Forward ops propagate the mappings from their inputs; a gradient takes its forward var's
// mapping; an optimizer op's state takes the mapping of the parameter it updates. An op with a
// sharded input that no rule covers is an error naming it, never a silent replication.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "oldir/passes/placements.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// How an op of the serial program becomes ops of a rank.
enum class ShardedOp {
  kLocal,                       // the op as is, on local shapes
  kColumnParallelMatmul,        // c_identity on X, then the matmul with the column shard
  kRowParallelMatmul,           // matmul with the row shard, then c_allreduce_sum of the output
  kVocabParallelEmbedding,      // c_embedding of the table's rows, then c_allreduce_sum
  kParallelCrossEntropy,        // c_softmax_with_cross_entropy over the vocabulary shard
  kColumnParallelMatmulGrad,    // matmul_v2_grad, then c_allreduce_sum of X@GRAD
  kRowParallelMatmulGrad,       // c_identity on Out@GRAD, then matmul_v2_grad
  kVocabParallelEmbeddingGrad,  // c_embedding_grad
  kParallelCrossEntropyGrad,    // c_softmax_with_cross_entropy_grad
};

struct TensorParallelCompletion {
  // Var name -> dims_mapping, for every var of the root block an op reads or writes.
  std::unordered_map<std::string, DimsMapping> vars;
  // Root-block op index -> implementation, for the ops that are not kLocal.
  std::map<int, ShardedOp> ops;
  // reshape2 / reshape2_grad op index -> its `shape` attr on the local shapes.
  std::map<int, std::vector<int32_t>> reshapes;
};

// kInvalidArgument (located at the op or var) for an op with a sharded input no rule covers, a
// sharded dim mp_degree does not divide, or a program without a root block.
StatusOr<TensorParallelCompletion> CompleteTensorParallel(const Program& main,
                                                          const Placements& placements,
                                                          int mp_degree);

}  // namespace irm::oldir::passes
