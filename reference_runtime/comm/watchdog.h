// Watchdog: what every rank of an in-process world is doing (running, blocked in a communication
// call, finished) and, for a blocked rank, what it waits for. From that it decides, at the moment
// a rank blocks or finishes, whether the world has hung: a rank waits on a rank that has finished,
// or every rank that has not finished is blocked and no wait can end. Detection is structural, so
// a hang is reported at once with each rank's pending operation instead of after a timeout; the
// timeout report is the backstop for a rank that never comes back from work outside the world.
// The watchdog owns no lock: the world calls it under the lock that guards the waits' state.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/communicator.h"

namespace irm::rt {

// What a blocked rank waits for. `ready` and `waiting_for` read the world's state and are called
// only under the world's lock.
struct PendingWait {
  CommKind kind = CommKind::kBarrier;
  int ring_id = 0;
  int peer = -1;  // send and recv: the peer's global rank
  CallSite site;
  // True once the wait can end (the message was taken, the collective completed).
  std::function<bool()> ready;
  // The global ranks whose call the wait still needs (a collective's absent ranks, the peer).
  std::function<std::vector<int>()> waiting_for;
};

class Watchdog {
 public:
  explicit Watchdog(int world_size);

  // Every rank running again (a new run of the world).
  void Reset();
  void Block(int rank, PendingWait wait);
  void Unblock(int rank);
  void Finish(int rank);
  bool Finished(int rank) const {
    return ranks_[static_cast<size_t>(rank)].state == State::kFinished;
  }

  // OK, or the hang (kInternal): "hang: rank 1 finished while rank 0 waits in recv_v2 from rank 1
  // (ring 0, op 3)", or "hang: no rank can progress: rank 0 waits in ...; rank 1 waits in ...".
  Status Check() const;
  // The timeout report (kInternal) after `rank` waited `waited` without any progress: every
  // rank's state.
  Status TimedOut(int rank, std::chrono::milliseconds waited) const;

  // "rank 0 waits in send_v2 to rank 1 (ring 0, job forward, micro-batch 0, step 0, op 7)".
  std::string DescribeWait(int rank) const;

 private:
  enum class State { kRunning, kBlocked, kFinished };
  struct RankState {
    State state = State::kRunning;
    PendingWait wait;
  };
  // Every rank's state, "; "-separated, in rank order.
  std::string DescribeAll() const;

  std::vector<RankState> ranks_;
};

}  // namespace irm::rt
