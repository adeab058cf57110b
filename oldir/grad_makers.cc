// The grad maker of each supported forward op, written from Paddle's GradOpMaker classes
// (paddle/fluid/operators/*_op.cc: MatMulV2GradOpMaker, ElementwiseGradOpMaker,
// ActivationGradOpMaker, LayerNormGradOpMaker, ScaleGradMaker, CastOpGradMaker, SumGradDescMaker,
// SplitGradMaker, ...). Makers that call SetAttrMap copy every forward attribute; the others
// (scale, cast, assign, mean, sum) set only the attributes Paddle's maker sets.
#include "oldir/grad_makers.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "oldir/elementwise_ops.h"

namespace irm::oldir {

// ---- GradOp ---------------------------------------------------------------------------------

namespace {

void SetSorted(SlotArgs* slots, const std::string& slot, std::vector<std::string> names) {
  auto it =
      std::lower_bound(slots->begin(), slots->end(), slot,
                       [](const auto& entry, const std::string& s) { return entry.first < s; });
  if (it != slots->end() && it->first == slot) {
    it->second = std::move(names);
  } else {
    slots->insert(it, {slot, std::move(names)});
  }
}

std::vector<std::string> ArgNames(const SlotArgs& slots) {
  std::vector<std::string> names;
  for (const auto& [slot, args] : slots) names.insert(names.end(), args.begin(), args.end());
  return names;
}

void Rename(SlotArgs* slots, const std::string& from, const std::string& to) {
  for (auto& [slot, args] : *slots) std::replace(args.begin(), args.end(), from, to);
}

const proto::OpDesc::Var* FindSlot(
    const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots, std::string_view name) {
  for (const proto::OpDesc::Var& slot : slots) {
    if (slot.parameter() == name) return &slot;
  }
  return nullptr;
}

}  // namespace

void GradOp::SetInput(const std::string& slot, std::vector<std::string> names) {
  SetSorted(&inputs, slot, std::move(names));
}

void GradOp::SetOutput(const std::string& slot, std::vector<std::string> names) {
  SetSorted(&outputs, slot, std::move(names));
}

void GradOp::SetAttr(const std::string& name, AttrValue value) {
  for (auto& [n, v] : attrs) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  attrs.emplace_back(name, std::move(value));
}

const AttrValue* GradOp::FindAttr(std::string_view name) const {
  for (const auto& [n, v] : attrs) {
    if (n == name) return &v;
  }
  return nullptr;
}

std::vector<std::string> GradOp::InputArgNames() const { return ArgNames(inputs); }
std::vector<std::string> GradOp::OutputArgNames() const { return ArgNames(outputs); }

void GradOp::RenameInput(const std::string& from, const std::string& to) {
  Rename(&inputs, from, to);
}

void GradOp::RenameOutput(const std::string& from, const std::string& to) {
  Rename(&outputs, from, to);
}

// ---- GradMakerContext ---------------------------------------------------------------------------

void GradMakerContext::Missing(std::string what) const {
  if (status_.ok()) {
    status_ = Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("the grad maker of '{}' needs {}, which the op lacks", forward_.type(), what));
  }
}

bool GradMakerContext::HasInput(std::string_view slot) const {
  return FindSlot(forward_.inputs(), slot) != nullptr;
}

bool GradMakerContext::HasOutput(std::string_view slot) const {
  return FindSlot(forward_.outputs(), slot) != nullptr;
}

std::vector<std::string> GradMakerContext::Input(std::string_view slot) const {
  const proto::OpDesc::Var* var = FindSlot(forward_.inputs(), slot);
  if (var == nullptr) {
    Missing(fmt::format("input slot '{}'", slot));
    return {};
  }
  return {var->arguments().begin(), var->arguments().end()};
}

std::vector<std::string> GradMakerContext::Output(std::string_view slot) const {
  const proto::OpDesc::Var* var = FindSlot(forward_.outputs(), slot);
  if (var == nullptr) {
    Missing(fmt::format("output slot '{}'", slot));
    return {};
  }
  return {var->arguments().begin(), var->arguments().end()};
}

std::vector<std::string> GradMakerContext::InputGrad(std::string_view slot,
                                                     bool drop_empty_grad) const {
  std::vector<std::string> grads;
  for (const std::string& name : Input(slot)) {
    std::string grad = name + kGradSuffix;
    if (no_grad_.count(grad) > 0) {
      if (!drop_empty_grad) grads.emplace_back(kEmptyVarName);
      continue;
    }
    (*grad_to_var_)[grad] = name;
    grads.push_back(std::move(grad));
  }
  return grads;
}

std::vector<std::string> GradMakerContext::OutputGrad(std::string_view slot) const {
  std::vector<std::string> grads;
  for (const std::string& name : Output(slot)) {
    std::string grad = name + kGradSuffix;
    (*grad_to_var_)[grad] = name;
    grads.push_back(std::move(grad));
  }
  return grads;
}

AttrList GradMakerContext::AttrMap() const {
  AttrList attrs;
  for (const auto& [name, value] : attrs_) {
    if (name != kOpRoleAttr) attrs.emplace_back(name, value);
  }
  return attrs;
}

AttrValue GradMakerContext::GetAttr(std::string_view name) const {
  for (const auto& [n, value] : attrs_) {
    if (n == name) return value;
  }
  Missing(fmt::format("attribute '{}'", name));
  return int32_t{0};
}

// ---- the makers ---------------------------------------------------------------------------

namespace {

std::string Grad(std::string_view slot) { return std::string(slot) + kGradSuffix; }

// A one-op result with the forward attributes (SetAttrMap).
GradOp WithAttrMap(const GradMakerContext& ctx, std::string type) {
  GradOp op;
  op.type = std::move(type);
  op.attrs = ctx.AttrMap();
  return op;
}

// matmul_v2, elementwise_add/sub/mul: X, Y, Out@GRAD -> X@GRAD, Y@GRAD.
std::vector<GradOp> BinaryGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, ctx.type() + "_grad");
  op.SetInput("X", ctx.Input("X"));
  op.SetInput("Y", ctx.Input("Y"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  op.SetOutput(Grad("Y"), ctx.InputGrad("Y"));
  return {std::move(op)};
}

// ElementwiseDivGradOpMaker also re-feeds Out.
std::vector<GradOp> ElementwiseDivGrad(const GradMakerContext& ctx) {
  std::vector<GradOp> ops = BinaryGrad(ctx);
  ops[0].SetInput("Out", ctx.Output("Out"));
  return ops;
}

// ActivationGradOpMaker<kDepOut> (relu, tanh, sigmoid): Out, Out@GRAD -> X@GRAD; X as well when
// the op runs on oneDNN.
std::vector<GradOp> ActivationDepOutGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, ctx.type() + "_grad");
  op.SetInput("Out", ctx.Output("Out"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  const AttrValue* mkldnn = op.FindAttr("use_mkldnn");
  if (mkldnn != nullptr && std::holds_alternative<bool>(*mkldnn) && std::get<bool>(*mkldnn)) {
    op.SetInput("X", ctx.Input("X"));
  }
  return {std::move(op)};
}

// X, Out@GRAD -> X@GRAD with the forward attributes: gelu, reduce_mean, reduce_sum.
std::vector<GradOp> DepXGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, ctx.type() + "_grad");
  op.SetInput("X", ctx.Input("X"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// MeanGradMaker: like DepXGrad, but without SetAttrMap.
std::vector<GradOp> MeanGrad(const GradMakerContext& ctx) {
  GradOp op;
  op.type = "mean_grad";
  op.SetInput("X", ctx.Input("X"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

std::vector<GradOp> SoftmaxGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "softmax_grad");
  op.SetInput("Out", ctx.Output("Out"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// LayerNormGradOpMaker: Scale and Bias (and their gradients) only when the op has them.
std::vector<GradOp> LayerNormGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "layer_norm_grad");
  op.SetInput("X", ctx.Input("X"));
  op.SetInput("Mean", ctx.Output("Mean"));
  op.SetInput("Variance", ctx.Output("Variance"));
  for (const char* slot : {"Scale", "Bias"}) {
    if (!ctx.HasInput(slot)) continue;
    op.SetInput(slot, ctx.Input(slot));
    op.SetOutput(Grad(slot), ctx.InputGrad(slot));
  }
  op.SetInput(Grad("Y"), ctx.OutputGrad("Y"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// Conv2DGradMaker (paddle/fluid/operators/conv_op.h): Input, Filter, Output@GRAD; Bias (and its
// gradient) only when the op has one.
std::vector<GradOp> Conv2dGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "conv2d_grad");
  op.SetInput("Input", ctx.Input("Input"));
  op.SetInput("Filter", ctx.Input("Filter"));
  op.SetInput(Grad("Output"), ctx.OutputGrad("Output"));
  op.SetOutput(Grad("Input"), ctx.InputGrad("Input"));
  op.SetOutput(Grad("Filter"), ctx.InputGrad("Filter"));
  if (ctx.HasInput("Bias")) {
    op.SetInput("Bias", ctx.Input("Bias"));
    op.SetOutput(Grad("Bias"), ctx.InputGrad("Bias"));
  }
  return {std::move(op)};
}

// pool2d: DefaultGradOpMaker (every forward input and output, and Out@GRAD).
std::vector<GradOp> Pool2dGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "pool2d_grad");
  op.SetInput("X", ctx.Input("X"));
  op.SetInput("Out", ctx.Output("Out"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// BatchNormGradMaker (paddle/fluid/operators/batch_norm_op.cc): X, Y@GRAD, Scale, Bias, the saved
// statistics, ReserveSpace when the forward has it, Mean / Variance (the forward's MeanOut /
// VarianceOut) with global statistics, and MeanOut / VarianceOut always.
std::vector<GradOp> BatchNormGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "batch_norm_grad");
  op.SetInput("X", ctx.Input("X"));
  op.SetInput(Grad("Y"), ctx.OutputGrad("Y"));
  op.SetInput("Scale", ctx.Input("Scale"));
  op.SetInput("Bias", ctx.Input("Bias"));
  op.SetInput("SavedMean", ctx.Output("SavedMean"));
  op.SetInput("SavedVariance", ctx.Output("SavedVariance"));
  if (ctx.HasOutput("ReserveSpace")) op.SetInput("ReserveSpace", ctx.Output("ReserveSpace"));
  // Absent flags are the maker's defaults (false), not an error.
  const AttrList attrs = ctx.AttrMap();
  auto flag = [&attrs](std::string_view name) {
    for (const auto& [n, value] : attrs) {
      if (n == name) return std::holds_alternative<bool>(value) && std::get<bool>(value);
    }
    return false;
  };
  if (flag("use_global_stats") || flag("is_test")) {
    op.SetInput("Mean", ctx.Output("MeanOut"));
    op.SetInput("Variance", ctx.Output("VarianceOut"));
  }
  op.SetInput("MeanOut", ctx.Output("MeanOut"));
  op.SetInput("VarianceOut", ctx.Output("VarianceOut"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  op.SetOutput(Grad("Scale"), ctx.InputGrad("Scale"));
  op.SetOutput(Grad("Bias"), ctx.InputGrad("Bias"));
  return {std::move(op)};
}

// ActivationGradOpMaker<kNoDeps> (floor): Out@GRAD -> X@GRAD.
std::vector<GradOp> NoDepsGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, ctx.type() + "_grad");
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// DefaultGradOpMaker of a one-input op (reduce_prod): X, Out, Out@GRAD -> X@GRAD.
std::vector<GradOp> DepXOutGrad(const GradMakerContext& ctx) {
  GradOp op = DepXGrad(ctx)[0];
  op.SetInput("Out", ctx.Output("Out"));
  return {std::move(op)};
}

// GatherGradOpMaker (gather_op.cc): X, Index, Axis (when set), Out@GRAD -> X@GRAD.
std::vector<GradOp> GatherGrad(const GradMakerContext& ctx) {
  GradOp op = DepXGrad(ctx)[0];
  op.SetInput("Index", ctx.Input("Index"));
  if (ctx.HasInput("Axis")) op.SetInput("Axis", ctx.Input("Axis"));
  return {std::move(op)};
}

// SmoothL1LossGradMaker (smooth_l1_loss_op.cc): the weights (when the forward has them), Diff and
// Out@GRAD -> X@GRAD, Y@GRAD.
std::vector<GradOp> SmoothL1LossGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "smooth_l1_loss_grad");
  for (const char* weight : {"InsideWeight", "OutsideWeight"}) {
    if (ctx.HasInput(weight)) op.SetInput(weight, ctx.Input(weight));
  }
  op.SetInput("Diff", ctx.Output("Diff"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  op.SetOutput(Grad("Y"), ctx.InputGrad("Y"));
  return {std::move(op)};
}

// The generated maker of sigmoid_cross_entropy_with_logits_grad (backward.yaml): X, Label,
// pos_weight when set, Out@GRAD -> X@GRAD.
std::vector<GradOp> SigmoidCrossEntropyWithLogitsGrad(const GradMakerContext& ctx) {
  GradOp op = DepXGrad(ctx)[0];
  op.SetInput("Label", ctx.Input("Label"));
  if (ctx.HasInput("pos_weight")) op.SetInput("pos_weight", ctx.Input("pos_weight"));
  return {std::move(op)};
}

// AffineChannelGradMaker (affine_channel_op.cc): X, Scale, Out@GRAD -> X@GRAD, Scale@GRAD,
// Bias@GRAD.
std::vector<GradOp> AffineChannelGrad(const GradMakerContext& ctx) {
  GradOp op = DepXGrad(ctx)[0];
  op.SetInput("Scale", ctx.Input("Scale"));
  op.SetOutput(Grad("Scale"), ctx.InputGrad("Scale"));
  op.SetOutput(Grad("Bias"), ctx.InputGrad("Bias"));
  return {std::move(op)};
}

// RoiAlignGradMaker (roi_align_op.cc): X, ROIs, RoisNum (when set), Out@GRAD -> X@GRAD.
std::vector<GradOp> RoiAlignGrad(const GradMakerContext& ctx) {
  GradOp op = DepXGrad(ctx)[0];
  op.SetInput("ROIs", ctx.Input("ROIs"));
  if (ctx.HasInput("RoisNum")) op.SetInput("RoisNum", ctx.Input("RoisNum"));
  return {std::move(op)};
}

std::vector<GradOp> LookupTableV2Grad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "lookup_table_v2_grad");
  op.SetInput("W", ctx.Input("W"));
  op.SetInput("Ids", ctx.Input("Ids"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("W"), ctx.InputGrad("W"));
  return {std::move(op)};
}

// Reshape2GradMaker / Transpose2GradMaker: the grad reads the input shape from XShape, not X.
std::vector<GradOp> XShapeGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, ctx.type() + "_grad");
  op.SetInput("XShape", ctx.Output("XShape"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// ScaleGradMaker: another scale of Out@GRAD by the same factor, without bias.
std::vector<GradOp> ScaleGrad(const GradMakerContext& ctx) {
  GradOp op;
  op.type = "scale";
  op.SetInput("X", ctx.OutputGrad("Out"));
  if (ctx.HasInput("ScaleTensor")) op.SetInput("ScaleTensor", ctx.Input("ScaleTensor"));
  op.SetOutput("Out", ctx.InputGrad("X"));
  op.SetAttr("scale", ctx.GetAttr("scale"));
  op.SetAttr("bias", 0.0f);
  op.SetAttr("bias_after_scale", true);
  return {std::move(op)};
}

// CastOpGradMaker: a cast back, dtypes swapped.
std::vector<GradOp> CastGrad(const GradMakerContext& ctx) {
  GradOp op;
  op.type = "cast";
  op.SetInput("X", ctx.OutputGrad("Out"));
  op.SetOutput("Out", ctx.InputGrad("X"));
  op.SetAttr("out_dtype", ctx.GetAttr("in_dtype"));
  op.SetAttr("in_dtype", ctx.GetAttr("out_dtype"));
  return {std::move(op)};
}

std::vector<GradOp> DropoutGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "dropout_grad");
  op.SetInput("Mask", ctx.Output("Mask"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

// SoftmaxGradMaker of softmax_with_cross_entropy (Backprop is re-fed only in Ascend/MLU builds).
std::vector<GradOp> SoftmaxWithCrossEntropyGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "softmax_with_cross_entropy_grad");
  op.SetInput("Label", ctx.Input("Label"));
  op.SetInput("Softmax", ctx.Output("Softmax"));
  op.SetInput(Grad("Loss"), ctx.OutputGrad("Loss"));
  op.SetOutput(Grad("Logits"), ctx.InputGrad("Logits"));
  return {std::move(op)};
}

// ConcatGradOpMaker: X@GRAD keeps one entry per input (@EMPTY@ where no gradient flows).
std::vector<GradOp> ConcatGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "concat_grad");
  op.SetInput("X", ctx.Input("X"));
  if (ctx.HasInput("AxisTensor")) op.SetInput("AxisTensor", ctx.Input("AxisTensor"));
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X", /*drop_empty_grad=*/false));
  return {std::move(op)};
}

// SplitGradMaker: concat of the output gradients, with split's attributes (axis, num,
// sections) copied as they are.
std::vector<GradOp> SplitGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "concat");
  op.SetInput("X", ctx.OutputGrad("Out"));
  if (ctx.HasInput("AxisTensor")) op.SetInput("AxisTensor", ctx.Input("AxisTensor"));
  op.SetOutput("Out", ctx.InputGrad("X"));
  return {std::move(op)};
}

std::vector<GradOp> SliceGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "slice_grad");
  op.SetInput("Input", ctx.Input("Input"));
  for (const char* slot : {"StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList"}) {
    if (ctx.HasInput(slot)) op.SetInput(slot, ctx.Input(slot));
  }
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("Input"), ctx.InputGrad("Input"));
  return {std::move(op)};
}

// AssignGradMaker: an assign of Out@GRAD, no attributes.
std::vector<GradOp> AssignGrad(const GradMakerContext& ctx) {
  GradOp op;
  op.type = "assign";
  op.SetInput("X", ctx.OutputGrad("Out"));
  op.SetOutput("Out", ctx.InputGrad("X"));
  return {std::move(op)};
}

// SumGradDescMaker: one `scale` (scale 1.0) of Out@GRAD per input, @EMPTY@ outputs included
// (append_backward drops those ops later).
std::vector<GradOp> SumGrad(const GradMakerContext& ctx) {
  std::vector<GradOp> ops;
  const std::vector<std::string> out_grad = ctx.OutputGrad("Out");
  for (std::string& x_grad : ctx.InputGrad("X", /*drop_empty_grad=*/false)) {
    GradOp op;
    op.type = "scale";
    op.SetInput("X", out_grad);
    op.SetOutput("Out", {std::move(x_grad)});
    op.SetAttr("scale", 1.0f);
    ops.push_back(std::move(op));
  }
  return ops;
}

std::vector<GradOp> TrilTriuGrad(const GradMakerContext& ctx) {
  GradOp op = WithAttrMap(ctx, "tril_triu_grad");
  op.SetInput(Grad("Out"), ctx.OutputGrad("Out"));
  op.SetOutput(Grad("X"), ctx.InputGrad("X"));
  return {std::move(op)};
}

std::vector<GradRule> BuildRules() {
  std::vector<GradRule> rules = {
      {"matmul_v2", BinaryGrad},
      {"relu", ActivationDepOutGrad},
      {"tanh", ActivationDepOutGrad},
      {"sigmoid", ActivationDepOutGrad},
      {"gelu", DepXGrad},
      {"softmax", SoftmaxGrad},
      {"layer_norm", LayerNormGrad},
      {"conv2d", Conv2dGrad},
      {"pool2d", Pool2dGrad},
      {"batch_norm", BatchNormGrad},
      // mul's grad maker is the generated one of matmul_with_flatten_grad: X, Y, Out@GRAD.
      {"mul", BinaryGrad},
      {"lookup_table_v2", LookupTableV2Grad},
      {"floor", NoDepsGrad},
      {"gather", GatherGrad},
      {"reduce_prod", DepXOutGrad},
      {"smooth_l1_loss", SmoothL1LossGrad},
      {"sigmoid_cross_entropy_with_logits", SigmoidCrossEntropyWithLogitsGrad},
      {"affine_channel", AffineChannelGrad},
      {"roi_align", RoiAlignGrad},
      {"reshape2", XShapeGrad},
      {"transpose2", XShapeGrad},
      {"scale", ScaleGrad},
      {"cast", CastGrad},
      {"dropout", DropoutGrad},
      {"reduce_mean", DepXGrad},
      {"reduce_sum", DepXGrad},
      {"mean", MeanGrad},
      {"softmax_with_cross_entropy", SoftmaxWithCrossEntropyGrad},
      {"concat", ConcatGrad},
      {"split", SplitGrad},
      {"slice", SliceGrad},
      {"assign", AssignGrad},
      {"sum", SumGrad},
      {"tril_triu", TrilTriuGrad},
      // Registered with EmptyGradOpMaker in Paddle: no gradient, and the op path stops there.
      {"fill_constant", nullptr},
      {"fill_any_like", nullptr},
      {"fill_zeros_like", nullptr},
      {"assign_value", nullptr},
      {"feed", nullptr},
      {"fetch", nullptr},
      {"uniform_random", nullptr},
      {"gaussian_random", nullptr},
      {"truncated_gaussian_random", nullptr},
      {"randint", nullptr},
      {"seed", nullptr},
      {"shape", nullptr},
      {"one_hot_v2", nullptr},
      {"arg_max", nullptr},
      {"arg_min", nullptr},
      {"range", nullptr},
      {"equal", nullptr},
      {"not_equal", nullptr},
      {"less_than", nullptr},
      {"less_equal", nullptr},
      {"greater_than", nullptr},
      {"greater_equal", nullptr},
      {"logical_and", nullptr},
      {"logical_or", nullptr},
      {"logical_not", nullptr},
      {"logical_xor", nullptr},
      // Evaluation ops: accuracy has no gradient (ForwardOnlyTrait in ops.yaml) and the top_k
      // feeding it is cut off with it.
      {"accuracy", nullptr},
      // Detection ops registered with EmptyGradOpMaker (or none): their outputs are targets and
      // proposals, not differentiated.
      {"anchor_generator", nullptr},
      {"generate_proposals_v2", nullptr},
      {"rpn_target_assign", nullptr},
  };
  // The elementwise family from its list (elementwise_ops.h): ElementwiseGradOpMaker, which
  // re-feeds Out where the list says so (ElementwiseDivGradOpMaker); an op without a grad op has
  // no rule.
  for (const LegacyElementwiseOp& op : LegacyElementwiseOps()) {
    if (!op.has_grad()) continue;
    rules.push_back(
        {op.type, op.grad_out == ElementwiseGradOut::kRequired ? ElementwiseDivGrad : BinaryGrad});
  }
  return rules;
}

const std::vector<GradRule>& Rules() {
  static const std::vector<GradRule> rules = BuildRules();
  return rules;
}

}  // namespace

const GradRule* FindGradRule(std::string_view type) {
  static const std::unordered_map<std::string_view, const GradRule*> index = [] {
    std::unordered_map<std::string_view, const GradRule*> map;
    for (const GradRule& rule : Rules()) map.emplace(rule.type, &rule);
    return map;
  }();
  auto it = index.find(type);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace irm::oldir
