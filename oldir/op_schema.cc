// The table of legacy ops ir-migrate models: slot names, dispensability, duplicability and
// attribute types exactly as Paddle's op makers declare them (paddle/fluid/operators/*_op.cc and,
// for the ops generated from phi's ops.yaml, the legacy names in op_compat.yaml). Every entry was
// written from those makers, not from programs: a slot or attribute listed here with the wrong
// type would make the validator reject programs Paddle accepts.
//
// "Required" is strict: only what a Paddle-saved program always carries and the op cannot be
// created or run without (an attribute with no default in its maker, an input the kernel reads
// unconditionally). Attributes with defaults are listed so their AttrType is checked when present.
// Grad ops follow Paddle's grad makers: forward inputs/outputs re-fed under their own slot names,
// "Out@GRAD"-style inputs, "X@GRAD"-style outputs (dispensable: Paddle drops or empties the ones no
// gradient flows to), and the forward op's attributes (SetAttrMap copies them all).
#include "oldir/op_schema.h"

#include "oldir/elementwise_ops.h"
#include "oldir/schema_era.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace irm::oldir {
namespace {

namespace pf = ::paddle::framework::proto;

// ---- constructors that keep the table readable ------------------------------------------------

SlotSchema In(std::string_view name) {
  return {name, /*required=*/true, /*duplicable=*/false, /*required_since=*/0};
}
SlotSchema Opt(std::string_view name) { return {name, false, false, 0}; }
SlotSchema Dup(std::string_view name) { return {name, true, true, 0}; }
SlotSchema OptDup(std::string_view name) { return {name, false, true, 0}; }
// Required in programs of `release` and later; older writers may leave it out.
SlotSchema InSince(std::string_view name, int64_t release) { return {name, true, false, release}; }

AttrSchema A(std::string_view name, pf::AttrType type) { return {name, type, false}; }
AttrSchema Req(std::string_view name, pf::AttrType type) { return {name, type, true}; }

using Slots = std::vector<SlotSchema>;
using Attrs = std::vector<AttrSchema>;

Attrs Cat(std::initializer_list<Attrs> parts) {
  Attrs out;
  for (const Attrs& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Extra attributes (op_compat.yaml "extra" lists): never needed to run, but typed.
const Attrs& MkldnnAttrs() {  // use_mkldnn + mkldnn_data_type
  static const Attrs attrs = {A("use_mkldnn", pf::BOOLEAN), A("mkldnn_data_type", pf::STRING)};
  return attrs;
}

// ---- the table ----------------------------------------------------------------------------

void AddMath(std::vector<OpSchema>* t) {
  // matmul_v2: paddle/fluid/operators/matmul_v2_op.cc; op_compat "matmul (matmul_v2)".
  const Attrs matmul = Cat(
      {{A("trans_x", pf::BOOLEAN), A("trans_y", pf::BOOLEAN), A("force_fp32_output", pf::BOOLEAN)},
       MkldnnAttrs()});
  t->push_back({"matmul_v2", {In("X"), In("Y")}, {In("Out")}, matmul});
  t->push_back({"matmul_v2_grad",
                {In("X"), In("Y"), In("Out@GRAD")},
                {Opt("X@GRAD"), Opt("Y@GRAD")},
                matmul});

  // elementwise_*: ElementwiseOpMaker (axis default -1) plus the quantization/oneDNN extras.
  const Attrs elementwise =
      Cat({{A("axis", pf::INT), A("use_quantizer", pf::BOOLEAN), A("Scale_x", pf::FLOAT),
            A("Scale_y", pf::FLOAT), A("Scale_out", pf::FLOAT), A("x_data_format", pf::STRING),
            A("y_data_format", pf::STRING)},
           MkldnnAttrs()});
  // The family's rows come from its list (elementwise_ops.h): the forward op, and the grad op
  // ElementwiseGradOpMaker makes (X — from grad_x_since — Y, Out@GRAD, and Out where the maker
  // re-feeds it), all with the forward attributes.
  for (const LegacyElementwiseOp& op : LegacyElementwiseOps()) {
    t->push_back({op.type, {In("X"), In("Y")}, {In("Out")}, elementwise});
    if (!op.has_grad()) continue;
    Slots inputs = {InSince("X", op.grad_x_since), In("Y"), In("Out@GRAD")};
    if (op.grad_out == ElementwiseGradOut::kDispensable) inputs.push_back(Opt("Out"));
    if (op.grad_out == ElementwiseGradOut::kRequired) inputs.push_back(In("Out"));
    t->push_back({op.grad_type, inputs, {Opt("X@GRAD"), Opt("Y@GRAD")}, elementwise});
  }

  // scale: ScaleTensor overrides attr scale. Its grad maker emits another scale op.
  t->push_back(
      {"scale",
       {In("X"), Opt("ScaleTensor")},
       {In("Out")},
       Cat({{A("scale", pf::FLOAT), A("bias", pf::FLOAT), A("bias_after_scale", pf::BOOLEAN)},
            MkldnnAttrs()})});

  // cast: in_dtype and out_dtype have no default in CastOpProtoMaker. Grad is another cast.
  t->push_back({"cast",
                {In("X")},
                {In("Out")},
                Cat({{Req("in_dtype", pf::INT), Req("out_dtype", pf::INT)}, MkldnnAttrs()})});

  // sum (add_n): X duplicable. Its grad is made of scale/assign ops.
  t->push_back({"sum", {Dup("X")}, {In("Out")}, MkldnnAttrs()});

  // squared_l2_norm (global-norm gradient clipping): no attributes; Out has shape [1].
  t->push_back({"squared_l2_norm", {In("X")}, {In("Out")}, {}});

  // mean (mean_all): no attributes.
  t->push_back({"mean", {In("X")}, {In("Out")}, {}});
  t->push_back({"mean_grad", {In("X"), In("Out@GRAD")}, {Opt("X@GRAD")}, {}});

  // reduce_*: ReduceBaseOpMaker (dim default {0}, keep_dim, reduce_all, in/out_dtype -1).
  const Attrs reduce = {A("dim", pf::INTS),           A("keep_dim", pf::BOOLEAN),
                        A("reduce_all", pf::BOOLEAN), A("in_dtype", pf::INT),
                        A("out_dtype", pf::INT),      A("use_mkldnn", pf::BOOLEAN)};
  for (std::string_view type : {"reduce_mean", "reduce_sum"}) {
    t->push_back({type, {In("X")}, {In("Out")}, reduce});
  }
  for (std::string_view type : {"reduce_mean_grad", "reduce_sum_grad"}) {
    t->push_back({type, {In("X"), In("Out@GRAD")}, {Opt("X@GRAD")}, reduce});
  }
}

void AddCompareAndLogical(std::vector<OpSchema>* t) {
  // CompareOpProtoMaker (controlflow/compare_op.cc): axis defaults to -1, force_cpu to false.
  const Attrs compare = {A("axis", pf::INT), A("force_cpu", pf::BOOLEAN)};
  for (std::string_view type : {"equal", "not_equal", "less_than", "greater_than"}) {
    t->push_back({type, {In("X"), In("Y")}, {In("Out")}, compare});
  }
  // Binary/UnaryLogicalOpProtoMaker (controlflow/logical_op.cc): no attributes.
  for (std::string_view type : {"logical_and", "logical_or", "logical_xor"}) {
    t->push_back({type, {In("X"), In("Y")}, {In("Out")}, {}});
  }
  t->push_back({"logical_not", {In("X")}, {In("Out")}, {}});
}

void AddActivations(std::vector<OpSchema>* t) {
  // relu/tanh/sigmoid grads depend on Out (kDepOut), gelu_grad on X.
  const Attrs relu = Cat({{A("use_cudnn", pf::BOOLEAN)}, MkldnnAttrs()});
  const Attrs tanh = {A("use_mkldnn", pf::BOOLEAN), A("use_cudnn", pf::BOOLEAN)};
  const Attrs gelu =
      Cat({{A("approximate", pf::BOOLEAN), A("use_cudnn", pf::BOOLEAN)}, MkldnnAttrs()});
  t->push_back({"relu", {In("X")}, {In("Out")}, relu});
  t->push_back({"relu_grad", {In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, relu});
  t->push_back({"sigmoid", {In("X")}, {In("Out")}, relu});
  t->push_back({"sigmoid_grad", {In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, relu});
  t->push_back({"tanh", {In("X")}, {In("Out")}, tanh});
  t->push_back({"tanh_grad", {In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, tanh});
  t->push_back({"gelu", {In("X")}, {In("Out")}, gelu});
  t->push_back({"gelu_grad", {In("X"), In("Out@GRAD")}, {Opt("X@GRAD")}, gelu});
  // sqrt (global-norm gradient clipping): ActivationOpMaker extras only (use_mkldnn, use_cudnn).
  t->push_back({"sqrt", {In("X")}, {In("Out")}, tanh});
  // floor (exponential_decay's staircase; op_compat.yaml extras use_mkldnn, use_cudnn): its grad
  // is kNoDeps (FloorGradFunctor is a ZeroGradFunctor), Out@GRAD alone.
  t->push_back({"floor", {In("X")}, {In("Out")}, tanh});
  t->push_back({"floor_grad", {In("Out@GRAD")}, {Opt("X@GRAD")}, tanh});

  const Attrs softmax = Cat({{A("axis", pf::INT), A("data_format", pf::STRING),
                              A("use_cudnn", pf::BOOLEAN), A("is_test", pf::BOOLEAN)},
                             MkldnnAttrs()});
  t->push_back({"softmax", {In("X")}, {In("Out")}, softmax});
  t->push_back({"softmax_grad", {In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, softmax});
}

void AddNn(std::vector<OpSchema>* t) {
  // layer_norm: Mean and Variance are intermediate outputs the kernel always writes.
  const Attrs layer_norm =
      Cat({{A("epsilon", pf::FLOAT), A("begin_norm_axis", pf::INT), A("is_test", pf::BOOLEAN)},
           MkldnnAttrs()});
  t->push_back({"layer_norm",
                {In("X"), Opt("Scale"), Opt("Bias")},
                {In("Y"), In("Mean"), In("Variance")},
                layer_norm});
  t->push_back({"layer_norm_grad",
                {In("X"), Opt("Scale"), Opt("Bias"), In("Mean"), In("Variance"), In("Y@GRAD")},
                {Opt("X@GRAD"), Opt("Scale@GRAD"), Opt("Bias@GRAD")},
                layer_norm});

  // lookup_table_v2 (embedding): padding_idx is int64_t in the maker, hence LONG.
  const Attrs lookup = {A("padding_idx", pf::LONG),       A("is_sparse", pf::BOOLEAN),
                        A("is_distributed", pf::BOOLEAN), A("remote_prefetch", pf::BOOLEAN),
                        A("trainer_id", pf::INT),         A("slot", pf::INT),
                        A("height_sections", pf::LONGS),  A("epmap", pf::STRINGS),
                        A("table_names", pf::STRINGS)};
  t->push_back({"lookup_table_v2", {In("W"), In("Ids")}, {In("Out")}, lookup});
  t->push_back(
      {"lookup_table_v2_grad", {In("W"), In("Ids"), In("Out@GRAD")}, {Opt("W@GRAD")}, lookup});

  // dropout: Mask is only needed for training (the grad reads it), Seed overrides attr seed.
  const Attrs dropout = {A("dropout_prob", pf::FLOAT), A("is_test", pf::BOOLEAN),
                         A("fix_seed", pf::BOOLEAN), A("seed", pf::INT),
                         A("dropout_implementation", pf::STRING)};
  t->push_back({"dropout", {In("X"), Opt("Seed")}, {In("Out"), Opt("Mask")}, dropout});
  t->push_back({"dropout_grad", {In("Mask"), In("Out@GRAD")}, {Opt("X@GRAD")}, dropout});

  // softmax_with_cross_entropy: Backprop only exists in Ascend builds.
  const Attrs swce = {A("soft_label", pf::BOOLEAN), A("use_softmax", pf::BOOLEAN),
                      A("numeric_stable_mode", pf::BOOLEAN), A("ignore_index", pf::INT),
                      A("axis", pf::INT)};
  t->push_back({"softmax_with_cross_entropy",
                {In("Logits"), In("Label")},
                {In("Softmax"), In("Loss"), Opt("Backprop")},
                swce});
  t->push_back({"softmax_with_cross_entropy_grad",
                {In("Label"), In("Softmax"), In("Loss@GRAD"), Opt("Backprop")},
                {Opt("Logits@GRAD")},
                swce});

  // conv2d (paddle/fluid/operators/conv_op.cc, Conv2DOpMaker and Conv2DGradMaker; the extras of
  // op_compat.yaml's conv2d entry): Bias and ResidualData are oneDNN fusion inputs; the grad maker
  // re-feeds Input and Filter (and Bias when the forward had one).
  const Attrs conv2d = Cat({{A("strides", pf::INTS),
                             A("paddings", pf::INTS),
                             A("padding_algorithm", pf::STRING),
                             A("groups", pf::INT),
                             A("dilations", pf::INTS),
                             A("data_format", pf::STRING),
                             A("is_test", pf::BOOLEAN),
                             A("use_cudnn", pf::BOOLEAN),
                             A("fuse_relu_before_depthwise_conv", pf::BOOLEAN),
                             A("use_quantizer", pf::BOOLEAN),
                             A("fuse_relu", pf::BOOLEAN),
                             A("fuse_activation", pf::STRING),
                             A("fuse_alpha", pf::FLOAT),
                             A("fuse_beta", pf::FLOAT),
                             A("use_addto", pf::BOOLEAN),
                             A("fuse_residual_connection", pf::BOOLEAN),
                             A("Scale_in", pf::FLOAT),
                             A("Scale_out", pf::FLOAT),
                             A("Scale_in_eltwise", pf::FLOAT),
                             A("Scale_weights", pf::FLOATS),
                             A("force_fp32_output", pf::BOOLEAN),
                             A("workspace_size_MB", pf::INT),
                             A("exhaustive_search", pf::BOOLEAN)},
                            MkldnnAttrs()});
  t->push_back({"conv2d",
                {In("Input"), In("Filter"), Opt("Bias"), Opt("ResidualData")},
                {In("Output")},
                conv2d});
  t->push_back({"conv2d_grad",
                {In("Input"), In("Filter"), Opt("Bias"), In("Output@GRAD")},
                {Opt("Input@GRAD"), Opt("Filter@GRAD"), Opt("Bias@GRAD")},
                conv2d});
}

// The rest of a conv net's training program (conv2d is in AddNn): pooling, batch_norm, the
// fc-style `mul`, and the evaluation ops top_k and accuracy. These makers are generated from
// phi's yaml in Paddle 3 (paddle/phi/ops/yaml/op_compat.yaml for the legacy names and extras,
// legacy/static_ops.yaml for the arguments, paddle/fluid/operators/compat/*.pbtxt for the
// attribute types).
void AddConvNet(std::vector<OpSchema>* t) {
  // pool2d (compat/pool2d.pbtxt; op_compat.yaml: kernel_size is `ksize`): pooling_type and ksize
  // have no default. The grad is DefaultGradOpMaker's: X, Out and Out@GRAD.
  const Attrs pool2d = Cat(
      {{Req("pooling_type", pf::STRING), Req("ksize", pf::INTS), A("global_pooling", pf::BOOLEAN),
        A("strides", pf::INTS), A("paddings", pf::INTS), A("exclusive", pf::BOOLEAN),
        A("adaptive", pf::BOOLEAN), A("ceil_mode", pf::BOOLEAN), A("data_format", pf::STRING),
        A("padding_algorithm", pf::STRING), A("is_test", pf::BOOLEAN), A("use_cudnn", pf::BOOLEAN),
        A("use_quantizer", pf::BOOLEAN)},
       MkldnnAttrs()});
  t->push_back({"pool2d", {In("X")}, {In("Out")}, pool2d});
  t->push_back({"pool2d_grad", {In("X"), In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, pool2d});

  // batch_norm (paddle/fluid/operators/batch_norm_op.cc, BatchNormOpMaker and
  // BatchNormGradMaker): Scale and Bias are dispensable; MeanOut / VarianceOut share Mean /
  // Variance; the grad re-feeds Mean / Variance (as MeanOut / VarianceOut) only with global
  // statistics, and MeanOut / VarianceOut always.
  const Attrs batch_norm =
      Cat({{A("is_test", pf::BOOLEAN), A("momentum", pf::FLOAT), A("epsilon", pf::FLOAT),
            A("data_layout", pf::STRING), A("use_global_stats", pf::BOOLEAN),
            A("trainable_statistics", pf::BOOLEAN), A("fuse_with_relu", pf::BOOLEAN)},
           MkldnnAttrs()});
  t->push_back(
      {"batch_norm",
       {In("X"), Opt("Scale"), Opt("Bias"), In("Mean"), In("Variance"), Opt("MomentumTensor")},
       {In("Y"), In("MeanOut"), In("VarianceOut"), In("SavedMean"), In("SavedVariance"),
        Opt("ReserveSpace")},
       batch_norm});
  t->push_back({"batch_norm_grad",
                {In("X"), Opt("Scale"), Opt("Bias"), In("SavedMean"), In("SavedVariance"),
                 Opt("ReserveSpace"), Opt("Mean"), Opt("Variance"), Opt("MeanOut"),
                 Opt("VarianceOut"), In("Y@GRAD")},
                {Opt("X@GRAD"), Opt("Scale@GRAD"), Opt("Bias@GRAD")},
                batch_norm});

  // mul (op_compat.yaml "matmul_with_flatten (mul)", compat/mul.pbtxt): the quantization extras
  // are typed too.
  const Attrs mul = Cat(
      {{A("x_num_col_dims", pf::INT), A("y_num_col_dims", pf::INT), A("scale_x", pf::FLOAT),
        A("scale_y", pf::FLOATS), A("scale_out", pf::FLOAT), A("force_fp32_output", pf::BOOLEAN),
        A("skip_quant", pf::BOOLEAN), A("bit_length", pf::INT), A("quantization_type", pf::STRING),
        A("Input_scale", pf::FLOAT), A("out_threshold", pf::FLOAT)},
       MkldnnAttrs()});
  t->push_back({"mul", {In("X"), In("Y")}, {In("Out")}, mul});
  t->push_back(
      {"mul_grad", {In("X"), In("Y"), In("Out@GRAD")}, {Opt("X@GRAD"), Opt("Y@GRAD")}, mul});

  // top_k (op_compat.yaml "topk_v1 (top_k)"; legacy/static_ops.yaml topk_v1(x, Scalar(int) k)):
  // the tensor K overrides attribute k. top_k_v2 ("topk (top_k_v2)", ops.yaml topk) adds axis,
  // largest and sorted.
  t->push_back({"top_k", {In("X"), Opt("K")}, {In("Out"), In("Indices")}, {A("k", pf::INT)}});
  t->push_back(
      {"top_k_v2",
       {In("X"), Opt("K")},
       {In("Out"), In("Indices")},
       {A("k", pf::INT), A("axis", pf::INT), A("largest", pf::BOOLEAN), A("sorted", pf::BOOLEAN)}});
  // accuracy (op_compat.yaml: x is `Out`, the top-k values): no attributes, no gradient.
  t->push_back({"accuracy",
                {In("Out"), In("Indices"), In("Label")},
                {In("Accuracy"), In("Correct"), In("Total")},
                {}});
}

// The ops of a Faster R-CNN training program beyond the conv net (paddle/fluid/operators/
// detection/*_op.cc makers of Paddle 2.x; the generated makers of Paddle 3 keep their slots,
// paddle/phi/ops/yaml/op_compat.yaml).
void AddDetection(std::vector<OpSchema>* t) {
  // gather (op_compat.yaml: axis is a Scalar whose tensor is `Axis`; gather_op.cc's `overwrite`
  // is deprecated but typed). GatherGradOpMaker re-feeds X, Index and Axis.
  const Attrs gather = {A("axis", pf::INT), A("overwrite", pf::BOOLEAN)};
  t->push_back({"gather", {In("X"), In("Index"), Opt("Axis")}, {In("Out")}, gather});
  t->push_back({"gather_grad",
                {In("X"), In("Index"), Opt("Axis"), In("Out@GRAD")},
                {Opt("X@GRAD")},
                gather});
  // shape (op_compat.yaml "shape": Input -> Out, oneDNN extras): no gradient.
  t->push_back({"shape", {In("Input")}, {In("Out")}, MkldnnAttrs()});
  // reduce_prod (op_compat.yaml "prod (reduce_prod)": axis is `dim`, keepdim `keep_dim`;
  // ReduceBaseOpMaker's in_dtype / out_dtype). The grad is DefaultGradOpMaker's: X, Out and
  // Out@GRAD.
  const Attrs reduce =
      Cat({{A("dim", pf::INTS), A("keep_dim", pf::BOOLEAN), A("reduce_all", pf::BOOLEAN),
            A("in_dtype", pf::INT), A("out_dtype", pf::INT)},
           MkldnnAttrs()});
  t->push_back({"reduce_prod", {In("X")}, {In("Out")}, reduce});
  t->push_back({"reduce_prod_grad", {In("X"), In("Out"), In("Out@GRAD")}, {Opt("X@GRAD")}, reduce});
  // smooth_l1_loss (smooth_l1_loss_op.cc, Paddle 1.x-2.4; gone from phi's yaml): the weights are
  // dispensable, Diff (an intermediate) is what the grad reads, as SmoothL1LossGradMaker feeds
  // InsideWeight, OutsideWeight, Diff and Out@GRAD.
  const Attrs smooth_l1 = {A("sigma", pf::FLOAT)};
  t->push_back({"smooth_l1_loss",
                {In("X"), In("Y"), Opt("InsideWeight"), Opt("OutsideWeight")},
                {In("Diff"), In("Out")},
                smooth_l1});
  t->push_back({"smooth_l1_loss_grad",
                {Opt("InsideWeight"), Opt("OutsideWeight"), In("Diff"), In("Out@GRAD")},
                {Opt("X@GRAD"), Opt("Y@GRAD")},
                smooth_l1});
  // sigmoid_cross_entropy_with_logits (op_compat.yaml: x is X, label Label; pos_weight, added in
  // Paddle 2.5, keeps its name).
  const Attrs sigmoid_ce = {A("normalize", pf::BOOLEAN), A("ignore_index", pf::INT)};
  t->push_back({"sigmoid_cross_entropy_with_logits",
                {In("X"), In("Label"), Opt("pos_weight")},
                {In("Out")},
                sigmoid_ce});
  t->push_back({"sigmoid_cross_entropy_with_logits_grad",
                {In("X"), In("Label"), Opt("pos_weight"), In("Out@GRAD")},
                {Opt("X@GRAD")},
                sigmoid_ce});
  // affine_channel (affine_channel_op.cc): AffineChannelGradMaker feeds X, Scale and Out@GRAD
  // (not Bias: the gradient does not read it).
  const Attrs affine_channel = {A("data_layout", pf::STRING)};
  t->push_back({"affine_channel", {In("X"), In("Scale"), In("Bias")}, {In("Out")}, affine_channel});
  t->push_back({"affine_channel_grad",
                {In("X"), In("Scale"), Opt("Bias"), In("Out@GRAD")},
                {Opt("X@GRAD"), Opt("Scale@GRAD"), Opt("Bias@GRAD")},
                affine_channel});
  // anchor_generator (detection/anchor_generator_op.cc): anchor_sizes, aspect_ratios and
  // variances have no default; no gradient.
  t->push_back({"anchor_generator",
                {In("Input")},
                {In("Anchors"), In("Variances")},
                {Req("anchor_sizes", pf::FLOATS), Req("aspect_ratios", pf::FLOATS),
                 Req("variances", pf::FLOATS), A("stride", pf::FLOATS), A("offset", pf::FLOAT)}});
  // roi_align (roi_align_op.cc; op_compat.yaml: boxes is ROIs, boxes_num RoisNum).
  const Attrs roi_align = {A("spatial_scale", pf::FLOAT), A("pooled_height", pf::INT),
                           A("pooled_width", pf::INT), A("sampling_ratio", pf::INT),
                           A("aligned", pf::BOOLEAN)};
  t->push_back({"roi_align", {In("X"), In("ROIs"), Opt("RoisNum")}, {In("Out")}, roi_align});
  t->push_back({"roi_align_grad",
                {In("X"), In("ROIs"), Opt("RoisNum"), In("Out@GRAD")},
                {Opt("X@GRAD")},
                roi_align});
  // generate_proposals_v2 (op_compat.yaml "generate_proposals (generate_proposals_v2)":
  // pre_nms_top_n is `pre_nms_topN`, post_nms_top_n `post_nms_topN`); no gradient.
  t->push_back(
      {"generate_proposals_v2",
       {In("Scores"), In("BboxDeltas"), In("ImShape"), In("Anchors"), In("Variances")},
       {In("RpnRois"), In("RpnRoiProbs"), Opt("RpnRoisNum")},
       {A("pre_nms_topN", pf::INT), A("post_nms_topN", pf::INT), A("nms_thresh", pf::FLOAT),
        A("min_size", pf::FLOAT), A("eta", pf::FLOAT), A("pixel_offset", pf::BOOLEAN)}});
  // rpn_target_assign (detection/rpn_target_assign_op.cc): samples anchors with a random engine
  // when use_random; no gradient.
  t->push_back({"rpn_target_assign",
                {In("Anchor"), In("GtBoxes"), In("IsCrowd"), In("ImInfo")},
                {In("LocationIndex"), In("ScoreIndex"), In("TargetBBox"), In("TargetLabel"),
                 In("BBoxInsideWeight")},
                {A("rpn_batch_size_per_im", pf::INT), A("rpn_straddle_thresh", pf::FLOAT),
                 A("rpn_positive_overlap", pf::FLOAT), A("rpn_negative_overlap", pf::FLOAT),
                 A("rpn_fg_fraction", pf::FLOAT), A("use_random", pf::BOOLEAN)}});
}

void AddShape(std::vector<OpSchema>* t) {
  // reshape2 / transpose2: XShape carries the input shape for the grad op.
  const Attrs reshape =
      Cat({{A("shape", pf::INTS), A("use_quantizer", pf::BOOLEAN)}, MkldnnAttrs()});
  t->push_back({"reshape2",
                {In("X"), Opt("Shape"), OptDup("ShapeTensor")},
                {In("Out"), Opt("XShape")},
                reshape});
  t->push_back({"reshape2_grad", {Opt("XShape"), In("Out@GRAD")}, {Opt("X@GRAD")}, reshape});

  // transpose2: attr axis has no default in the maker.
  const Attrs transpose =
      Cat({{Req("axis", pf::INTS), A("data_format", pf::STRING), A("use_quantizer", pf::BOOLEAN)},
           MkldnnAttrs()});
  t->push_back({"transpose2", {In("X")}, {In("Out"), Opt("XShape")}, transpose});
  t->push_back({"transpose2_grad", {Opt("XShape"), In("Out@GRAD")}, {Opt("X@GRAD")}, transpose});

  // concat: AxisTensor overrides attr axis.
  const Attrs concat = Cat({{A("axis", pf::INT), A("use_quantizer", pf::BOOLEAN)}, MkldnnAttrs()});
  t->push_back({"concat", {Dup("X"), Opt("AxisTensor")}, {In("Out")}, concat});
  t->push_back(
      {"concat_grad", {Dup("X"), Opt("AxisTensor"), In("Out@GRAD")}, {OptDup("X@GRAD")}, concat});

  // split: num > 0 splits evenly, else sections. Its grad maker emits concat.
  t->push_back(
      {"split",
       {In("X"), Opt("AxisTensor"), OptDup("SectionsTensorList")},
       {Dup("Out")},
       Cat({{A("axis", pf::INT), A("num", pf::INT), A("sections", pf::INTS)}, MkldnnAttrs()})});

  // slice: attr axes has no default in SliceOpMaker.
  const Attrs slice = Cat({{Req("axes", pf::INTS), A("starts", pf::INTS), A("ends", pf::INTS),
                            A("infer_flags", pf::INTS), A("decrease_axis", pf::INTS)},
                           MkldnnAttrs()});
  const Slots slice_tensors = {Opt("StartsTensor"), Opt("EndsTensor"), OptDup("StartsTensorList"),
                               OptDup("EndsTensorList")};
  Slots slice_in = {In("Input")};
  slice_in.insert(slice_in.end(), slice_tensors.begin(), slice_tensors.end());
  t->push_back({"slice", slice_in, {In("Out")}, slice});
  Slots slice_grad_in = slice_in;
  slice_grad_in.push_back(In("Out@GRAD"));
  t->push_back({"slice_grad", slice_grad_in, {Opt("Input@GRAD")}, slice});

  // set_value (set_value_op.cc): writes a value into the slice starts:ends:steps on axes of
  // Input (Out is Input in place). axes has no default; the index lists are int64_t (LONGS). The
  // value is ValueTensor, else the list of `dtype` (fp16 in fp32_values' FLOATS) of `shape`, or
  // Paddle 3.x's SCALARS `values`. The grad maker emits set_value_grad only when there is a
  // ValueTensor (else an assign of Out@GRAD); it re-feeds the tensor lists but not Input.
  const Attrs set_value = {Req("axes", pf::LONGS),
                           A("starts", pf::LONGS),
                           A("ends", pf::LONGS),
                           A("steps", pf::LONGS),
                           A("decrease_axes", pf::LONGS),
                           A("none_axes", pf::LONGS),
                           A("dtype", pf::INT),
                           A("shape", pf::LONGS),
                           A("bool_values", pf::INTS),
                           A("fp32_values", pf::FLOATS),
                           A("int32_values", pf::INTS),
                           A("int64_values", pf::LONGS),
                           A("fp64_values", pf::FLOAT64S),
                           A("fp16_values", pf::FLOATS),
                           A("values", pf::SCALARS)};
  const Slots set_value_lists = {OptDup("StartsTensorList"), OptDup("EndsTensorList"),
                                 OptDup("StepsTensorList")};
  Slots set_value_in = {In("Input"), Opt("ValueTensor")};
  set_value_in.insert(set_value_in.end(), set_value_lists.begin(), set_value_lists.end());
  t->push_back({"set_value", set_value_in, {In("Out")}, set_value});
  Slots set_value_grad_in = {In("Out@GRAD"), In("ValueTensor")};
  set_value_grad_in.insert(set_value_grad_in.end(), set_value_lists.begin(), set_value_lists.end());
  t->push_back({"set_value_grad",
                set_value_grad_in,
                {Opt("Input@GRAD"), Opt("ValueTensor@GRAD")},
                set_value});

  // tril_triu
  const Attrs tril = {A("diagonal", pf::INT), A("lower", pf::BOOLEAN)};
  t->push_back({"tril_triu", {In("X")}, {In("Out")}, tril});
  t->push_back({"tril_triu_grad", {In("Out@GRAD")}, {Opt("X@GRAD")}, tril});
}

void AddCreation(std::vector<OpSchema>* t) {
  // fill_constant: shape is std::vector<int64_t> (LONGS); ValueTensor/ShapeTensor(List) override.
  t->push_back({"fill_constant",
                {Opt("ValueTensor"), Opt("ShapeTensor"), OptDup("ShapeTensorList")},
                {In("Out")},
                {A("dtype", pf::INT), A("shape", pf::LONGS), A("value", pf::FLOAT),
                 A("str_value", pf::STRING), A("force_cpu", pf::BOOLEAN), A("place_type", pf::INT),
                 A("use_mkldnn", pf::BOOLEAN)}});

  // uniform_random / gaussian_random (UniformRandomOpMaker, GaussianRandomOpMaker): shape is
  // std::vector<int64_t> (LONGS); ShapeTensor(List) override it.
  t->push_back({"uniform_random",
                {Opt("ShapeTensor"), OptDup("ShapeTensorList")},
                {In("Out")},
                {A("shape", pf::LONGS), A("min", pf::FLOAT), A("max", pf::FLOAT),
                 A("seed", pf::INT), A("diag_num", pf::INT), A("diag_step", pf::INT),
                 A("diag_val", pf::FLOAT), A("dtype", pf::INT)}});
  t->push_back({"gaussian_random",
                {Opt("ShapeTensor"), OptDup("ShapeTensorList")},
                {In("Out")},
                {A("shape", pf::LONGS), A("mean", pf::FLOAT), A("std", pf::FLOAT),
                 A("seed", pf::INT), A("dtype", pf::INT), A("use_mkldnn", pf::BOOLEAN)}});

  // fill_any_like (full_like): dtype -1 keeps X's. `value` is left out on purpose: the maker
  // declared it float before an op-version checkpoint turned it into a Scalar, so saved programs
  // hold FLOAT or SCALAR and Paddle reads both; one AttrType here would reject one of them.
  t->push_back({"fill_any_like", {In("X")}, {In("Out")}, {A("dtype", pf::INT)}});

  // share_data (share_data_op.cc): Out shares X's buffer; no attributes.
  t->push_back({"share_data", {In("X")}, {In("Out")}, {}});

  // coalesce_tensor (coalesce_tensor_op.cc, CoalesceTensorOpMaker): Output names Input's vars,
  // which become views of FusedOutput. concated_shapes / concated_ranks are left out on purpose:
  // the maker declares them int64 lists, but Python passes build them from plain int lists, so
  // saved programs hold INTS or LONGS.
  t->push_back({"coalesce_tensor",
                {Dup("Input")},
                {Dup("Output"), In("FusedOutput")},
                {Req("dtype", pf::INT), A("copy_data", pf::BOOLEAN), A("set_constant", pf::BOOLEAN),
                 A("persist_output", pf::BOOLEAN), A("constant", pf::FLOAT),
                 A("check_name", pf::BOOLEAN), A("use_align", pf::BOOLEAN),
                 A("align_size", pf::INT), A("user_defined_size_of_dtype", pf::INT)}});

  // assign: X is dispensable in AssignOpProtoMaker. Its grad is another assign.
  t->push_back({"assign", {Opt("X")}, {In("Out")}, {}});

  // assign_value: shape and dtype have no default; one of the *_values lists holds the data
  // (values: the Paddle 3.x SCALARS form).
  t->push_back(
      {"assign_value",
       {},
       {In("Out")},
       {Req("shape", pf::INTS), Req("dtype", pf::INT), A("bool_values", pf::INTS),
        A("fp32_values", pf::FLOATS), A("fp64_values", pf::FLOAT64S), A("int32_values", pf::INTS),
        A("int64_values", pf::LONGS), A("values", pf::SCALARS)}});
}

void AddOptimizers(std::vector<OpSchema>* t) {
  t->push_back({"sgd",
                {In("Param"), In("LearningRate"), In("Grad"), Opt("MasterParam")},
                {In("ParamOut"), Opt("MasterParamOut")},
                {A("multi_precision", pf::BOOLEAN), A("use_mkldnn", pf::BOOLEAN)}});

  // momentum: mu has no default.
  t->push_back({"momentum",
                {In("Param"), In("Grad"), In("Velocity"), In("LearningRate"), Opt("MasterParam")},
                {In("ParamOut"), In("VelocityOut"), Opt("MasterParamOut")},
                {Req("mu", pf::FLOAT), A("use_nesterov", pf::BOOLEAN),
                 A("regularization_method", pf::STRING), A("regularization_coeff", pf::FLOAT),
                 A("multi_precision", pf::BOOLEAN), A("rescale_grad", pf::FLOAT)}});

  // adam / adamw: Beta*PowOut are dispensable since use_global_beta_pow; Moment2Max(Out) is the
  // Paddle 3.x amsgrad state; min_row_size_to_use_multithread is int64_t (LONG).
  const Slots adam_in = {In("Param"),        In("Grad"),           In("LearningRate"),
                         In("Moment1"),      In("Moment2"),        Opt("Moment2Max"),
                         In("Beta1Pow"),     In("Beta2Pow"),       Opt("Beta1Tensor"),
                         Opt("Beta2Tensor"), Opt("EpsilonTensor"), Opt("MasterParam"),
                         Opt("SkipUpdate")};
  const Slots adam_out = {In("ParamOut"),       In("Moment1Out"),   In("Moment2Out"),
                          Opt("Moment2MaxOut"), Opt("Beta1PowOut"), Opt("Beta2PowOut"),
                          Opt("MasterParamOut")};
  const Attrs adam = {A("beta1", pf::FLOAT),
                      A("beta2", pf::FLOAT),
                      A("epsilon", pf::FLOAT),
                      A("lazy_mode", pf::BOOLEAN),
                      A("min_row_size_to_use_multithread", pf::LONG),
                      A("multi_precision", pf::BOOLEAN),
                      A("use_global_beta_pow", pf::BOOLEAN),
                      A("amsgrad", pf::BOOLEAN)};
  t->push_back({"adam", adam_in, adam_out, adam});
  t->push_back(
      {"adamw", adam_in, adam_out,
       Cat({adam,
            {A("coeff", pf::FLOAT), A("lr_ratio", pf::FLOAT), A("with_decay", pf::BOOLEAN)}})});
}

void AddControlFlow(std::vector<OpSchema>* t) {
  // feed/fetch: col has no default.
  t->push_back({"feed", {In("X")}, {In("Out")}, {Req("col", pf::INT)}});
  t->push_back({"fetch", {In("X")}, {In("Out")}, {Req("col", pf::INT)}});

  // conditional_block: Input and Out list what the sub-block reads and writes; either may be
  // empty. Scope holds the step scope the grad op re-enters.
  const Attrs cond = {Req("sub_block", pf::BLOCK), A("is_scalar_condition", pf::BOOLEAN),
                      A("skip_eager_deletion_vars", pf::STRINGS)};
  t->push_back(
      {"conditional_block", {Dup("Cond"), OptDup("Input")}, {OptDup("Out"), In("Scope")}, cond});
  t->push_back({"conditional_block_grad",
                {Dup("Cond"), OptDup("Input"), OptDup("Out"), OptDup("Out@GRAD"), In("Scope")},
                {OptDup("Cond@GRAD"), OptDup("Input@GRAD")},
                cond});

  const Attrs loop = {Req("sub_block", pf::BLOCK), A("is_test", pf::BOOLEAN),
                      A("skip_eager_deletion_vars", pf::STRINGS)};
  t->push_back({"while", {OptDup("X"), In("Condition")}, {OptDup("Out"), In("StepScopes")}, loop});
  t->push_back({"while_grad",
                {OptDup("X"), OptDup("Out"), OptDup("Out@GRAD"), In("StepScopes")},
                {OptDup("X@GRAD")},
                Cat({loop, {A("original_output_grad", pf::STRINGS)}})});

  t->push_back({"increment", {In("X")}, {In("Out")}, {A("step", pf::FLOAT)}});
}

void AddCommunication(std::vector<OpSchema>* t) {
  // paddle/fluid/operators/collective/. "tag" only exists in Ascend builds.
  const Attrs allreduce = {A("ring_id", pf::INT), A("use_calc_stream", pf::BOOLEAN),
                           A("use_model_parallel", pf::BOOLEAN), A("tag", pf::STRING)};
  for (std::string_view type :
       {"c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod"}) {
    t->push_back({type, {In("X")}, {In("Out")}, allreduce});
  }
  t->push_back({"c_broadcast",
                {In("X")},
                {In("Out")},
                {A("ring_id", pf::INT), A("root", pf::INT), A("use_calc_stream", pf::BOOLEAN)}});
  // c_allgather: nranks has no default (c_reducescatter's defaults to 1).
  t->push_back(
      {"c_allgather",
       {In("X")},
       {In("Out")},
       {A("ring_id", pf::INT), A("use_calc_stream", pf::BOOLEAN), Req("nranks", pf::INT)}});
  t->push_back({"c_reducescatter",
                {In("X")},
                {In("Out")},
                {A("ring_id", pf::INT), A("nranks", pf::INT), A("use_calc_stream", pf::BOOLEAN)}});
  t->push_back({"c_identity",
                {In("X")},
                {In("Out")},
                {A("ring_id", pf::INT), A("use_calc_stream", pf::BOOLEAN),
                 A("use_model_parallel", pf::BOOLEAN)}});
  const Attrs split_concat = {A("rank", pf::INT), A("nranks", pf::INT), A("ring_id", pf::INT),
                              A("use_calc_stream", pf::BOOLEAN),
                              A("use_model_parallel", pf::BOOLEAN)};
  t->push_back({"c_split", {In("X")}, {In("Out")}, split_concat});
  t->push_back({"c_concat", {In("X")}, {In("Out")}, split_concat});
  // c_embedding_op.cc (start_index and vocab_size are int64_t, hence LONG; the grad maker copies
  // the forward's attributes) and c_softmax_with_cross_entropy_op.cc (ignore_index int64_t, the
  // others int). Like every grad output here, W@GRAD and Logits@GRAD are dispensable.
  const Attrs embedding = {A("start_index", pf::LONG), A("vocab_size", pf::LONG)};
  t->push_back({"c_embedding", {In("W"), In("Ids")}, {In("Out")}, embedding});
  t->push_back(
      {"c_embedding_grad", {In("W"), In("Ids"), In("Out@GRAD")}, {Opt("W@GRAD")}, embedding});
  const Attrs parallel_ce = {A("ignore_index", pf::LONG), A("ring_id", pf::INT), A("rank", pf::INT),
                             A("nranks", pf::INT)};
  t->push_back({"c_softmax_with_cross_entropy",
                {In("Logits"), In("Label")},
                {In("Softmax"), In("Loss")},
                parallel_ce});
  t->push_back({"c_softmax_with_cross_entropy_grad",
                {In("Softmax"), In("Label"), In("Loss@GRAD")},
                {Opt("Logits@GRAD")},
                parallel_ce});
  t->push_back({"c_sync_calc_stream", {In("X")}, {In("Out")}, {}});
  t->push_back({"c_sync_comm_stream", {Dup("X")}, {Dup("Out")}, {A("ring_id", pf::INT)}});
  // send_v2 has no outputs; recv_v2 no inputs.
  const Attrs p2p = {A("ring_id", pf::INT), A("peer", pf::INT), A("use_calc_stream", pf::BOOLEAN),
                     A("dynamic_shape", pf::BOOLEAN)};
  t->push_back({"send_v2", {In("X")}, {}, p2p});
  t->push_back(
      {"recv_v2", {}, {In("Out")}, Cat({p2p, {A("dtype", pf::INT), A("out_shape", pf::INTS)}})});
  t->push_back({"barrier", {In("X")}, {In("Out")}, {A("ring_id", pf::INT)}});
}

void AddParameterServer(std::vector<OpSchema>* t) {
  // Paddle 1.x's paddle/fluid/operators/distributed_ops/ (the makers as of 1.8) and 2.x's
  // paddle/fluid/operators/pscore/. The makers changed their attributes between releases (send's
  // 1.x epmap/sections became 2.x's table_id/is_sparse), so only the attributes every release
  // declared alike are typed, and the dummy control slots are dispensable: some writers leave
  // them empty.
  const Attrs trainer = {A("trainer_id", pf::INT)};
  t->push_back({"send",
                {Dup("X")},
                {OptDup("Out")},
                Cat({trainer, {A("epmap", pf::STRINGS), A("send_varnames", pf::STRINGS)}})});
  t->push_back({"recv",
                {OptDup("X")},
                {Dup("Out")},
                Cat({trainer,
                     {A("epmap", pf::STRINGS), A("varnames", pf::STRINGS),
                      A("recv_varnames", pf::STRINGS)}})});
  const Attrs barrier = Cat({trainer, {A("endpoints", pf::STRINGS)}});
  t->push_back({"send_barrier",
                {OptDup("X")},
                {OptDup("Out")},
                Cat({barrier, {A("half_async", pf::BOOLEAN)}})});
  t->push_back({"fetch_barrier", {OptDup("X")}, {OptDup("Out")}, barrier});
  // listen_and_serv: X lists the vars the server receives; the optimize blocks run per grad.
  // kCheckpointBlockId is spelled "checkpint_block_id" in Paddle.
  t->push_back(
      {"listen_and_serv",
       {OptDup("X")},
       {},
       {A("endpoint", pf::STRING), A("pserver_id", pf::INT), A("grad_to_block_id", pf::STRINGS),
        A("distributed_mode", pf::INT), A("dc_asgd", pf::BOOLEAN), A("optimize_blocks", pf::BLOCKS),
        A("prefetch_var_name_to_block_id", pf::STRINGS), A("sparse_grad_to_param", pf::STRINGS),
        A("Fanin", pf::INT), A("checkpint_block_id", pf::INT), A("lr_decay_block_id", pf::INT),
        A("rpc_get_thread_num", pf::INT), A("rpc_send_thread_num", pf::INT),
        A("rpc_prefetch_thread_num", pf::INT)}});
  t->push_back({"fl_listen_and_serv",
                {OptDup("X")},
                {},
                {A("endpoint", pf::STRING), A("sync_mode", pf::BOOLEAN), A("Fanin", pf::INT),
                 A("optimize_blocks", pf::BLOCKS)}});
  t->push_back(
      {"heter_listen_and_serv",
       {OptDup("X")},
       {},
       {A("endpoint", pf::STRING), A("pserver_id", pf::INT), A("message_to_block_id", pf::STRINGS),
        A("distributed_mode", pf::INT), A("optimize_blocks", pf::BLOCKS), A("fanin", pf::INT)}});
  t->push_back(
      {"checkpoint_notify",
       {},
       {},
       Cat({trainer,
            {A("epmap", pf::STRINGS), A("dir", pf::STRING), A("lookup_table", pf::STRING)}})});
  t->push_back({"distributed_lookup_table",
                {Dup("Ids"), In("W")},
                {Dup("Outputs")},
                {A("padding_idx", pf::LONG), A("dtype", pf::INT), A("table_id", pf::INT),
                 A("is_distributed", pf::BOOLEAN), A("table_names", pf::STRINGS),
                 A("endpoints", pf::STRINGS), A("trainer_id", pf::INT)}});
  t->push_back({"prefetch", {Dup("X")}, {Dup("Out")}, Cat({trainer, {A("epmap", pf::STRINGS)}})});
  t->push_back(
      {"send_and_recv",
       {OptDup("X")},
       {OptDup("Out")},
       Cat({trainer,
            {A("message_name", pf::STRING), A("mode", pf::STRING), A("send_var_name", pf::STRINGS),
             A("recv_var_name", pf::STRINGS), A("endpoints", pf::STRINGS)}})});
  t->push_back({"distributed_push_sparse",
                {Dup("Ids"), Dup("Shows"), Dup("Clicks")},
                {OptDup("Outputs")},
                {A("table_id", pf::INT), A("size", pf::INT), A("is_distributed", pf::BOOLEAN),
                 A("padding_idx", pf::LONG), A("dtype", pf::INT)}});
}

std::vector<OpSchema> BuildTable() {
  std::vector<OpSchema> table;
  AddMath(&table);
  AddCompareAndLogical(&table);
  AddActivations(&table);
  AddNn(&table);
  AddConvNet(&table);
  AddDetection(&table);
  AddShape(&table);
  AddCreation(&table);
  AddOptimizers(&table);
  AddControlFlow(&table);
  AddCommunication(&table);
  AddParameterServer(&table);
  std::sort(table.begin(), table.end(),
            [](const OpSchema& a, const OpSchema& b) { return a.type < b.type; });
  return table;
}

template <typename T>
const T* FindByName(const std::vector<T>& items, std::string_view name) {
  for (const T& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

}  // namespace

const SlotSchema* OpSchema::FindInput(std::string_view slot) const {
  return FindByName(inputs, slot);
}

const SlotSchema* OpSchema::FindOutput(std::string_view slot) const {
  return FindByName(outputs, slot);
}

const AttrSchema* OpSchema::FindAttr(std::string_view name) const {
  return FindByName(attrs, name);
}

const std::vector<OpSchema>& AllOpSchemas() {
  static const std::vector<OpSchema> table = BuildTable();
  return table;
}

const OpSchema* FindOpSchema(std::string_view type) {
  // Built once; the keys view the type names held by the table, which lives forever.
  static const std::unordered_map<std::string_view, const OpSchema*> index = [] {
    std::unordered_map<std::string_view, const OpSchema*> map;
    map.reserve(AllOpSchemas().size() * 2);
    for (const OpSchema& schema : AllOpSchemas()) map.emplace(schema.type, &schema);
    return map;
  }();
  auto it = index.find(type);
  return it == index.end() ? nullptr : it->second;
}

bool PaddleConvertsAttr(pf::AttrType declared, pf::AttrType stored) {
  switch (declared) {
    case pf::BOOLEAN:
    case pf::LONG:
      return stored == pf::INT || stored == pf::FLOAT;
    case pf::FLOAT:
      return stored == pf::INT || stored == pf::LONG;
    case pf::FLOAT64:
      return stored == pf::INT || stored == pf::LONG || stored == pf::FLOAT;
    case pf::LONGS:
    case pf::FLOAT64S:
      return stored == pf::INTS || stored == pf::FLOATS;
    default:
      return false;
  }
}

int64_t DeclaredAttrTypesSince() { return PaddleVersion(2, 4); }

bool IsParameterServerOp(std::string_view type) {
  // distributed_ops/ (1.x) and pscore/ (2.x), plus the 1.x helpers that only transpiled
  // parameter-server programs hold.
  static constexpr std::string_view kOps[] = {"send",
                                              "recv",
                                              "send_barrier",
                                              "fetch_barrier",
                                              "listen_and_serv",
                                              "fl_listen_and_serv",
                                              "heter_listen_and_serv",
                                              "checkpoint_notify",
                                              "distributed_lookup_table",
                                              "distributed_push_sparse",
                                              "prefetch",
                                              "send_and_recv",
                                              "recv_save",
                                              "split_byref",
                                              "split_ids",
                                              "merge_ids",
                                              "ref_by_trainer_id",
                                              "fake_init",
                                              "lookup_sparse_table_read",
                                              "lookup_sparse_table_write",
                                              "lookup_sparse_table_init",
                                              "lookup_sparse_table_merge",
                                              "lookup_sparse_table_grad_split",
                                              "lookup_sparse_table_fuse_adam",
                                              "lookup_sparse_table_fuse_sgd",
                                              "sparse_tensor_load"};
  for (std::string_view op : kOps) {
    if (op == type) return true;
  }
  return false;
}

bool IsControlDependencyVar(std::string_view name) {
  constexpr std::string_view kPrefix = "__control_var";
  return name.substr(0, kPrefix.size()) == kPrefix;
}

const std::vector<AttrSchema>& CommonAttrSchemas() {
  // OpProtoAndCheckerMaker adds these to every op (op_proto_maker.cc).
  static const std::vector<AttrSchema> attrs = {
      A("op_role", pf::INT),         A("op_role_var", pf::STRINGS),
      A("op_namescope", pf::STRING), A("op_callstack", pf::STRINGS),
      A("op_device", pf::STRING),    A("with_quant_attr", pf::BOOLEAN),
  };
  return attrs;
}

}  // namespace irm::oldir
