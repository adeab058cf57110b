// The legacy pipeline pass as one call, for a pipeline-only strategy (dp_degree = mp_degree = 1):
// the stage partition (pipeline_stages.h) and each stage's job split (pipeline_jobs.h), with the
// ranks and p2p rings of Paddle's hybrid topology (distributed_programs.h). A hybrid strategy
// runs the two halves itself, inserting the data-parallel sync in between.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"
#include "schedules/paddle_schedule.h"

namespace irm::oldir::passes {

// pp_degree ranks, rank s running stage s's jobs; micro_batches = pipeline.accumulate_steps. The
// rings are numbered in the order the partition first asks for each (from, to) pair, as a
// RingRegistry numbers them. `micro_batch_size` is the rows of one micro-batch (the static
// shape recv_v2 declares). `job_lists` picks the legacy or the PIR form of the stages' jobs
// (SplitPipelineJobs). Errors: kInvalidArgument for a strategy with dp or mp, without
// pipeline.enable, or with pp_degree 1; PartitionStages's and SplitPipelineJobs's.
StatusOr<DistributedPrograms> ApplyPipeline(
    const Program& startup, const Program& main, const Strategy& strategy, int64_t micro_batch_size,
    schedules::JobListIr job_lists = schedules::JobListIr::kLegacy);

}  // namespace irm::oldir::passes
