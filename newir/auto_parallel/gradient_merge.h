// Gradient merge on a new-IR training program, in the form of Paddle's PIR pass
// (python/paddle/distributed/passes/auto_parallel_gradient_merge.py: `_pir_parse_program`,
// `_pir_append_gradient_merge_backward_op`, `_pir_append_scale_op`): every gradient the
// optimizer reads is added in place into a persistable `<param>@GRAD@MERGE` buffer right after
// the op that makes it, and the optimizer runs on the buffers, each one scaled by 1/k just before
// its optimizer op (with avg), and zeroes them afterwards.
//
// Paddle's PIR pass leaves the optimizer ungated: its pipeline plan runs the optimizer job once
// per k backward jobs. A plain executor runs the whole program every step, so here the optimizer
// ops, the scales and the zeroing sit in the true region of a `pd_op.if` on a step counter
// (`step = (step + 1) % k; step == 0`), as the legacy pass's conditional block does
// (oldir/passes/gradient_merge.h). Running the program k times on micro-batches b_1..b_k
// therefore updates the parameters as one step of the legacy merged program does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/builder.h"
#include "newir/program.h"

namespace irm::newir {

// The suffix of a merge buffer's name (Paddle: `param.name + "@GRAD@MERGE"`).
inline constexpr const char* kGradientMergeBufferSuffix = "@GRAD@MERGE";
// The step counter: a persistable int32 [1], zero in startup, on the CPU.
inline constexpr const char* kGradientMergeStepName = "gradient_merge_step";

// Faults a test may switch on to show that a comparison catches a broken pass. Never for use
// outside tests.
enum class GradientMergeFault {
  kNone,
  kScaleByKPlusOne,  // the merged gradients are scaled by 1/(k+1) instead of 1/k
  kDropIf,           // no pd_op.if: the optimizer runs on every step
};
// "", "scale-by-k-plus-1", "drop-if": the pass option's spelling.
StatusOr<GradientMergeFault> GradientMergeFaultFromName(std::string_view name);

struct GradientMergeOptions {
  int64_t k_steps = 1;  // Paddle's strategy gradient_merge.k_steps: steps per update (>= 1)
  bool avg = true;      // gradient_merge.avg: scale the merged gradients by 1/k_steps
  GradientMergeFault fault = GradientMergeFault::kNone;  // test-only
};

struct GradientMergeResult {
  // The buffers, in the order of the optimizer ops that read them.
  std::vector<std::string> buffers;
  size_t optimizer_ops = 0;  // ops moved into the pd_op.if (optimize role)
};

// Rewrites `main` in place. The optimizer is every optimize-role op of the top block, and every
// op without op_role that only those read (the communication a reshard lowering puts before an
// optimizer op, as the data-parallel all-reduce of a gradient): Paddle's passes create a reshard
// under its consumer's role (static/pir_pass.py: pir_op_role_guard(op.op_role)), so with data
// parallelism the buffers accumulate each replica's own gradient and the all-reduce runs once per
// update, on the merged buffer.
//  - per gradient (an operand of an optimize-role op made by a backward-role op of the top
//    block): a `builtin.parameter <param>@GRAD@MERGE` of the gradient's type, `<param>` the
//    parameter the optimizer op updates (its operand 0), and `pd_op.add_(buffer, grad)` right
//    after the gradient's producer, with the producer's op_role and `grad_merge_add: true`; the
//    optimize-role readers of the gradient read the buffer instead;
//  - the counter (backward role) before the first optimize-role op: `increment_` of
//    `gradient_merge_step`, `remainder_` by k, `equal` to 0;
//  - a `pd_op.if` (optimize role) on that condition, without results, whose true region holds
//    the optimize-role ops in their order, each `adam*`/`sgd*` op preceded by the 1/k `scale_`
//    of the buffer it reads (with avg; with no such op, every buffer is scaled first), then one
//    `set_value_with_tensor_(buffer, full([1], 0))` per buffer; its false region only yields.
// Errors, located, leave `main` unchanged: k_steps < 1 (kInvalidArgument); no optimize-role op,
// no gradient among their operands, a gradient of dynamic dims, a pass already applied (a
// buffer or the counter declared) and an optimize-role op's result read by an op that stays
// outside the pd_op.if (kInvalid).
StatusOr<GradientMergeResult> ApplyGradientMerge(Program& main,
                                                 const GradientMergeOptions& options);

// Appends to `startup` the initialisers of what ApplyGradientMerge added to `main`: per buffer
// and for the counter, `pd_op.full` 0 of its type and `builtin.set_parameter` (Paddle:
// `paddle.full(local_shape, 0, dtype)` made persistable in the startup block). Parameters the
// startup already sets are left alone. Fails (kInvalid) on a buffer of dynamic dims.
Status AddGradientMergeInitializers(Program& startup, const Program& main);

// Sets `builder` after the leading builtin.parameter ops of `top` (at its start when there are
// none): where a pass's merge buffers join the program's parameters.
void SetInsertionPointAfterParameters(Builder& builder, Block& top);

}  // namespace irm::newir
