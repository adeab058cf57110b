// PyTorch's `_validate_schedule` (torch/distributed/pipelining/schedules.py) for action
// schedules: the check every loaded or generated schedule passes before PyTorch runs or lowers it.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "schedules/action.h"

namespace irm::schedules {

// Checks, in PyTorch's order, and returns the stage -> rank map the schedule implies:
//  - the schedule has exactly `pp` ranks;
//  - walking each rank's steps in order (an OVERLAP_F_B by its parts), every stage is in
//    [0, num_stages) and runs on one rank only (every action counts, communication included);
//    a B or I needs an earlier F of its stage and micro-batch, a W an earlier I;
//  - per stage: F ran for `micro_batches` distinct micro-batches, #I == #W, and
//    #B + (#I + #W) / 2 == micro_batches (distinct micro-batches, as PyTorch counts sets).
// One check PyTorch lacks (its runtime would index out of range): compute micro-batches lie in
// [0, micro_batches). The first failure is a kInvalid diagnostic; a per-step one is located
// "rank R, step S" (step = 0-based index in the rank's list) in `file`.
StatusOr<std::vector<int>> ValidateActionSchedule(const ActionSchedule& schedule, int pp,
                                                  int num_stages, int micro_batches,
                                                  const std::string& file = "");

}  // namespace irm::schedules
