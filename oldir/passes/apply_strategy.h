// A strategy applied to a serial training program, pass after pass in the order Paddle's legacy
// static auto-parallel applied them (python/paddle/distributed/auto_parallel/static/
// parallelizer_v2.py): completion and partition give every rank its model-parallel shard and its
// pipeline stage (tensor_parallel.h, then pipeline_stages.h: reshard's send/recv between stages),
// the data-parallel gradient synchronisation is inserted into each stage's backward
// (data_parallel.h), and in `_apply_post_optimization` the pipeline scheduler splits each stage
// into its jobs with the micro-batches' accumulation (pipeline_jobs.h), or, without a pipeline,
// the gradient-merge pass (gradient_merge.h) runs on every rank's programs. With
// `dp_optimization.gradient_sync_after_accumulate` false (Paddle's default, and the only value
// implemented here) the all-reduce stays in backward and runs on every micro-step's gradient; the
// merge buffers then accumulate gradients that are already synchronised.
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/placements.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"
#include "schedules/paddle_schedule.h"

namespace irm::oldir::passes {

struct ApplyStrategyOptions {
  // Rows of one pipeline micro-batch (each replica's rows / accumulate_steps): the static batch
  // dim of the activations the stages send each other.
  int64_t micro_batch_size = 1;
  // The parameters' model-parallel placements; unset: the zoo's Megatron placements
  // (MegatronPlacements). Used only with mp_degree > 1.
  std::optional<Placements> placements;
  // The form of a pipeline's job programs and plans (SplitPipelineJobs): kPir splits 1F1B and VPP
  // stages into recv_forward / send_backward jobs as Paddle's PIR passes do.
  schedules::JobListIr job_lists = schedules::JobListIr::kLegacy;
};

// The per-rank programs of `strategy` applied to the serial (startup, main), ranks laid out as
// Topology does (dp outermost, mp innermost), rings numbered by a RingRegistry asked rank by rank:
// for each rank its mp group, then its pipeline neighbours, then its dp group. dp_degree = mp =
// pp = 1 returns the serial programs (with gradient merge when asked). One optimizer update takes
// gradient_merge.k_steps executor steps with gradient merge, one step (of accumulate_steps
// micro-batches) with a pipeline. The passes' errors, located; nothing is returned on error.
StatusOr<DistributedPrograms> ApplyStrategy(const Program& startup, const Program& main,
                                            const Strategy& strategy,
                                            const ApplyStrategyOptions& options = {});

}  // namespace irm::oldir::passes
