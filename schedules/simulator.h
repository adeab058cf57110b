// The lock-step simulator: runs a CommProgram (comm_program.h) under a point-to-point model
// (p2p_model.h) without running a kernel, and either proves that every rank reaches its end or
// names why one cannot — the wait-for cycle of a deadlock, a receive that would take another
// message than the one it means, or a send/receive pair the ranks disagree on. It also measures
// the schedule: ticks, a per-rank timeline and the bubble ratio, and the smallest buffer depth
// the program needs.
//
// One tick: every rank tries its next step, and a rank completes at most one step per tick.
//   - compute: runs for `cost` ticks; it never waits.
//   - rendezvous: a send completes together with the receive meant for it, in the same tick, when
//     the sender stands at the send and the receiver at a receive on the same channel.
//   - buffered(K): a send completes while its channel holds fewer than K unreceived messages; a
//     receive completes when its channel holds a message. Within a tick the ranks are swept in
//     rank order until nothing more can move, so a receive may take a message sent in the same
//     tick (by any rank), and a send may use the slot a receive freed in that tick. This is the
//     rule of PyTorch's `_simulate_comms_compute` (its second sweep lets later ranks unblock
//     earlier ones in the same tick), so PyTorch's step counts come out the same with a depth no
//     send ever reaches.
// Messages on a channel are taken in the order they were sent (as NCCL matches them), so the
// n-th receive on a channel takes the n-th send.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "schedules/comm_program.h"
#include "schedules/p2p_model.h"

namespace irm::schedules {

enum class SimOutcome {
  kCompleted,   // every rank ran every step; no message left unreceived
  kDeadlock,    // ranks wait for each other in a cycle
  kWrongMatch,  // a receive would take a message meant for another receive
  kUnmatched,   // a send no receive takes, or a receive no send feeds
};
// "completed", "deadlock", "wrong match", "unmatched".
const char* SimOutcomeName(SimOutcome outcome);

// One rank stuck at a send or a receive, and the rank it waits for.
struct Wait {
  int rank = 0;
  int step_index = 0;  // into the program's steps of `rank`
  Step step;
  int peer = 0;  // the receiver of a send, the sender of a receive
};

struct SimResult {
  SimOutcome outcome = SimOutcome::kCompleted;
  P2pModel model;
  // Ticks run: to the last rank's last step, or to the last tick anything moved.
  int ticks = 0;
  // timeline[rank][tick]: the index (into the program's steps of that rank) of the step that ran
  // at that tick — a compute step on each tick of its cost, a send or receive on the tick it
  // completed — or -1 where the rank was idle (waiting, or done). Every rank has `ticks` entries.
  std::vector<std::vector<int>> timeline;
  // Per rank, the next step it had not completed (= its step count when it finished).
  std::vector<int> next_step;
  // Bubble ratio = 1 - compute_ticks / (ranks * ticks): the share of rank-ticks not spent in
  // compute (waiting, idle after the rank's last step, and communication ticks all count as
  // bubble). 0 for an empty program.
  int compute_ticks = 0;
  double bubble_ratio = 0;
  // kDeadlock: the ranks of the wait-for cycle, each waiting for the next, the last for the first
  // (starting at the cycle's lowest rank). kUnmatched with a stuck rank: the chain of waits
  // ending at a rank that has finished. Empty otherwise.
  std::vector<Wait> waits;
  // kWrongMatch: the receive (rank and step) and the send whose message it would take.
  std::optional<Wait> wrong_receive;
  std::optional<Wait> wrong_send;
  // One readable line (kCompleted: empty), e.g. "deadlock under rendezvous at tick 3: rank 0
  // waits in send (activation stage 0 -> 1, micro-batch 1; forward, micro-batch 1) for rank 1,
  // which waits in send (...) for rank 0".
  std::string diagnostic;

  bool completed() const { return outcome == SimOutcome::kCompleted; }
};

// Runs `program` under `model`. kInvalidArgument for a program that is not one: a channel naming
// a rank outside the program, a send whose channel's sender (a receive whose receiver) is not the
// rank that holds it, a send to itself, a compute cost below 1, a buffered depth below 1.
StatusOr<SimResult> Simulate(const CommProgram& program, const P2pModel& model);

// The smallest buffer depth with which `program` completes: 0 when it completes under rendezvous,
// K >= 1 when it completes under buffered(K) and not buffered(K - 1); std::nullopt ("never") when
// it does not complete even with a depth no channel can fill (the program's message count), as
// with a receive no send feeds or a wrong match. Errors as Simulate.
StatusOr<std::optional<int>> MinBufferDepth(const CommProgram& program);
// "0", "3", "never".
std::string BufferDepthName(const std::optional<int>& depth);

// "compute", "send", "recv".
const char* StepKindName(StepKind kind);

// How reports name a step: "send (activation stage 0 -> 1, micro-batch 1; forward, micro-batch 1,
// chunk 0, op send_v2 #7)" — the kind, the message and ring (process group), then where it comes
// from (the job, or the label when there is no job).
std::string DescribeStep(const Step& step);

}  // namespace irm::schedules
