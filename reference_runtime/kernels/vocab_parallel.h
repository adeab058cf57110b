// The vocabulary-parallel kernels of Megatron tensor parallelism, as Paddle defines them: the
// sharded embedding c_embedding (+ grad) and the parallel cross entropy
// c_softmax_with_cross_entropy (+ grad), each rank holding a contiguous slice of the vocabulary.
// Shared by both executors like the other kernels; each binds its own op (legacy slots and
// attributes, or the pd_op signature) to them. The forward cross entropy talks to the other
// ranks through the RowAllReduce callbacks the executor gives it, so that these kernels stay free
// of the communicator (and testable on one rank).
#pragma once

#include <cstdint>
#include <functional>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// c_embedding (phi c_embedding kernel, paddle/phi/kernels/{cpu,gpu}/c_embedding_kernel.*):
// out[ids..., :] = weight[id - start_index, :] for start_index <= id < start_index + rows, zeros
// for every other id. weight is [rows, width] (rows, width > 0), of any float dtype; ids int32 or
// int64 of any shape; out has ids' shape then width. Ids below 0, or at or above vocab_size when
// vocab_size >= 0, are errors (the GPU kernel's check); start_index must not be negative
// (c_embedding_op.cc's InferShape).
StatusOr<Tensor> CEmbedding(const Tensor& weight, const Tensor& ids, int64_t start_index,
                            int64_t vocab_size);

// c_embedding_grad (c_embedding_grad_kernel.*): weight_grad of weight's shape and dtype, row
// id - start_index accumulating out_grad's rows of the ids in range, in increasing flat index of
// ids, in the compute type from zero, stored once; zeros elsewhere.
StatusOr<Tensor> CEmbeddingGrad(const Tensor& weight, const Tensor& ids, const Tensor& out_grad,
                                int64_t start_index);

// The collective steps of the parallel cross entropy: each all-reduces a [N, 1] tensor of the
// logits' dtype in place across the ranks of the op's ring.
struct RowAllReduce {
  std::function<Status(Tensor&)> max;
  std::function<Status(Tensor&)> sum;
};

struct SoftmaxAndLoss {
  Tensor softmax;  // the logits' shape: this rank's columns of the global softmax
  Tensor loss;     // the logits' shape with the last dim 1
};

// c_softmax_with_cross_entropy (paddle/phi/kernels/gpu/c_softmax_with_cross_entropy_kernel.cu,
// the one real kernel: the CPU one throws): logits [N..., D] are the columns rank * D ..
// rank * D + D - 1 of the global [N..., D * nranks] logits; label [N..., 1] int32/int64 holds
// global classes (or ignore_index). In Paddle's order: row max, all-reduce max; shifted = logits -
// max; the label's shifted logit (0 on the ranks not holding it), all-reduce sum; exp(shifted);
// row sum, all-reduce sum; loss = TolerableValue(TolerableValue(log(sum)) - label logit), 0 where
// the label is ignore_index; softmax = exp(shifted) * (1 / sum). Every intermediate is stored in
// the logits' dtype (float32, float64 or float16), as Paddle's are; rows sum sequentially from
// column 0. A label outside [0, D * nranks) that is not ignore_index is an error, as in Paddle;
// so are rank outside [0, nranks) and a label with a last dim other than 1 (Paddle's multi-label
// form is not supported).
StatusOr<SoftmaxAndLoss> CSoftmaxWithCrossEntropy(const Tensor& logits, const Tensor& label,
                                                  int64_t ignore_index, int rank, int nranks,
                                                  const RowAllReduce& reduce);

// c_softmax_with_cross_entropy_grad (c_softmax_with_cross_entropy_grad_kernel.cu, no
// communication): logits_grad = (softmax - 1) * loss_grad at the label's local column, softmax *
// loss_grad elsewhere, 0 on rows whose label is ignore_index; each step rounded to the softmax's
// dtype as Paddle's are.
StatusOr<Tensor> CSoftmaxWithCrossEntropyGrad(const Tensor& softmax, const Tensor& label,
                                              const Tensor& loss_grad, int64_t ignore_index,
                                              int rank, int nranks);

}  // namespace irm::rt
