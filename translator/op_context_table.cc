// The general handler: a legacy op translated by its op-compat row alone — operands from the
// renamed slots or from mutable attributes, result types from the output vars, attributes from
// the table (EmitByTable and TranslateByTable in op_context.h).
#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "translator/legacy_types.h"
#include "translator/op_context.h"
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
