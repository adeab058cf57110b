// GlooCommunicator: one rank's Communicator in one process group over a connected Gloo context
// (TCP). Collectives are Gloo's algorithms with reduce functions that compute each element as
// the reference reduction does (reduce.h: integers wrap, max/min propagate NaN, float16 and
// bfloat16 are reduced in float32 and rounded once, avg is the sum divided by N), so two-rank
// results are bitwise those of the thread backend (a two-term sum does not depend on its order);
// with three or more ranks Gloo's ring sums in another order than rank order (floating-point sums
// then agree within the reordered tier; integers, max and min stay exact).
//
// Before each collective the group's ranks all-gather a small signature of their call (kind,
// reduction, root, dtype, element count, shape where it matters: the thread world's rules), so
// ranks calling different collectives fail alike with every rank's call named — instead of Gloo
// receiving a buffer of another size, which ends the process from its I/O thread.
//
// Point to point: every message is a fixed header (dtype, shape) followed by the payload, and the
// receiver answers with a one-word acknowledgement. The header lets a Recv into an undefined
// tensor learn the message's shape and a defined one refuse a mismatch (both ranks then fail with
// both sides named). Send follows the p2p model (schedules/p2p_model.h): under rendezvous it
// returns with the acknowledgement, as on the thread backend; under buffered(K) it copies the
// tensor, posts the message and returns while fewer than K messages to that peer are
// unacknowledged, else it first waits for the oldest one's acknowledgement (Flush waits for all
// of them). Messages between a pair of ranks match in order (per-pair sequence numbers in the
// slots).
//
// Every Gloo call runs under the per-call timeout and is announced to the world's watch
// (gloo_watch.h) while it waits; a timeout or any Gloo exception becomes kInternal — the world's
// hang report when the watch has one, else "gloo: <call> on ring R timed out after N ms (rank r
// waits for ...)" — and no exception leaves this class.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "reference_runtime/comm/communicator.h"
#include "schedules/p2p_model.h"

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace irm::rt {

class GlooWatch;

class GlooCommunicator final : public Communicator {
 public:
  // `ranks`: the group's global ranks (the context's rank i is global rank ranks[i]). `watch`
  // (may be null: no hang reports) must outlive the communicator.
  GlooCommunicator(std::shared_ptr<gloo::Context> context, int ring_id, std::vector<int> ranks,
                   std::chrono::milliseconds timeout, schedules::P2pModel p2p = {},
                   GlooWatch* watch = nullptr);
  ~GlooCommunicator() override;

  int rank() const override { return group_rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  int ring_id() const override { return ring_id_; }
  int GlobalRank(int group_rank) const override { return ranks_[static_cast<size_t>(group_rank)]; }

  // Whether a call of this communicator failed in Gloo (timeout, closed connection): the rank's
  // failure then follows another's rather than being its own.
  bool failed() const { return failed_; }
  // Whether that failure was a timeout (the rank waited for a peer that never came), as opposed
  // to a connection the peer closed — often because it had timed out itself.
  bool timed_out() const { return timed_out_; }
  // Closes the context's connections: peers blocked on this rank fail at once.
  void Close();
  // Ends the rank's pending and future waits in this group (they fail, and the world's hang
  // report becomes their status): the watch calls it from its own thread once it decided a hang.
  // Every wait that can take part in a hang is on a buffer this class owns: point to point, and
  // the signature exchange that opens each collective (Gloo's own algorithms start only once
  // every rank of the group is in the same collective).
  void AbortWaits();
  // Waits until every buffered send has been acknowledged (OK at once under rendezvous): a rank
  // calls it before it finishes, so that no message is left unreceived unnoticed.
  Status Flush();
  const std::shared_ptr<gloo::Context>& context() const { return context_; }

 protected:
  Status DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) override;
  Status DoBroadcast(Tensor& inout, int root, const CallSite& site) override;
  Status DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) override;
  Status DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op, const CallSite& site) override;
  Status DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) override;
  Status DoSend(const Tensor& in, int peer, const CallSite& site) override;
  Status DoRecv(Tensor* out, int peer, const CallSite& site) override;
  Status DoBarrier(const CallSite& site) override;

 private:
  // Runs `body` (which calls Gloo); an exception becomes the kInternal status described above,
  // `waits_for` saying what this rank was waiting for.
  // While it runs, the rank is blocked in `kind` (to or from global rank `peer`; collective
  // number `index`) for the watch.
  template <typename F>
  Status Guard(const char* call, CommKind kind, int peer, int64_t index,
               const std::string& waits_for, const CallSite& site, F&& body);
  std::string WaitsForGroup() const;
  // The next collective's index: every rank of the group makes the same sequence of collectives.
  int64_t NextCollective() { return next_collective_++; }
  // OK when every rank of the group makes the same call as this one (collective `index`); else
  // kInvalid on every rank, naming each rank's call.
  Status AgreeOnCall(CommKind kind, const Tensor* tensor, ReduceOp op, int root,
                     const CallSite& site, int64_t index);
  // Sends `bytes` at `mine` to every other rank of the group and receives theirs into `all`
  // (group rank r's at r * bytes), in the slots of `prefix` and collective `index`.
  Status ExchangeWithGroup(CommKind kind, int64_t index, uint64_t prefix, const void* mine,
                           size_t bytes, void* all, const CallSite& site);
  // Waits for a send (or receive) on `buffer` to complete; throws when the wait was aborted.
  void Wait(gloo::transport::UnboundBuffer& buffer, bool send);
  // The oldest unacknowledged message to group rank `peer`: waits for its acknowledgement.
  Status AwaitOldest(int peer);
  Status ReduceInPlace(Tensor& inout, ReduceOp op, const CallSite& site, int64_t index);

  struct Message;
  std::shared_ptr<gloo::Context> context_;
  int ring_id_;
  std::vector<int> ranks_;
  int group_rank_;
  std::chrono::milliseconds timeout_;
  schedules::P2pModel p2p_;
  GlooWatch* watch_;
  int64_t next_collective_ = 0;
  std::map<int, uint64_t> sent_;      // per peer (group rank): messages sent to it
  std::map<int, uint64_t> received_;  // per peer: messages received from it
  // Per peer: the messages posted and not yet acknowledged, oldest first.
  std::map<int, std::deque<std::unique_ptr<Message>>> in_flight_;
  bool failed_ = false;
  bool timed_out_ = false;
  std::mutex abort_mu_;  // guards the two below
  bool aborted_ = false;
  gloo::transport::UnboundBuffer* waiting_on_ = nullptr;
  bool waiting_to_send_ = false;
};

}  // namespace irm::rt
