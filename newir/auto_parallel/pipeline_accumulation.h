// Gradient accumulation across a pipeline's micro-batches on one rank's dense new-IR stage
// program, in the form of Paddle's PIR gradient merge under a pipeline plan
// (python/paddle/distributed/passes/auto_parallel_gradient_merge.py `_pir_parse_program`,
// `_pir_append_gradient_merge_backward_op`, `_pir_append_scale_op`; reference/pipelines.md
// §2.2): no pd_op.if, because the plan runs the backward job once per micro-batch and the
// optimizer job once per step. gradient_merge.h is the gated form for a plain executor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// Rewrites `main` in place: per gradient an optimize-role op reads (a result of a backward-role
// op of the top block), a `builtin.parameter <param>@GRAD@MERGE` of its type and
// `pd_op.add_(buffer, grad)` right after its producer (the producer's op_role and chunk_id,
// grad_merge_add true); the optimize-role readers read the accumulated buffer; with `avg`, a
// `scale_(buffer, 1/micro_batches)` right before the first optimize-role op reading it; after the
// last optimize-role op, `set_value_with_tensor_(buffer, full([1], 0))` per buffer. Returns the
// number of buffers. micro_batches 1 leaves `main` alone (0). Errors (nothing changed):
// kInvalidArgument for micro_batches < 1; kInvalid at the op for a gradient of dynamic dims.
// AddGradientMergeInitializers (gradient_merge.h) makes the buffers' initialisers.
StatusOr<size_t> AppendPipelineAccumulation(Program& main, int64_t micro_batches, bool avg);

}  // namespace irm::newir
