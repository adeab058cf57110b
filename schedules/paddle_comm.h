// Paddle job lists with their communication (comm_program.h): every stage's jobs turned into one
// rank's steps, with the send/recv each job type does in a standard pipeline, so the simulator can
// prove a Paddle schedule free of deadlock or name the cycle it hangs in.
//
// The pipeline: rank s holds chunk c's virtual stage c·p + s (VPP chunks wrap around: stage p-1 of
// chunk c feeds stage 0 of chunk c+1). ZBVPP's chunks form a V instead (Paddle's VScheduleCreator
// schedules odd chunks from stage p-1 down to 0), so there rank s holds stage c·p + s of an even
// chunk and c·p + (p-1-s) of an odd one, and the turn of the V stays on one rank. What each job
// does:
//   forward<c>      recv activation from the previous virtual stage, compute, send to the next
//                   (no recv where the stage's list has recv_forward jobs: PIR's split)
//   recv_forward<c> the recv alone
//   backward<c>     recv gradient from the next virtual stage, compute, send to the previous
//                   (no send where the list has send_backward jobs)
//   send_backward<c> the send alone
//   backward_b<c>   as backward; backward_w<c> compute only
//   optimizer, anything else: compute only
// No message travels between two virtual stages on one rank.
#pragma once

#include <vector>

#include "common/status.h"
#include "schedules/comm_program.h"
#include "schedules/paddle_schedule.h"

namespace irm::schedules {

// Which process groups carry the pipeline's messages. Paddle's reshard makes one group per
// direction (PR #68141; the corpus's 2-stage bundle: activations on ring 1, gradients on ring 2).
enum class PaddleCommGroups { kPerDirection, kShared };

struct PaddleCommOptions {
  PaddleCommGroups groups = PaddleCommGroups::kPerDirection;
  int forward_group = 1;   // kPerDirection: the ring activations travel on
  int backward_group = 2;  // kPerDirection: the ring gradients travel on
  int shared_group = 1;    // kShared: the one ring for both
};

// Every stage's job list (MakeJobLists) with its communication; rank = stage. Steps carry
// `job`, `micro_batch`, `chunk` (-1 without chunks), `op` ("recv_v2" / "send_v2", "pd_op.…" in
// PIR), short labels ("F2", "B1.0" = chunk 1 micro-batch 0, "Bb0", "Bw0", "OPT",
// "recv_forward2", "F2:send") and unit compute costs.
StatusOr<CommProgram> PaddleCommProgram(const PaddleScheduleSpec& spec,
                                        const PaddleCommOptions& options = {});

// The same for job lists from elsewhere (a bundle's plan.json files, one per stage). `vpp` is the
// number of chunks (a job type without a chunk id is chunk 0 and needs vpp == 1); `v_shape`
// selects ZBVPP's V layout. kInvalid, located at the job, for a job whose chunk is out of range.
StatusOr<CommProgram> JobListsCommProgram(const std::vector<std::vector<Job>>& stage_jobs, int vpp,
                                          bool v_shape, JobListIr ir,
                                          const PaddleCommOptions& options = {});

}  // namespace irm::schedules
