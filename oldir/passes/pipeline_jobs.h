// The job split, the second half of the legacy pipeline pass: one stage's programs
// (pipeline_stages.h, possibly with the data-parallel sync a caller inserted) become the job
// programs and plan Paddle's pipeline_scheduler passes made of them
// (python/paddle/distributed/passes/pipeline_scheduler_pass/, pass_utils.py): the micro-batches'
// gradient accumulation (pipeline_accumulation.h), the zero-bubble matmul split
// (pipeline_zero_bubble.h), the send/recv stream syncs (_insert_sync_for_fthenb_1f1b, or
// _overlap_send_recv with enable_send_recv_overlap), the split by op role and chunk into
// forward / backward / optimizer programs (forward<c> / backward<c> for VPP; backward_b /
// backward_w beside backward for ZBH1), the job list of schedules/paddle_schedule.h, and the
// jobs' skip_gc_vars (set_skip_gc_vars).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/pipeline_stages.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The stage's RankPrograms: `startup` with the accumulation buffers' zero fills, `main` the stage
// program after accumulation, matmul split and syncs (what the jobs were cut from), `jobs` by
// Paddle's type names (each program declaring only the vars its ops use), `plan` = MakeJobList
// for the schedule (legacy IR) with micro_batches = pipeline.accumulate_steps. Feed ops go to the
// forward job (forward0 under VPP); a fetch to the first job program using its var. An op
// without chunk_id (one a caller inserted) takes the chunk of the op before it.
// Errors: ParsePaddleMode's and ValidatePaddleScheduleSpec's (kInvalidArgument: m < p for 1F1B,
// ...); kInvalidArgument for vpp_degree other than the stages' (a VPP split of stages made for
// another chunk count, or stages with chunks under a schedule without them: "vpp_degree > 1
// needs schedule_mode VPP"), for split_backward under VPP and for ZBVPP (not supported yet);
// AppendPipelineAccumulation's and SplitMatmulGradToMatmul's.
StatusOr<RankPrograms> SplitPipelineJobs(const StagePrograms& stage,
                                         const PipelineStrategy& pipeline);

// Paddle's skip_gc_vars for each job of `plan` (set_skip_gc_vars, pass_utils.py): a job's
// required vars (the non-persistable vars its program's ops read or write, except through
// c_sync_comm_stream, conditional_block, data, nop and while, and except the inputs of slots that
// need no buffer) that a later job of the same micro-batch also requires, sorted. The bundle's
// plan.json has no place for them (docs/passes.md). kInvalidArgument for a job without a
// program or a micro-batch outside [0, micro_batches); kInternal when a backward or backward_w
// job would keep a var (Paddle asserts that it never does).
StatusOr<std::vector<std::vector<std::string>>> PipelineSkipGcVars(
    const std::map<std::string, Program>& jobs, const std::vector<PlanJob>& plan,
    int micro_batches);

}  // namespace irm::oldir::passes
