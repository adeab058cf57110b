// A PyTorch action schedule with its communication (action.h; lowered by AddSendRecv in
// action_lower.h, or loaded from a `*_comms.csv`) as the CommProgram the simulator runs
// (simulator.h): every action one step of its rank, in the rank's order, idle slots dropped (the
// simulator decides where a rank waits, as PyTorch's `_simulate_comms_compute` drops them too).
//   - F, I, W, B: a compute step of one tick; an OVERLAP_F_B pair is one compute step.
//   - UNSHARD, RESHARD, REDUCE_GRAD: a compute step too — work local to the rank, with no pipeline
//     peer (their collectives run inside the stage's own group).
//   - SEND_F / RECV_F of stage s, micro-batch m: a send / receive on the channel from the rank of
//     stage s to the rank of stage s + 1 (RECV_F: from s - 1 to s), message "activation stage
//     s -> s+1, micro-batch m"; SEND_B / RECV_B: from the rank of s to that of s - 1 (RECV_B: from
//     s + 1 to s), message "gradient stage s -> s-1, micro-batch m". Group 0.
// Each step's label is the action as PyTorch prints it ("0SEND_F1"), its job the action type
// ("SEND_F"), its micro-batch the action's, and its chunk the position of the action's stage
// among the stages its rank holds (0 for the rank's lowest stage), as Paddle numbers chunks.
//
// Compute-only schedules are not turned into communication here: that is PyTorch's lowering
// (`_add_send_recv`, AddSendRecv), whose placement of every send and receive is what the
// simulator checks. A compute-only schedule whose stages span ranks is refused.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "schedules/action.h"
#include "schedules/comm_program.h"

namespace irm::schedules {

// `stage_to_rank[s]` is the rank that holds stage s (num_stages = its size), as
// ValidateActionSchedule returns it or GeneratePyTorchSchedule makes it. kInvalidArgument, located
// "rank R, step S" (S: the index in the rank's list, idle slots counted) in `file`, for: a stage
// outside the map or held by another rank than the one whose list has it; a send or receive with
// no peer stage (SEND_F of the last stage, RECV_F of stage 0, SEND_B of stage 0, RECV_B of the
// last stage) or whose peer stage is on the same rank (PyTorch hands that over locally); a map
// naming a rank the schedule lacks; a compute-only schedule whose stages span ranks.
StatusOr<CommProgram> ActionScheduleToCommProgram(const ActionSchedule& schedule,
                                                  const std::vector<int>& stage_to_rank,
                                                  const std::string& file = "");

}  // namespace irm::schedules
