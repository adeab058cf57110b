// The op-compat table (op_compat.h): one row per legacy op. Renames follow Paddle's
// op_compat.yaml (paddle/phi/ops/yaml/, as paddle/fluid/ir_adaptor/translator/ reads it); only what
// differs from the rules in op_compat.h is written down. A row without new_op and handler is a
// known op the translator refuses (its note says why); a row whose handler may emit nothing says so
// in its note, which the coverage report shows for the dropped ops.
#include "translator/op_compat.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <unordered_map>

#include "newir/interned_name.h"
#include "translator/comm_ops.h"
#include "translator/control_flow.h"
#include "translator/convnet_ops.h"
#include "translator/special_ops.h"

namespace irm::translator {
namespace {

using newir::DataType;

// Mutable operands.
MutableOperand Scalar(std::string_view operand, std::string_view tensor_slot, std::string_view attr,
                      DataType dtype, std::optional<double> fallback = {}) {
  return {.operand = operand,
          .tensor_slot = tensor_slot,
          .attr = attr,
          .dtype = dtype,
          .fallback = fallback};
}
MutableOperand IntArray(std::string_view operand, std::string_view tensor_slot,
                        std::string_view list_slot, std::string_view attr) {
  return {.operand = operand,
          .tensor_slot = tensor_slot,
          .list_slot = list_slot,
          .attr = attr,
          .dtype = DataType::kInt64,
          .int_array = true};
}

void AddMath(std::vector<OpCompat>& t) {
  t.push_back({.legacy_type = "matmul_v2",
               .new_op = "matmul",
               .attrs = {{"trans_x", "transpose_x"}, {"trans_y", "transpose_y"}}});
  t.push_back({.legacy_type = "matmul_v2_grad", .new_op = "matmul_grad", .forward = "matmul_v2"});
  // elementwise_*: the handler reshapes Y when `axis` does not align it with X's trailing dims.
  const std::pair<std::string_view, std::string_view> binary[] = {
      {"elementwise_add", "add"},
      {"elementwise_sub", "subtract"},
      {"elementwise_mul", "multiply"},
      {"elementwise_div", "divide"},
      {"elementwise_max", "maximum"},
      {"elementwise_mod", "remainder"},
      {"elementwise_floordiv", "floor_divide"}};
  for (const auto& [legacy, name] : binary) {
    t.push_back({.legacy_type = legacy, .new_op = name, .handler = TranslateElementwise});
  }
  const std::pair<std::string_view, std::string_view> binary_grad[] = {
      {"elementwise_add_grad", "add_grad"},
      {"elementwise_sub_grad", "subtract_grad"},
      {"elementwise_mul_grad", "multiply_grad"},
      {"elementwise_div_grad", "divide_grad"}};
  for (const auto& [legacy, name] : binary_grad) {
    t.push_back({.legacy_type = legacy, .new_op = name, .handler = TranslateElementwiseGrad});
  }
  t.push_back({.legacy_type = "scale",
               .new_op = "scale",
               .mutables = {Scalar("scale", "ScaleTensor", "scale", DataType::kFloat32, 1.0)}});
  t.push_back({.legacy_type = "cast", .new_op = "cast", .attrs = {{"out_dtype", "dtype"}}});
  t.push_back({.legacy_type = "sum", .new_op = "add_n", .slots = {{"X", "inputs"}}});
  // coalesce_tensor (op_compat.yaml): Output and FusedOutput are pd_op.coalesce_tensor's
  // output vector and fused_output; user_defined_size_of_dtype is its size_of_dtype.
  t.push_back({.legacy_type = "coalesce_tensor",
               .new_op = "coalesce_tensor",
               .attrs = {{"user_defined_size_of_dtype", "size_of_dtype"}}});
  t.push_back({.legacy_type = "squared_l2_norm", .new_op = "squared_l2_norm"});
  t.push_back({.legacy_type = "sqrt", .new_op = "sqrt"});
  t.push_back({.legacy_type = "mean", .new_op = "mean_all"});
  t.push_back({.legacy_type = "mean_grad", .new_op = "mean_all_grad", .forward = "mean"});
  // reduce_*: reduce_all=true reduces every dim whatever `dim` says (handler).
  t.push_back({.legacy_type = "reduce_mean",
               .new_op = "mean",
               .attrs = {{"dim", "axis"}, {"keep_dim", "keepdim"}},
               .handler = TranslateReduce});
  t.push_back({.legacy_type = "reduce_mean_grad",
               .new_op = "mean_grad",
               .forward = "reduce_mean",
               .handler = TranslateReduce});
  t.push_back({.legacy_type = "reduce_sum",
               .new_op = "sum",
               .attrs = {{"keep_dim", "keepdim"}, {"out_dtype", "dtype"}},
               .handler = TranslateReduce});
  t.push_back({.legacy_type = "reduce_sum_grad",
               .new_op = "sum_grad",
               .forward = "reduce_sum",
               .handler = TranslateReduce});
  t.push_back({.legacy_type = "equal", .new_op = "equal"});
  t.push_back({.legacy_type = "less_than", .new_op = "less_than"});
  t.push_back({.legacy_type = "not_equal", .new_op = "not_equal"});
  t.push_back({.legacy_type = "greater_than", .new_op = "greater_than"});
  t.push_back({.legacy_type = "logical_not", .new_op = "logical_not"});
  // op_compat.yaml: logical_and / or / xor {x: X, y: Y} -> {out: Out}; in place when Out is X.
  for (std::string_view name : {"logical_and", "logical_or", "logical_xor"}) {
    t.push_back({.legacy_type = name, .new_op = name});
  }
  t.push_back({.legacy_type = "increment", .new_op = "increment", .attrs = {{"step", "value"}}});
}

void AddActivationsAndNn(std::vector<OpCompat>& t) {
  for (std::string_view name : {"relu", "sigmoid", "tanh", "gelu", "softmax"}) {
    t.push_back({.legacy_type = name, .new_op = name});
  }
  t.push_back({.legacy_type = "relu_grad", .new_op = "relu_grad", .forward = "relu"});
  t.push_back({.legacy_type = "sigmoid_grad", .new_op = "sigmoid_grad", .forward = "sigmoid"});
  t.push_back({.legacy_type = "tanh_grad", .new_op = "tanh_grad", .forward = "tanh"});
  t.push_back({.legacy_type = "gelu_grad", .new_op = "gelu_grad", .forward = "gelu"});
  t.push_back({.legacy_type = "softmax_grad", .new_op = "softmax_grad", .forward = "softmax"});
  t.push_back({.legacy_type = "layer_norm", .new_op = "layer_norm", .slots = {{"Y", "out"}}});
  t.push_back(
      {.legacy_type = "layer_norm_grad", .new_op = "layer_norm_grad", .forward = "layer_norm"});
  // op_compat.yaml: conv2d {input: Input, filter: Filter} -> {out: Output}; not in place.
  t.push_back({.legacy_type = "conv2d", .new_op = "conv2d", .slots = {{"Output", "out"}}});
  t.push_back({.legacy_type = "conv2d_grad", .new_op = "conv2d_grad", .forward = "conv2d"});
  // op_compat.yaml: pool2d {x: X} -> {out: Out}, kernel_size is the IntArray `ksize`;
  // Pool2dOpTranscriber fills exclusive, adaptive and padding_algorithm when absent.
  const std::vector<std::pair<std::string_view, newir::Attribute>> pool2d_defaults = {
      {"exclusive", newir::Attribute::Bool(true)},
      {"adaptive", newir::Attribute::Bool(false)},
      {"padding_algorithm", newir::Attribute::String("EXPLICIT")}};
  const MutableOperand ksize = IntArray("kernel_size", "", "", "ksize");
  t.push_back({.legacy_type = "pool2d",
               .new_op = "pool2d",
               .mutables = {ksize},
               .defaults = pool2d_defaults});
  t.push_back({.legacy_type = "pool2d_grad",
               .new_op = "pool2d_grad",
               .mutables = {ksize},
               .defaults = pool2d_defaults,
               .forward = "pool2d"});
  // op_compat.yaml: batch_norm {x: X, mean: Mean, variance: Variance, scale: Scale, bias: Bias}
  // -> {out: Y, mean_out: MeanOut, ...}, data_format is `data_layout`; MeanOut written into
  // Mean makes it pd_op.batch_norm_. BatchNormOpTranscriber fills use_global_stats and
  // trainable_statistics (false) when absent. The handler refuses a MomentumTensor.
  const std::vector<std::pair<std::string_view, newir::Attribute>> batch_norm_defaults = {
      {"use_global_stats", newir::Attribute::Bool(false)},
      {"trainable_statistics", newir::Attribute::Bool(false)}};
  t.push_back({.legacy_type = "batch_norm",
               .new_op = "batch_norm",
               .slots = {{"Y", "out"}},
               .attrs = {{"data_layout", "data_format"}},
               .defaults = batch_norm_defaults,
               .handler = TranslateBatchNorm});
  t.push_back({.legacy_type = "batch_norm_grad",
               .new_op = "batch_norm_grad",
               .attrs = {{"data_layout", "data_format"}},
               .defaults = batch_norm_defaults,
               .forward = "batch_norm"});
  // op_compat.yaml "matmul_with_flatten (mul)": translated as Paddle's MulOpTranscriber and
  // MulGradOpTranscriber do, to pd_op.matmul / matmul_grad between reshapes (handlers).
  t.push_back({.legacy_type = "mul", .new_op = "matmul", .handler = TranslateMul});
  t.push_back({.legacy_type = "mul_grad", .new_op = "matmul_grad", .handler = TranslateMulGrad});
  // op_compat.yaml "topk_v1 (top_k)" and "topk (top_k_v2)": k is a Scalar(int), the tensor K or
  // the attribute k.
  const MutableOperand k = Scalar("k", "K", "k", DataType::kInt32, 1);
  t.push_back({.legacy_type = "top_k", .new_op = "topk_v1", .mutables = {k}});
  t.push_back({.legacy_type = "top_k_v2", .new_op = "topk", .mutables = {k}});
  // op_compat.yaml: accuracy {x: Out, indices: Indices, label: Label}.
  t.push_back({.legacy_type = "accuracy", .new_op = "accuracy", .slots = {{"Out", "x"}}});
  t.push_back({.legacy_type = "lookup_table_v2",
               .new_op = "embedding",
               .slots = {{"Ids", "x"}, {"W", "weight"}},
               .attrs = {{"is_sparse", "sparse"}}});
  t.push_back({.legacy_type = "lookup_table_v2_grad",
               .new_op = "embedding_grad",
               .forward = "lookup_table_v2"});
  // The legacy maker's default implementation is not the new op's: a program without the
  // attribute meant downscale at inference (Paddle's DropoutOpTranscriber says so explicitly).
  t.push_back({.legacy_type = "dropout",
               .new_op = "dropout",
               .slots = {{"Seed", "seed_tensor"}},
               .attrs = {{"dropout_prob", "p"}, {"dropout_implementation", "mode"}},
               .defaults = {{"mode", newir::Attribute::String("downscale_in_infer")}}});
  t.push_back({.legacy_type = "dropout_grad", .new_op = "dropout_grad", .forward = "dropout"});
  t.push_back({.legacy_type = "softmax_with_cross_entropy",
               .new_op = "cross_entropy_with_softmax",
               .slots = {{"Logits", "input"}}});
  t.push_back({.legacy_type = "softmax_with_cross_entropy_grad",
               .new_op = "cross_entropy_with_softmax_grad",
               .forward = "softmax_with_cross_entropy"});
}

void AddShapeAndCreation(std::vector<OpCompat>& t) {
  // reshape2 / transpose2: XShape has no new-IR twin (dropped); reshape2_grad is rebuilt from it.
  t.push_back({.legacy_type = "reshape2",
               .new_op = "reshape",
               .mutables = {IntArray("shape", "Shape", "ShapeTensor", "shape")},
               .dropped = {"XShape"}});
  t.push_back({.legacy_type = "reshape2_grad",
               .new_op = "reshape",
               .forward = "reshape2",
               .handler = TranslateReshapeGrad});
  t.push_back({.legacy_type = "transpose2",
               .new_op = "transpose",
               .attrs = {{"axis", "perm"}},
               .dropped = {"XShape"}});
  t.push_back(
      {.legacy_type = "transpose2_grad", .new_op = "transpose_grad", .forward = "transpose2"});
  t.push_back({.legacy_type = "concat",
               .new_op = "concat",
               .mutables = {Scalar("axis", "AxisTensor", "axis", DataType::kInt32, 0)}});
  t.push_back({.legacy_type = "concat_grad",
               .new_op = "concat_grad",
               .mutables = {Scalar("axis", "AxisTensor", "axis", DataType::kInt32, 0)},
               .forward = "concat"});
  t.push_back({.legacy_type = "split", .new_op = "split", .handler = TranslateSplit});
  const std::vector<MutableOperand> slice = {
      IntArray("starts", "StartsTensor", "StartsTensorList", "starts"),
      IntArray("ends", "EndsTensor", "EndsTensorList", "ends")};
  t.push_back({.legacy_type = "slice", .new_op = "slice", .mutables = slice});
  t.push_back(
      {.legacy_type = "slice_grad", .new_op = "slice_grad", .mutables = slice, .forward = "slice"});
  // set_value: pd_op.set_value, or pd_op.set_value_with_tensor when there is a ValueTensor
  // (handler); starts/ends/steps from the *TensorList (builtin.combine) or the attributes. The
  // legacy grad only exists with a ValueTensor: pd_op.set_value_with_tensor_grad.
  const std::vector<MutableOperand> set_value = {
      IntArray("starts", "", "StartsTensorList", "starts"),
      IntArray("ends", "", "EndsTensorList", "ends"),
      IntArray("steps", "", "StepsTensorList", "steps")};
  const newir::Attribute no_ints = newir::Attribute::Array({});
  t.push_back({.legacy_type = "set_value",
               .new_op = "set_value",
               .slots = {{"Input", "x"}, {"ValueTensor", "values"}},
               .mutables = set_value,
               .defaults = {{"decrease_axes", no_ints},
                            {"none_axes", no_ints},
                            {"shape", no_ints},
                            {"values", no_ints}},
               .handler = TranslateSetValue});
  t.push_back({.legacy_type = "set_value_grad",
               .new_op = "set_value_with_tensor_grad",
               .mutables = set_value,
               .defaults = {{"decrease_axes", no_ints}, {"none_axes", no_ints}},
               .forward = "set_value"});
  t.push_back({.legacy_type = "tril_triu", .new_op = "tril", .handler = TranslateTrilTriu});
  t.push_back(
      {.legacy_type = "tril_triu_grad", .new_op = "tril_grad", .handler = TranslateTrilTriu});

  t.push_back({.legacy_type = "fill_constant", .new_op = "full", .handler = TranslateFillConstant});
  t.push_back({.legacy_type = "fill_any_like",
               .new_op = "full_like",
               .mutables = {Scalar("value", "", "value", DataType::kFloat32, 0.0)}});
  const MutableOperand shape = IntArray("shape", "ShapeTensor", "ShapeTensorList", "shape");
  t.push_back({.legacy_type = "uniform_random",
               .new_op = "uniform",
               .mutables = {shape, Scalar("min", "", "min", DataType::kFloat32, -1.0),
                            Scalar("max", "", "max", DataType::kFloat32, 1.0)}});
  t.push_back({.legacy_type = "gaussian_random", .new_op = "gaussian", .mutables = {shape}});
  t.push_back({.legacy_type = "assign", .new_op = "assign", .handler = TranslateAssign});
  t.push_back(
      {.legacy_type = "assign_value", .new_op = "assign_value", .handler = TranslateAssignValue});
}

void AddOptimizers(std::vector<OpCompat>& t) {
  t.push_back({.legacy_type = "sgd", .new_op = "sgd"});
  t.push_back({.legacy_type = "momentum", .new_op = "momentum"});
  // beta1, beta2, epsilon: mutable Scalars, from the *Tensor slots or the attributes.
  const std::vector<MutableOperand> adam = {
      Scalar("beta1", "Beta1Tensor", "beta1", DataType::kFloat32, 0.9),
      Scalar("beta2", "Beta2Tensor", "beta2", DataType::kFloat32, 0.999),
      Scalar("epsilon", "EpsilonTensor", "epsilon", DataType::kFloat32, 1e-8)};
  t.push_back({.legacy_type = "adam", .new_op = "adam", .mutables = adam, .always_inplace = true});
  t.push_back(
      {.legacy_type = "adamw", .new_op = "adamw", .mutables = adam, .always_inplace = true});
}

void AddFeedFetchAndControlFlow(std::vector<OpCompat>& t) {
  t.push_back({.legacy_type = "feed", .new_op = "data", .handler = TranslateFeed});
  t.push_back({.legacy_type = "fetch", .new_op = "fetch", .handler = TranslateFetch});
  t.push_back({.legacy_type = "fetch_v2", .new_op = "fetch", .handler = TranslateFetch});
  t.push_back(
      {.legacy_type = "conditional_block", .new_op = "if", .handler = TranslateConditionalBlock});
  t.push_back({.legacy_type = "while", .new_op = "while", .handler = TranslateWhile});
  t.push_back({.legacy_type = "conditional_block_grad",
               .note = "the backward of a conditional block is not translated (as Paddle's "
                       "translator, which needs the forward scope's stack)"});
  t.push_back({.legacy_type = "while_grad",
               .note = "the backward of a while loop is not translated (nor is it by Paddle)"});
}

void AddCommunication(std::vector<OpCompat>& t) {
  for (std::string_view type :
       {"c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod"}) {
    t.push_back({.legacy_type = type, .new_op = "all_reduce", .handler = TranslateAllReduce});
  }
  t.push_back(
      {.legacy_type = "c_allgather", .new_op = "all_gather", .handler = TranslateCollective});
  t.push_back({.legacy_type = "c_reducescatter",
               .new_op = "reduce_scatter",
               .handler = TranslateCollective});
  t.push_back(
      {.legacy_type = "c_broadcast", .new_op = "broadcast", .handler = TranslateCollective});
  // The tensor-parallel forms have no phi-style twin: c_ names in both styles.
  for (std::string_view type : {"c_identity", "c_split", "c_concat"}) {
    t.push_back({.legacy_type = type, .new_op = type, .handler = TranslateCollective});
  }
  // Vocabulary parallelism (op_compat.yaml: W -> weight, Ids -> x; Logits, Label, Softmax and
  // Loss by rule). Both styles keep the c_ names. The cross entropy communicates, so its ring is
  // checked like a collective's; the others translate by table. A c_embedding without vocab_size
  // gets -1, as Paddle's CEmbeddingOpTranscriber gives it
  // (paddle/fluid/ir_adaptor/translator/op_translator.cc).
  t.push_back({.legacy_type = "c_embedding",
               .new_op = "c_embedding",
               .slots = {{"W", "weight"}, {"Ids", "x"}},
               .defaults = {{"vocab_size", newir::Attribute::Int64(-1)}}});
  t.push_back(
      {.legacy_type = "c_embedding_grad", .new_op = "c_embedding_grad", .forward = "c_embedding"});
  t.push_back({.legacy_type = "c_softmax_with_cross_entropy",
               .new_op = "c_softmax_with_cross_entropy",
               .handler = TranslateCollective});
  t.push_back({.legacy_type = "c_softmax_with_cross_entropy_grad",
               .new_op = "c_softmax_with_cross_entropy_grad",
               .forward = "c_softmax_with_cross_entropy"});
  t.push_back({.legacy_type = "barrier", .new_op = "barrier", .handler = TranslateCollective});
  t.push_back({.legacy_type = "send_v2", .new_op = "p_send", .handler = TranslateCollective});
  t.push_back({.legacy_type = "recv_v2", .new_op = "p_recv", .handler = TranslateCollective});
  // Stream synchronisation orders work on CUDA streams; the new IR's executors order by data
  // dependence, so the dist style drops them (Out re-binds to X).
  const char* sync_note =
      "stream ordering only: dropped (kept as pd_op.*_stream_ under "
      "--comm-ops=legacy)";
  t.push_back({.legacy_type = "c_sync_calc_stream",
               .new_op = "sync_calc_stream",
               .handler = TranslateSyncStream,
               .note = sync_note});
  t.push_back({.legacy_type = "c_sync_comm_stream",
               .new_op = "sync_comm_stream",
               .handler = TranslateSyncStream,
               .note = sync_note});
}

// The exponential learning-rate decay's ops and a Faster R-CNN training program's detection ops.
void AddDetection(std::vector<OpCompat>& t) {
  // op_compat.yaml: elementwise_pow {x: X, y: Y} -> {out: Out}, `axis` aligning Y as in the
  // other elementwise ops (the handlers reshape it); floor {x: X} -> {out: Out}.
  t.push_back({.legacy_type = "elementwise_pow",
               .new_op = "elementwise_pow",
               .handler = TranslateElementwise});
  t.push_back({.legacy_type = "elementwise_pow_grad",
               .new_op = "elementwise_pow_grad",
               .handler = TranslateElementwiseGrad});
  t.push_back({.legacy_type = "floor", .new_op = "floor"});
  t.push_back({.legacy_type = "floor_grad", .new_op = "floor_grad", .forward = "floor"});
  // op_compat.yaml: gather {x: X, index: Index}, axis a Scalar(int) from the tensor Axis or the
  // attribute axis (gather_op.cc's default 0).
  const MutableOperand axis = Scalar("axis", "Axis", "axis", DataType::kInt32, 0);
  t.push_back({.legacy_type = "gather", .new_op = "gather", .mutables = {axis}});
  t.push_back({.legacy_type = "gather_grad",
               .new_op = "gather_grad",
               .mutables = {axis},
               .forward = "gather"});
  // op_compat.yaml: shape {input: Input} -> {out: Out}.
  t.push_back({.legacy_type = "shape", .new_op = "shape"});
  // op_compat.yaml "prod (reduce_prod)": axis is `dim` (reduce_all: every dim), keepdim
  // `keep_dim`, as the other reductions.
  t.push_back({.legacy_type = "reduce_prod",
               .new_op = "prod",
               .attrs = {{"keep_dim", "keepdim"}},
               .handler = TranslateReduce});
  t.push_back({.legacy_type = "reduce_prod_grad",
               .new_op = "prod_grad",
               .forward = "reduce_prod",
               .handler = TranslateReduce});
  // smooth_l1_loss and rpn_target_assign have no Paddle 3 op: pd_op rows of ir-migrate's own with
  // the legacy slots in snake case (newir/pd_op_dialect_detection.cc).
  t.push_back({.legacy_type = "smooth_l1_loss", .new_op = "smooth_l1_loss"});
  t.push_back({.legacy_type = "smooth_l1_loss_grad",
               .new_op = "smooth_l1_loss_grad",
               .forward = "smooth_l1_loss"});
  // op_compat.yaml: sigmoid_cross_entropy_with_logits {x: X, label: Label} -> {out: Out};
  // pos_weight keeps its name.
  t.push_back({.legacy_type = "sigmoid_cross_entropy_with_logits",
               .new_op = "sigmoid_cross_entropy_with_logits"});
  t.push_back({.legacy_type = "sigmoid_cross_entropy_with_logits_grad",
               .new_op = "sigmoid_cross_entropy_with_logits_grad",
               .forward = "sigmoid_cross_entropy_with_logits"});
  // op_compat.yaml: affine_channel {x: X, scale: Scale, bias: Bias} -> {out: Out}; the grad's
  // handler stands in for the Bias its legacy maker does not feed.
  t.push_back({.legacy_type = "affine_channel", .new_op = "affine_channel"});
  t.push_back({.legacy_type = "affine_channel_grad",
               .new_op = "affine_channel_grad",
               .forward = "affine_channel",
               .handler = TranslateAffineChannelGrad});
  // op_compat.yaml: anchor_generator {input: Input} -> {anchors: Anchors, variances_out:
  // Variances}.
  t.push_back({.legacy_type = "anchor_generator",
               .new_op = "anchor_generator",
               .slots = {{"Variances", "variances_out"}}});
  // op_compat.yaml: roi_align {x: X, boxes: ROIs, boxes_num: RoisNum} -> {out: Out}.
  t.push_back({.legacy_type = "roi_align",
               .new_op = "roi_align",
               .slots = {{"ROIs", "boxes"}, {"RoisNum", "boxes_num"}}});
  t.push_back(
      {.legacy_type = "roi_align_grad", .new_op = "roi_align_grad", .forward = "roi_align"});
  // op_compat.yaml "generate_proposals (generate_proposals_v2)": pre_nms_topN / post_nms_topN
  // are pre_nms_top_n / post_nms_top_n.
  t.push_back({.legacy_type = "generate_proposals_v2",
               .new_op = "generate_proposals",
               .attrs = {{"pre_nms_topN", "pre_nms_top_n"}, {"post_nms_topN", "post_nms_top_n"}}});
  t.push_back(
      {.legacy_type = "rpn_target_assign",
       .new_op = "rpn_target_assign",
       .slots = {{"TargetBBox", "target_bbox"}, {"BBoxInsideWeight", "bbox_inside_weight"}}});
}

std::vector<OpCompat> BuildTable() {
  std::vector<OpCompat> table;
  AddMath(table);
  AddActivationsAndNn(table);
  AddShapeAndCreation(table);
  AddOptimizers(table);
  AddFeedFetchAndControlFlow(table);
  AddCommunication(table);
  AddDetection(table);
  std::sort(table.begin(), table.end(),
            [](const OpCompat& a, const OpCompat& b) { return a.legacy_type < b.legacy_type; });
  return table;
}

std::string_view Lookup(const std::vector<Rename>& renames, std::string_view legacy) {
  for (const Rename& r : renames) {
    if (r.legacy == legacy) return r.name;
  }
  return {};
}

std::string_view ReverseLookup(const std::vector<Rename>& renames, std::string_view name) {
  for (const Rename& r : renames) {
    if (r.name == name) return r.legacy;
  }
  return {};
}

constexpr std::string_view kGradSuffix = "@GRAD";
constexpr std::string_view kNewGradSuffix = "_grad";

}  // namespace

const std::vector<OpCompat>& AllOpCompats() {
  static const std::vector<OpCompat> table = BuildTable();
  return table;
}

const OpCompat* FindOpCompat(std::string_view legacy_type) {
  static const std::unordered_map<std::string_view, const OpCompat*> index = [] {
    std::unordered_map<std::string_view, const OpCompat*> map;
    for (const OpCompat& row : AllOpCompats()) map.emplace(row.legacy_type, &row);
    return map;
  }();
  auto it = index.find(legacy_type);
  return it == index.end() ? nullptr : it->second;
}

std::string SnakeCase(std::string_view camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      // A new word starts at an upper-case letter after a lower-case letter or a digit.
      if (i > 0 && (std::islower(static_cast<unsigned char>(camel[i - 1])) ||
                    std::isdigit(static_cast<unsigned char>(camel[i - 1])))) {
        out += '_';
      }
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string ComputeNewSlotName(const OpCompat& row, std::string_view legacy_slot) {
  if (std::string_view name = Lookup(row.slots, legacy_slot); !name.empty()) {
    return std::string(name);
  }
  const OpCompat* forward = row.forward.empty() ? nullptr : FindOpCompat(row.forward);
  if (forward != nullptr) {
    if (std::string_view name = Lookup(forward->slots, legacy_slot); !name.empty()) {
      return std::string(name);
    }
  }
  if (legacy_slot.ends_with(kGradSuffix)) {
    legacy_slot.remove_suffix(kGradSuffix.size());
    return ComputeNewSlotName(row, legacy_slot) + std::string(kNewGradSuffix);
  }
  return SnakeCase(legacy_slot);
}

}  // namespace

std::string_view NewSlotName(const OpCompat& row, std::string_view legacy_slot) {
  // Every slot of every op asks, so answers are remembered per thread (direct-mapped, keyed by
  // row and slot); names are interned, so a remembered answer is a pointer.
  struct Answer {
    const OpCompat* row = nullptr;
    const std::string* slot = nullptr;
    const std::string* name = nullptr;
  };
  thread_local std::array<Answer, 512> answers;
  const size_t hash =
      std::hash<std::string_view>{}(legacy_slot) ^ (reinterpret_cast<uintptr_t>(&row) >> 4);
  Answer& answer = answers[hash % answers.size()];
  if (answer.row != &row || *answer.slot != legacy_slot) {
    answer = {&row, &newir::InternName(legacy_slot),
              &newir::InternName(ComputeNewSlotName(row, legacy_slot))};
  }
  return *answer.name;
}

std::string_view LegacyAttrFor(const OpCompat& row, std::string_view name) {
  if (std::string_view legacy = ReverseLookup(row.attrs, name); !legacy.empty()) return legacy;
  if (!row.forward.empty()) {
    if (const OpCompat* forward = FindOpCompat(row.forward)) {
      if (std::string_view legacy = ReverseLookup(forward->attrs, name); !legacy.empty()) {
        return legacy;
      }
    }
  }
  return name;
}

}  // namespace irm::translator
