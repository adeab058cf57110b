// Planning a legacy program (legacy_plan.h): ops bound through the table of legacy_bindings.cc,
// vars resolved against the blocks' declarations, feed specs and fetch names collected.
#include "reference_runtime/legacy_plan.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "oldir/block_graph.h"
#include "oldir/op_schema.h"
#include "oldir/params_io.h"
#include "reference_runtime/legacy_comm_ops.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

// Resolves names against the declarations visible from one block.
class VarResolver {
 public:
  VarResolver(const oldir::Program& program, const oldir::Block& block)
      : program_(program), block_(block) {}

  PlannedVar Resolve(const std::string& name) const {
    PlannedVar var;
    var.name = name;
    // The parent chain of a valid program ends at block 0; the bound stops a cyclic one.
    std::optional<oldir::Block> current = block_;
    for (int steps = 0; current && steps < program_.num_blocks(); ++steps) {
      if (std::optional<oldir::Var> decl = current->FindVar(name)) {
        var.declared_in = current->position();
        var.persistable = decl->persistable();
        return var;
      }
      current = current->parent();
    }
    return var;
  }

  std::optional<oldir::Var> Declaration(const std::string& name) const {
    std::optional<oldir::Block> current = block_;
    for (int steps = 0; current && steps < program_.num_blocks(); ++steps) {
      if (std::optional<oldir::Var> decl = current->FindVar(name)) return decl;
      current = current->parent();
    }
    return std::nullopt;
  }

 private:
  const oldir::Program& program_;
  const oldir::Block& block_;
};

class OpPlanner {
 public:
  OpPlanner(const oldir::Program& program, const oldir::Block& block, int index,
            const std::string& file, bool multi_rank)
      : program_(program),
        block_(block),
        op_(block.op(index)),
        resolver_(program, block),
        multi_rank_(multi_rank) {
    planned_.block = block.position();
    planned_.index = index;
    planned_.type = op_.type();
    planned_.location = Location::File(file).InBlock(block.position()).AtOp(index, op_.type());
  }

  StatusOr<PlannedOp> Plan() && {
    if (std::optional<LegacyBuiltin> builtin = FindLegacyBuiltin(op_.type())) {
      IRM_RETURN_IF_ERROR(PlanBuiltin(*builtin));
    } else {
      IRM_RETURN_IF_ERROR(PlanKernel());
    }
    return std::move(planned_);
  }

 private:
  Status Error(StatusCode code, std::string message, const std::string& var = "") const {
    Location location = planned_.location;
    if (!var.empty()) location.AtVar(var);
    return Status(code, std::move(location), std::move(message));
  }

  // The slot's var names; empty when the slot is missing.
  static std::vector<std::string> Names(const oldir::Op::Names* names) {
    if (names == nullptr) return {};
    return {names->begin(), names->end()};
  }

  StatusOr<std::string> SingleInput(std::string_view slot) const {
    const std::vector<std::string> names = Names(op_.Input(slot));
    if (names.size() != 1) {
      return Error(StatusCode::kInvalid,
                   fmt::format("input slot '{}' holds {} vars, needs 1", slot, names.size()));
    }
    return names[0];
  }

  Status PlanInputs() {
    for (const SlotRule& rule : planned_.binding->inputs) {
      const std::vector<std::string> names = Names(op_.Input(rule.slot));
      if (rule.arity == Arity::kList) {
        for (const std::string& name : names) planned_.inputs.push_back(resolver_.Resolve(name));
        continue;
      }
      const size_t allowed_min = rule.arity == Arity::kOne ? 1 : 0;
      if (names.size() < allowed_min || names.size() > 1) {
        return Error(StatusCode::kInvalid,
                     fmt::format("input slot '{}' holds {} vars, needs {}", rule.slot, names.size(),
                                 rule.arity == Arity::kOne ? "1" : "at most 1"));
      }
      planned_.inputs.push_back(names.empty() ? PlannedVar{} : resolver_.Resolve(names[0]));
    }
    return Status::Ok();
  }

  Status PlanOutputs() {
    std::set<std::string> read;
    for (const oldir::proto::OpDesc::Var& slot : op_.desc().inputs()) {
      read.insert(slot.arguments().begin(), slot.arguments().end());
    }
    std::set<std::string> bound;
    const auto add = [&](const std::string& name) {
      PlannedVar var;
      if (name != oldir::kEmptyVarName) {
        var = resolver_.Resolve(name);
        var.in_place = read.count(name) > 0 && !planned_.binding->outputs_are_views;
        planned_.observed.push_back({name, static_cast<int>(planned_.outputs.size())});
      }
      planned_.outputs.push_back(std::move(var));
    };
    for (const SlotRule& rule : planned_.binding->outputs) {
      bound.insert(std::string(rule.slot));
      const std::vector<std::string> names = Names(op_.Output(rule.slot));
      if (rule.arity != Arity::kList && names.size() > 1) {
        return Error(StatusCode::kInvalid,
                     fmt::format("output slot '{}' holds {} vars, takes at most 1", rule.slot,
                                 names.size()));
      }
      if (names.empty() && rule.arity != Arity::kList) {
        planned_.outputs.emplace_back();
        continue;
      }
      for (const std::string& name : names) add(name);
    }
    // Output slots the kernel does not write (transpose2's XShape) are still the op's outputs.
    for (const oldir::proto::OpDesc::Var& slot : op_.desc().outputs()) {
      if (bound.count(slot.parameter()) > 0) continue;
      for (const std::string& name : slot.arguments()) {
        if (name != oldir::kEmptyVarName) planned_.observed.push_back({name, -1});
      }
    }
    return Status::Ok();
  }

  Status PlanKernel() {
    planned_.binding = FindLegacyBinding(op_.type());
    if (planned_.binding == nullptr && oldir::IsParameterServerOp(op_.type())) {
      return Error(StatusCode::kUnimplemented,
                   fmt::format("'{}' is a parameter-server (RPC) op: parameter-server programs are "
                               "read and validated, not run",
                               op_.type()));
    }
    if (planned_.binding == nullptr) {
      return Error(StatusCode::kUnimplemented,
                   fmt::format("no binding for legacy op '{}'", op_.type()));
    }
    planned_.kind = PlannedKind::kKernel;
    IRM_RETURN_IF_ERROR(PlanInputs());
    IRM_RETURN_IF_ERROR(PlanOutputs());
    Status bound = BindLegacyAttrs(*planned_.binding, op_, planned_.kernel, planned_.attrs);
    if (!bound.ok()) return Error(bound.code(), bound.message());
    for (const TensorAttrRule& rule : planned_.binding->tensor_attrs) {
      const std::vector<std::string> names = Names(op_.Input(rule.slot));
      if (names.empty()) continue;
      PlannedTensorAttr attr{&rule, {}};
      for (const std::string& name : names) attr.vars.push_back(resolver_.Resolve(name));
      planned_.tensor_attrs.push_back(std::move(attr));
    }
    if (planned_.binding->broadcast != LegacyBroadcast::kNone && op_.HasAttr("axis")) {
      StatusOr<oldir::AttrValue> value = op_.GetAttr("axis");
      if (!value.ok()) return Error(StatusCode::kInvalid, value.status().message());
      StatusOr<AttrValue> axis = ConvertLegacyAttr("axis", *value, AttrKind::kInt);
      if (!axis.ok()) return Error(StatusCode::kInvalid, axis.status().message());
      planned_.axis = std::get<int64_t>(*axis);
    }
    for (const PlannedVar& out : planned_.outputs) {
      if (!out.name.empty()) {
        planned_.identity = OpIdentity(out.name);
        break;
      }
    }
    return Status::Ok();
  }

  StatusOr<int64_t> Column() const {
    if (!op_.HasAttr("col")) return Error(StatusCode::kInvalid, "attribute 'col' is missing");
    StatusOr<oldir::AttrValue> value = op_.GetAttr("col");
    if (!value.ok()) return Error(StatusCode::kInvalid, value.status().message());
    StatusOr<AttrValue> col = ConvertLegacyAttr("col", *value, AttrKind::kInt);
    if (!col.ok()) return Error(StatusCode::kInvalid, col.status().message());
    return std::get<int64_t>(*col);
  }

  Status PlanFeed() {
    const std::vector<std::string> names = Names(op_.Output("Out"));
    if (names.size() != 1) {
      return Error(StatusCode::kInvalid,
                   fmt::format("output slot 'Out' holds {} vars, needs 1", names.size()));
    }
    const std::optional<oldir::Var> decl = resolver_.Declaration(names[0]);
    std::optional<DType> dtype;
    if (decl && decl->type() == oldir::proto::VarType::DENSE_TENSOR && decl->dtype()) {
      dtype = oldir::DTypeFromVarType(*decl->dtype());
    }
    if (!dtype || !IsRuntimeDType(*dtype)) {
      return Error(StatusCode::kInvalid,
                   fmt::format("feed target '{}' is not declared as a dense tensor of a runtime "
                               "dtype",
                               names[0]),
                   names[0]);
    }
    planned_.feed_dtype = *dtype;
    planned_.feed_dims = decl->dims();
    planned_.outputs.push_back(resolver_.Resolve(names[0]));
    IRM_ASSIGN_OR_RETURN(planned_.col, Column());
    return Status::Ok();
  }

  StatusOr<int> SubBlock() const {
    StatusOr<oldir::BlockRef> ref = op_.Attr<oldir::BlockRef>(oldir::kSubBlockAttr);
    if (!ref.ok()) return Error(StatusCode::kInvalid, ref.status().message());
    if (ref->index <= 0 || ref->index >= program_.num_blocks() || ref->index == block_.position()) {
      return Error(StatusCode::kInvalid,
                   fmt::format("sub_block {} is out of range (the program has {} blocks)",
                               ref->index, program_.num_blocks()));
    }
    return ref->index;
  }

  void ObserveAllOutputs() {
    for (const oldir::proto::OpDesc::Var& slot : op_.desc().outputs()) {
      for (const std::string& name : slot.arguments()) {
        if (name != oldir::kEmptyVarName) planned_.observed.push_back({name, -1});
      }
    }
  }

  Status PlanBuiltin(LegacyBuiltin builtin) {
    switch (builtin) {
      case LegacyBuiltin::kFeed:
        planned_.kind = PlannedKind::kFeed;
        IRM_RETURN_IF_ERROR(PlanFeed());
        break;
      case LegacyBuiltin::kFetch: {
        planned_.kind = PlannedKind::kFetch;
        IRM_ASSIGN_OR_RETURN(std::string name, SingleInput("X"));
        planned_.inputs.push_back(resolver_.Resolve(name));
        IRM_ASSIGN_OR_RETURN(planned_.col, Column());
        break;
      }
      case LegacyBuiltin::kConditionalBlock: {
        planned_.kind = PlannedKind::kConditionalBlock;
        IRM_ASSIGN_OR_RETURN(planned_.sub_block, SubBlock());
        // ConditionalBlockOpProtoMaker: is_scalar_condition defaults to false.
        planned_.scalar_condition = op_.AttrOr<bool>("is_scalar_condition", false);
        if (planned_.scalar_condition) {
          IRM_ASSIGN_OR_RETURN(std::string cond, SingleInput("Cond"));
          planned_.conditions.push_back(resolver_.Resolve(cond));
        } else {
          for (const std::string& name : Names(op_.Input("Input"))) {
            planned_.conditions.push_back(resolver_.Resolve(name));
          }
        }
        break;
      }
      case LegacyBuiltin::kWhile: {
        planned_.kind = PlannedKind::kWhile;
        IRM_ASSIGN_OR_RETURN(planned_.sub_block, SubBlock());
        IRM_ASSIGN_OR_RETURN(std::string cond, SingleInput("Condition"));
        planned_.conditions.push_back(resolver_.Resolve(cond));
        break;
      }
      case LegacyBuiltin::kOrderingNoOp:
        planned_.kind = PlannedKind::kNoOp;
        break;
      case LegacyBuiltin::kNeedsMultiRank: {
        if (!multi_rank_) {
          return Error(StatusCode::kUnimplemented,
                       fmt::format("'{}' needs the multi-rank runtime", op_.type()));
        }
        planned_.kind = PlannedKind::kComm;
        Status planned = PlanLegacyCommOp(
            op_, [&](const std::string& name) { return resolver_.Resolve(name); }, planned_);
        if (!planned.ok()) return Error(planned.code(), planned.message());
        break;
      }
    }
    if (planned_.kind != PlannedKind::kFetch) ObserveAllOutputs();
    return Status::Ok();
  }

  const oldir::Program& program_;
  const oldir::Block& block_;
  oldir::Op op_;
  VarResolver resolver_;
  bool multi_rank_;
  PlannedOp planned_;
};

// The exclusive bound of the integers each var holds that an op reads as indices: dim 0 of the W
// of a lookup_table_v2 reading it as Ids, or the class count (Logits' last dim) of a
// softmax_with_cross_entropy reading it as a hard Label; for the vocabulary-parallel twins the
// serial bound (c_embedding's vocab_size, c_softmax_with_cross_entropy's Logits columns times
// nranks), so that every rank draws the serial run's ids. The first op that gives a var a bound
// decides; vars no op bounds are left out.
std::map<std::string, int64_t, std::less<>> IndexBounds(const oldir::Program& program) {
  std::map<std::string, int64_t, std::less<>> bounds;
  for (int b = 0; b < program.num_blocks(); ++b) {
    const oldir::Block block = program.block(b);
    for (int i = 0; i < block.num_ops(); ++i) {
      const oldir::Op op = block.op(i);
      std::optional<std::string> index;
      std::optional<std::string> table;
      bool last_dim = false;
      int64_t shards = 1;  // a vocabulary-parallel op holds one of this many column blocks
      int64_t bound = 0;
      if (op.type() == "lookup_table_v2") {
        index = op.SingleInput("Ids");
        table = op.SingleInput("W");
      } else if (op.type() == "c_embedding") {
        // The serial vocabulary when the op says it; the rank's rows are only a part of it.
        index = op.SingleInput("Ids");
        bound = op.AttrOr<int64_t>("vocab_size", -1);
      } else if (op.type() == "c_softmax_with_cross_entropy") {
        index = op.SingleInput("Label");
        table = op.SingleInput("Logits");
        last_dim = true;
        shards = op.AttrOr<int32_t>("nranks", 1);
      } else if (op.type() == "softmax_with_cross_entropy") {
        const oldir::proto::OpDesc::Attr* soft = op.FindAttr("soft_label");
        if (soft != nullptr && soft->b()) continue;
        index = op.SingleInput("Label");
        table = op.SingleInput("Logits");
        last_dim = true;
      }
      if (!index || bounds.contains(*index)) continue;
      if (table) {
        const std::optional<oldir::Var> decl = block.FindVarRecursive(*table);
        if (!decl || decl->dims().empty()) continue;
        bound = (last_dim ? decl->dims().back() : decl->dims()[0]) * shards;
      }
      if (bound > 0) bounds.emplace(*index, bound);
    }
  }
  return bounds;
}

int64_t BoundOf(const LegacyPlan& plan, const std::string& name) {
  auto it = plan.index_bounds.find(name);
  return it == plan.index_bounds.end() ? 0 : it->second;
}

Status CollectFeedsAndFetches(const oldir::Program& program, LegacyPlan& plan) {
  plan.index_bounds = IndexBounds(program);
  std::vector<std::pair<int64_t, FeedSpec>> feeds;
  std::vector<const PlannedOp*> fetches;
  for (const PlannedOp& op : plan.blocks[0]) {
    if (op.kind == PlannedKind::kFeed) {
      const std::string& name = op.outputs[0].name;
      feeds.push_back({op.col, FeedSpec{name, op.feed_dtype, op.feed_dims, BoundOf(plan, name)}});
    } else if (op.kind == PlannedKind::kFetch) {
      fetches.push_back(&op);
    }
  }
  std::stable_sort(feeds.begin(), feeds.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [col, spec] : feeds) plan.feeds.push_back(std::move(spec));
  if (feeds.empty()) {
    for (const auto& desc : program.root().desc().vars()) {
      const oldir::Var var(&desc);
      const std::optional<oldir::proto::VarType::Type> type = var.dtype();
      if (!var.need_check_feed() || var.persistable() || !type) continue;
      const std::optional<DType> dtype = oldir::DTypeFromVarType(*type);
      if (!dtype) continue;
      plan.feeds.push_back(FeedSpec{var.name(), *dtype, var.dims(), BoundOf(plan, var.name())});
      plan.feeds_by_name = true;
    }
  }
  std::stable_sort(fetches.begin(), fetches.end(),
                   [](const PlannedOp* a, const PlannedOp* b) { return a->col < b->col; });
  for (size_t i = 0; i < fetches.size(); ++i) {
    if (i > 0 && fetches[i]->col == fetches[i - 1]->col) {
      return Status(StatusCode::kInvalid, fetches[i]->location,
                    fmt::format("fetch column {} is also written by op {}", fetches[i]->col,
                                fetches[i - 1]->index));
    }
    plan.fetches.push_back(fetches[i]->inputs[0].name);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LegacyPlan> PlanLegacyProgram(const oldir::Program& program, const std::string& file,
                                       bool multi_rank) {
  if (program.num_blocks() == 0) {
    return Status(StatusCode::kInvalid, Location::File(file), "the program has no blocks");
  }
  // The executor runs a sub-block by recursing into it: a cycle of sub-blocks or a nesting past
  // the bound must be refused before, not end in a stack overflow.
  IRM_RETURN_IF_ERROR(oldir::RequireWellNestedBlocks(program, file));
  LegacyPlan plan;
  plan.blocks.resize(static_cast<size_t>(program.num_blocks()));
  for (int b = 0; b < program.num_blocks(); ++b) {
    const oldir::Block block = program.block(b);
    for (int i = 0; i < block.num_ops(); ++i) {
      IRM_ASSIGN_OR_RETURN(PlannedOp op, OpPlanner(program, block, i, file, multi_rank).Plan());
      plan.blocks[static_cast<size_t>(b)].push_back(std::move(op));
    }
  }
  IRM_RETURN_IF_ERROR(CollectFeedsAndFetches(program, plan));
  return plan;
}

}  // namespace irm::rt
