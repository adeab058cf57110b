// GlooCommunicator: one rank's Communicator in one process group over a connected Gloo context
// (TCP). Collectives are Gloo's algorithms with reduce functions that compute each element as
// the reference reduction does (reduce.h: integers wrap, max/min propagate NaN, float16 and
// bfloat16 are reduced in float32 and rounded once, avg is the sum divided by N), so two-rank
// results are bitwise those of the thread backend (a two-term sum does not depend on its order);
// with three or more ranks Gloo's ring sums in another order than rank order (floating-point sums
// then agree within the reordered tier; integers, max and min stay exact).
//
// Point to point: every message is a fixed header (dtype, shape) followed by the payload, and the
// receiver answers with a one-word acknowledgement. The header lets a Recv into an undefined
// tensor learn the message's shape and a defined one refuse a mismatch (both ranks then fail with
// both sides named); the acknowledgement makes Send synchronous as on the thread backend, so two
// ranks that both send first time out instead of passing. Messages between a pair of ranks match
// in order (per-pair sequence numbers in the slots).
//
// Every Gloo call runs under the per-call timeout; a timeout or any Gloo exception becomes
// kInternal "gloo: <call> on ring R timed out after N ms (rank r waits for ...)" — no exception
// leaves this class.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reference_runtime/comm/communicator.h"

namespace gloo {
class Context;
}

namespace irm::rt {

class GlooCommunicator final : public Communicator {
 public:
  // `ranks`: the group's global ranks (the context's rank i is global rank ranks[i]).
  GlooCommunicator(std::shared_ptr<gloo::Context> context, int ring_id, std::vector<int> ranks,
                   std::chrono::milliseconds timeout);
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
  template <typename F>
  Status Guard(const char* call, const std::string& waits_for, const CallSite& site, F&& body);
  std::string WaitsForGroup() const;
  // The next collective's tag: every rank of the group makes the same sequence of collectives.
  uint32_t NextTag() { return next_tag_++; }

  std::shared_ptr<gloo::Context> context_;
  int ring_id_;
  std::vector<int> ranks_;
  int group_rank_;
  std::chrono::milliseconds timeout_;
  uint32_t next_tag_ = 0;
  std::map<int, uint64_t> sent_;      // per peer (group rank): messages sent to it
  std::map<int, uint64_t> received_;  // per peer: messages received from it
  bool failed_ = false;
  bool timed_out_ = false;
};

}  // namespace irm::rt
