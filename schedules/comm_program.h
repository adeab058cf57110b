// CommProgram: what the simulator (simulator.h) runs — every rank's ordered steps, each a unit of
// compute, a send or a receive on a channel. Every schedule form lowers to it: a Paddle job list
// with the communication its jobs do (paddle_comm.h), a PyTorch action schedule
// (action_comm.h), or a real bundle's send/recv ops in plan order (the CLI's bundle check). A send
// and the receive meant for it carry the same `message`, so the simulator can tell a receive that
// would take another message than the one meant (on NCCL: silent wrong data).
#pragma once

#include <string>
#include <vector>

namespace irm::schedules {

// A directed point-to-point channel: messages from `sender` to `receiver` (global ranks) in one
// process group. Messages on a channel are received in the order they were sent.
struct Channel {
  int sender = 0;
  int receiver = 0;
  int group = 0;  // ring id; 0 where the schedule names none (PyTorch)
  bool operator==(const Channel&) const = default;
  auto operator<=>(const Channel&) const = default;
};

enum class StepKind { kCompute, kSend, kRecv };

struct Step {
  StepKind kind = StepKind::kCompute;
  Channel channel;  // kSend / kRecv only
  // kSend / kRecv: what travels, the same text on both ends ("activation stage 0 -> 1,
  // micro-batch 2"). Empty: not checked.
  std::string message;
  // How pictures and reports name the step: "forward1", "1F3", "0SEND_F2", "send_v2".
  std::string label;
  // Where the step comes from, for deadlock reports: the job type (or action), its micro-batch
  // and chunk (-1: none), and the op ("send_v2, op 7"; empty: none).
  std::string job;
  int micro_batch = -1;
  int chunk = -1;
  std::string op;
  // Ticks of compute (kCompute only; >= 1): unit costs unless a schedule gives its own.
  int cost = 1;
};

struct CommProgram {
  std::vector<std::vector<Step>> ranks;  // index = global rank
};

}  // namespace irm::schedules
