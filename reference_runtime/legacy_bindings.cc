// The legacy binding table (legacy_bindings.h). Each row was written from the legacy op's maker and
// kernel in Paddle (paddle/fluid/operators/*_op.cc and, for ops whose kernels moved to phi, the
// legacy names in paddle/phi/ops/yaml/op_compat.yaml) and from the kernel contract of the pd_op
// signature (newir/pd_op_dialect.cc). Attribute fallbacks are the op makers' defaults; FLOAT
// defaults are written as floats, since that is the value a legacy program carries. The
// conversion of attribute values is in legacy_attr_conversion.cc; the row constructors are in
// legacy_binding_rows.h and the conv-net rows in legacy_bindings_convnet.cc.
#include "reference_runtime/legacy_bindings.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "oldir/elementwise_ops.h"
#include "reference_runtime/legacy_binding_rows.h"

namespace irm::rt {
namespace {

using namespace legacy_binding_rows;  // NOLINT(build/namespaces): the row constructors

constexpr DTypeRule kFromInput0{0, ""};
constexpr DTypeRule kFromInput1{1, ""};
// A creation op: the dtype attribute.
constexpr DTypeRule kFromDTypeAttr{0, "dtype"};

template <typename T>
StatusOr<T> LegacyAttrAs(const oldir::Op& op, std::string_view name, AttrKind kind, T fallback) {
  IRM_ASSIGN_OR_RETURN(AttrValue value, LegacyAttrOr(op, name, kind, AttrValue(fallback)));
  return std::get<T>(value);
}

// ---- hooks -------------------------------------------------------------------------------------

// split (paddle/fluid/operators/split_op.cc): num > 0 splits into num equal parts, else by
// `sections` (one -1 inferred). The pd_op signature has one op for each.
Status SplitHook(const oldir::Op& op, std::string& kernel, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(int64_t num, LegacyAttrAs<int64_t>(op, "num", AttrKind::kInt, 0));
  if (num > 0) {
    kernel = "split_with_num";
    attrs.Set("num", num);
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(AttrValue sections,
                       LegacyAttrOr(op, "sections", AttrKind::kInts, std::vector<int64_t>{}));
  attrs.Set("sections", std::move(sections));
  return Status::Ok();
}

// tril_triu (paddle/fluid/operators/tril_triu_op.cc): `lower` picks the triangle; phi has a
// kernel (and grad) for each.
Status TrilTriuHook(const oldir::Op& op, std::string& kernel, KernelAttrs&) {
  if (!op.HasAttr("lower")) return KernelError("attribute 'lower' is missing");
  IRM_ASSIGN_OR_RETURN(bool lower, LegacyAttrAs<bool>(op, "lower", AttrKind::kBool, true));
  if (!lower) kernel.replace(0, 4, "triu");
  return Status::Ok();
}

// reduce_* (ReduceBaseOpMaker: dim defaults to {0}): reduce_all, or an empty dim, reduces every
// dim (phi's recompute_reduce_all), which the kernels spell as an empty axis.
StatusOr<bool> BindReduceAxis(const oldir::Op& op, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(AttrValue dim,
                       LegacyAttrOr(op, "dim", AttrKind::kInts, std::vector<int64_t>{0}));
  IRM_ASSIGN_OR_RETURN(bool reduce_all,
                       LegacyAttrAs<bool>(op, "reduce_all", AttrKind::kBool, false));
  reduce_all = reduce_all || std::get<std::vector<int64_t>>(dim).empty();
  attrs.Set("axis", reduce_all ? AttrValue(std::vector<int64_t>{}) : std::move(dim));
  return reduce_all;
}

Status ReduceHook(const oldir::Op& op, std::string& kernel, KernelAttrs& attrs) {
  IRM_RETURN_IF_ERROR(BindReduceAxis(op, attrs).status());
  if (kernel == "sum") {
    // out_dtype -1 keeps x's dtype: the kernel's dtype attribute stays unset.
    IRM_ASSIGN_OR_RETURN(int64_t out_dtype,
                         LegacyAttrAs<int64_t>(op, "out_dtype", AttrKind::kInt, -1));
    if (out_dtype != -1) {
      IRM_ASSIGN_OR_RETURN(DType dtype, DTypeFromLegacyCode("out_dtype", out_dtype));
      attrs.Set("dtype", dtype);
    }
  }
  return Status::Ok();
}

Status ReduceGradHook(const oldir::Op& op, std::string&, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(bool reduce_all, BindReduceAxis(op, attrs));
  attrs.Set("reduce_all", reduce_all);
  return Status::Ok();
}

// A number as Paddle's fill_constant reads str_value: "inf", "-inf", "nan" or a decimal.
StatusOr<double> ParseStrValue(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return KernelError(fmt::format("attribute 'str_value' holds '{}', which is no number", text));
  }
  return value;
}

// fill_constant (paddle/fluid/operators/fill_constant_op.cc, FillConstantKernel): a non-empty
// str_value holds the value at full precision; else the FLOAT attribute `value`.
Status FillConstantHook(const oldir::Op& op, std::string&, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(AttrValue text,
                       LegacyAttrOr(op, "str_value", AttrKind::kString, std::string()));
  const std::string& str_value = std::get<std::string>(text);
  if (!str_value.empty()) {
    IRM_ASSIGN_OR_RETURN(double value, ParseStrValue(str_value));
    attrs.Set("value", value);
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(AttrValue value, LegacyAttrOr(op, "value", AttrKind::kFloat, 0.0));
  attrs.Set("value", std::move(value));
  return Status::Ok();
}

// uniform_random's diag_num/diag_step/diag_val write a diagonal over the random values; the
// uniform kernel has no such thing.
Status UniformHook(const oldir::Op& op, std::string&, KernelAttrs&) {
  IRM_ASSIGN_OR_RETURN(int64_t diag_num, LegacyAttrAs<int64_t>(op, "diag_num", AttrKind::kInt, 0));
  if (diag_num > 0) {
    return Status(StatusCode::kUnimplemented, Location{},
                  fmt::format("uniform_random with diag_num {} (a diagonal initializer) is not "
                              "supported",
                              diag_num));
  }
  return Status::Ok();
}

// fill_any_like: value was a FLOAT before an op-version checkpoint made it a SCALAR; both convert
// to the double the kernel takes. dtype -1 keeps x's dtype (no kernel dtype attribute).
Status FillAnyLikeHook(const oldir::Op& op, std::string&, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(AttrValue value, LegacyAttrOr(op, "value", AttrKind::kFloat, 0.0));
  attrs.Set("value", std::move(value));
  IRM_ASSIGN_OR_RETURN(int64_t code, LegacyAttrAs<int64_t>(op, "dtype", AttrKind::kInt, -1));
  if (code != -1) {
    IRM_ASSIGN_OR_RETURN(DType dtype, DTypeFromLegacyCode("dtype", code));
    attrs.Set("dtype", dtype);
  }
  return Status::Ok();
}

// assign_value (paddle/fluid/operators/assign_value_op.h): the values are in the list of the
// dtype (bool_values, int32_values, int64_values, fp32_values, fp64_values; 16-bit floats use
// fp32_values), or in Paddle 3.x's SCALARS `values`, which wins when non-empty.
Status AssignValueHook(const oldir::Op& op, std::string&, KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(AttrValue scalars,
                       LegacyAttrOr(op, "values", AttrKind::kFloats, std::vector<double>{}));
  if (!std::get<std::vector<double>>(scalars).empty()) {
    attrs.Set("values", std::move(scalars));
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(DType dtype, attrs.Get<DType>("dtype"));
  std::string_view list = "fp32_values";
  switch (dtype) {
    case DType::kBool:
      list = "bool_values";
      break;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kInt32:
      list = "int32_values";
      break;
    case DType::kInt64:
      list = "int64_values";
      break;
    case DType::kFloat64:
      list = "fp64_values";
      break;
    default:
      break;
  }
  IRM_ASSIGN_OR_RETURN(AttrValue values,
                       LegacyAttrOr(op, list, AttrKind::kFloats, std::vector<double>{}));
  attrs.Set("values", std::move(values));
  return Status::Ok();
}

// set_value (set_value_op.cc; phi's argument mapping, set_value_sig.cc): with a ValueTensor the
// op is set_value_with_tensor; else the value is the first non-empty list of fp32_values,
// fp64_values, int32_values, int64_values, bool_values (then fp16_values), or Paddle 3.x's
// SCALARS `values`, which wins when non-empty. int64_values stay exact (an int array).
Status SetValueHook(const oldir::Op& op, std::string& kernel, KernelAttrs& attrs) {
  if (const oldir::Op::Names* value = op.Input("ValueTensor");
      value != nullptr && !value->empty()) {
    kernel = "set_value_with_tensor";
    return Status::Ok();
  }
  IRM_ASSIGN_OR_RETURN(AttrValue scalars,
                       LegacyAttrOr(op, "values", AttrKind::kFloats, std::vector<double>{}));
  if (!std::get<std::vector<double>>(scalars).empty()) {
    attrs.Set("values", std::move(scalars));
    return Status::Ok();
  }
  for (const auto& [list, kind] :
       {std::pair<std::string_view, AttrKind>{"fp32_values", AttrKind::kFloats},
        {"fp64_values", AttrKind::kFloats},
        {"int32_values", AttrKind::kInts},
        {"int64_values", AttrKind::kInts},
        {"bool_values", AttrKind::kInts},
        {"fp16_values", AttrKind::kFloats}}) {
    if (!op.HasAttr(list)) continue;
    IRM_ASSIGN_OR_RETURN(AttrValue values, LegacyAttrOr(op, list, kind, AttrValue(false)));
    const bool empty = kind == AttrKind::kInts ? std::get<std::vector<int64_t>>(values).empty()
                                               : std::get<std::vector<double>>(values).empty();
    if (empty) continue;
    attrs.Set("values", std::move(values));
    return Status::Ok();
  }
  return KernelError(
      "set_value has no ValueTensor and no values (fp32_values, fp64_values, int32_values, "
      "int64_values, bool_values, fp16_values or values)");
}

// ---- the table -----------------------------------------------------------------------------

void AddMath(std::vector<LegacyBinding>& t) {
  // matmul_v2 (matmul_v2_op.cc): trans_x/trans_y are pd_op.matmul's transpose_x/transpose_y.
  const std::vector<AttrRule> matmul = {Bool("trans_x", "transpose_x", false),
                                        Bool("trans_y", "transpose_y", false)};
  t.push_back({"matmul_v2", "matmul", {One("X"), One("Y")}, {One("Out")}, matmul});
  t.push_back({"matmul_v2_grad",
               "matmul_grad",
               {One("X"), One("Y"), One("Out@GRAD")},
               {One("X@GRAD"), One("Y@GRAD")},
               matmul});

  // elementwise_* (elementwise_op.h), one row and one grad row per op of the legacy family's list
  // (oldir/elementwise_ops.h): `axis` aligns a lower-rank operand (LegacyBroadcast); the kernels
  // broadcast numpy-style. The grads keep pd_op's axis attribute, -1 once the operands are
  // aligned; divide_grad also reads Out (before Out@GRAD, in the kernel's order).
  for (const oldir::LegacyElementwiseOp& op : oldir::LegacyElementwiseOps()) {
    t.push_back({op.type,
                 op.kernel,
                 {One("X"), One("Y")},
                 {One("Out")},
                 {},
                 {},
                 kFromInput0,
                 LegacyBroadcast::kForward});
    if (!op.has_grad()) continue;
    std::vector<SlotRule> inputs = {One("X"), One("Y")};
    if (op.grad_out == oldir::ElementwiseGradOut::kRequired) inputs.push_back(One("Out"));
    inputs.push_back(One("Out@GRAD"));
    t.push_back({op.grad_type,
                 op.grad_kernel,
                 std::move(inputs),
                 {One("X@GRAD"), One("Y@GRAD")},
                 {ConstInt("axis", -1)},
                 {},
                 kFromInput0,
                 LegacyBroadcast::kGrad});
  }

  // scale (scale_op.cc): ScaleTensor overrides the scale attribute.
  t.push_back({"scale",
               "scale",
               {One("X")},
               {One("Out")},
               {Float("scale", "scale", 1.0f), Float("bias", "bias", 0.0f),
                Bool("bias_after_scale", "bias_after_scale", true)},
               {{"ScaleTensor", "scale", TensorAttrKind::kScalar}}});
  // cast (cast_op.cc): the kernel reads x's dtype itself; in_dtype is informative only.
  t.push_back({"cast",
               "cast",
               {One("X")},
               {One("Out")},
               {Required("out_dtype", "dtype", AttrKind::kDType)}});
  // sum (sum_op.cc) is phi's add_n.
  t.push_back({"sum", "add_n", {List("X")}, {One("Out")}});
  t.push_back({"squared_l2_norm", "squared_l2_norm", {One("X")}, {One("Out")}});
  // mean (mean_op.cc) averages every element: phi's mean_all.
  t.push_back({"mean", "mean_all", {One("X")}, {One("Out")}});
  t.push_back({"mean_grad", "mean_all_grad", {One("X"), One("Out@GRAD")}, {One("X@GRAD")}});
  // reduce_mean / reduce_sum (reduce_op.h): dim, keep_dim, reduce_all (ReduceHook).
  for (const auto& [type, kernel] :
       {std::pair<std::string_view, std::string_view>{"reduce_mean", "mean"},
        {"reduce_sum", "sum"},
        {"reduce_prod", "prod"}}) {
    t.push_back({type,
                 kernel,
                 {One("X")},
                 {One("Out")},
                 {Bool("keep_dim", "keepdim", false)},
                 {},
                 kFromInput0,
                 LegacyBroadcast::kNone,
                 ReduceHook});
  }
  for (const auto& [type, kernel] :
       {std::pair<std::string_view, std::string_view>{"reduce_mean_grad", "mean_grad"},
        {"reduce_sum_grad", "sum_grad"}}) {
    t.push_back({type,
                 kernel,
                 {One("X"), One("Out@GRAD")},
                 {One("X@GRAD")},
                 {Bool("keep_dim", "keepdim", false)},
                 {},
                 kFromInput0,
                 LegacyBroadcast::kNone,
                 ReduceGradHook});
  }
  // reduce_prod_grad (DefaultGradOpMaker) re-feeds Out: phi's prod_grad(x, out, out_grad).
  t.push_back({"reduce_prod_grad",
               "prod_grad",
               {One("X"), One("Out"), One("Out@GRAD")},
               {One("X@GRAD")},
               {Bool("keep_dim", "keepdim", false)},
               {},
               kFromInput0,
               LegacyBroadcast::kNone,
               ReduceGradHook});
  // increment (increment_op.cc): step is pd_op.increment's value.
  t.push_back({"increment", "increment", {One("X")}, {One("Out")}, {Float("step", "value", 1.0f)}});
}

void AddCompareAndLogical(std::vector<LegacyBinding>& t) {
  // compare_op.cc: axis aligns like the elementwise ops'.
  for (std::string_view type : {"equal", "not_equal", "less_than", "greater_than"}) {
    t.push_back({type,
                 type,
                 {One("X"), One("Y")},
                 {One("Out")},
                 {},
                 {},
                 kFromInput0,
                 LegacyBroadcast::kForward});
  }
  for (std::string_view type : {"logical_and", "logical_or", "logical_xor"}) {
    t.push_back({type, type, {One("X"), One("Y")}, {One("Out")}});
  }
  t.push_back({"logical_not", "logical_not", {One("X")}, {One("Out")}});
}

void AddActivations(std::vector<LegacyBinding>& t) {
  for (std::string_view type : {"relu", "sigmoid", "tanh", "sqrt", "floor"}) {
    t.push_back({type, type, {One("X")}, {One("Out")}});
  }
  // floor_grad is kNoDeps: Out@GRAD alone (zeros of its shape).
  t.push_back({"floor_grad", "floor_grad", {One("Out@GRAD")}, {One("X@GRAD")}});
  // ActivationGradOpMaker<kDepOut>: the grads read Out, not X.
  for (std::string_view type : {"relu_grad", "sigmoid_grad", "tanh_grad"}) {
    t.push_back({type, type, {One("Out"), One("Out@GRAD")}, {One("X@GRAD")}});
  }
  const std::vector<AttrRule> gelu = {Bool("approximate", "approximate", false)};
  t.push_back({"gelu", "gelu", {One("X")}, {One("Out")}, gelu});
  t.push_back({"gelu_grad", "gelu_grad", {One("X"), One("Out@GRAD")}, {One("X@GRAD")}, gelu});
  const std::vector<AttrRule> softmax = {Int("axis", "axis", -1)};
  t.push_back({"softmax", "softmax", {One("X")}, {One("Out")}, softmax});
  t.push_back(
      {"softmax_grad", "softmax_grad", {One("Out"), One("Out@GRAD")}, {One("X@GRAD")}, softmax});
}

void AddNn(std::vector<LegacyBinding>& t) {
  const std::vector<AttrRule> layer_norm = {Float("epsilon", "epsilon", 1e-5f),
                                            Int("begin_norm_axis", "begin_norm_axis", 1)};
  t.push_back({"layer_norm",
               "layer_norm",
               {One("X"), Opt("Scale"), Opt("Bias")},
               {One("Y"), One("Mean"), One("Variance")},
               layer_norm});
  t.push_back({"layer_norm_grad",
               "layer_norm_grad",
               {One("X"), Opt("Scale"), Opt("Bias"), One("Mean"), One("Variance"), One("Y@GRAD")},
               {One("X@GRAD"), One("Scale@GRAD"), One("Bias@GRAD")},
               layer_norm});

  // lookup_table_v2 (lookup_table_v2_op.cc) is phi's embedding(x = Ids, weight = W); is_sparse
  // is its `sparse`. The kernel is the weight's dtype, not the ids'.
  const std::vector<AttrRule> embedding = {Int("padding_idx", "padding_idx", -1),
                                           Bool("is_sparse", "sparse", false)};
  t.push_back({"lookup_table_v2",
               "embedding",
               {One("Ids"), One("W")},
               {One("Out")},
               embedding,
               {},
               kFromInput1});
  t.push_back({"lookup_table_v2_grad",
               "embedding_grad",
               {One("Ids"), One("W"), One("Out@GRAD")},
               {One("W@GRAD")},
               embedding,
               {},
               kFromInput1});

  // dropout (dropout_op.cc): dropout_implementation is phi's mode, passed as the legacy program
  // spells it ("downgrade_in_infer" is the maker's default, and what Paddle's Python writes in
  // both IRs); the Seed input is phi's seed_tensor.
  const std::vector<AttrRule> dropout = {
      Float("dropout_prob", "p", 0.5f), Bool("is_test", "is_test", false),
      Str("dropout_implementation", "mode", "downgrade_in_infer")};
  std::vector<AttrRule> dropout_forward = dropout;
  dropout_forward.push_back(Int("seed", "seed", 0));
  dropout_forward.push_back(Bool("fix_seed", "fix_seed", false));
  t.push_back(
      {"dropout", "dropout", {One("X"), Opt("Seed")}, {One("Out"), One("Mask")}, dropout_forward});
  // The mask is uint8: the gradient's dtype decides.
  t.push_back({"dropout_grad",
               "dropout_grad",
               {One("Mask"), One("Out@GRAD")},
               {One("X@GRAD")},
               dropout,
               {},
               kFromInput1});

  // softmax_with_cross_entropy is phi's cross_entropy_with_softmax(input = Logits, label).
  const std::vector<AttrRule> swce = {
      Bool("soft_label", "soft_label", false), Bool("use_softmax", "use_softmax", true),
      Bool("numeric_stable_mode", "numeric_stable_mode", true),
      Int("ignore_index", "ignore_index", -100), Int("axis", "axis", -1)};
  t.push_back({"softmax_with_cross_entropy",
               "cross_entropy_with_softmax",
               {One("Logits"), One("Label")},
               {One("Softmax"), One("Loss")},
               swce});
  t.push_back({"softmax_with_cross_entropy_grad",
               "cross_entropy_with_softmax_grad",
               {One("Label"), One("Softmax"), One("Loss@GRAD")},
               {One("Logits@GRAD")},
               swce,
               {},
               kFromInput1});

  // conv2d (conv_op.cc) is phi's conv2d(input, filter). The oneDNN fusion inputs Bias and
  // ResidualData have no phi twin and are not bound (only oneDNN passes write them).
  const std::vector<AttrRule> conv2d = {Ints("strides", "strides", {1, 1}),
                                        Ints("paddings", "paddings", {0, 0}),
                                        Str("padding_algorithm", "padding_algorithm", "EXPLICIT"),
                                        Ints("dilations", "dilations", {1, 1}),
                                        Int("groups", "groups", 1),
                                        Str("data_format", "data_format", "NCHW")};
  t.push_back({"conv2d", "conv2d", {One("Input"), One("Filter")}, {One("Output")}, conv2d});
  t.push_back({"conv2d_grad",
               "conv2d_grad",
               {One("Input"), One("Filter"), One("Output@GRAD")},
               {One("Input@GRAD"), One("Filter@GRAD")},
               conv2d});
}

void AddShape(std::vector<LegacyBinding>& t) {
  // reshape2 (reshape_op.cc): the ShapeTensor list wins over the Shape tensor, which wins over
  // the attribute. XShape is phi's xshape.
  t.push_back({"reshape2",
               "reshape",
               {One("X")},
               {One("Out"), One("XShape")},
               {Ints("shape", "shape")},
               {{"Shape", "shape", TensorAttrKind::kIntArray},
                {"ShapeTensor", "shape", TensorAttrKind::kIntList}}});
  t.push_back({"reshape2_grad",
               "reshape_grad",
               {One("XShape"), One("Out@GRAD")},
               {One("X@GRAD")},
               {},
               {},
               kFromInput1});
  // transpose2 (transpose_op.cc): axis is phi's perm. phi's transpose has no xshape result, so
  // XShape is left unwritten (the grad reads only perm).
  const std::vector<AttrRule> transpose = {Required("axis", "perm", AttrKind::kInts)};
  t.push_back({"transpose2", "transpose", {One("X")}, {One("Out")}, transpose});
  t.push_back({"transpose2_grad", "transpose_grad", {One("Out@GRAD")}, {One("X@GRAD")}, transpose});

  // concat (concat_op.cc): AxisTensor overrides axis. concat_grad's inputs are [x..., out_grad].
  const std::vector<AttrRule> concat = {Int("axis", "axis", 0)};
  const std::vector<TensorAttrRule> axis_tensor = {{"AxisTensor", "axis", TensorAttrKind::kInt}};
  t.push_back({"concat", "concat", {List("X")}, {One("Out")}, concat, axis_tensor});
  t.push_back({"concat_grad",
               "concat_grad",
               {List("X"), One("Out@GRAD")},
               {List("X@GRAD")},
               concat,
               axis_tensor});
  // split: SplitHook picks split or split_with_num.
  t.push_back({"split",
               "split",
               {One("X")},
               {List("Out")},
               {Int("axis", "axis", 0)},
               {{"AxisTensor", "axis", TensorAttrKind::kInt},
                {"SectionsTensorList", "sections", TensorAttrKind::kIntList}},
               kFromInput0,
               LegacyBroadcast::kNone,
               SplitHook});

  // slice (slice_op.cc): a Starts/EndsTensor wins over the tensor list, which wins over the
  // attribute.
  const std::vector<AttrRule> slice = {
      Required("axes", "axes", AttrKind::kInts), Ints("starts", "starts"), Ints("ends", "ends"),
      Ints("infer_flags", "infer_flags"), Ints("decrease_axis", "decrease_axis")};
  const std::vector<TensorAttrRule> slice_tensors = {
      {"StartsTensorList", "starts", TensorAttrKind::kIntList},
      {"StartsTensor", "starts", TensorAttrKind::kIntArray},
      {"EndsTensorList", "ends", TensorAttrKind::kIntList},
      {"EndsTensor", "ends", TensorAttrKind::kIntArray}};
  t.push_back({"slice", "slice", {One("Input")}, {One("Out")}, slice, slice_tensors});
  t.push_back({"slice_grad",
               "slice_grad",
               {One("Input"), One("Out@GRAD")},
               {One("Input@GRAD")},
               slice,
               slice_tensors});

  // set_value (set_value_op.cc): SetValueHook picks set_value_with_tensor when there is a
  // ValueTensor, else the constant's list. The Starts/Ends/StepsTensorList (one int tensor per
  // axis) win over the attributes. set_value_grad (only made with a ValueTensor; Input is not
  // re-fed) is phi's set_value_with_tensor_grad(values, out_grad).
  const std::vector<AttrRule> set_value_index = {Required("axes", "axes", AttrKind::kInts),
                                                 Ints("starts", "starts"),
                                                 Ints("ends", "ends"),
                                                 Ints("steps", "steps"),
                                                 Ints("decrease_axes", "decrease_axes"),
                                                 Ints("none_axes", "none_axes")};
  std::vector<AttrRule> set_value = set_value_index;
  set_value.push_back(Ints("shape", "shape"));
  const std::vector<TensorAttrRule> set_value_lists = {
      {"StartsTensorList", "starts", TensorAttrKind::kIntList},
      {"EndsTensorList", "ends", TensorAttrKind::kIntList},
      {"StepsTensorList", "steps", TensorAttrKind::kIntList}};
  t.push_back({"set_value",
               "set_value",
               {One("Input"), Opt("ValueTensor")},
               {One("Out")},
               set_value,
               set_value_lists,
               kFromInput0,
               LegacyBroadcast::kNone,
               SetValueHook});
  t.push_back({"set_value_grad",
               "set_value_with_tensor_grad",
               {One("ValueTensor"), One("Out@GRAD")},
               {One("Input@GRAD"), One("ValueTensor@GRAD")},
               set_value_index,
               set_value_lists,
               kFromInput1});

  // tril_triu: TrilTriuHook turns tril into triu when lower is false.
  const std::vector<AttrRule> diagonal = {Int("diagonal", "diagonal", 0)};
  t.push_back({"tril_triu",
               "tril",
               {One("X")},
               {One("Out")},
               diagonal,
               {},
               kFromInput0,
               LegacyBroadcast::kNone,
               TrilTriuHook});
  t.push_back({"tril_triu_grad",
               "tril_grad",
               {One("Out@GRAD")},
               {One("X@GRAD")},
               diagonal,
               {},
               kFromInput0,
               LegacyBroadcast::kNone,
               TrilTriuHook});
}

void AddCreation(std::vector<LegacyBinding>& t) {
  // Shapes: a ShapeTensor wins over a ShapeTensorList, which wins over the attribute
  // (fill_constant_op.cc and uniform_random_op.cc read them in that order). shape is LONGS in
  // Paddle's makers; older programs hold INTS, which convert the same way.
  const std::vector<TensorAttrRule> shape_tensors = {
      {"ShapeTensorList", "shape", TensorAttrKind::kIntList},
      {"ShapeTensor", "shape", TensorAttrKind::kIntArray}};
  std::vector<TensorAttrRule> fill_tensors = shape_tensors;
  fill_tensors.push_back({"ValueTensor", "value", TensorAttrKind::kScalar});
  t.push_back({"fill_constant",
               "full",
               {},
               {One("Out")},
               {Ints("shape", "shape"), DTypeOr("dtype", "dtype", DType::kFloat32)},
               fill_tensors,
               kFromDTypeAttr,
               LegacyBroadcast::kNone,
               FillConstantHook});
  t.push_back({"uniform_random",
               "uniform",
               {},
               {One("Out")},
               {Ints("shape", "shape"), Float("min", "min", -1.0f), Float("max", "max", 1.0f),
                Int("seed", "seed", 0), DTypeOr("dtype", "dtype", DType::kFloat32)},
               shape_tensors,
               kFromDTypeAttr,
               LegacyBroadcast::kNone,
               UniformHook});
  t.push_back({"gaussian_random",
               "gaussian",
               {},
               {One("Out")},
               {Ints("shape", "shape"), Float("mean", "mean", 0.0f), Float("std", "std", 1.0f),
                Int("seed", "seed", 0), DTypeOr("dtype", "dtype", DType::kFloat32)},
               shape_tensors,
               kFromDTypeAttr});
  // fill_any_like is phi's full_like; the kernel dtype is the dtype attribute when it is set
  // (phi: "data_type : dtype > x"), else x's.
  t.push_back({"fill_any_like",
               "full_like",
               {One("X")},
               {One("Out")},
               {},
               {},
               kFromDTypeAttr,
               LegacyBroadcast::kNone,
               FillAnyLikeHook});
  t.push_back({"share_data", "share_data", {One("X")}, {One("Out")}});
  t.push_back({"assign", "assign", {One("X")}, {One("Out")}});
  t.push_back(
      {"assign_value",
       "assign_value",
       {},
       {One("Out")},
       {Required("shape", "shape", AttrKind::kInts), Required("dtype", "dtype", AttrKind::kDType)},
       {},
       kFromDTypeAttr,
       LegacyBroadcast::kNone,
       AssignValueHook});
}

void AddOptimizers(std::vector<LegacyBinding>& t) {
  // sgd_op.cc, momentum_op.h, adam_op.cc / adamw_op.cc (phi's adam_ and adamw_ signatures).
  t.push_back({"sgd",
               "sgd",
               {One("Param"), One("LearningRate"), One("Grad"), Opt("MasterParam")},
               {One("ParamOut"), One("MasterParamOut")},
               {Bool("multi_precision", "multi_precision", false)}});
  t.push_back(
      {"momentum",
       "momentum",
       {One("Param"), One("Grad"), One("Velocity"), One("LearningRate"), Opt("MasterParam")},
       {One("ParamOut"), One("VelocityOut"), One("MasterParamOut")},
       {Required("mu", "mu", AttrKind::kFloat), Bool("use_nesterov", "use_nesterov", false),
        Str("regularization_method", "regularization_method", ""),
        Float("regularization_coeff", "regularization_coeff", 0.0f),
        Bool("multi_precision", "multi_precision", false),
        Float("rescale_grad", "rescale_grad", 1.0f)}});
  // beta1, beta2 and epsilon are mutable Scalars of phi's adam: Beta1Tensor, Beta2Tensor and
  // EpsilonTensor override the attributes.
  const std::vector<SlotRule> adam_in = {One("Param"),     One("Grad"),     One("LearningRate"),
                                         One("Moment1"),   One("Moment2"),  Opt("Moment2Max"),
                                         One("Beta1Pow"),  One("Beta2Pow"), Opt("MasterParam"),
                                         Opt("SkipUpdate")};
  const std::vector<SlotRule> adam_out = {
      One("ParamOut"),    One("Moment1Out"),  One("Moment2Out"),    One("Moment2MaxOut"),
      One("Beta1PowOut"), One("Beta2PowOut"), One("MasterParamOut")};
  std::vector<AttrRule> adam = {
      Float("beta1", "beta1", 0.9f),
      Float("beta2", "beta2", 0.999f),
      Float("epsilon", "epsilon", 1e-8f),
      Bool("lazy_mode", "lazy_mode", false),
      Int("min_row_size_to_use_multithread", "min_row_size_to_use_multithread", 1000),
      Bool("multi_precision", "multi_precision", false),
      Bool("use_global_beta_pow", "use_global_beta_pow", false),
      Bool("amsgrad", "amsgrad", false)};
  const std::vector<TensorAttrRule> adam_tensors = {
      {"Beta1Tensor", "beta1", TensorAttrKind::kScalar},
      {"Beta2Tensor", "beta2", TensorAttrKind::kScalar},
      {"EpsilonTensor", "epsilon", TensorAttrKind::kScalar}};
  t.push_back({"adam", "adam", adam_in, adam_out, adam, adam_tensors});
  adam.push_back(Float("lr_ratio", "lr_ratio", 1.0f));
  adam.push_back(Float("coeff", "coeff", 0.01f));
  adam.push_back(Bool("with_decay", "with_decay", false));
  t.push_back({"adamw", "adamw", adam_in, adam_out, adam, adam_tensors});
}

void AddFusion(std::vector<LegacyBinding>& t) {
  // coalesce_tensor (paddle/fluid/operators/coalesce_tensor_op.cc; phi's coalesce_tensor, whose
  // size_of_dtype is the legacy user_defined_size_of_dtype, op_compat.yaml): Output names the
  // same vars as Input, and after the op they are views of FusedOutput. Binding the views
  // (outputs_are_views) rather than copying them into the vars' old storage is what makes the
  // all-reduce of the fused buffer reach the gradients the optimizer reads. concated_shapes and
  // concated_ranks only shape uninitialised inputs in Paddle; the kernel runs on initialised ones.
  LegacyBinding coalesce{
      "coalesce_tensor",
      "coalesce_tensor",
      {List("Input")},
      {List("Output"), One("FusedOutput")},
      {Required("dtype", "dtype", AttrKind::kDType), Bool("copy_data", "copy_data", false),
       Bool("set_constant", "set_constant", false), Bool("persist_output", "persist_output", false),
       Float("constant", "constant", 0.0f), Bool("use_align", "use_align", true),
       Int("align_size", "align_size", -1), Int("user_defined_size_of_dtype", "size_of_dtype", -1)},
      {},
      kFromDTypeAttr};
  coalesce.outputs_are_views = true;
  t.push_back(std::move(coalesce));
}

std::vector<LegacyBinding> BuildTable() {
  std::vector<LegacyBinding> table;
  AddMath(table);
  AddCompareAndLogical(table);
  AddActivations(table);
  AddNn(table);
  AddConvNetBindings(table);    // legacy_bindings_convnet.cc
  AddDetectionBindings(table);  // legacy_bindings_detection.cc
  AddShape(table);
  AddCreation(table);
  AddOptimizers(table);
  AddFusion(table);
  std::sort(table.begin(), table.end(),
            [](const LegacyBinding& a, const LegacyBinding& b) { return a.op_type < b.op_type; });
  return table;
}

}  // namespace

const std::vector<LegacyBinding>& AllLegacyBindings() {
  static const std::vector<LegacyBinding> table = BuildTable();
  return table;
}

const LegacyBinding* FindLegacyBinding(std::string_view op_type) {
  const std::vector<LegacyBinding>& table = AllLegacyBindings();
  auto it = std::lower_bound(
      table.begin(), table.end(), op_type,
      [](const LegacyBinding& b, std::string_view type) { return b.op_type < type; });
  return it != table.end() && it->op_type == op_type ? &*it : nullptr;
}

std::optional<LegacyBuiltin> FindLegacyBuiltin(std::string_view op_type) {
  static const std::map<std::string_view, LegacyBuiltin, std::less<>> builtins = {
      {"feed", LegacyBuiltin::kFeed},
      {"fetch", LegacyBuiltin::kFetch},
      {"conditional_block", LegacyBuiltin::kConditionalBlock},
      {"while", LegacyBuiltin::kWhile},
      {"c_sync_calc_stream", LegacyBuiltin::kOrderingNoOp},
      {"c_sync_comm_stream", LegacyBuiltin::kOrderingNoOp},
      // paddle/fluid/operators/collective/ and the p2p ops.
      {"c_allreduce_sum", LegacyBuiltin::kNeedsMultiRank},
      {"c_allreduce_max", LegacyBuiltin::kNeedsMultiRank},
      {"c_allreduce_min", LegacyBuiltin::kNeedsMultiRank},
      {"c_allreduce_prod", LegacyBuiltin::kNeedsMultiRank},
      {"c_broadcast", LegacyBuiltin::kNeedsMultiRank},
      {"c_allgather", LegacyBuiltin::kNeedsMultiRank},
      {"c_reducescatter", LegacyBuiltin::kNeedsMultiRank},
      {"c_identity", LegacyBuiltin::kNeedsMultiRank},
      {"c_split", LegacyBuiltin::kNeedsMultiRank},
      {"c_concat", LegacyBuiltin::kNeedsMultiRank},
      {"send_v2", LegacyBuiltin::kNeedsMultiRank},
      {"recv_v2", LegacyBuiltin::kNeedsMultiRank},
      {"barrier", LegacyBuiltin::kNeedsMultiRank},
      // The vocabulary-parallel ops of tensor parallelism (legacy_comm_ops.cc): only the forward
      // cross entropy communicates, but all four exist only in tensor-parallel rank programs.
      {"c_embedding", LegacyBuiltin::kNeedsMultiRank},
      {"c_embedding_grad", LegacyBuiltin::kNeedsMultiRank},
      {"c_softmax_with_cross_entropy", LegacyBuiltin::kNeedsMultiRank},
      {"c_softmax_with_cross_entropy_grad", LegacyBuiltin::kNeedsMultiRank},
  };
  auto it = builtins.find(op_type);
  if (it == builtins.end()) return std::nullopt;
  return it->second;
}

}  // namespace irm::rt
