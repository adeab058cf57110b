// Paddle's legacy gradient-merge pass (auto_parallel_gradient_merge_pass, old IR: `parse_program`
// in python/paddle/distributed/passes/auto_parallel_gradient_merge.py): a serial training program
// whose optimizer ops are appended becomes one that accumulates every parameter gradient into a
// persistable `<param>@GRAD@MERGE` buffer on each executor step and runs the optimizer, on the
// buffers, only every k-th step, inside a `conditional_block`. Running the merged program k times
// on micro-batches b_1..b_k therefore updates the parameters as one serial step on their
// concatenation would (with `avg`, for equal micro-batch sizes and a loss that averages rows).
#pragma once

#include <string>

#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The suffix Paddle's parse_program gives each merge buffer: `<param>@GRAD@MERGE`.
inline constexpr const char* kGradientMergeSuffix = "@GRAD@MERGE";
// The step counter's persistable CPU vars (int32 [1], the condition bool [1]).
inline constexpr const char* kGradientMergeK = "gradient_merge_k";
inline constexpr const char* kGradientMergeZero = "gradient_merge_zero";
inline constexpr const char* kGradientMergeStep = "gradient_merge_step";
inline constexpr const char* kGradientMergeCond = "gradient_merge_cond";

// The pass's attributes (Paddle's strategy `gradient_merge.{k_steps, avg}`).
struct GradientMergeOptions {
  int k_steps = 1;   // executor steps merged into one update (>= 1)
  bool avg = true;   // scale the merged gradients by 1/k_steps before the optimizer
  std::string file;  // names the main program in diagnostics
};

// Rewrites `main` (and adds the buffers' and counters' initialisers to `startup`) in place:
//  - every optimize-role op of the root block moves into a new sub-block;
//  - per parameter with a gradient (`<param>@GRAD`, written by a backward-role op), a persistable
//    `<param>@GRAD@MERGE` of the gradient's dtype and dims, zero-filled in startup, and
//    `elementwise_add(X=merge, Y=grad) -> merge` right after the gradient's last producer;
//  - the step counter (backward role, on the CPU): `increment`, `elementwise_mod` by k and
//    `equal` to zero into `gradient_merge_cond`;
//  - an optimize-role `conditional_block` on that condition whose sub-block holds the 1/k `scale`
//    of each buffer (with avg), the optimizer ops reading and writing the buffers instead of the
//    gradients, and a `set_value` of 0 into each buffer.
// The executor's fetch ops, when the program ends with them, stay last. On error neither program
// is changed: kInvalidArgument for k_steps < 1; kInvalid, located in the main program, for one
// without optimize-role ops or without a parameter gradient, or declaring a var the pass adds.
Status ApplyGradientMerge(Program& main, Program& startup, const GradientMergeOptions& options);

}  // namespace irm::oldir::passes
