// The point-to-point model shared by the runtime's communicators and the schedule simulator
// (docs/architecture.md, "Point-to-point semantics"): a send either waits for the matching receive
// (rendezvous) or completes at once while its channel — sender, receiver, process group — holds
// fewer than K unreceived messages (buffered, as NCCL behaves while a message fits its buffers).
// One model for both, so a schedule the simulator proves deadlock-free runs, and one it flags
// hangs in the same cycle.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace irm::schedules {

enum class P2pMode { kRendezvous, kBuffered };

struct P2pModel {
  P2pMode mode = P2pMode::kRendezvous;
  // Buffered only: how many unreceived messages a channel holds before a send waits (>= 1).
  int depth = 1;
  bool operator==(const P2pModel&) const = default;

  static P2pModel Rendezvous() { return {}; }
  static P2pModel Buffered(int depth) { return {P2pMode::kBuffered, depth}; }
};

// "rendezvous", "buffered" (depth 1) or "buffered=K" (K >= 1). kInvalidArgument otherwise.
StatusOr<P2pModel> ParseP2pModel(std::string_view text);
// The spelling ParseP2pModel reads: "rendezvous", "buffered=2".
std::string P2pModelName(const P2pModel& model);

}  // namespace irm::schedules
