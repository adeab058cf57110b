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
// `support_shard_softmax_dim` picks between Paddle's two registrations: true is
// CrossEntropyWithSoftmaxInferSpmdStatic (the axis stays sharded, for
// c_softmax_with_cross_entropy), false is CrossEntropyWithSoftmaxInferSpmd (input and softmax are
// asked for the axis unsharded, the dynamic-graph rule, which local kernels can run).
StatusOr<SpmdDecision> CrossEntropyWithSoftmaxSpmd(const DistTensorSpec& x,
                                                   const DistTensorSpec& label, int64_t axis,
                                                   bool soft_label,
                                                   bool support_shard_softmax_dim = true);
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

// paddle/phi/infermeta/spmd_rules/layer_norm.cc, LayerNormInferSpmd: the dims from
// begin_norm_axis on are unsharded, scale and bias replicated, out as x, mean and variance take
// the sharding of the dims before begin_norm_axis. The translator's mean and variance are
// flattened to one dim (Paddle's rule writes them with begin_norm_axis dims): with `mean_rank` 1
// and begin_norm_axis above 1 only x's dim 0 may stay sharded (what the flattened dim can hold
// as contiguous pieces, the restriction Paddle's rule comment states). Inputs: x, scale, bias;
// outputs: out, mean, variance.
StatusOr<SpmdDecision> LayerNormSpmd(const DistTensorSpec& x, const DistTensorSpec& scale,
                                     const DistTensorSpec& bias, int64_t begin_norm_axis,
                                     size_t mean_rank);
// LayerNormGradInferSpmd: x, mean, variance and out_grad (without Partial) merged on the dims
// before begin_norm_axis, the others unsharded; scale and bias replicated; x_grad as out_grad;
// scale_grad and bias_grad replicated and Partial(sum) on the mesh dims that shard those dims.
// Inputs: x, scale, bias, mean, variance, out_grad; outputs: x_grad, scale_grad, bias_grad.
StatusOr<SpmdDecision> LayerNormGradSpmd(const DistTensorSpec& x, const DistTensorSpec& scale,
                                         const DistTensorSpec& bias, const DistTensorSpec& mean,
                                         const DistTensorSpec& variance,
                                         const DistTensorSpec& out_grad, int64_t begin_norm_axis);

// paddle/phi/infermeta/spmd_rules/embedding.cc, EmbeddingInferSpmd: ids "ab..", weight "jk",
// out "ab..k"; a weight sharded on its rows (the vocabulary) makes out Partial(sum) on that mesh
// dim (each rank looks up the ids its rows hold, c_embedding's semantics). padding_idx or sparse
// with sharded rows is refused as Paddle does. Inputs: x (ids), weight; output: out.
StatusOr<SpmdDecision> EmbeddingSpmd(const DistTensorSpec& x, const DistTensorSpec& weight,
                                     int64_t padding_idx, bool sparse);
// EmbeddingGradInferSpmd: the weight is asked for unsharded rows (the embedding_grad kernel does
// not look up by row ranges); weight_grad is [-1, out_grad's last dim] and Partial(sum) on the
// mesh dims that shard the ids' dims. Inputs: x, weight, out_grad; output: weight_grad.
StatusOr<SpmdDecision> EmbeddingGradSpmd(const DistTensorSpec& x, const DistTensorSpec& weight,
                                         const DistTensorSpec& out_grad, bool sparse);

// paddle/phi/infermeta/spmd_rules/softmax.cc, SoftmaxInferSpmd: the softmax axis is unsharded,
// out as x. SoftmaxGradInferSpmd (out, out_grad -> x_grad): both merged, the axis unsharded.
StatusOr<SpmdDecision> SoftmaxSpmd(const DistTensorSpec& x, int64_t axis);
StatusOr<SpmdDecision> SoftmaxGradSpmd(const DistTensorSpec& out, const DistTensorSpec& out_grad,
                                       int64_t axis);

// paddle/phi/infermeta/spmd_rules/dropout.cc, DropoutFwdInferSpmd: out and mask as x (an
// elementwise op); the optional seed tensor replicated. Inputs: x, seed_tensor; outputs: out, mask.
// DropoutGradInferSpmd (mask, out_grad -> x_grad): elementwise over both.
StatusOr<SpmdDecision> DropoutSpmd(const DistTensorSpec& x,
                                   const std::optional<DistTensorSpec>& seed_tensor);
StatusOr<SpmdDecision> DropoutGradSpmd(const DistTensorSpec& mask, const DistTensorSpec& out_grad);

// paddle/phi/infermeta/spmd_rules/scale.cc (ScaleInferSpmd, an elementwise unary rule): out as
// x; the scale tensor, when given as an operand, replicated. Inputs: x, scale; output: out.
SpmdDecision ScaleSpmd(const DistTensorSpec& x, const std::optional<DistTensorSpec>& scale);

// paddle/phi/infermeta/spmd_rules/add_n.cc, AddNInferSpmd: the inputs (of equal ranks) merged
// letter by letter; every input and out take the merged sharding; when every input is Partial
// with the same status, inputs and out keep it (the sum of partial sums), else none is Partial.
StatusOr<SpmdDecision> AddNSpmd(const std::vector<DistTensorSpec>& inputs);

// paddle/phi/infermeta/spmd_rules/triu.cc, TriuInferSpmd: the last two dims unsharded, out as x.
StatusOr<SpmdDecision> TriuSpmd(const DistTensorSpec& x);

// paddle/phi/infermeta/spmd_rules/transpose.cc, TransposeInferSpmd: out dim i takes x dim
// perm[i]'s sharding. TransposeGradInferSpmd (out_grad -> x_grad): the inverse permutation.
StatusOr<SpmdDecision> TransposeSpmd(const DistTensorSpec& x, const std::vector<int64_t>& perm);
StatusOr<SpmdDecision> TransposeGradSpmd(const DistTensorSpec& out_grad,
                                         const std::vector<int64_t>& perm);

// paddle/phi/infermeta/spmd_rules/reshape.cc with dim_trans.cc (MakeReshapeDimTrans,
// InferFromDimTrans): x's dims and the output's are cut into groups of equal product; a group of
// one dim each is kept, a merged group (Flatten) keeps the sharding of its first input dim (the
// others asked unsharded), a split group (Split) gives the input dim's sharding to its first
// output dim when the mesh dim's size divides it (else the input is asked unsharded), and a
// group of several into several is a split of a flatten. Dims of size 1 are skipped, and a
// dynamic dim (-1) may only meet a dynamic dim. `out_shape` is the resolved output shape (0 and
// -1 of the shape operand already replaced). Inputs: x (the shape operand is not a tensor
// layout the rule decides: it stays as is); outputs: out.
StatusOr<SpmdDecision> ReshapeSpmd(const DistTensorSpec& x, const std::vector<int64_t>& out_shape);

// paddle/phi/infermeta/spmd_rules/concat.cc, ConcatInferSpmd: the inputs (of equal ranks) merged
// letter by letter, the concat axis unsharded, every input and out the merged sharding.
StatusOr<SpmdDecision> ConcatSpmd(const std::vector<DistTensorSpec>& inputs, int64_t axis);

// paddle/phi/infermeta/spmd_rules/split.cc, SplitInferSpmd / SplitWithNumInferSpmd: the split
// axis unsharded, each of the `num_outputs` outputs as x. Inputs: x; outputs: the pieces.
StatusOr<SpmdDecision> SplitSpmd(const DistTensorSpec& x, int64_t axis, size_t num_outputs);

// paddle/phi/infermeta/spmd_rules/slice.cc, SliceInferSpmd: the sliced axes unsharded, out as x
// without the sliced dims decrease_axis names. Inputs: x (starts and ends are not decided);
// output: out.
StatusOr<SpmdDecision> SliceSpmd(const DistTensorSpec& x, const std::vector<int64_t>& axes,
                                 const std::vector<int64_t>& decrease_axis);

// paddle/phi/infermeta/spmd_rules/replicated.cc, ReplicatedInferSpmd: every input and output
// replicated on the first input's mesh; outputs of the given ranks (nullopt: absent).
SpmdDecision ReplicatedSpmd(const std::vector<std::optional<DistTensorSpec>>& inputs,
                            const std::vector<std::optional<size_t>>& output_ranks);

}  // namespace irm::newir
