// The per-op translation API (op_context.h): inputs as values, attributes from the table row,
// emitting ops and binding their results. The scope, the block walk and the general handler
// are in op_context_scope.cc, op_context_block_walk.cc and op_context_table.cc.
#include "translator/op_context.h"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "newir/pd_op_catalog.h"
#include "translator/legacy_types.h"
#include "translator/op_context_internal.h"

namespace irm::translator {
namespace {

using newir::Attribute;
using newir::Operation;
using newir::Type;
using newir::Value;
using op_context_internal::IsEmptyName;
using op_context_internal::PerResult;
using op_context_internal::SlotVars;
using op_context_internal::VarsOf;

// Constants for mutable attributes live on the CPU, as Paddle's translator builds them.
const newir::Place kConstantPlace = newir::Place::Of(newir::AllocationType::kCpu);

// Sets entry `index` of the per-result array attribute `name` (created with `fill` entries).
void SetResultEntry(Operation& op, const char* name, size_t index, Attribute value,
                    const Attribute& fill) {
  std::vector<Attribute> entries;
  if (const newir::AttributeSpan* old = op.attribute(name).AsArray()) {
    entries.assign(old->begin(), old->end());
  }
  entries.resize(op.num_results(), fill);
  entries[index] = std::move(value);
  op.SetAttribute(name, Attribute::Array(std::move(entries)));
}

// The attributes every translated op may get besides its own: op_role, chunk_id and, per result,
// legacy_var_names, stop_gradient and persistable.
constexpr size_t kCommonAttributes = 5;

std::vector<std::string> NonEmpty(const oldir::Op::Names* names) {
  std::vector<std::string> out;
  if (names == nullptr) return out;
  for (const std::string& name : *names) {
    if (!IsEmptyName(name)) out.push_back(name);
  }
  return out;
}

}  // namespace

OpContext::OpContext(ProgramState& state, const oldir::Block& block, int op_index,
                     const OpCompat* row, newir::Block& target, Scope& scope)
    : state_(state),
      block_(block),
      op_index_(op_index),
      op_(block.op(op_index)),
      row_(row),
      target_(target),
      scope_(scope) {
  builder_.SetInsertionPointToEnd(target);
  // One pass over the op's attributes for both (a legacy op carries ~10); the first of a name
  // counts, as FindAttr's.
  constexpr std::string_view kRole = "op_role", kChunk = "chunk_id";
  bool role_seen = false, chunk_seen = false;
  for (const oldir::proto::OpDesc::Attr& attr : op_.desc().attrs()) {
    const std::string_view name = attr.name();
    if (!role_seen && name == kRole) {
      role_seen = true;
      if (attr.has_i()) op_role_ = Attribute::Int32(attr.i());
    } else if (!chunk_seen && name == kChunk) {
      chunk_seen = true;
      if (attr.has_i()) chunk_id_ = Attribute::Int32(attr.i());
    }
  }
}

bool OpContext::HasInput(std::string_view slot) const {
  if (const oldir::Op::Names* names = op_.Input(slot)) {
    for (const std::string& name : *names) {
      if (!IsEmptyName(name)) return true;
    }
  }
  return false;
}

Location OpContext::location() const {
  return Location::File(state_.options.file).InBlock(block_.index()).AtOp(op_index_, op_.type());
}

Status OpContext::Error(std::string message) const {
  return Status(StatusCode::kInvalid, location(), std::move(message));
}

std::vector<std::string> OpContext::InputNames(std::string_view slot) const {
  return NonEmpty(op_.Input(slot));
}

std::vector<std::string> OpContext::OutputNames(std::string_view slot) const {
  return NonEmpty(op_.Output(slot));
}

StatusOr<const oldir::Var> OpContext::VarOf(std::string_view name) const {
  std::optional<oldir::Var> var = block_.FindVarRecursive(name);
  if (!var) return Error(fmt::format("var '{}' is not declared", name));
  return *var;
}

StatusOr<Type> OpContext::TypeOfName(std::string_view name) const {
  IRM_ASSIGN_OR_RETURN(const oldir::Var var, VarOf(name));
  StatusOr<Type> type = TypeOfVar(var);
  if (!type.ok()) return Error(type.status().message());
  return type;
}

StatusOr<Value*> OpContext::ValueOf(std::string_view name) {
  if (const Binding* b = scope_.Find(name)) return b->value;
  if (const Binding* b = state_.externals.FindLocal(name)) return b->value;
  // Read before any write: a parameter when persistable, else a program input. Both go to the
  // prologue of the top block, in the order of first use, so they dominate every use.
  IRM_ASSIGN_OR_RETURN(const oldir::Var var, VarOf(name));
  StatusOr<Type> var_type = TypeOfVar(var);  // as TypeOfName, without looking the var up again
  if (!var_type.ok()) return Error(var_type.status().message());
  const Type type = std::move(var_type).value();
  newir::Block& top = state_.program.block();
  newir::Builder prologue(top);
  if (state_.prologue_end == nullptr) {
    prologue.SetInsertionPointToStart(top);
  } else {
    prologue.SetInsertionPointAfter(*state_.prologue_end);
  }
  const Attribute name_attr = Attribute::String(std::string(name));
  newir::AttributeMap attrs =
      var.persistable() ? newir::AttributeMap{{"parameter_name", name_attr}} : DataAttributes(var);
  const Attribute stop_gradient = Attribute::Bool(var.stop_gradient());
  const Attribute persistable = Attribute::Bool(var.persistable());
  attrs.emplace(kLegacyVarNamesAttr, Attribute::ArrayFrom(std::span(&name_attr, 1)));
  attrs.emplace("stop_gradient", Attribute::ArrayFrom(std::span(&stop_gradient, 1)));
  attrs.emplace("persistable", Attribute::ArrayFrom(std::span(&persistable, 1)));
  Operation* op = prologue.Create(var.persistable() ? "builtin.parameter" : "pd_op.data", {},
                                  {type}, std::move(attrs));
  state_.prologue_end = op;
  Value* value = op->result(0);
  state_.externals.Bind(name, {value, var.persistable() ? value : nullptr, var.persistable()});
  return value;
}

StatusOr<Value*> OpContext::Input(std::string_view slot) {
  const SlotVars vars = VarsOf(op_.Input(slot));
  if (vars.count != 1) {
    return Error(fmt::format("input slot '{}' must hold one var, not {}", slot, vars.count));
  }
  return ValueOf(*vars.first);
}

StatusOr<Value*> OpContext::OptionalInput(std::string_view slot) {
  const SlotVars vars = VarsOf(op_.Input(slot));
  if (vars.count == 0) return static_cast<Value*>(nullptr);
  if (vars.count != 1) {
    return Error(fmt::format("input slot '{}' must hold one var, not {}", slot, vars.count));
  }
  return ValueOf(*vars.first);
}

StatusOr<std::vector<Value*>> OpContext::Inputs(std::string_view slot) {
  std::vector<Value*> values;
  for (const std::string& name : InputNames(slot)) {
    IRM_ASSIGN_OR_RETURN(Value * value, ValueOf(name));
    values.push_back(value);
  }
  return values;
}

StatusOr<newir::AttributeMap> OpContext::AttributesFor(const newir::OpInfo& info) {
  newir::AttributeMap attrs;
  // Room for the common ones the op gets too (op_role, chunk_id, and its results' legacy names,
  // stop_gradient and persistable), so that the map is allocated once.
  attrs.reserve(info.attributes.size() + kCommonAttributes);
  for (const newir::AttrSpec& spec : info.attributes) {
    const std::string_view legacy_name = LegacyAttrFor(*row_, spec.name);
    if (const oldir::proto::OpDesc::Attr* raw = op_.FindAttr(legacy_name)) {
      StatusOr<oldir::AttrValue> value = oldir::ReadAttrValue(*raw);
      if (!value.ok()) return Error(value.status().message());
      StatusOr<Attribute> converted = ConvertAttr(*value, spec);
      if (!converted.ok()) {
        return Error(fmt::format("attribute '{}' (for {}'s '{}'): {}", legacy_name, info.name,
                                 spec.name, converted.status().message()));
      }
      attrs.emplace(spec.name, std::move(converted).value());
      continue;
    }
    auto fallback = std::find_if(row_->defaults.begin(), row_->defaults.end(),
                                 [&](const auto& d) { return d.first == spec.name; });
    if (fallback != row_->defaults.end()) {
      attrs.emplace(spec.name, fallback->second);
    } else if (!spec.default_value.IsNull()) {
      attrs.emplace(spec.name, spec.default_value);
    } else if (spec.required) {
      return Error(fmt::format("attribute '{}' is missing ({} requires '{}')", legacy_name,
                               info.name, spec.name));
    }
  }
  return attrs;
}

void OpContext::AddCommonAttributes(newir::AttributeMap& attributes, size_t num_results) const {
  const bool add_names = num_results != 0 && !attributes.contains(kLegacyVarNamesAttr);
  // Room for exactly what is added: a map sized by AttributesFor does not grow again.
  attributes.reserve(attributes.size() + (op_role_ ? 1 : 0) + (chunk_id_ ? 1 : 0) +
                     (add_names ? 1 : 0));
  if (op_role_) attributes.emplace("op_role", op_role_);
  if (chunk_id_) attributes.emplace("chunk_id", chunk_id_);
  if (add_names) {
    attributes.emplace(kLegacyVarNamesAttr,
                       PerResult(num_results, Attribute::String("")).ToArray());
  }
}

Operation* OpContext::Emit(std::string name, const std::vector<Value*>& operands,
                           const std::vector<Type>& result_types, newir::AttributeMap attributes,
                           size_t num_regions) {
  AddCommonAttributes(attributes, result_types.size());
  return builder_.Create(std::move(name), operands, result_types, std::move(attributes),
                         num_regions);
}

Operation* OpContext::Emit(const newir::OpInfo& info, const std::vector<Value*>& operands,
                           const std::vector<Type>& result_types, newir::AttributeMap attributes) {
  AddCommonAttributes(attributes, result_types.size());
  return builder_.Create(info, operands, result_types, std::move(attributes));
}

Operation* OpContext::EmitInto(newir::Block& block, std::string name,
                               const std::vector<Value*>& operands,
                               const std::vector<Type>& result_types,
                               newir::AttributeMap attributes) {
  builder_.SetInsertionPointToEnd(block);
  Operation* op = Emit(std::move(name), operands, result_types, std::move(attributes));
  builder_.SetInsertionPointToEnd(target_);
  return op;
}

namespace {

// The registry's pd_op ops by their name without the dialect prefix (in-place ones keep their
// trailing `_`): built once, so that a look-up per legacy op neither formats a name nor walks the
// registry's ordered map.
const std::unordered_map<std::string_view, const newir::OpInfo*>& PdOpsByShortName() {
  static const auto* const index = [] {
    auto* ops = new std::unordered_map<std::string_view, const newir::OpInfo*>;
    constexpr std::string_view kPrefix = "pd_op.";
    for (const newir::OpInfo* info : newir::OpRegistry::Global().OpsOfDialect("pd_op")) {
      const std::string_view name = info->name;
      // Catalog-only ops have no kernel binding: a translation to one could not run.
      if (newir::IsPdOpCatalogOnly(name)) continue;
      if (name.starts_with(kPrefix)) ops->emplace(name.substr(kPrefix.size()), info);
    }
    return ops;
  }();
  return *index;
}

}  // namespace

StatusOr<const newir::OpInfo*> OpContext::LookUp(std::string_view name, bool inplace) const {
  const auto& ops = PdOpsByShortName();
  if (inplace) {
    std::string inplace_name;
    inplace_name.reserve(name.size() + 1);
    inplace_name.append(name).push_back('_');
    if (auto it = ops.find(inplace_name); it != ops.end()) return it->second;
  }
  if (auto it = ops.find(name); it != ops.end()) return it->second;
  return Status(StatusCode::kInternal, location(),
                fmt::format("the op-compat table names 'pd_op.{}', which is not registered", name));
}

Value* OpContext::FullScalar(double value, newir::DataType dtype) {
  // Views, so that the interned shape attribute and the cached type are found without a vector.
  static constexpr int64_t kShape[] = {1};
  const Type element = ScalarTypeOfDataType(dtype);
  return Emit("pd_op.full", {}, {Type::DenseTensorOfDims(element, kShape)},
              FullAttributes(kShape, value, dtype, kConstantPlace))
      ->result(0);
}

Value* OpContext::FullIntArray(const std::vector<int64_t>& values) {
  std::vector<Attribute> items;
  items.reserve(values.size());
  for (int64_t v : values) items.push_back(Attribute::Int64(v));
  return Emit("pd_op.full_int_array", {},
              {Type::DenseTensor(Type::I64(), {static_cast<int64_t>(values.size())})},
              {{"value", Attribute::Array(std::move(items))},
               {"dtype", Attribute::DataTypeAttr(newir::DataType::kInt64)},
               {"place", Attribute::PlaceAttr(kConstantPlace)}})
      ->result(0);
}

Value* OpContext::Combine(const std::vector<Value*>& values) {
  std::vector<Type> types;
  types.reserve(values.size());
  for (Value* v : values) types.push_back(v->type());
  return Emit("builtin.combine", values, {Type::Vector(std::move(types))})->result(0);
}

std::vector<Value*> OpContext::Split(Value* vector) {
  return Emit("builtin.split", {vector}, vector->type().elements())->results();
}

bool OpContext::WritesAnInput() const {
  for (const auto& out : op_.desc().outputs()) {
    for (const std::string& name : out.arguments()) {
      if (IsEmptyName(name)) continue;
      for (const auto& in : op_.desc().inputs()) {
        if (std::find(in.arguments().begin(), in.arguments().end(), name) != in.arguments().end()) {
          return true;
        }
      }
    }
  }
  return false;
}

void OpContext::Bind(std::string_view name, Value* value) {
  const std::optional<oldir::Var> var = block_.FindVarRecursive(name);
  BindName(name, value, var && var->persistable());
  if (Operation* op = value->defining_op()) {
    const size_t index = value->index();
    // A value keeps the first name it was bound to (a re-bound alias does not rename it).
    if (const newir::AttributeSpan* names = op->attribute(kLegacyVarNamesAttr).AsArray();
        names != nullptr && index < names->size() && !(*names)[index].AsString()->empty()) {
      return;
    }
    SetResultEntry(*op, kLegacyVarNamesAttr, index, Attribute::String(std::string(name)),
                   Attribute::String(""));
    if (var) {
      SetResultEntry(*op, "stop_gradient", index, Attribute::Bool(var->stop_gradient()),
                     Attribute::Bool(false));
      SetResultEntry(*op, "persistable", index, Attribute::Bool(var->persistable()),
                     Attribute::Bool(false));
    }
  } else if (!value->attributes().contains(kLegacyVarNameAttr)) {
    value->SetAttribute(kLegacyVarNameAttr, Attribute::String(std::string(name)));
  }
}

void OpContext::BindName(std::string_view name, Value* value, bool persistable) {
  Binding binding{value, nullptr, persistable};
  // An in-place op that read the name's old value writes into the same storage.
  if (Operation* op = value->defining_op();
      op != nullptr && op->info() != nullptr && op->info()->inplace) {
    const Binding* old = scope_.Find(name);
    if (old == nullptr) old = state_.externals.FindLocal(name);
    if (old != nullptr) {
      for (size_t i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) == old->value) binding.storage = old->storage;
      }
    }
  }
  scope_.Bind(name, binding);
}

Status OpContext::TranslateBlock(int block_index, newir::Block& target, Scope& scope) {
  if (block_index < 0 || block_index >= state_.legacy.num_blocks()) {
    return Error(fmt::format("sub-block {} does not exist", block_index));
  }
  return TranslateOps(state_, state_.legacy.block(block_index), target, scope);
}

newir::AttributeMap DataAttributes(const oldir::Var& var) {
  return {{"name", Attribute::String(var.name())},
          {"shape", Attribute::IntArrayAttr(var.dims())},
          {"dtype", Attribute::DataTypeAttr(
                        DataTypeOfVarType(var.dtype().value_or(oldir::proto::VarType::FP32))
                            .value_or(newir::DataType::kUndefined))},
          {"place", Attribute::PlaceAttr(newir::Place{})}};
}

newir::AttributeMap FullAttributes(std::span<const int64_t> shape, double value,
                                   newir::DataType dtype, newir::Place place) {
  return {{"shape", Attribute::IntArrayFrom(shape)},
          {"value", Attribute::Double(value)},
          {"dtype", Attribute::DataTypeAttr(dtype)},
          {"place", Attribute::PlaceAttr(std::move(place))}};
}

}  // namespace irm::translator
