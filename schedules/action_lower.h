// PyTorch's lowering passes over action schedules (torch/distributed/pipelining/schedules.py):
// `_add_send_recv` turns a compute-only schedule into one with SEND_F/RECV_F/SEND_B/RECV_B,
// `_merge_bw` fuses an I directly followed by its W into a B, `_add_reduce_grad` places
// REDUCE_GRAD after each stage's last backward and `_add_unshard_reshard` places FSDP's
// UNSHARD/RESHARD around the stages a rank is about to compute.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "schedules/action.h"

namespace irm::schedules {

// `_add_send_recv(compute, stage_to_rank, num_stages = stage_to_rank.size())`: ranks take turns in
// rank order; each schedules its next action once its input is local (F: stage 0, a RECV_F already
// placed on this rank, or the previous stage's F run here; I/B: the last stage, a RECV_B placed,
// or the next stage's I/B run here; anything else at once). Scheduling an F whose next stage lives
// on another rank appends its SEND_F here and the peer's RECV_F to the peer at the same moment —
// the sender places the receiver's recv — and likewise SEND_B/RECV_B for an I or B whose previous
// stage lives elsewhere; an OVERLAP_F_B waits until every part is ready, then sends for each part.
// Idle steps are dropped. kInvalid "malformed compute schedule" naming each stuck rank's next
// action when a whole round makes no progress; kInvalid when a stage is outside stage_to_rank or
// maps outside the schedule's ranks.
StatusOr<ActionSchedule> AddSendRecv(const ActionSchedule& compute,
                                     const std::vector<int>& stage_to_rank);

// `_merge_bw` on one rank: idle steps dropped, and an I followed (after idle steps) by the W of
// the same stage and micro-batch becomes one B.
std::vector<std::optional<Action>> MergeBw(const std::vector<std::optional<Action>>& actions);
ActionSchedule MergeBw(const ActionSchedule& schedule);

// `_add_reduce_grad` on one rank: idle steps dropped, and "<s>REDUCE_GRAD" after the action (or
// overlapped pair) holding stage s's `micro_batches`-th B or W (an I does not count).
std::vector<std::optional<Action>> AddReduceGrad(const std::vector<std::optional<Action>>& actions,
                                                 int micro_batches);

// `_add_unshard_reshard(actions, max_active_stages)` on one rank: before each action, the next
// `max_active_stages` distinct stages the rank computes are unsharded (in order of first use) and
// stages outside them resharded; every stage still active at the end is resharded. Idle steps are
// dropped.
std::vector<std::optional<Action>> AddUnshardReshard(
    const std::vector<std::optional<Action>>& actions, int max_active_stages = 3);

struct LowerOptions {
  bool unshard_reshard = false;  // run AddUnshardReshard on each rank first
  bool reduce_grad = false;      // then AddReduceGrad
  int max_active_stages = 3;
};

// PyTorch's `_prepare_schedule_with_comms(actions, "compute_only")` with the optional passes off
// by default (as in PyTorch's own lowering tests, which call `_add_send_recv` directly): validates
// the schedule (action_validate.h; the stage -> rank map comes from it), refuses a communication
// or FSDP action in it ("expected compute-only schedule"; REDUCE_GRAD is allowed, since GPipe's
// and 1F1B's orders carry it), then runs the passes. `file` names the source in diagnostics.
StatusOr<ActionSchedule> LowerComputeSchedule(const ActionSchedule& compute, int pp, int num_stages,
                                              int micro_batches, const LowerOptions& options = {},
                                              const std::string& file = "");

}  // namespace irm::schedules
