// A strategy applied to a serial training program, pass after pass in the order Paddle's legacy
// static auto-parallel applied them (python/paddle/distributed/auto_parallel/static/
// parallelizer_v2.py): the data-parallel gradient synchronisation first (inserted with the
// backward, ApplyDataParallel), then, in `_apply_post_optimization`, the gradient-merge pass
// (auto_parallel_gradient_merge_pass, ApplyGradientMerge) on every rank's programs. With
// `dp_optimization.gradient_sync_after_accumulate` false (Paddle's default, and the only value
// implemented here) the all-reduce stays in backward and runs on every micro-step's gradient;
// the merge buffers then accumulate gradients that are already synchronised.
#pragma once

#include "common/status.h"
#include "oldir/passes/data_parallel.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The per-rank programs of `strategy` applied to the serial (startup, main): data parallelism
// (dp_degree 1: the serial programs), then gradient merge over gradient_merge.k_steps executor
// steps when gradient_merge.enable. One optimizer update then takes k_steps executor steps.
// The passes' errors; kInvalidArgument for what neither pass applies to (tensor or pipeline
// parallelism).
StatusOr<DistributedPrograms> ApplyStrategy(const Program& startup, const Program& main,
                                            const Strategy& strategy);

}  // namespace irm::oldir::passes
