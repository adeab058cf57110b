// The per-op translation API and the block walk (op_context.h).
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

#include "newir/verifier.h"
#include "translator/legacy_types.h"
#include "translator/opaque_op.h"

namespace irm::translator {
namespace {

using newir::Attribute;
using newir::Operation;
using newir::Type;
using newir::Value;

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

// As string_views, so that unequal lengths decide without comparing bytes (std::string ==
// const char* compares them always, and these run for every argument and attribute of every op).
bool IsEmptyName(const std::string& name) {
  return name.empty() || std::string_view(name) == std::string_view(oldir::kEmptyVarName);
}

std::vector<std::string> NonEmpty(const oldir::Op::Names* names) {
  std::vector<std::string> out;
  if (names == nullptr) return out;
  for (const std::string& name : *names) {
    if (!IsEmptyName(name)) out.push_back(name);
  }
  return out;
}

}  // namespace

// ---- Scope --------------------------------------------------------------------------------------

Scope::Slot& Scope::SlotOf(std::string_view name, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == 0) return slot;
    if (slot.hash == hash && entries_[slot.entry - 1].name == name) return slot;
  }
}

void Scope::Rehash(size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  for (const Slot& s : old) {
    if (s.entry != 0) SlotOf(entries_[s.entry - 1].name, s.hash) = s;
  }
}

const Binding* Scope::FindLocal(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  const Slot& slot = SlotOf(name, std::hash<std::string_view>{}(name));
  return slot.entry == 0 ? nullptr : &entries_[slot.entry - 1].binding;
}

const Binding* Scope::Find(std::string_view name) const {
  const size_t hash = std::hash<std::string_view>{}(name);
  for (const Scope* s = this; s != nullptr; s = s->parent_) {
    if (s->slots_.empty()) continue;
    const Slot& slot = s->SlotOf(name, hash);
    if (slot.entry != 0) return &s->entries_[slot.entry - 1].binding;
  }
  return nullptr;
}

void Scope::Bind(std::string_view name, Binding binding) {
  // At most half full, so probes stay short.
  if (2 * (entries_.size() + 1) > slots_.size()) Rehash(std::max<size_t>(64, slots_.size() * 2));
  const size_t hash = std::hash<std::string_view>{}(name);
  Slot& slot = SlotOf(name, hash);
  if (slot.entry != 0) {
    entries_[slot.entry - 1].binding = binding;
    return;
  }
  char* copy = static_cast<char*>(names_.allocate(name.size(), 1));
  std::copy(name.begin(), name.end(), copy);
  entries_.push_back({std::string_view(copy, name.size()), binding});
  slot = {hash, static_cast<uint32_t>(entries_.size())};
}

void Scope::Reserve(size_t names) {
  const size_t slots = std::bit_ceil(std::max<size_t>(64, 2 * names));
  if (slots > slots_.size()) Rehash(slots);
}

std::vector<std::pair<std::string_view, const Binding*>> Scope::local_bindings() const {
  std::vector<std::pair<std::string_view, const Binding*>> bindings;
  bindings.reserve(entries_.size());
  for (const Entry& e : entries_) bindings.emplace_back(e.name, &e.binding);
  return bindings;
}

// ---- OpContext ----------------------------------------------------------------------------------

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

namespace {

// The non-empty names of a slot, counted, and the first of them: what Input and OptionalInput
// need, without copying the names.
struct SlotVars {
  const oldir::Op::Names* names = nullptr;
  const std::string* first = nullptr;
  size_t count = 0;
  bool persistable = false;  // the first's var (filled in by EmitByTable for single results)
};

SlotVars VarsOf(const oldir::Op::Names* names) {
  SlotVars vars;
  if (names == nullptr) return vars;
  vars.names = names;
  for (const std::string& name : *names) {
    if (IsEmptyName(name)) continue;
    if (vars.first == nullptr) vars.first = &name;
    ++vars.count;
  }
  return vars;
}

}  // namespace

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

namespace {

// One attribute per result, gathered before they become an Array: the usual handful inline, so
// that an array that is interned (flags, empty names) costs no allocation at all.
class PerResult {
 public:
  PerResult(size_t n, const Attribute& fill) : n_(n) {
    if (n > inline_.size()) {
      spilled_.assign(n, fill);
    } else {
      std::fill_n(inline_.begin(), n, fill);
    }
  }
  Attribute& operator[](size_t i) { return n_ > inline_.size() ? spilled_[i] : inline_[i]; }
  Attribute ToArray() const {
    return Attribute::ArrayFrom(
        std::span<const Attribute>(n_ > inline_.size() ? spilled_.data() : inline_.data(), n_));
  }

 private:
  size_t n_;
  std::array<Attribute, 8> inline_;
  std::vector<Attribute> spilled_;
};

}  // namespace

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

// ---- the block walk -----------------------------------------------------------------------------

namespace {

// Checks the ops a handler emitted after `last_before` against their tables and verifier hooks.
// The legacy validator does not infer shapes, so a legacy op whose vars disagree (operands that
// do not broadcast, a matmul's inner dims) only shows here; it is the legacy program's error,
// reported at its op, never a translation the verifier would reject.
Status CheckEmitted(OpContext& ctx, const newir::Operation* last_before) {
  const newir::Program& program = ctx.state().program;
  const newir::VerifyOptions options{.allow_unregistered = ctx.options().allow_unregistered};
  for (const newir::Operation* op = last_before != nullptr ? last_before->next()
                                                           : ctx.target().front();
       op != nullptr; op = op->next()) {
    Diagnostics found = newir::VerifyOp(program, *op, options);
    if (found.empty()) continue;
    return ctx.Error(fmt::format("its translation {} is not well formed: {}", op->name(),
                                 found.items().front().message));
  }
  return Status::Ok();
}

}  // namespace

Status TranslateOps(ProgramState& state, const oldir::Block& block, newir::Block& target,
                    Scope& scope) {
  for (int i = 0; i < block.num_ops(); ++i) {
    const oldir::Op op = block.op(i);
    const OpCompat* row = FindOpCompat(op.type());
    OpContext ctx(state, block, i, row, target, scope);
    OpTypeCoverage& coverage = state.coverage.Count(op.type(), block.index(), i);
    if (!IsTranslatable(row)) {
      // Without opaque ops the program fails: TranslateProgram lists every unsupported op.
      if (!state.options.allow_unregistered) {
        return Status(StatusCode::kUnimplemented, ctx.location(), "no translation");
      }
      IRM_RETURN_IF_ERROR(TranslateOpaque(ctx));
      ++coverage.opaque;
      if (row != nullptr) coverage.note = std::string(row->note);
      continue;
    }
    const size_t before = target.size();
    newir::Operation* last_before = target.back();
    IRM_RETURN_IF_ERROR(row->handler != nullptr ? row->handler(ctx) : TranslateByTable(ctx));
    IRM_RETURN_IF_ERROR(CheckEmitted(ctx, last_before));
    if (target.size() == before && !row->note.empty()) {
      ++coverage.dropped;
      coverage.note = std::string(row->note);
    } else {
      ++coverage.translated;
    }
  }
  state.checked_blocks[static_cast<size_t>(block.index())] = true;
  return Status::Ok();
}

// ---- the general handler ------------------------------------------------------------------------

namespace {

// The legacy slots of the op by their new names (the op's own slots only: an absent slot has no
// value to give). Names are views: the new ones interned, the legacy ones in the legacy program.
// An op has a handful of slots, kept inline; an op with more spills to the heap.
class SlotNames {
 public:
  SlotNames(const OpCompat& row, const oldir::Op& op) {
    auto add = [&](const std::string& slot) {
      if (std::find(row.dropped.begin(), row.dropped.end(), slot) != row.dropped.end()) return;
      const Entry entry{NewSlotName(row, slot), slot};
      if (size_ < inline_.size()) {
        inline_[size_] = entry;
      } else {
        spilled_.push_back(entry);
      }
      ++size_;
    };
    for (const auto& in : op.desc().inputs()) add(in.parameter());
    for (const auto& out : op.desc().outputs()) add(out.parameter());
  }

  // The legacy slot of `new_name`; empty when the op has none.
  std::string_view SlotOf(std::string_view new_name) const {
    for (size_t i = 0; i < size_; ++i) {
      const Entry& e = i < inline_.size() ? inline_[i] : spilled_[i - inline_.size()];
      if (e.new_name == new_name) return e.legacy;
    }
    return {};
  }

 private:
  struct Entry {
    std::string_view new_name, legacy;
  };
  std::array<Entry, 16> inline_;
  std::vector<Entry> spilled_;
  size_t size_ = 0;
};

StatusOr<Value*> MutableOperandValue(OpContext& ctx, const MutableOperand& m) {
  if (!m.tensor_slot.empty() && ctx.HasInput(m.tensor_slot)) return ctx.Input(m.tensor_slot);
  if (!m.list_slot.empty() && ctx.HasInput(m.list_slot)) {
    IRM_ASSIGN_OR_RETURN(std::vector<Value*> items, ctx.Inputs(m.list_slot));
    return ctx.Combine(items);
  }
  const oldir::proto::OpDesc::Attr* raw = m.attr.empty() ? nullptr : ctx.op().FindAttr(m.attr);
  if (raw == nullptr) {
    if (!m.fallback) {
      return ctx.Error(
          fmt::format("attribute '{}' is missing (it feeds operand '{}')", m.attr, m.operand));
    }
    if (m.int_array) return ctx.FullIntArray({static_cast<int64_t>(*m.fallback)});
    return ctx.FullScalar(*m.fallback, m.dtype);
  }
  StatusOr<oldir::AttrValue> value = oldir::ReadAttrValue(*raw);
  if (!value.ok()) return ctx.Error(value.status().message());
  if (m.int_array) {
    StatusOr<Attribute> ints = ConvertAttr(*value, {.kind = newir::AttrKind::kIntArray});
    if (!ints.ok())
      return ctx.Error(fmt::format("attribute '{}': {}", m.attr, ints.status().message()));
    return ctx.FullIntArray(ints->AsIntArray()->values);
  }
  StatusOr<Attribute> real = ConvertAttr(*value, {.kind = newir::AttrKind::kDouble});
  if (!real.ok())
    return ctx.Error(fmt::format("attribute '{}': {}", m.attr, real.status().message()));
  return ctx.FullScalar(*real->AsDouble(), m.dtype);
}

template <typename T>
const T* Override(const std::vector<std::pair<std::string_view, T>>& items, std::string_view name) {
  for (const auto& [key, value] : items) {
    if (key == name) return &value;
  }
  return nullptr;
}

// The lists EmitByTable gathers per op: the operands and result types it hands to the builder
// and each result's legacy names. They are kept from op to op, so that an op costs no allocation
// for them (a translation emits ~140k ops). EmitByTable never runs inside itself; if it ever did,
// the inner call would get lists of its own.
struct EmitLists {
  std::vector<Value*> operands;
  std::vector<Type> result_types;
  std::vector<SlotVars> result_vars;
};

class ReusedEmitLists {
 public:
  ReusedEmitLists() : lists_(in_use_ ? &own_ : &shared_) { in_use_ = true; }
  ReusedEmitLists(const ReusedEmitLists&) = delete;
  ReusedEmitLists& operator=(const ReusedEmitLists&) = delete;
  ~ReusedEmitLists() {
    // Emptied (types hold references) but not freed.
    lists_->operands.clear();
    lists_->result_types.clear();
    lists_->result_vars.clear();
    if (lists_ == &shared_) in_use_ = false;
  }
  EmitLists* operator->() { return lists_; }

 private:
  static thread_local EmitLists shared_;
  static thread_local bool in_use_;
  EmitLists own_;
  EmitLists* lists_;
};

thread_local EmitLists ReusedEmitLists::shared_;
thread_local bool ReusedEmitLists::in_use_ = false;

}  // namespace

StatusOr<Operation*> EmitByTable(OpContext& ctx, const newir::OpInfo& info,
                                 const TableOverrides& overrides) {
  const OpCompat& row = ctx.row();
  const SlotNames slots(row, ctx.op());
  ReusedEmitLists lists;
  std::vector<Value*>& operands = lists->operands;
  operands.reserve(info.operands.size());
  for (const newir::OperandSpec& spec : info.operands) {
    if (Value* const* value = Override(overrides.operands, spec.name)) {
      operands.push_back(*value);
      continue;
    }
    auto m = std::find_if(row.mutables.begin(), row.mutables.end(),
                          [&](const MutableOperand& x) { return x.operand == spec.name; });
    if (m != row.mutables.end()) {
      IRM_ASSIGN_OR_RETURN(Value * value, MutableOperandValue(ctx, *m));
      operands.push_back(value);
      continue;
    }
    const std::string_view slot = slots.SlotOf(spec.name);
    if (slot.empty() || !ctx.HasInput(slot)) {
      if (spec.optional) {
        operands.push_back(nullptr);
        continue;
      }
      return ctx.Error(fmt::format("input slot '{}' is empty ({} requires operand '{}')",
                                   slot.empty() ? std::string_view(spec.name) : slot, info.name,
                                   spec.name));
    }
    if (spec.variadic) {
      IRM_ASSIGN_OR_RETURN(std::vector<Value*> values, ctx.Inputs(slot));
      operands.push_back(ctx.Combine(values));
    } else {
      IRM_ASSIGN_OR_RETURN(Value * value, ctx.Input(slot));
      operands.push_back(value);
    }
  }

  const size_t num_results = info.results.size();
  std::vector<Type>& result_types = lists->result_types;
  result_types.reserve(num_results);
  // Each result's legacy names, viewed in the legacy op.
  std::vector<SlotVars>& result_vars = lists->result_vars;
  result_vars.assign(num_results, SlotVars{});
  // Names and flags of the single-tensor results, recorded with the op in one go (when any).
  std::optional<PerResult> names_attr, stop_attr, persistable_attr;
  for (size_t r = 0; r < num_results; ++r) {
    const newir::ResultSpec& spec = info.results[r];
    const std::string_view slot = slots.SlotOf(spec.name);
    const SlotVars vars = slot.empty() ? SlotVars{} : VarsOf(ctx.op().Output(slot));
    result_vars[r] = vars;
    if (const Type* type = Override(overrides.result_types, spec.name)) {
      result_types.push_back(*type);
    } else if (spec.variadic) {
      std::vector<Type> elements;
      elements.reserve(vars.count);
      for (const std::string& name : *vars.names) {
        if (IsEmptyName(name)) continue;
        IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(name));
        elements.push_back(std::move(type));
      }
      result_types.push_back(Type::Vector(std::move(elements)));
    } else if (vars.count == 0) {
      if (!spec.optional) {
        return ctx.Error(fmt::format("output slot '{}' is empty ({} requires result '{}')",
                                     slot.empty() ? std::string_view(spec.name) : slot, info.name,
                                     spec.name));
      }
      result_types.emplace_back();
    } else if (vars.count > 1) {
      return ctx.Error(fmt::format("output slot '{}' must hold one var, not {}", slot, vars.count));
    } else {
      IRM_ASSIGN_OR_RETURN(const oldir::Var var, ctx.VarOf(*vars.first));
      StatusOr<Type> type = TypeOfVar(var);
      if (!type.ok()) return ctx.Error(type.status().message());
      result_types.push_back(std::move(type).value());
      if (!names_attr) {
        names_attr.emplace(num_results, Attribute::String(""));
        stop_attr.emplace(num_results, Attribute::Bool(false));
        persistable_attr.emplace(num_results, Attribute::Bool(false));
      }
      (*names_attr)[r] = Attribute::String(*vars.first);
      (*stop_attr)[r] = Attribute::Bool(var.stop_gradient());
      (*persistable_attr)[r] = Attribute::Bool(var.persistable());
      result_vars[r].persistable = var.persistable();
    }
  }

  IRM_ASSIGN_OR_RETURN(newir::AttributeMap attrs, ctx.AttributesFor(info));
  for (const auto& [name, value] : overrides.attrs) attrs.insert_or_assign(name, value);
  if (names_attr) {
    attrs.emplace(kLegacyVarNamesAttr, names_attr->ToArray());
    attrs.emplace("stop_gradient", stop_attr->ToArray());
    attrs.emplace("persistable", persistable_attr->ToArray());
  }
  Operation* op = ctx.Emit(info, operands, result_types, std::move(attrs));
  for (size_t r = 0; r < num_results; ++r) {
    const SlotVars& vars = result_vars[r];
    if (info.results[r].variadic) {
      const std::vector<Value*> parts = ctx.Split(op->result(r));
      size_t j = 0;
      for (const std::string& name : *vars.names) {
        if (!IsEmptyName(name)) ctx.Bind(name, parts[j++]);
      }
    } else if (vars.count != 0) {
      ctx.BindName(*vars.first, op->result(r), vars.persistable);
    }
  }
  return op;
}

Status TranslateByTable(OpContext& ctx) {
  const bool inplace = ctx.row().always_inplace || ctx.WritesAnInput();
  IRM_ASSIGN_OR_RETURN(const newir::OpInfo* info, ctx.LookUp(ctx.row().new_op, inplace));
  return EmitByTable(ctx, *info).status();
}

}  // namespace irm::translator
