// The legacy control-flow ops the executor runs itself: conditional_block
// (paddle/fluid/operators/controlflow/conditional_block_op.cc) and while (while_op.cc). Each runs
// its sub-block in a fresh child scope of the scope it runs in — one per run of the body, as
// Paddle's step scopes — so the body's own vars vanish with it while its writes to vars of the
// enclosing blocks stay (LegacyExecutor::Write). A while loop runs as long as its condition holds:
// a legacy program may loop long, and the executor sets no limit of its own.
#include <fmt/format.h>

#include "reference_runtime/legacy_executor.h"

namespace irm::rt {

StatusOr<bool> LegacyExecutor::ScalarCondition(const PlannedOp& op, const PlannedVar& var,
                                               const RunState& state) const {
  IRM_ASSIGN_OR_RETURN(const Tensor* cond, Read(op, var, state));
  if (cond->dtype() != DType::kBool || cond->numel() != 1) {
    return LegacyOpError(
        op, StatusCode::kInvalid,
        fmt::format("condition '{}' is {}, not a bool scalar", var.name, cond->Describe()),
        var.name);
  }
  return cond->data<bool>()[0];
}

Status LegacyExecutor::RunSubBlock(const PlannedOp& op, RunState& state) const {
  Scope body(&state.scope());
  Status status = RunBlock(op.sub_block, body, state);
  if (!status.ok()) {
    status.AddNote(fmt::format("in block {}, run by block {}, op {} ({})", op.sub_block, op.block,
                               op.index, op.type));
  }
  return status;
}

Status LegacyExecutor::RunConditionalBlock(const PlannedOp& op, RunState& state) const {
  bool run = true;
  if (op.scalar_condition) {
    IRM_ASSIGN_OR_RETURN(run, ScalarCondition(op, op.conditions[0], state));
  } else {
    // Without is_scalar_condition the block runs when every Input var holds elements.
    for (const PlannedVar& var : op.conditions) {
      IRM_ASSIGN_OR_RETURN(const Tensor* input, Read(op, var, state));
      run = run && input->numel() != 0;
    }
  }
  if (!run) return Status::Ok();
  return RunSubBlock(op, state);
}

Status LegacyExecutor::RunWhile(const PlannedOp& op, RunState& state) const {
  while (true) {
    IRM_ASSIGN_OR_RETURN(bool holds, ScalarCondition(op, op.conditions[0], state));
    if (!holds) return Status::Ok();
    IRM_RETURN_IF_ERROR(RunSubBlock(op, state));
  }
}

}  // namespace irm::rt
