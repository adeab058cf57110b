// SPMD rules: given the layouts of an op's inputs, the layouts the op needs its inputs in and the
// layouts of its outputs (Paddle's SpmdInfo), for the ops of a translated training program. Each
// rule follows its Paddle counterpart in paddle/phi/infermeta/spmd_rules/ (named on each
// function): tensor axes get einsum letters, the shardings of inputs are merged per letter
// (MergeShardings), outputs take the merged sharding of their letters, and an output becomes
// Partial along every mesh dim that shards a letter the output does not have (a sharded
// contraction or reduction). Rules never carry an input's Partial status into what they ask of
// the input: a partial input is asked for replicated on its partial mesh dims (Paddle's
// CopyTensorDistAttrForOutput drops it), which is where completion puts a reshard.
//
// Absent optional operands and results are nullopt both ways.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "newir/dist_attr.h"

namespace irm::newir {

// A tensor as a rule sees it (Paddle's DistMetaTensor): global dims (-1: dynamic) and layout.
struct DistTensorSpec {
  std::vector<int64_t> shape;
  TensorDistAttr dist;
};

// What a rule decided (Paddle's SpmdInfo): the layout each input must have and each output's.
struct SpmdDecision {
  std::vector<std::optional<TensorDistAttr>> inputs;
  std::vector<std::optional<TensorDistAttr>> outputs;
};

// Letter -> mesh dim (-1: not sharded) after merging the shardings of several tensors
// (ShardingMergeForTensors in paddle/phi/infermeta/spmd_rules/utils.cc): a letter sharded by
// one tensor and not by another takes the sharding; two different mesh dims on one letter fail
// (Paddle throws NotImplementedError); a mesh dim left on several letters stays on the first
// letter that received it and the others become -1. The letter '1' (a broadcast dim of size 1)
// is never sharded.
using AxisShardings = std::map<char, int64_t>;
StatusOr<AxisShardings> MergeShardings(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors);

// paddle/phi/infermeta/spmd_rules/matmul.cc, MatmulInferSpmd: x "...mk", y "...kn", out
// "...mn" (transposes swap the last two letters); out is Partial where k is sharded.
StatusOr<SpmdDecision> MatmulSpmd(const DistTensorSpec& x, const DistTensorSpec& y, bool trans_x,
                                  bool trans_y);
// MatmulGradInferSpmd: x and y are first brought to what MatmulSpmd asks of them, then
// dx = matmul(dout, y) and dy = matmul(x, dout) with the transposes of the forward op.
// Inputs: x, y, out_grad; outputs: x_grad, y_grad.
StatusOr<SpmdDecision> MatmulGradSpmd(const DistTensorSpec& x, const DistTensorSpec& y,
                                      const DistTensorSpec& out_grad, bool trans_x, bool trans_y);

// paddle/phi/infermeta/spmd_rules/elementwise.cc, ElementwiseUnaryInferSpmd: out as x.
SpmdDecision ElementwiseUnarySpmd(const DistTensorSpec& x);
// ElementwiseBinaryInferSpmd: dims aligned from the right; a dim of size 1 broadcast against a
// larger one is the letter '1'.
StatusOr<SpmdDecision> ElementwiseBinarySpmd(const DistTensorSpec& x, const DistTensorSpec& y);
// ElementwiseUnaryGradInferSpmd (relu_grad: out, out_grad -> x_grad): everything as out_grad,
// without Partial.
SpmdDecision ElementwiseUnaryGradSpmd(const DistTensorSpec& x, const DistTensorSpec& out_grad);
// ElementwiseBinaryGradInferSpmd (add_grad: x, y, out_grad -> x_grad, y_grad): out_grad is asked
// for without Partial; each input and grad takes its sharding of the input's own dims; a grad is
// Partial(sum) along the mesh dims that shard a dim its input was broadcast along (a leading dim
// it lacks, or a dim of size 1), and such a size-1 dim is unsharded.
SpmdDecision ElementwiseBinaryGradSpmd(const DistTensorSpec& x, const DistTensorSpec& y,
                                       const DistTensorSpec& out_grad);

// paddle/phi/infermeta/spmd_rules/reduction.cc, ReductionInferSpmdBase: the reduced letters
// leave the output ('1' with keep_dim); the output is Partial with `reduce` along the mesh dims
// that shard them. Empty `axes`: every dim (mean_all).
SpmdDecision ReductionSpmd(const DistTensorSpec& x, std::vector<int64_t> axes, bool keep_dim,
                           ReduceType reduce);
// ReductionGradInferSpmd: out_grad is asked for without Partial, and x and x_grad take its
// sharding with the reduced dims unsharded. Inputs: x, out_grad; output: x_grad.
SpmdDecision ReductionGradSpmd(const DistTensorSpec& x, const DistTensorSpec& out_grad,
                               std::vector<int64_t> axes, bool keep_dim);

// paddle/phi/infermeta/spmd_rules/cross_entropy_with_softmax.cc: label's letters are x's with
// '1' on the softmax axis (hard labels); softmax and loss take the merged sharding. The softmax
// axis may stay sharded only with hard labels on the last axis (Paddle raises ValueError
// otherwise). Inputs: input, label; outputs: softmax, loss.
StatusOr<SpmdDecision> CrossEntropyWithSoftmaxSpmd(const DistTensorSpec& x,
                                                   const DistTensorSpec& label, int64_t axis,
                                                   bool soft_label);
// CrossEntropyWithSoftmaxGradInferSpmd (label, softmax, loss_grad -> input_grad): the three
// merged, then every tensor asked for the softmax axis unsharded; input_grad as the label is.
StatusOr<SpmdDecision> CrossEntropyWithSoftmaxGradSpmd(const DistTensorSpec& label,
                                                       const DistTensorSpec& softmax,
                                                       const DistTensorSpec& loss_grad,
                                                       int64_t axis, bool soft_label);

// paddle/phi/infermeta/spmd_rules/optimizer.cc, SgdInferSpmd: param and grad merged as an
// elementwise op, learning rate and master param keep their dims mapping, nothing Partial.
// Inputs: param, learning_rate, grad, master_param; outputs: param_out, master_param_out.
StatusOr<SpmdDecision> SgdSpmd(const DistTensorSpec& param, const DistTensorSpec& learning_rate,
                               const DistTensorSpec& grad,
                               const std::optional<DistTensorSpec>& master_param);
// AdamInferSpmdDynamic (adam_ and adamw_, operands in pd_op order: param, grad, learning_rate,
// moment1, moment2, moment2_max, beta1_pow, beta2_pow, master_param, skip_update, then the
// beta1/beta2/epsilon tensors, which keep their layout): a dim stays sharded when every tensor
// that shards it (param and grad after the elementwise merge, the moments) shards it on the same
// mesh dim, else it is unsharded. Outputs: param, moment1, moment2, moment2_max, beta1_pow,
// beta2_pow, master_param.
StatusOr<SpmdDecision> AdamSpmd(const std::vector<std::optional<DistTensorSpec>>& inputs);

// paddle/phi/infermeta/spmd_rules/replicated.cc, ReplicatedInferSpmd: every input and output
// replicated on the first input's mesh; outputs of the given ranks (nullopt: absent).
SpmdDecision ReplicatedSpmd(const std::vector<std::optional<DistTensorSpec>>& inputs,
                            const std::vector<std::optional<size_t>>& output_ranks);

}  // namespace irm::newir
