// Gradient accumulation across the micro-batches of a pipeline stage, in the form gradient merge
// takes under a pipeline plan (Paddle forces gradient_merge with k_steps = accumulate_steps and
// avg under pipelining: parallelizer_v2.py, _apply_post_optimization; the buffers and their
// in-place accumulation of auto_parallel_gradient_merge.py, _append_gradient_merge_backward_op;
// the update as its PIR form writes it, _pir_parse_program: no conditional_block, because the
// plan runs the optimizer job once per step, after every micro-batch's backward).
#pragma once

#include <string>

#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// Rewrites one stage's programs in place: for each (parameter, gradient) an optimizer op of the
// root block updates,
//  - a persistable `<param>@GRAD@MERGE` of the gradient's dtype and dims, zero-filled in startup;
//  - `elementwise_add(X=merge, Y=grad) -> merge` (backward role, namescope
//    /auto_parallel/gradient_merge, the writer's op_device and chunk_id) right after the last
//    backward op writing the gradient — after the data-parallel all-reduce and scale when a
//    caller inserted them — so that every micro-batch's backward adds its gradient;
//  - the optimizer ops read (and write) the buffers instead of the gradients, without
//    op_role_var; before the first of them, `scale(merge, 1/micro_batches)` in place per buffer
//    (with `avg`); after the last, `set_value(merge, 0)` per buffer (optimize role).
// Errors (neither program changed): kInvalidArgument for micro_batches < 1; kInvalid located in
// the main program for one without an optimizer op, a gradient no backward op writes, or a
// buffer name the program already declares.
Status AppendPipelineAccumulation(Program& main, Program& startup, int micro_batches, bool avg,
                                  const std::string& file = "");

}  // namespace irm::oldir::passes
