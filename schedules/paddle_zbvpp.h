// ZBVPP's job lists: Paddle's greedy V-schedule creator (pipeline_zero_bubble.py,
// `VScheduleCreator`, used by PipelineZeroBubbleVirtualPipelinePass), which places every stage's
// forward<c>, backward_b<c> and backward_w<c> jobs by simulated time under the pass's
// `program_runtimes` and picks, over its eight fill options, the schedule that ends first.
#pragma once

#include <vector>

#include "common/status.h"
#include "schedules/paddle_schedule.h"

namespace irm::schedules {

// Every stage's ZBVPP list (optimizer last). The spec must have passed
// ValidatePaddleScheduleSpec. Paddle's memory limit is off by default (memory_limit_times = -1:
// no limit, every estimate 0), and with it off memory never changes a decision, so the memory
// checks are left out.
StatusOr<std::vector<std::vector<Job>>> ZbvppJobLists(const PaddleScheduleSpec& spec);

}  // namespace irm::schedules
