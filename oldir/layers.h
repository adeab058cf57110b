// Forward layers for legacy programs, written op for op as Paddle 2.6's static graph writes them:
// the op types, slots and attributes of its Python layers (python/paddle/nn, paddle/tensor), so a
// program built from these helpers reads like one a Paddle user's script produced.
//
// What every op carries, and why:
//  - attributes: the op maker's own attributes with their defaults (Paddle's check_attrs fills the
//    ones a layer does not pass) plus the "extra" attributes of op_compat.yaml (use_mkldnn,
//    mkldnn_data_type, use_cudnn, ...), which Operator.__init__ in Paddle 2.4+ always sets from
//    their defaults. Types follow the makers: padding_idx LONG, fill_constant shape LONGS, ...
//  - inputs: every input slot of the op maker; the dispensable ones a layer does not pass are
//    written empty (Operator.__init__ calls set_input(name, []) for them), e.g. dropout's Seed.
//  - outputs: only the slots the layer passes.
//  - output vars: declared with the dims Paddle's compile-time InferShape gives (-1 for the batch),
//    persistable false, stop_gradient true exactly when every input is stop_gradient (Paddle's
//    Block.append_op pass_stop_gradient), or when the layer asks for it (layer_norm Mean/Variance,
//    dropout Mask, fill_constant).
//
// Output names, as Paddle's unique-name generator gives them (the program's names()):
//  - a LayerHelper layer: "<key>_N.tmp_K", N a fresh number for the helper key, K counting its
//    outputs in creation order. Keys: linear (F.linear), layer_norm (Mean tmp_0, Variance tmp_1,
//    Y tmp_2), embedding, relu, gelu, tanh, sigmoid, softmax, dropout (Out tmp_0, Mask tmp_1),
//    reshape2 (Out, XShape), transpose (paddle.transpose: Out, XShape), matmul_v2 (paddle.matmul),
//    scale (paddle.scale), cast, mean (paddle.mean -> reduce_mean, and the `mean` op), sum
//    (paddle.sum -> reduce_sum), softmax_with_cross_entropy (Softmax, Loss), concat, split, slice,
//    fill_constant (paddle.full), assign (paddle.assign, also of an array -> assign_value), add_n
//    (-> sum), triu / tril (-> tril_triu).
//  - Python operators on vars (`a + b`, `a - b`, `a * b`, `a / b`): "tmp_N".
// An nn.Layer takes its own name when it is constructed (nn.Linear -> "linear_0", its parameters
// "linear_0.w_0" and "linear_0.b_0"); calling it runs the functional layer, whose LayerHelper takes
// the next number of the same key ("linear_1.tmp_0"). Create* below are the constructors, the
// functions taking their result are the calls.
//
// Parameters are declared in the main program (persistable, is_parameter, stop_gradient false) and
// in the startup program (the same, plus the initialiser op), with nn's default initialisers
// (LayerHelperBase.create_parameter): weights XavierUniform (ParamAttr's default
// XavierInitializer(uniform=True); fan_in = dims[0], fan_out = dims[1]) for nn.Linear and
// nn.Embedding, biases Constant(0.0), LayerNorm scale Constant(1.0). Initialiser seeds are 0, so
// the startup op takes ModelPrograms::seed (the program's random_seed).
//
// Errors: an input var that is not declared (in the block or an ancestor) or is not a dense
// tensor, and shapes the op would reject, are kInvalidArgument at "block B, op N (type)" with the
// var; nothing is appended then.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "oldir/builder.h"
#include "oldir/models/model.h"

namespace irm::oldir::layers {

// ---- feeds -------------------------------------------------------------------------------------

// paddle.static.data: declares the var in main's root block (need_check_feed, stop_gradient,
// not persistable) and records it in programs->feeds. Returns the name.
StatusOr<std::string> Data(models::ModelPrograms* programs, const models::FeedSpec& spec);

// The feed ops Paddle's executor inserts: the persistable FEED_MINIBATCH var `feed` and, for each
// fed var in `feeds` order i, `feed(X=feed) -> Out=var` with col i, each prepended to main's root
// block (Executor._add_feed_fetch_ops calls _prepend_op per feed, so the last feed ends up first).
Status PrependFeedOps(models::ModelPrograms* programs);

// ---- parameter layers --------------------------------------------------------------------------

struct LinearLayer {
  std::string name;  // "linear_N"
  std::string weight;
  std::string bias;  // empty without bias (bias_attr=False)
  int64_t in = 0, out = 0;
};
// nn.Linear(in, out): weight [in, out] XavierUniform(in, out), bias [out] Constant(0).
StatusOr<LinearLayer> CreateLinear(models::ModelPrograms* programs, int64_t in, int64_t out,
                                   bool with_bias = true);
// F.linear: matmul_v2(x, weight) -> "linear_M.tmp_0", then, when the layer has a bias,
// elementwise_add(tmp_0, bias) -> "linear_M.tmp_1" with axis rank(x) - 1 (F.linear passes
// len(x.shape) - 1, not -1). Returns the last output.
StatusOr<std::string> Linear(BlockBuilder& block, const LinearLayer& layer, const std::string& x);

struct LayerNormLayer {
  std::string name;  // "layer_norm_N"
  std::string scale, bias;
  int64_t size = 0;
  float epsilon = 1e-5f;
};
// nn.LayerNorm(size, epsilon): scale [size] Constant(1), bias [size] Constant(0).
StatusOr<LayerNormLayer> CreateLayerNorm(models::ModelPrograms* programs, int64_t size,
                                         float epsilon = 1e-5f);
struct LayerNormOutputs {
  std::string y, mean, variance;
};
// F.layer_norm over the last axis (begin_norm_axis = rank - 1). Mean and Variance (stop_gradient,
// float32 for a float16 input) hold one value per row: dims [product of the leading dims], or
// [-1] when one of them is -1. Paddle's compile-time InferMeta multiplies the -1 through (x of
// [-1, 16, 64] gives [-16]); we write -1, the only negative dim the validator accepts.
StatusOr<LayerNormOutputs> LayerNorm(BlockBuilder& block, const LayerNormLayer& layer,
                                     const std::string& x);

struct EmbeddingLayer {
  std::string name;  // "embedding_N"
  std::string weight;
  int64_t num = 0, dim = 0;
};
// nn.Embedding(num, dim): weight [num, dim] XavierUniform(num, dim).
StatusOr<EmbeddingLayer> CreateEmbedding(models::ModelPrograms* programs, int64_t num, int64_t dim);
// F.embedding: lookup_table_v2 (padding_idx -1), out dims = ids dims + [dim].
StatusOr<std::string> Embedding(BlockBuilder& block, const EmbeddingLayer& layer,
                                const std::string& ids);

// ---- functional layers -------------------------------------------------------------------------

// paddle.matmul -> matmul_v2 (numpy broadcasting of the batch dims).
StatusOr<std::string> MatMul(BlockBuilder& block, const std::string& x, const std::string& y,
                             bool trans_x = false, bool trans_y = false);

// `x + y`, `x - y`, `x * y`, `x / y` -> elementwise_add/sub/mul/div, axis -1, out "tmp_N".
StatusOr<std::string> Add(BlockBuilder& block, const std::string& x, const std::string& y);
StatusOr<std::string> Subtract(BlockBuilder& block, const std::string& x, const std::string& y);
StatusOr<std::string> Multiply(BlockBuilder& block, const std::string& x, const std::string& y);
StatusOr<std::string> Divide(BlockBuilder& block, const std::string& x, const std::string& y);

StatusOr<std::string> Relu(BlockBuilder& block, const std::string& x);
StatusOr<std::string> Tanh(BlockBuilder& block, const std::string& x);
StatusOr<std::string> Sigmoid(BlockBuilder& block, const std::string& x);
StatusOr<std::string> Gelu(BlockBuilder& block, const std::string& x, bool approximate = false);
StatusOr<std::string> Softmax(BlockBuilder& block, const std::string& x, int32_t axis = -1);

struct DropoutOutputs {
  std::string out, mask;  // mask: UINT8, stop_gradient
};
// F.dropout(x, p, training, mode). For p == 0 F.dropout returns x itself: out is x, mask empty,
// nothing appended. `program_seed` is the main program's random_seed: a non-zero one becomes the
// op's seed with fix_seed true, as F.dropout does. mode: "upscale_in_train" or
// "downgrade_in_infer" (F.dropout's name for "downscale_in_infer").
StatusOr<DropoutOutputs> Dropout(BlockBuilder& block, const std::string& x, float p,
                                 bool is_test = false, int32_t program_seed = 0,
                                 const std::string& mode = "upscale_in_train");

struct ShapeOpOutputs {
  std::string out, xshape;  // xshape: dims [0] + input dims, as Paddle declares it
};
// paddle.reshape -> reshape2: 0 copies the input dim, one -1 is inferred (-1 when unknown).
StatusOr<ShapeOpOutputs> Reshape(BlockBuilder& block, const std::string& x,
                                 const std::vector<int32_t>& shape);
// paddle.transpose -> transpose2.
StatusOr<ShapeOpOutputs> Transpose(BlockBuilder& block, const std::string& x,
                                   const std::vector<int32_t>& perm);

// paddle.scale -> scale.
StatusOr<std::string> Scale(BlockBuilder& block, const std::string& x, float scale,
                            float bias = 0.0f, bool bias_after_scale = true);
// paddle.cast -> cast (the output keeps x's stop_gradient).
StatusOr<std::string> Cast(BlockBuilder& block, const std::string& x, proto::VarType::Type dtype);

// paddle.mean / paddle.sum -> reduce_mean / reduce_sum. An empty `dims` reduces everything
// (reduce_all, dim []), giving a 0-D output without keep_dim.
StatusOr<std::string> ReduceMean(BlockBuilder& block, const std::string& x,
                                 const std::vector<int32_t>& dims = {}, bool keep_dim = false);
StatusOr<std::string> ReduceSum(BlockBuilder& block, const std::string& x,
                                const std::vector<int32_t>& dims = {}, bool keep_dim = false);
// The `mean` op (mean of all elements, 0-D), named like paddle.mean's "mean_N.tmp_0".
StatusOr<std::string> Mean(BlockBuilder& block, const std::string& x);

struct SoftmaxWithCrossEntropyOutputs {
  std::string softmax, loss;  // loss: logits dims with the class axis 1
};
// F.softmax_with_cross_entropy(logits, label) with hard int64 labels (soft_label false,
// ignore_index -100, numeric_stable_mode true, axis -1).
StatusOr<SoftmaxWithCrossEntropyOutputs> SoftmaxWithCrossEntropy(BlockBuilder& block,
                                                                 const std::string& logits,
                                                                 const std::string& label);

// paddle.concat.
StatusOr<std::string> Concat(BlockBuilder& block, const std::vector<std::string>& xs,
                             int32_t axis = 0);
// paddle.split into `num` equal parts, or into `sections` (one may be -1). The axis is stored
// non-negative, as paddle.split normalises it.
StatusOr<std::vector<std::string>> Split(BlockBuilder& block, const std::string& x, int32_t num,
                                         int32_t axis = 0);
StatusOr<std::vector<std::string>> SplitSections(BlockBuilder& block, const std::string& x,
                                                 const std::vector<int32_t>& sections,
                                                 int32_t axis = 0);
// paddle.slice (infer_flags all 1); `decrease_axis` drops those axes (size 1) from the output.
StatusOr<std::string> Slice(BlockBuilder& block, const std::string& x,
                            const std::vector<int32_t>& axes, const std::vector<int32_t>& starts,
                            const std::vector<int32_t>& ends,
                            const std::vector<int32_t>& decrease_axis = {});

// paddle.full -> fill_constant (output stop_gradient). str_value is Python's str(float(value)),
// or str(int(value)) for integer dtypes.
StatusOr<std::string> FillConstant(BlockBuilder& block, proto::VarType::Type dtype,
                                   const std::vector<int64_t>& shape, double value);
// paddle.assign of a var -> assign.
StatusOr<std::string> Assign(BlockBuilder& block, const std::string& x);
// paddle.assign of a numpy array -> assign_value, the values in the list its dtype names
// (bool_values / int32_values as INTS, fp32_values FLOATS, int64_values LONGS; the others empty).
using AssignValues =
    std::variant<std::vector<bool>, std::vector<int32_t>, std::vector<int64_t>, std::vector<float>>;
StatusOr<std::string> AssignValue(BlockBuilder& block, const std::vector<int32_t>& shape,
                                  const AssignValues& values);
// paddle.add_n -> sum.
StatusOr<std::string> AddN(BlockBuilder& block, const std::vector<std::string>& xs);
// paddle.triu / paddle.tril -> tril_triu (lower false / true).
StatusOr<std::string> Triu(BlockBuilder& block, const std::string& x, int32_t diagonal = 0);
StatusOr<std::string> Tril(BlockBuilder& block, const std::string& x, int32_t diagonal = 0);

// ---- shape helpers (exposed for tests) ---------------------------------------------------------

// Paddle's broadcast of two elementwise operands (axis -1): right-aligned; a dim > 1 wins, two 1s
// stay 1, any other pair with a -1 is -1. Error when two dims > 1 differ.
StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& x,
                                             const std::vector<int64_t>& y);

}  // namespace irm::oldir::layers
