// RankMatcher: the bookkeeping of a world whose ranks are threads of this process, whatever holds
// the data — the thread world (thread_world.h, host tensors) and the device world
// (cuda/device_world.h, ranks sharing one GPU). It owns the process groups and their
// communicators, the rounds in which a group's ranks meet for a collective (and the check that
// their calls agree), the point-to-point channels under the p2p model (schedules/p2p_model.h), the
// run of the ranks, the abort on failure and the hang checks (watchdog.h), all under one lock. The
// world says how a round is computed and what a message holds: it subclasses Round and Message.
//
// The lock is the world's too (mutex(), cv()): a world computes a round or copies a message
// outside it only where its own contract says so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/comm/watchdog.h"
#include "reference_runtime/tensor.h"
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

class RankMatcher {
 public:
  struct Options {
    // How long a rank may wait without the world making progress (the backstop; structural hangs
    // are reported at once).
    std::chrono::milliseconds timeout{60000};
    // Record each rank's communication calls (trace()).
    bool trace = false;
    schedules::P2pModel p2p;
  };
  // A communicator of one rank of one of the groups (an index into them): its rank, the group's
  // size, ring and global ranks. A world derives its calls.
  class GroupCommunicator : public Communicator {
   public:
    GroupCommunicator(const RankMatcher& matcher, int group, int group_rank)
        : matcher_(matcher), group_(group), group_rank_(group_rank) {}
    int rank() const override { return group_rank_; }
    int size() const override { return static_cast<int>(spec().ranks.size()); }
    int ring_id() const override { return spec().ring_id; }
    int GlobalRank(int group_rank) const override {
      return spec().ranks[static_cast<size_t>(group_rank)];
    }

   protected:
    int group() const { return group_; }
    int group_rank() const { return group_rank_; }

   private:
    const CommGroup& spec() const { return matcher_.group(group_); }

    const RankMatcher& matcher_;
    const int group_;
    const int group_rank_;
  };
  // The communicator of group rank `group_rank` of group `group` (an index into the groups).
  using CommFactory = std::function<std::unique_ptr<Communicator>(int group, int group_rank)>;

  // `groups` checked by CheckCommGroups.
  RankMatcher(int world_size, std::vector<CommGroup> groups, Options options,
              const CommFactory& make_comm);
  RankMatcher(const RankMatcher&) = delete;
  RankMatcher& operator=(const RankMatcher&) = delete;

  int world_size() const { return world_size_; }
  const Options& options() const { return options_; }
  const CommGroup& group(int index) const { return groups_[static_cast<size_t>(index)].spec; }
  // The global rank of group rank `group_rank` of group `index`.
  int GlobalRank(int index, int group_rank) const {
    return group(index).ranks[static_cast<size_t>(group_rank)];
  }

  // The communicator of global rank `rank` in group `ring_id`. kNotFound for an unknown ring,
  // kInvalidArgument for a rank outside it.
  StatusOr<Communicator*> For(int rank, int ring_id);
  // The CommContext of `rank` for an executor: its communicators through For.
  CommContext Context(int rank);
  // The calls of `rank` in the last run; null when options.trace is off.
  const CommTrace* trace(int rank) const;

  // Runs fn(0) ... fn(N-1) on N threads and waits for all of them: ThreadWorld::RunRanks's
  // contract. Each run starts afresh: no pending message, round or trace record survives it.
  Status RunRanks(const std::function<Status(int rank)>& fn);
  const std::vector<Status>& rank_statuses() const { return statuses_; }

  std::mutex& mutex() { return mu_; }
  std::condition_variable& cv() { return cv_; }

  // ---- collectives

  // A rank's call as its round checks and reports it.
  struct Call {
    CommKind kind = CommKind::kBarrier;
    ReduceOp reduce = ReduceOp::kSum;
    int root = -1;
    const Tensor* tensor = nullptr;  // what the call's dtype and shape are read from; null: barrier
    CallSite site;
  };
  // The ranks of a group meeting for one collective. A world derives its own round from it.
  struct Round {
    explicit Round(size_t n) : calls(n), joined(n, false) {}
    virtual ~Round() = default;
    std::vector<Call> calls;  // by group rank
    std::vector<bool> joined;
    size_t arrived = 0;
    bool done = false;
    Status status;  // what every rank of the round returns once done
  };

  // With the lock held: joins `call` of group rank `group_rank` to its group's next round (an R
  // made for the first rank to reach it). *last tells the rank that completes the round: every
  // rank has joined, the round is off its group, and the others wait for it (WaitForRound). The
  // world's abort status when the world has aborted.
  template <typename R>
  StatusOr<std::shared_ptr<R>> Join(int group, int group_rank, const Call& call, bool* last) {
    std::shared_ptr<Round> round;
    IRM_RETURN_IF_ERROR(JoinRound(group, group_rank, call, last, &round, [](size_t n) {
      return std::static_pointer_cast<Round>(std::make_shared<R>(n));
    }));
    return std::static_pointer_cast<R>(round);
  }
  // With the lock held: waits until `ready` (the round done, or whatever else the world lets its
  // ranks go on at) while the round's absent ranks are what group rank `group_rank` waits for.
  Status WaitForRound(std::unique_lock<std::mutex>& lock, int group, int group_rank,
                      const std::shared_ptr<Round>& round, std::function<bool()> ready);
  // kInvalid naming every rank's call when the calls of a full round disagree: kind, reduction,
  // root, dtype and element count (shape where the result's shape is built from the others').
  Status CheckCallsAgree(int group, const Round& round) const;

  // ---- point to point

  // A message on its channel. A world derives its own message, holding the data.
  struct Message {
    virtual ~Message() = default;
    int sender = 0;        // global rank
    int64_t sequence = 0;  // in its channel
    CallSite site;
    bool taken = false;
    Status status;  // what the sender returns once taken
  };
  // Posts `message` (its data made by the sender outside the lock) from group rank `group_rank`
  // to group rank `peer` and returns as the p2p model says: under rendezvous once the receiver
  // took it, under buffered(K) at once while its channel holds fewer than K unreceived messages,
  // itself included. The sender's result: the receiver's status when taken.
  Status Send(int group, int group_rank, int peer, std::shared_ptr<Message> message,
              const CallSite& site);
  // Takes the next message from group rank `peer` to group rank `group_rank` off its channel,
  // waiting for one; returns with `lock` (on mutex()) held. The receiver ends it with Release.
  StatusOr<std::shared_ptr<Message>> Take(std::unique_lock<std::mutex>& lock, int group,
                                          int group_rank, int peer, const CallSite& site);
  // With the lock held: the receiver is done with `message`; its sender returns `status`.
  void Release(Message& message, Status status);
  // kInvalid: "<recv op> on rank R expects <out> from rank S (<site>), but rank S sends <sent>
  // (<send op>, <site>)".
  Status MismatchedMessage(int group, int group_rank, int peer, const Tensor& out,
                           const CallSite& site, const Message& message,
                           const std::string& sent) const;

 private:
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

  Status JoinRound(int group, int group_rank, const Call& call, bool* last,
                   std::shared_ptr<Round>* round,
                   const std::function<std::shared_ptr<Round>(size_t n)>& make_round);
  // With mu_ held: blocks `rank` until wait.ready() or the world aborts; checks for a hang first
  // and gives up after the timeout. OK when the wait ended, else the abort status.
  Status Wait(std::unique_lock<std::mutex>& lock, int rank, PendingWait wait);
  // With mu_ held: the call of `rank` fails with the abort status (and counts as woken).
  Status Aborted(int rank);
  void Abort(Status status);
  void CheckHang();
  // With mu_ held, as `rank` finishes: kInternal naming the buffered messages to it that it never
  // received (OK when none).
  Status UnreceivedBy(int rank) const;
  // "send_v2 from rank 0 (ring 0, job forward, ...)".
  static std::string DescribeMessage(const Message& message, int ring_id);
  // kInternal: "rank 1 finished without receiving 2 buffered messages: ...".
  static Status Unreceived(int rank, const std::vector<std::string>& messages);

  const int world_size_;
  const Options options_;
  std::vector<Group> groups_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::map<std::pair<int, int>, Communicator*> comm_index_;  // (rank, ring_id)
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
