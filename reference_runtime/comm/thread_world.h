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
// waiting in the world are woken with an error naming it, never left waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/comm/watchdog.h"
#include "schedules/p2p_model.h"

namespace irm::rt {

struct CommGroup {
  int ring_id = 0;
  std::vector<int> ranks;  // global ranks; a rank's index here is its rank in the group
};

// The groups a world is created with, checked: kInvalidArgument for a world size below 1, a ring
// declared twice, or a group that is empty, repeats a rank or names one outside the world. Ring 0
// (every rank in order) is put first when not given.
StatusOr<std::vector<CommGroup>> CheckCommGroups(int world_size, std::vector<CommGroup> groups);

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

  int world_size() const { return world_size_; }
  // The communicator of global rank `rank` in group `ring_id`, to be used only by that rank's
  // thread. kNotFound for an unknown ring, kInvalidArgument for a rank outside it.
  StatusOr<Communicator*> For(int rank, int ring_id);
  // The CommContext of `rank` for an executor: its communicators through For. The world must
  // outlive it.
  CommContext Context(int rank);

  // Runs fn(0) ... fn(N-1) on N threads and waits for all of them. Returns OK, or the first
  // failure in rank order among the ranks that failed on their own (a rank woken because another
  // failed reports "rank 1 failed: ..."; every rank of a hang reports the hang). The world starts
  // each run afresh: no pending message, collective or trace record survives a run.
  Status RunRanks(const std::function<Status(int rank)>& fn);
  // Each rank's status from the last RunRanks.
  const std::vector<Status>& rank_statuses() const { return statuses_; }
  // The calls of `rank` in the last run; null when options.trace is off.
  const CommTrace* trace(int rank) const;

 private:
  class GroupComm;
  struct Round;
  struct Message;
  // The unreceived messages from one rank to another in one group, in send order, and how many
  // were sent and taken over the run (a message's sequence number minus `taken` is how many
  // unreceived messages are ahead of it).
  struct Channel {
    std::deque<std::shared_ptr<Message>> messages;
    int64_t sent = 0;
    int64_t taken = 0;
  };
  struct Group {
    CommGroup spec;
    std::vector<int64_t> next_round;  // per group rank: the index of its next collective
    std::map<int64_t, std::shared_ptr<Round>> rounds;
  };
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

  // Called with mu_ held: blocks `rank` until wait.ready() or the world aborts; checks for a hang
  // first and gives up after the timeout. OK when the wait ended, else the abort status.
  Status Wait(std::unique_lock<std::mutex>& lock, int rank, PendingWait wait);
  // With mu_ held: the call of `rank` fails with the abort status (and counts as woken).
  Status Aborted(int rank);
  void Abort(Status status);
  void CheckHang();
  // Completes a round every rank has joined: checks the calls agree, then computes each rank's
  // result (the status every rank of the round returns).
  Status Complete(const Group& group, Round& round);
  // kInvalid naming every rank's call when the calls of a full round disagree.
  Status CheckCallsAgree(const Group& group, const Round& round) const;
  // A rank's share of a split round (Round::split): its part of the elements, computed outside
  // the lock; the last rank to finish its share marks the round done.
  void ComputeShare(std::unique_lock<std::mutex>& lock, Round& round, size_t group_rank);
  // With mu_ held, as `rank` finishes: kInternal naming the buffered messages to it that it never
  // received (OK when none).
  Status UnreceivedBy(int rank) const;
  // "send_v2 from rank 0 (ring 0, job forward, ...)".
  static std::string DescribeMessage(const Message& message, int ring_id);
  // kInternal: "rank 1 finished without receiving 2 buffered messages: ...".
  static Status Unreceived(int rank, const std::vector<std::string>& messages);

  const int world_size_;
  const ThreadWorldOptions options_;
  std::vector<Group> groups_;
  std::vector<std::unique_ptr<GroupComm>> comms_;
  std::map<std::pair<int, int>, GroupComm*> comm_index_;  // (rank, ring_id)
  std::vector<std::unique_ptr<CommTrace>> traces_;

  std::mutex mu_;
  std::condition_variable cv_;
  Status abort_;  // guarded by mu_; OK while the run goes on
  Watchdog watchdog_;
  // (ring_id, sender, receiver) in global ranks -> the channel's unreceived messages.
  std::map<std::tuple<int, int, int>, Channel> mailboxes_;
  std::vector<bool> woken_;  // per rank: a call of it returned the abort status
  std::vector<Status> statuses_;
};

}  // namespace irm::rt
