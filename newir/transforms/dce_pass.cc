// The `dce` pass: dead-code elimination. An op goes when nothing reads its results and it has no
// effect beyond them. What stays although unused, and why:
//   * ops marked side_effect in their table entry: communication (all_reduce, c_allreduce_*,
//     p_send, p_recv, barrier, ...), pd_op.fetch, builtin.shadow_output, builtin.set_parameter,
//     builtin.parameter (an unused parameter is still one of the program's parameters: what it
//     saves and loads must not depend on whether this program reads it) and the program inputs
//     pd_op.data and pd_op.feed (the feed list is part of the program's signature);
//   * in-place ops (inplace: they write their inputs, which other ops may read);
//   * unregistered ops (their effects are unknown);
//   * terminators (cf.yield ends its block);
//   * ops with regions holding an op of the kinds above other than a terminator (a pd_op.if or
//     pd_op.while whose regions only compute values nothing reads does go).
// Random ops (dropout, uniform, gaussian) go when unused: the runtime's generator is keyed by op
// identity, not a shared stream, so erasing one does not change what the others draw.
#include <fmt/format.h>

#include "newir/op_info.h"
#include "newir/rewriter.h"
#include "newir/transforms/passes.h"

namespace irm::newir {
namespace {

// Effects of the op itself, its regions aside.
bool HasOwnEffects(const Operation& op) {
  const OpInfo* info = op.info();
  return info == nullptr || info->side_effect || info->inplace;
}

// Records, into `only`, the producers of the values `op` and the ops nested in it read.
void AddProducersOfOperands(Operation& op, std::unordered_set<const Operation*>& only) {
  op.Walk([&](Operation* nested) {
    for (size_t i = 0; i < nested->num_operands(); ++i) {
      Value* value = nested->operand(i);
      if (value != nullptr && value->defining_op() != nullptr) only.insert(value->defining_op());
    }
  });
}

StatusOr<size_t> EraseDeadOpsIn(Block& block, std::unordered_set<const Operation*>* only) {
  size_t erased = 0;
  Operation* op = block.back();
  while (op != nullptr) {
    Operation* previous = op->prev();
    for (size_t r = 0; r < op->num_regions(); ++r) {
      Region& region = op->region(r);
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        IRM_ASSIGN_OR_RETURN(size_t nested, EraseDeadOpsIn(region.block(b), only));
        erased += nested;
      }
    }
    const bool candidate = only == nullptr || only->contains(op);
    if (candidate && !op->HasUsedResults() && !MustKeepWhenUnused(*op)) {
      if (only != nullptr) AddProducersOfOperands(*op, *only);
      IRM_RETURN_IF_ERROR(EraseOp(op));
      ++erased;
    }
    op = previous;
  }
  return erased;
}

class DcePass : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  StatusOr<IrChange> Run(Program& program) override {
    IRM_ASSIGN_OR_RETURN(size_t erased, EraseDeadOps(program.block()));
    return erased > 0 ? IrChange::kChanged : IrChange::kUnchanged;
  }
};

}  // namespace

bool MustKeepWhenUnused(const Operation& op) {
  if (HasOwnEffects(op) || op.info()->terminator) return true;
  bool nested_effects = false;
  const_cast<Operation&>(op).Walk([&](Operation* nested) {
    if (nested != &op && HasOwnEffects(*nested)) nested_effects = true;
  });
  return nested_effects;
}

StatusOr<size_t> EraseDeadOps(Block& block, std::unordered_set<const Operation*>* only) {
  return EraseDeadOpsIn(block, only);
}

Status RegisterDcePass(PassRegistry& registry) {
  return registry.Register(
      {.name = "dce",
       .summary = "erases ops whose results are unused and that have no side effects",
       .options = {},
       .factory = [](const PassOptions&) { return std::make_unique<DcePass>(); }});
}

}  // namespace irm::newir
