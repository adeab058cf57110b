// Isolated re-execution (docs/parity.md, after XLA's --isolate_instructions): the suspect new-IR op
// is copied into a program of its own — each operand a pd_op.data fed the tensor the legacy run
// read under the operand's logical name (operands made by operand-free ops without a legacy name,
// such as a pd_op.full scale factor, are copied along), its attributes as they are — and run on the
// PirExecutor. If its outputs still differ from the legacy op's, the op itself computes
// differently (a translation or a binding is wrong); if not, it inherited drift from its inputs.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "diff_tests/parity_report.h"
#include "newir/operation.h"
#include "reference_runtime/executor.h"

namespace irm::diff {

// The tensor the legacy run held under a logical name when the suspect op ran; null if unknown.
using LegacyValue = std::function<const rt::Tensor*(const std::string& name)>;

// Runs `op` alone with its operands from `inputs` and compares each result that has a legacy name
// with `outputs(name)` under `tier`. A report with Verdict::kNotRun says why it could not run (an
// operand without a legacy name or a legacy value, an op with regions, a failure of the run).
IsolationReport IsolateNewOp(const newir::Operation& op, const LegacyValue& inputs,
                             const LegacyValue& outputs, Tier tier,
                             const rt::ExecutorOptions& options);

// The legacy var name recorded for result `result` of `op`; empty when none.
std::string LegacyNameOf(const newir::Operation& op, size_t result);

}  // namespace irm::diff
