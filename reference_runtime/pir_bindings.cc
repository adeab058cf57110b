// The new-IR binding table (pir_bindings.h): one row per pd_op, written from the op signatures of
// newir/pd_op_dialect.cc, resolved by operand and result names against the op registry so that a
// row that disagrees with a signature is found when the table is built, and the conversions of
// new-IR types and attributes into runtime dtypes and kernel attributes.
#include "reference_runtime/pir_bindings.h"

#include <fmt/format.h>

#include <utility>

#include "common/builtin_registry.h"
#include "newir/pd_op_elementwise.h"

namespace irm::rt {
namespace {

using R = OperandRole;
using NamePairs = std::vector<std::pair<std::string, std::string>>;

// Selects the kernel dtype from the op's "dtype" attribute instead of an operand.
constexpr std::string_view kFromDTypeAttr = "(dtype attribute)";

// One row of the table, by names. Defaults: kernel = op without the in-place `_`; every operand
// an input; the dtype from the first input; an in-place op writes its first result into its first
// operand.
struct Row {
  std::string op;  // without the "pd_op." prefix, with the in-place `_`
  std::string kernel = {};
  std::vector<std::pair<std::string, OperandRole>> roles = {};
  std::string dtype_from = {};  // an operand name, or kFromDTypeAttr
  NamePairs inplace = {};       // operand name -> result name
  bool random = false;
  std::vector<std::string> float_arrays = {};
  bool named_element = false;
};

std::vector<Row> KernelRows() {
  std::vector<Row> rows;
  // Ops whose operands are all kernel inputs, in operand order, the first one picking the dtype.
  for (const char* op : {"matmul",
                         "matmul_grad",
                         "relu",
                         "relu_",
                         "gelu",
                         "tanh",
                         "tanh_",
                         "sigmoid",
                         "sigmoid_",
                         "sqrt",
                         "sqrt_",
                         "softmax",
                         "softmax_",
                         "relu_grad",
                         "gelu_grad",
                         "tanh_grad",
                         "sigmoid_grad",
                         "softmax_grad",
                         "layer_norm",
                         "layer_norm_grad",
                         "conv2d",
                         "conv2d_grad",
                         "batch_norm",
                         "batch_norm_grad",
                         "accuracy",
                         "cast",
                         "cast_",
                         "mean",
                         "mean_grad",
                         "mean_all",
                         "mean_all_grad",
                         "squared_l2_norm",
                         "cross_entropy_with_softmax",
                         "add_n",
                         "tril",
                         "tril_",
                         "triu",
                         "triu_",
                         "tril_grad",
                         "triu_grad",
                         "equal",
                         "less_than",
                         "not_equal",
                         "greater_than",
                         "logical_not",
                         "logical_and",
                         "logical_and_",
                         "logical_or",
                         "logical_or_",
                         "logical_xor",
                         "logical_xor_",
                         "increment",
                         "increment_",
                         "transpose",
                         "transpose_grad",
                         "assign",
                         "share_data",
                         "share_data_"}) {
    rows.push_back({.op = op});
  }
  // The elementwise family, from its list (newir/pd_op_elementwise.h): the op, its in-place
  // variant and its grad, every operand a kernel input, the kernel of the op's name.
  for (const newir::PdOpElementwiseOp& op : newir::PdOpElementwiseOps()) {
    rows.push_back({.op = std::string(op.name)});
    if (op.inplace) rows.push_back({.op = std::string(op.name) + "_"});
    if (!op.grad.empty()) rows.push_back({.op = std::string(op.grad)});
  }

  // The table key of the kernel is the data's dtype: the weight for embedding (x holds ids), the
  // gradient where the first input is a label, a mask or Paddle's xshape carrier.
  rows.push_back({.op = "embedding", .dtype_from = "weight"});
  rows.push_back({.op = "embedding_grad", .dtype_from = "weight"});
  rows.push_back({.op = "cross_entropy_with_softmax_grad", .dtype_from = "softmax"});
  rows.push_back({.op = "dropout_grad", .dtype_from = "out_grad"});
  rows.push_back({.op = "reshape_grad", .dtype_from = "out_grad"});
  rows.push_back({.op = "dropout", .random = true});
  // PIR declares no in-place pair for add_n_ (Paddle's manual_op.cc, AddN_Op::GetOpInfo); it is
  // what a legacy sum whose Out is one of its X becomes, so it writes that element.
  rows.push_back({.op = "add_n_", .named_element = true});

  // Mutable IntArray / Scalar operands (ops.yaml), passed as attributes of the operand's name.
  rows.push_back({.op = "scale", .roles = {{"scale", R::kFloat}}});
  rows.push_back({.op = "scale_", .roles = {{"scale", R::kFloat}}});
  rows.push_back({.op = "sum", .roles = {{"axis", R::kIntArray}}});
  rows.push_back({.op = "sum_grad", .roles = {{"axis", R::kIntArray}}});
  rows.push_back({.op = "reshape", .roles = {{"shape", R::kIntArray}}});
  rows.push_back({.op = "reshape_", .roles = {{"shape", R::kIntArray}}});
  rows.push_back({.op = "concat", .roles = {{"axis", R::kInt}}});
  rows.push_back({.op = "concat_grad", .roles = {{"axis", R::kInt}}});
  rows.push_back({.op = "split", .roles = {{"sections", R::kIntArray}, {"axis", R::kInt}}});
  rows.push_back({.op = "split_with_num", .roles = {{"axis", R::kInt}}});
  rows.push_back({.op = "slice", .roles = {{"starts", R::kIntArray}, {"ends", R::kIntArray}}});
  rows.push_back({.op = "slice_grad", .roles = {{"starts", R::kIntArray}, {"ends", R::kIntArray}}});
  rows.push_back({.op = "full_like", .roles = {{"value", R::kFloat}}});
  // set_value: starts, ends and steps are mutable IntArrays; the constant values reach the
  // kernel as an int array when every one is an integer (int64 values stay exact), else as a
  // float array, which the kernel takes either way. set_value_grad is an assign of out_grad
  // (static_backward.yaml); set_value_with_tensor_grad's dtype is the gradient's.
  const std::vector<std::pair<std::string, OperandRole>> set_value_index = {
      {"starts", R::kIntArray}, {"ends", R::kIntArray}, {"steps", R::kIntArray}};
  for (const char* op :
       {"set_value", "set_value_", "set_value_with_tensor", "set_value_with_tensor_"}) {
    rows.push_back({.op = op, .roles = set_value_index});
  }
  rows.push_back({.op = "set_value_grad", .kernel = "assign"});
  rows.push_back(
      {.op = "set_value_with_tensor_grad", .roles = set_value_index, .dtype_from = "out_grad"});

  // Creation and random ops: the dtype attribute picks the kernel. The in-place forms write into
  // an existing tensor, which is no input of the kernel.
  const std::string dtype_attr(kFromDTypeAttr);
  rows.push_back({.op = "full", .dtype_from = dtype_attr});
  rows.push_back({.op = "full_",
                  .roles = {{"output", R::kTarget}},
                  .dtype_from = dtype_attr,
                  .inplace = {{"output", "out"}}});
  rows.push_back({.op = "full_int_array", .dtype_from = dtype_attr});
  rows.push_back({.op = "assign_value", .dtype_from = dtype_attr, .float_arrays = {"values"}});
  rows.push_back({.op = "assign_value_",
                  .roles = {{"output", R::kTarget}},
                  .dtype_from = dtype_attr,
                  .inplace = {{"output", "out"}},
                  .float_arrays = {"values"}});
  rows.push_back({.op = "assign_out_",
                  .kernel = "assign",
                  .roles = {{"output", R::kTarget}},
                  .inplace = {{"output", "out"}}});
  // coalesce_tensor: the kernel's vector result holds views of fused_output, bound as they are
  // (a vector result is never written in place), so the results alias the fused buffer.
  rows.push_back({.op = "coalesce_tensor", .dtype_from = dtype_attr});
  rows.push_back({.op = "uniform",
                  .roles = {{"shape", R::kIntArray}, {"min", R::kFloat}, {"max", R::kFloat}},
                  .dtype_from = dtype_attr,
                  .random = true});
  rows.push_back({.op = "gaussian",
                  .roles = {{"shape", R::kIntArray}},
                  .dtype_from = dtype_attr,
                  .random = true});

  // The conv-net ops with mutable attributes: pool2d's kernel_size (IntArray), topk's k (int
  // Scalar); batch_norm_ writes the running statistics into mean and variance.
  for (const char* op : {"pool2d", "pool2d_grad"}) {
    rows.push_back({.op = op, .roles = {{"kernel_size", R::kIntArray}}});
  }
  for (const char* op : {"topk", "topk_v1"}) {
    rows.push_back({.op = op, .roles = {{"k", R::kInt}}});
  }
  rows.push_back(
      {.op = "batch_norm_", .inplace = {{"mean", "mean_out"}, {"variance", "variance_out"}}});

  // The exponential LR decay's floor and the detection ops (kernels/elementwise.cc, reduction.cc,
  // indexing.cc, detection.cc). gather's axis is an int Scalar, prod's an IntArray;
  // smooth_l1_loss_grad's first operands are optional, so diff picks its dtype; anchor_generator's
  // float[] attributes stay floats whatever their values.
  for (const char* op : {"floor", "floor_", "floor_grad", "shape", "smooth_l1_loss",
                         "sigmoid_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits_",
                         "sigmoid_cross_entropy_with_logits_grad", "affine_channel",
                         "affine_channel_", "affine_channel_grad", "roi_align", "roi_align_grad",
                         "generate_proposals", "rpn_target_assign"}) {
    rows.push_back({.op = op});
  }
  for (const char* op : {"gather", "gather_grad"}) {
    rows.push_back({.op = op, .roles = {{"axis", R::kInt}}});
  }
  for (const char* op : {"prod", "prod_grad"}) {
    rows.push_back({.op = op, .roles = {{"axis", R::kIntArray}}});
  }
  rows.push_back({.op = "smooth_l1_loss_grad", .dtype_from = "diff"});
  rows.push_back({.op = "anchor_generator",
                  .float_arrays = {"anchor_sizes", "aspect_ratios", "variances", "stride"}});

  // Optimizers update their state in place (ops.yaml's inplace maps).
  rows.push_back(
      {.op = "sgd_", .inplace = {{"param", "param_out"}, {"master_param", "master_param_out"}}});
  rows.push_back({.op = "momentum_",
                  .inplace = {{"param", "param_out"},
                              {"velocity", "velocity_out"},
                              {"master_param", "master_param_out"}}});
  const NamePairs adam_inplace = {{"param", "param_out"},
                                  {"moment1", "moment1_out"},
                                  {"moment2", "moment2_out"},
                                  {"moment2_max", "moment2_max_out"},
                                  {"beta1_pow", "beta1_pow_out"},
                                  {"beta2_pow", "beta2_pow_out"},
                                  {"master_param", "master_param_out"}};
  for (const char* op : {"adam_", "adamw_"}) {
    rows.push_back({.op = op,
                    .roles = {{"beta1", R::kFloat}, {"beta2", R::kFloat}, {"epsilon", R::kFloat}},
                    .inplace = adam_inplace});
  }
  return rows;
}

constexpr const char* kPassThroughOps[] = {"sync_calc_stream_", "sync_comm_stream_"};

constexpr const char* kCommunicationOps[] = {
    "all_reduce",       "all_reduce_",       "all_gather",      "reduce_scatter",
    "broadcast",        "broadcast_",        "all_to_all",      "p_send",
    "p_recv",           "barrier",           "c_allreduce_sum", "c_allreduce_sum_",
    "c_allreduce_max",  "c_allreduce_max_",  "c_allreduce_min", "c_allreduce_min_",
    "c_allreduce_prod", "c_allreduce_prod_", "c_allgather",     "c_reducescatter",
    "c_broadcast",      "c_broadcast_",      "c_identity",      "c_identity_",
    "c_split",          "c_concat",          "send_v2",         "recv_v2"};
// The vocabulary-parallel ops (pir_comm_ops.cc): only the forward cross entropy communicates,
// but all four exist only in tensor-parallel rank programs, and run where the others run.
constexpr const char* kVocabParallelOps[] = {"c_embedding", "c_embedding_grad",
                                             "c_softmax_with_cross_entropy",
                                             "c_softmax_with_cross_entropy_grad"};

Status TableError(const std::string& message) {
  return Status(StatusCode::kInternal, Location{}, "new-IR binding table: " + message);
}

StatusOr<int> OperandIndex(const newir::OpInfo& info, const std::string& name) {
  for (size_t i = 0; i < info.operands.size(); ++i) {
    if (info.operands[i].name == name) return static_cast<int>(i);
  }
  return TableError(fmt::format("'{}' has no operand '{}'", info.name, name));
}

StatusOr<int> ResultIndex(const newir::OpInfo& info, const std::string& name) {
  for (size_t i = 0; i < info.results.size(); ++i) {
    if (info.results[i].name == name) return static_cast<int>(i);
  }
  return TableError(fmt::format("'{}' has no result '{}'", info.name, name));
}

StatusOr<OpBinding> Resolve(const Row& row, BindingKind kind, const newir::OpRegistry& registry) {
  OpBinding b;
  b.op = "pd_op." + row.op;
  b.kind = kind;
  b.info = registry.Lookup(b.op);
  if (b.info == nullptr) return TableError(fmt::format("'{}' is not a registered op", b.op));
  const newir::OpInfo& info = *b.info;
  b.kernel = row.kernel;
  if (b.kernel.empty()) {
    b.kernel = row.op;
    if (info.inplace && b.kernel.ends_with('_')) b.kernel.pop_back();
  }
  b.roles.assign(info.operands.size(), OperandRole::kInput);
  for (const auto& [name, role] : row.roles) {
    IRM_ASSIGN_OR_RETURN(const int i, OperandIndex(info, name));
    b.roles[static_cast<size_t>(i)] = role;
  }
  b.inplace_operand.assign(info.results.size(), -1);
  b.random = row.random;
  b.float_array_attrs = row.float_arrays;
  b.inplace_into_named_element = row.named_element;
  if (kind != BindingKind::kKernel) return b;

  if (row.dtype_from == kFromDTypeAttr) {
    if (info.FindAttribute("dtype") == nullptr) {
      return TableError(fmt::format("'{}' has no dtype attribute", b.op));
    }
    b.dtype_operand = -1;
  } else if (!row.dtype_from.empty()) {
    IRM_ASSIGN_OR_RETURN(b.dtype_operand, OperandIndex(info, row.dtype_from));
  } else {
    b.dtype_operand = -1;
    for (size_t i = 0; i < b.roles.size() && b.dtype_operand < 0; ++i) {
      if (b.roles[i] == OperandRole::kInput) b.dtype_operand = static_cast<int>(i);
    }
    if (b.dtype_operand < 0) return TableError(fmt::format("'{}' has no input for a dtype", b.op));
  }
  if (b.dtype_operand >= 0 &&
      b.roles[static_cast<size_t>(b.dtype_operand)] != OperandRole::kInput) {
    return TableError(fmt::format("'{}' takes its dtype from an operand that is no input", b.op));
  }

  NamePairs inplace = row.inplace;
  if (inplace.empty() && info.inplace && !row.named_element) {
    if (info.operands.empty() || info.results.empty()) {
      return TableError(fmt::format("in-place '{}' has nothing to write", b.op));
    }
    inplace.emplace_back(info.operands[0].name, info.results[0].name);
  }
  if (!inplace.empty() && !info.inplace) {
    return TableError(fmt::format("'{}' is not an in-place op", b.op));
  }
  for (const auto& [operand, result] : inplace) {
    IRM_ASSIGN_OR_RETURN(const int o, OperandIndex(info, operand));
    IRM_ASSIGN_OR_RETURN(const int r, ResultIndex(info, result));
    b.inplace_operand[static_cast<size_t>(r)] = o;
  }
  for (size_t i = 0; i < b.roles.size(); ++i) {
    if (b.roles[i] != OperandRole::kTarget) continue;
    bool written = false;
    for (int o : b.inplace_operand) written = written || o == static_cast<int>(i);
    if (!written) {
      return TableError(
          fmt::format("'{}' operand '{}' is a target nothing writes", b.op, info.operands[i].name));
    }
  }
  return b;
}

// Integer kinds of attribute values: Int32, Int64 and integer Scalars.
std::optional<int64_t> IntegerOf(const newir::Attribute& a) {
  if (const int32_t* v = a.AsInt32()) return *v;
  if (const int64_t* v = a.AsInt64()) return *v;
  if (const newir::ScalarValue* s = a.AsScalar()) {
    if (const int64_t* v = std::get_if<int64_t>(&s->value)) return *v;
  }
  return std::nullopt;
}

// Any numeric attribute value as a double (bools as 0 and 1).
std::optional<double> NumberOf(const newir::Attribute& a) {
  if (std::optional<int64_t> i = IntegerOf(a)) return static_cast<double>(*i);
  if (const float* v = a.AsFloat()) return *v;
  if (const double* v = a.AsDouble()) return *v;
  if (const bool* v = a.AsBool()) return *v ? 1.0 : 0.0;
  if (const newir::ScalarValue* s = a.AsScalar()) {
    if (const double* v = std::get_if<double>(&s->value)) return *v;
    if (const bool* v = std::get_if<bool>(&s->value)) return *v ? 1.0 : 0.0;
  }
  return std::nullopt;
}

bool IsFloatKind(newir::AttrKind kind) {
  return kind == newir::AttrKind::kFloat || kind == newir::AttrKind::kDouble;
}

Status AttrError(const std::string& name, const std::string& what) {
  return Status(StatusCode::kUnimplemented, Location{},
                fmt::format("attribute '{}' {}, which no kernel attribute can hold", name, what));
}

StatusOr<std::optional<AttrValue>> ArrayToKernelAttr(const newir::AttrSpec& spec,
                                                     newir::AttributeSpan items, bool as_floats) {
  bool all_integers = true;
  for (const newir::Attribute& item : items) {
    if (!NumberOf(item)) {
      return AttrError(spec.name,
                       fmt::format("holds an array of {}", newir::AttrKindName(item.kind())));
    }
    all_integers = all_integers && IntegerOf(item).has_value();
  }
  if (items.empty()) as_floats = as_floats || IsFloatKind(spec.element_kind);
  if (as_floats || !all_integers) {
    std::vector<double> values;
    for (const newir::Attribute& item : items) values.push_back(*NumberOf(item));
    return std::optional<AttrValue>(std::move(values));
  }
  std::vector<int64_t> values;
  for (const newir::Attribute& item : items) values.push_back(*IntegerOf(item));
  return std::optional<AttrValue>(std::move(values));
}

// One table attribute as a kernel attribute; nullopt when it is not the kernel's business.
StatusOr<std::optional<AttrValue>> ToKernelAttr(const newir::AttrSpec& spec,
                                                const newir::Attribute& value, bool as_floats) {
  using K = newir::AttrKind;
  const K declared = spec.kind != K::kNull ? spec.kind : spec.untyped_kind;
  const bool wants_float = IsFloatKind(declared);
  switch (value.kind()) {
    case K::kBool:
      return std::optional<AttrValue>(*value.AsBool());
    case K::kInt32:
    case K::kInt64:
      if (wants_float) return std::optional<AttrValue>(*NumberOf(value));
      return std::optional<AttrValue>(*IntegerOf(value));
    case K::kFloat:
    case K::kDouble:
      return std::optional<AttrValue>(*NumberOf(value));
    case K::kString:
      return std::optional<AttrValue>(std::string(*value.AsString()));
    case K::kIntArray:
      return std::optional<AttrValue>(value.AsIntArray()->values);
    case K::kArray:
      return ArrayToKernelAttr(spec, *value.AsArray(), as_floats);
    case K::kDataType: {
      const newir::DataType type = *value.AsDataType();
      if (type == newir::DataType::kUndefined) return std::optional<AttrValue>();
      if (std::optional<DType> dtype = DTypeOfDataType(type)) {
        return std::optional<AttrValue>(*dtype);
      }
      return AttrError(spec.name, fmt::format("is {}", newir::DataTypeName(type)));
    }
    case K::kScalar: {
      const newir::ScalarValue& s = *value.AsScalar();
      if (const bool* b = std::get_if<bool>(&s.value)) return std::optional<AttrValue>(*b);
      if (const int64_t* i = std::get_if<int64_t>(&s.value); i != nullptr && !wants_float) {
        return std::optional<AttrValue>(*i);
      }
      return std::optional<AttrValue>(*NumberOf(value));
    }
    case K::kNull:
    case K::kType:
    case K::kPlace:
    case K::kDataLayout:
    case K::kProcessMesh:
    case K::kTensorDist:
    case K::kOperationDist:
      break;
  }
  // Where a tensor lives and how it is laid out is the executor's business, not the kernel's.
  return std::optional<AttrValue>();
}

}  // namespace

StatusOr<PirBindings> PirBindings::Build(const newir::OpRegistry& registry) {
  PirBindings table;
  auto add = [&](const Row& row, BindingKind kind) -> Status {
    IRM_ASSIGN_OR_RETURN(OpBinding b, Resolve(row, kind, registry));
    const std::string name = b.op;
    if (!table.bindings_.emplace(name, std::move(b)).second) {
      return TableError(fmt::format("'{}' is bound twice", name));
    }
    return Status::Ok();
  };
  for (const Row& row : KernelRows()) IRM_RETURN_IF_ERROR(add(row, BindingKind::kKernel));
  for (const char* op : kPassThroughOps) {
    IRM_RETURN_IF_ERROR(add({.op = op}, BindingKind::kPassThrough));
  }
  for (const char* op : kCommunicationOps) {
    IRM_RETURN_IF_ERROR(add({.op = op}, BindingKind::kCommunication));
  }
  for (const char* op : kVocabParallelOps) {
    IRM_RETURN_IF_ERROR(add({.op = op}, BindingKind::kCommunication));
  }
  return table;
}

const PirBindings& PirBindings::Global() {
  // A row that disagrees with the op table is a programming error every test run finds.
  static const PirBindings* const kTable =
      BuildBuiltinRegistry<PirBindings>("new-IR binding table", [](PirBindings& table) -> Status {
        IRM_ASSIGN_OR_RETURN(table, Build(newir::OpRegistry::Global()));
        return Status::Ok();
      });
  return *kTable;
}

const OpBinding* PirBindings::Find(std::string_view op_name) const {
  auto it = bindings_.find(op_name);
  return it == bindings_.end() ? nullptr : &it->second;
}

std::vector<std::string> PirBindings::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, binding] : bindings_) names.push_back(name);
  return names;
}

std::optional<DType> DTypeOfElementType(const newir::Type& element) {
  using K = newir::TypeKind;
  switch (element.kind()) {
    case K::kBool:
      return DType::kBool;
    case K::kI8:
      return DType::kInt8;
    case K::kU8:
      return DType::kUInt8;
    case K::kI16:
      return DType::kInt16;
    case K::kI32:
      return DType::kInt32;
    case K::kI64:
      return DType::kInt64;
    case K::kF16:
      return DType::kFloat16;
    case K::kBF16:
      return DType::kBFloat16;
    case K::kF32:
      return DType::kFloat32;
    case K::kF64:
      return DType::kFloat64;
    case K::kC64:
      return DType::kComplex64;
    case K::kC128:
      return DType::kComplex128;
    default:
      return std::nullopt;
  }
}

std::optional<DType> DTypeOfDataType(newir::DataType type) {
  using D = newir::DataType;
  switch (type) {
    case D::kBool:
      return DType::kBool;
    case D::kInt8:
      return DType::kInt8;
    case D::kUInt8:
      return DType::kUInt8;
    case D::kInt16:
      return DType::kInt16;
    case D::kInt32:
      return DType::kInt32;
    case D::kInt64:
      return DType::kInt64;
    case D::kFloat16:
      return DType::kFloat16;
    case D::kBFloat16:
      return DType::kBFloat16;
    case D::kFloat32:
      return DType::kFloat32;
    case D::kFloat64:
      return DType::kFloat64;
    case D::kComplex64:
      return DType::kComplex64;
    case D::kComplex128:
      return DType::kComplex128;
    default:
      return std::nullopt;
  }
}

Status ConvertAttributes(const newir::Operation& op, const OpBinding& binding, KernelAttrs& attrs) {
  for (const newir::AttrSpec& spec : binding.info->attributes) {
    newir::Attribute value = op.attribute(spec.name);
    if (value.IsNull()) value = spec.default_value;
    if (value.IsNull()) continue;
    bool as_floats = false;
    for (const std::string& name : binding.float_array_attrs) as_floats |= name == spec.name;
    IRM_ASSIGN_OR_RETURN(std::optional<AttrValue> converted, ToKernelAttr(spec, value, as_floats));
    if (converted) attrs.Set(spec.name, std::move(*converted));
  }
  return Status::Ok();
}

}  // namespace irm::rt
