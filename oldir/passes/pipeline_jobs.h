// The job split, the second half of the legacy pipeline pass: one stage's programs
// (pipeline_stages.h, possibly with the data-parallel sync a caller inserted) become the job
// programs and plan Paddle's pipeline_scheduler passes made of them
// (python/paddle/distributed/passes/pipeline_scheduler_pass/, pass_utils.py): the micro-batches'
// gradient accumulation (pipeline_accumulation.h), the zero-bubble matmul split
// (pipeline_zero_bubble.h), the send/recv stream syncs (_insert_sync_for_fthenb_1f1b, or
// _overlap_send_recv with enable_send_recv_overlap), the split by op role and chunk into
// forward / backward / optimizer programs (forward<c> / backward<c> for VPP; backward_b /
// backward_w beside backward for ZBH1), the job list of schedules/paddle_schedule.h, and the
// jobs' skip_gc_vars (set_skip_gc_vars). In the PIR form the 1F1B and VPP stages are split
// further, as Paddle's PIR passes split them since PR #70360 (1F1B) and #71104 (VPP): the
// forward's recv_v2 into recv_forward<c>, the backward's send_v2 into send_backward<c>.
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
#include "schedules/paddle_schedule.h"

namespace irm::oldir::passes {

// The stage's RankPrograms: `startup` with the accumulation buffers' zero fills, `main` the stage
// program after accumulation, matmul split and syncs (what the jobs were cut from), `jobs` by
// Paddle's type names (each program declaring only the vars its ops use), `plan` = MakeJobList
// for the schedule in the form `job_lists` names with micro_batches = pipeline.accumulate_steps
// (kPir: the recv_forward/send_backward split, pir_split_recv_send). Feed ops go to the
// forward job (forward0 under VPP); a fetch to the first job program using its var. An op
// without chunk_id (one a caller inserted) takes the chunk of the op before it.
// Errors: ParsePaddleMode's and ValidatePaddleScheduleSpec's (kInvalidArgument: m < p for 1F1B,
// ...); kInvalidArgument for vpp_degree other than the stages' (a VPP split of stages made for
// another chunk count, or stages with chunks under a schedule without them: "vpp_degree > 1
// needs schedule_mode VPP"), for split_backward under VPP and for ZBVPP (not supported yet);
// AppendPipelineAccumulation's and SplitMatmulGradToMatmul's.
// kPir (Paddle's pir_pass.py::pipeline_pass and the PIR halves of pipeline_1f1b.py and
// pipeline_vpp.py): FThenB's jobs are the legacy ones; under 1F1B and VPP every forward-role
// recv_v2 moves into recv_forward (recv_forward<c>) and every backward-role send_v2, with the
// c_sync_calc_stream that waits for its gradient right before it, into send_backward
// (send_backward<c>); the program order is recv_forward, forward, backward, send_backward,
// optimizer (VPP: recv_forward<c>, forward<c> for c ascending, backward<c>, send_backward<c> for c
// descending, optimizer). kInvalidArgument for Eager1F1B, ZBH1 and ZBVPP (pir_pass.py allows
// FThenB, 1F1B and VPP only) and for 1F1B or VPP with enable_send_recv_overlap (the PIR passes
// assert it is off), located at the strategy's pipeline.
StatusOr<RankPrograms> SplitPipelineJobs(
    const StagePrograms& stage, const PipelineStrategy& pipeline,
    schedules::JobListIr job_lists = schedules::JobListIr::kLegacy);

// Paddle's skip_gc_vars for each job of `plan` (set_skip_gc_vars, pass_utils.py): a job's
// required vars (the non-persistable vars its program's ops read or write, except through
// c_sync_comm_stream, conditional_block, data, nop and while, and except the inputs of slots that
// need no buffer) that a later job of the same micro-batch also requires, sorted. The bundle's
// plan.json has no place for them (docs/passes.md). kInvalidArgument for a job without a
// program or a micro-batch outside [0, micro_batches); kInternal when a backward or backward_w
// job would keep a var (Paddle asserts that it never does) — send_backward and backward_w in a
// plan with recv_forward/send_backward jobs, where backward hands its gradient to send_backward.
StatusOr<std::vector<std::vector<std::string>>> PipelineSkipGcVars(
    const std::map<std::string, Program>& jobs, const std::vector<PlanJob>& plan,
    int micro_batches);

}  // namespace irm::oldir::passes
