// Control flow (control_flow.h).
#include "translator/control_flow.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "translator/legacy_types.h"
#include "translator/op_context.h"

namespace irm::translator {
namespace {

using newir::Attribute;
using newir::Type;
using newir::Value;

StatusOr<int> SubBlockIndex(OpContext& ctx) {
  const oldir::proto::OpDesc::Attr* attr = ctx.op().FindAttr(oldir::kSubBlockAttr);
  if (attr == nullptr || !attr->has_block_idx()) {
    return ctx.Error("attribute 'sub_block' is missing");
  }
  const int index = attr->block_idx();
  if (index <= 0 || index >= ctx.state().legacy.num_blocks()) {
    return ctx.Error(fmt::format("sub_block {} does not exist", index));
  }
  return index;
}

// The vars declared outside legacy block `index` that its ops write (nested sub-blocks included,
// through their ops' Out lists), in order of first write, plus `first` names in front. Only
// tensor-like vars count (a while's StepScopes is not a value).
std::vector<std::string> WrittenOutside(OpContext& ctx, int index,
                                        const std::vector<std::string>& first) {
  const oldir::Block sub = ctx.state().legacy.block(index);
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (name.empty() || name == oldir::kEmptyVarName || sub.FindVar(name)) return;
    std::optional<oldir::Var> var = sub.FindVarRecursive(name);
    if (!var || var->tensor_desc() == nullptr) return;
    if (seen.insert(name).second) names.push_back(name);
  };
  for (const std::string& name : first) add(name);
  for (int i = 0; i < sub.num_ops(); ++i) {
    for (const auto& out : sub.op(i).desc().outputs()) {
      for (const std::string& name : out.arguments()) add(name);
    }
  }
  return names;
}

// Whether legacy block `index` reads `name` before any of its ops writes it.
bool ReadsBeforeWriting(OpContext& ctx, int index, const std::string& name) {
  const oldir::Block sub = ctx.state().legacy.block(index);
  for (int i = 0; i < sub.num_ops(); ++i) {
    for (const auto& in : sub.op(i).desc().inputs()) {
      for (const std::string& arg : in.arguments()) {
        if (arg == name) return true;
      }
    }
    for (const auto& out : sub.op(i).desc().outputs()) {
      for (const std::string& arg : out.arguments()) {
        if (arg == name) return false;
      }
    }
  }
  return false;
}

// The value `name` has before block `index` runs: its binding, its parameter when persistable, a
// program input when the block reads it before writing it; null when it has none (a var first
// written inside the block).
StatusOr<Value*> ValueBefore(OpContext& ctx, int index, const std::string& name) {
  if (const Binding* b = ctx.scope().Find(name)) return b->value;
  if (const Binding* b = ctx.state().externals.FindLocal(name)) return b->value;
  IRM_ASSIGN_OR_RETURN(const oldir::Var var, ctx.VarOf(name));
  if (var.persistable() || ReadsBeforeWriting(ctx, index, name)) return ctx.ValueOf(name);
  return static_cast<Value*>(nullptr);
}

}  // namespace

Status TranslateConditionalBlock(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(const int index, SubBlockIndex(ctx));
  const std::vector<std::string> conds = ctx.InputNames("Cond");
  if (conds.size() != 1) {
    return ctx.Error(fmt::format("Cond must hold one var, not {}", conds.size()));
  }
  IRM_ASSIGN_OR_RETURN(Value * cond, ctx.ValueOf(conds[0]));
  const std::vector<std::string> outs = WrittenOutside(ctx, index, ctx.OutputNames("Out"));

  // The values before the block, for the false branch (read before the if is created so that
  // parameters they need land in the prologue first).
  std::vector<Value*> before;
  std::vector<Type> types;
  for (const std::string& name : outs) {
    IRM_ASSIGN_OR_RETURN(Value * value, ValueBefore(ctx, index, name));
    before.push_back(value);
    IRM_ASSIGN_OR_RETURN(Type type, ctx.TypeOfName(name));
    types.push_back(std::move(type));
  }

  newir::Operation* if_op = ctx.Emit("pd_op.if", {cond}, types, {}, 2);
  newir::Block& then_block = if_op->region(0).AddBlock();
  Scope inner(&ctx.scope());
  IRM_RETURN_IF_ERROR(ctx.TranslateBlock(index, then_block, inner));
  std::vector<Value*> yields;
  for (const std::string& name : outs) {
    const Binding* b = inner.Find(name);
    if (b == nullptr) {
      return ctx.Error(
          fmt::format("Out var '{}' has no value at the end of block {}", name, index));
    }
    yields.push_back(b->value);
  }
  ctx.EmitInto(then_block, "cf.yield", yields);

  newir::Block& else_block = if_op->region(1).AddBlock();
  bool fake = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (before[i] != nullptr) continue;
    // No value before the block: zeros, as Paddle's synthesized branch (dynamic dims as 1).
    fake = true;
    std::vector<int64_t> shape = types[i].dims();
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    const newir::DataType dtype = *DataTypeOfVarType(*ctx.VarOf(outs[i]).value().dtype());
    before[i] =
        ctx.EmitInto(else_block, "pd_op.full", {}, {types[i]}, FullAttributes(shape, 0.0, dtype))
            ->result(0);
  }
  ctx.EmitInto(else_block, "cf.yield", before);
  if (fake) if_op->SetAttribute("fake_false_branch", Attribute::Bool(true));

  for (size_t i = 0; i < outs.size(); ++i) ctx.Bind(outs[i], if_op->result(i));
  return Status::Ok();
}

Status TranslateWhile(OpContext& ctx) {
  IRM_ASSIGN_OR_RETURN(const int index, SubBlockIndex(ctx));
  const std::vector<std::string> conds = ctx.InputNames("Condition");
  if (conds.size() != 1) {
    return ctx.Error(fmt::format("Condition must hold one var, not {}", conds.size()));
  }
  const std::string& cond_name = conds[0];
  std::vector<std::string> written = WrittenOutside(ctx, index, {});
  auto cond_it = std::find(written.begin(), written.end(), cond_name);
  if (cond_it == written.end()) {
    return ctx.Error(fmt::format("the loop body never writes its condition '{}'", cond_name));
  }
  written.erase(cond_it);

  IRM_ASSIGN_OR_RETURN(Value * cond, ctx.ValueOf(cond_name));
  std::vector<std::string> loop_vars;
  std::vector<Value*> inits;
  for (const std::string& name : written) {
    IRM_ASSIGN_OR_RETURN(Value * value, ValueBefore(ctx, index, name));
    if (value == nullptr) {
      // Written in the body before any read: a per-iteration temporary, not carried.
      ctx.state().notes.Add(Warning(
          ctx.location(),
          fmt::format("'{}' has no value before the loop; it is not carried out of it", name)));
      continue;
    }
    loop_vars.push_back(name);
    inits.push_back(value);
  }

  std::vector<Value*> operands = {cond};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type());
  }
  newir::Operation* while_op = ctx.Emit("pd_op.while", operands, types, {}, 1);
  newir::Block& body = while_op->region(0).AddBlock();
  Scope inner(&ctx.scope());
  {
    OpContext body_ctx(ctx.state(), ctx.block(), 0, &ctx.row(), body, inner);
    for (size_t i = 0; i < loop_vars.size(); ++i) {
      body_ctx.Bind(loop_vars[i], body.AddArgument(types[i]));
    }
  }
  IRM_RETURN_IF_ERROR(ctx.TranslateBlock(index, body, inner));
  std::vector<Value*> yields = {inner.Find(cond_name)->value};
  for (const std::string& name : loop_vars) yields.push_back(inner.Find(name)->value);
  ctx.EmitInto(body, "cf.yield", yields);

  for (size_t i = 0; i < loop_vars.size(); ++i) ctx.Bind(loop_vars[i], while_op->result(i));
  return Status::Ok();
}

}  // namespace irm::translator
