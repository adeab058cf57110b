// ThreadWorld: N ranks as threads of one process, with process groups (ring_id -> global ranks,
// as a bundle declares them) and one in-process Communicator per (rank, group). It is the
// reference backend: collectives are rendezvous that reduce every element over the group's ranks
// in rank order (reduce.h), so results are bitwise reproducible and independent of bucketing (the
// ranks of a reducing collective each compute a share of the elements, outside the world's lock);
// ranks that call different collectives at one point fail with every rank's call named.
//
// Point to point follows the world's p2p model (schedules/p2p_model.h): under rendezvous (the
// default) Send returns when the peer's Recv takes the message, so two ranks that both send first
// hang as they would on NCCL once a message outgrows its buffers; under buffered(K) Send copies the
// message and returns at once while its channel (ring, sender, receiver) holds fewer than K
// unreceived messages, else it waits until the receiver takes one. Either way the watchdog
// (watchdog.h) reports a hang at once with what every rank waits for, and a rank that finishes
// with buffered messages it never received fails naming them. When one rank fails, the ranks
// waiting in the world are woken with an error naming it, never left waiting. The groups, rounds,
// channels and hang checks are RankMatcher's (rank_matcher.h), shared with the device world.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/comm/rank_matcher.h"
#include "reference_runtime/comm/watchdog.h"
#include "schedules/p2p_model.h"

namespace irm::rt {

struct ThreadWorldOptions {
  // How long a rank may wait in a call without the world making progress: the backstop for a
  // rank that never returns from work outside the world (structural hangs are reported at once).
  std::chrono::milliseconds timeout{60000};
  // Record each rank's communication calls (trace()).
  bool trace = false;
  // When a Send returns: once the receiver takes the message (rendezvous), or at once while its
  // channel holds fewer than depth unreceived messages (buffered).
  schedules::P2pModel p2p;
};

class ThreadWorld {
 public:
  // `groups` as the bundle declares them; ring 0 is every rank in order when not given.
  // kInvalidArgument for a world size below 1, a ring declared twice, or a group that is empty,
  // repeats a rank or names one outside the world.
  static StatusOr<std::unique_ptr<ThreadWorld>> Create(int world_size,
                                                       std::vector<CommGroup> groups = {},
                                                       ThreadWorldOptions options = {});
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int world_size() const { return matcher_.world_size(); }
  // The communicator of global rank `rank` in group `ring_id`, to be used only by that rank's
  // thread. kNotFound for an unknown ring, kInvalidArgument for a rank outside it.
  StatusOr<Communicator*> For(int rank, int ring_id) { return matcher_.For(rank, ring_id); }
  // The CommContext of `rank` for an executor: its communicators through For. The world must
  // outlive it.
  CommContext Context(int rank) { return matcher_.Context(rank); }

  // Runs fn(0) ... fn(N-1) on N threads and waits for all of them. Returns OK, or the first
  // failure in rank order among the ranks that failed on their own (a rank woken because another
  // failed reports "rank 1 failed: ..."; every rank of a hang reports the hang). The world starts
  // each run afresh: no pending message, collective or trace record survives a run.
  Status RunRanks(const std::function<Status(int rank)>& fn) { return matcher_.RunRanks(fn); }
  // Each rank's status from the last RunRanks.
  const std::vector<Status>& rank_statuses() const { return matcher_.rank_statuses(); }
  // The calls of `rank` in the last run; null when options.trace is off.
  const CommTrace* trace(int rank) const { return matcher_.trace(rank); }

 private:
  class GroupComm;
  struct Round;
  struct Message;
  // What a rank brings to a collective.
  struct Contribution {
    CommKind kind = CommKind::kBarrier;
    ReduceOp reduce = ReduceOp::kSum;
    int root = -1;
    const Tensor* in = nullptr;
    Tensor* inout = nullptr;
    Tensor* out = nullptr;
    CallSite site;
  };

  ThreadWorld(int world_size, std::vector<CommGroup> groups, ThreadWorldOptions options);

  Status Collective(int group, int group_rank, Contribution contribution);
  Status Send(int group, int group_rank, const Tensor& in, int peer, const CallSite& site);
  Status Recv(int group, int group_rank, Tensor* out, int peer, const CallSite& site);

  // Computes a round every rank has joined and whose calls agree (the status every rank of the
  // round returns).
  Status Complete(Round& round);
  // A rank's share of a split round (Round::split): its part of the elements, computed outside
  // the lock; the last rank to finish its share marks the round done.
  void ComputeShare(std::unique_lock<std::mutex>& lock, Round& round, size_t group_rank);

  // The groups, rounds, channels, runs, aborts and hang checks (the device world's too).
  RankMatcher matcher_;
};

}  // namespace irm::rt
