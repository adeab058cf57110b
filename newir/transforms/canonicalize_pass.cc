// The `canonicalize` pass: asks each op's fold hook (its op table row's OpInfo::fold, as MLIR's
// canonicalizer calls each op's `fold`) what the op computes, applies what the hook found where it
// is safe, then erases the ops that became dead (dce's rules, limited to the producers of what was
// erased or no longer read: dead code that was there before stays for `dce`). The pd_op folds
// (scale by 1, cast to the same dtype, reshape to the same shape, assign and assign chains) are in
// newir/pd_op_folds.h; a new fold is a hook on a row, not a change here.
// A hook's result replacing result 0 needs the replacement's type to equal the result's exactly
// (so the program stays verifiable), the op's other results unused, the op not in place, its
// op_dist_attr (when set) giving the replacement's operand and the result the same distribution,
// and none of these: a persistable result, a result read by pd_op.fetch or builtin.shadow_output
// (the op is what names the output), a result or the replacement read by an in-place or
// unregistered op (the in-place op would then write the original, or see it written). A hook's
// new operand needs the same type as the operand it replaces, neither read by a writer, and the
// old operand's producer laying both out alike.
// Fold-and-erase rounds repeat until one changes nothing, at most max-iterations times.
#include <fmt/format.h>

#include <unordered_set>
#include <vector>

#include "newir/op_info.h"
#include "newir/rewriter.h"
#include "newir/transforms/passes.h"

namespace irm::newir {
namespace {

// Whether op_dist_attr (when set) lays out the operand `value` and result `result_index` alike. A
// value that is not an operand cannot be compared: not alike.
bool DistAttrsAgree(const Operation& op, const Value& value, size_t result_index) {
  const OperationDistAttr* dist = op.attribute("op_dist_attr").AsOperationDist();
  if (dist == nullptr || dist->operands.empty() || dist->results.empty()) return true;
  for (size_t i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i) != &value) continue;
    if (i >= dist->operands.size() || result_index >= dist->results.size()) return true;
    return dist->operands[i] == dist->results[result_index];
  }
  return false;
}

bool IsPersistableResult(const Operation& op, size_t index) {
  const AttributeSpan* flags = op.attribute("persistable").AsArray();
  if (flags == nullptr || index >= flags->size()) return false;
  const bool* flag = (*flags)[index].AsBool();
  return flag != nullptr && *flag;
}

bool WritesOrUnknown(const Operation& reader) {
  return reader.info() == nullptr || reader.info()->inplace;
}

// Whether an op other than `except` that may write its inputs (in place, or unregistered) reads
// `value`.
bool ReadByWriter(const Value& value, const Operation* except) {
  for (OpOperand* use = value.first_use(); use != nullptr; use = use->next_use()) {
    if (use->owner() != except && WritesOrUnknown(*use->owner())) return true;
  }
  return false;
}

bool ReadByOutput(const Value& value) {
  for (OpOperand* use = value.first_use(); use != nullptr; use = use->next_use()) {
    const std::string& reader = use->owner()->name();
    if (reader == "pd_op.fetch" || reader == "builtin.shadow_output") return true;
  }
  return false;
}

bool OtherResultsUnused(const Operation& op) {
  for (size_t i = 1; i < op.num_results(); ++i) {
    if (!op.result(i)->use_empty()) return false;
  }
  return true;
}

// Whether the readers of op's result 0 may read `replacement` instead, op aside.
bool MayReplaceResult(const Operation& op, const Value& replacement) {
  if (op.num_results() == 0 || replacement.type() != op.result(0)->type() ||
      !OtherResultsUnused(op) || !DistAttrsAgree(op, replacement, 0)) {
    return false;
  }
  const Value& result = *op.result(0);
  return !IsPersistableResult(op, 0) && !ReadByOutput(result) && !ReadByWriter(result, nullptr) &&
         !ReadByWriter(replacement, &op);
}

// Whether op may read `value` at operand `index` instead of what it reads there.
bool MayReadInstead(const Operation& op, size_t index, const Value& value) {
  const Value* old = index < op.num_operands() ? op.operand(index) : nullptr;
  if (old == nullptr || old->type() != value.type() || ReadByWriter(*old, nullptr)) return false;
  const Operation* producer = old->defining_op();
  return !ReadByWriter(value, producer) &&
         (producer == nullptr || DistAttrsAgree(*producer, value, old->index()));
}

// The op that defines `value`, for the erasure of what became dead; nothing for block arguments.
void NoteProducer(const Value* value, std::unordered_set<const Operation*>& became_dead) {
  if (value != nullptr && value->defining_op() != nullptr) became_dead.insert(value->defining_op());
}

class CanonicalizePass : public Pass {
 public:
  CanonicalizePass(int64_t max_iterations, bool test_convergence)
      : max_iterations_(max_iterations), test_convergence_(test_convergence) {}

  std::string_view name() const override { return "canonicalize"; }

  StatusOr<IrChange> Run(Program& program) override {
    IrChange change = IrChange::kUnchanged;
    for (int64_t round = 0; round < max_iterations_; ++round) {
      IRM_ASSIGN_OR_RETURN(bool changed, RunRound(program));
      if (!changed) return change;
      change = IrChange::kChanged;
    }
    if (test_convergence_) {
      return Status(StatusCode::kInternal, Location{},
                    fmt::format("canonicalize changed the IR in each of its {} iteration(s) and "
                                "did not reach a fixpoint",
                                max_iterations_));
    }
    return change;
  }

 private:
  // One sweep of folds over every op, then the erasure of what became dead.
  StatusOr<bool> RunRound(Program& program) {
    std::vector<Operation*> ops;
    program.module().Walk([&](Operation* op) {
      if (op != &program.module()) ops.push_back(op);
    });
    std::unordered_set<const Operation*> became_dead;
    bool changed = false;
    // Only the op at hand is erased in the loop, so the later pointers in `ops` stay valid.
    for (Operation* op : ops) {
      const OpInfo* info = op->info();
      if (info == nullptr || info->fold == nullptr || info->inplace) continue;
      OpFoldResult fold = info->fold(*op);
      if (fold.operand_value != nullptr &&
          MayReadInstead(*op, fold.operand_index, *fold.operand_value)) {
        NoteProducer(op->operand(fold.operand_index), became_dead);
        op->SetOperand(fold.operand_index, fold.operand_value);
        changed = true;
        fold = info->fold(*op);  // the op now reads something else: ask again
      }
      if (fold.result == nullptr || !MayReplaceResult(*op, *fold.result)) continue;
      for (size_t i = 0; i < op->num_operands(); ++i) NoteProducer(op->operand(i), became_dead);
      IRM_RETURN_IF_ERROR(ReplaceOp(op, OpResultsReplacement(*op, fold.result)));
      changed = true;
    }
    IRM_ASSIGN_OR_RETURN(size_t erased, EraseDeadOps(program.block(), &became_dead));
    return changed || erased > 0;
  }

  // `replacement` for result 0; the other results are unused and go with the op.
  static std::vector<Value*> OpResultsReplacement(const Operation& op, Value* replacement) {
    std::vector<Value*> values(op.num_results(), nullptr);
    values[0] = replacement;
    return values;
  }

  int64_t max_iterations_;
  bool test_convergence_;
};

}  // namespace

Status RegisterCanonicalizePass(PassRegistry& registry) {
  return registry.Register(
      {.name = "canonicalize",
       .summary = "folds ops that pass their input through unchanged (scale by 1, cast to the same "
                  "dtype, reshape to the same shape, assign) and erases what became dead",
       .options = {{.name = "max-iterations",
                    .default_value = int64_t{10},
                    .help = "fold-and-erase rounds at most",
                    .min = 1},
                   {.name = "test-convergence",
                    .default_value = false,
                    .help = "fail when the last round still changed the IR"}},
       .factory = [](const PassOptions& options) {
         return std::make_unique<CanonicalizePass>(options.GetInt("max-iterations"),
                                                   options.GetBool("test-convergence"));
       }});
}

}  // namespace irm::newir
