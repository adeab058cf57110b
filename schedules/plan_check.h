// A plan's job list checked against its micro-batch count before anything runs it: each
// micro-batch's forward, backward (or its backward_b and backward_w halves), recv_forward and
// send_backward exactly once per chunk, and the once-per-step jobs (optimizer) once.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "schedules/paddle_schedule.h"

namespace irm::schedules {

// The rule, read off Paddle's plans (paddle_schedule.h):
//  - the plan has at least one job, and every micro-batch id is in 0..micro_batches-1;
//  - per-micro-batch job types (forward, backward, backward_b, backward_w, recv_forward,
//    send_backward, each with or without a chunk id) run every micro-batch exactly once per
//    chunk; `backward` is the union of `backward_b` (input gradient) and `backward_w` (weight
//    gradient), so ZB-H1's mix of whole and split backwards counts each half once;
//  - `optimizer` (and any other type that appears exactly once, such as the former "lr" job) runs
//    once per step; any other type that appears more than once is per-micro-batch.
// The first violation is a kInvalid located at `where` with the job in `detail`
// ("job 7 (forward, micro-batch 3)"); a micro-batch no job runs names the job type instead
// ("job type backward1"). micro_batches < 1 is kInvalidArgument.
Status CheckJobList(const std::vector<Job>& jobs, int micro_batches, const Location& where);

}  // namespace irm::schedules
