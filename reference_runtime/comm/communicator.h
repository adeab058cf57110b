// Communicator: one rank's view of one process group, the interface every communication backend
// implements (the in-process thread world here; Gloo across processes and NCCL across GPUs behind
// the same calls). The public calls check what every backend must refuse alike (a root or peer
// outside the group, a reduce-scatter that does not divide), record the call in the rank's
// communication trace when one is attached, and hand over to the backend. Every call carries its
// call site (op type, job, micro-batch, step, op index) so that a hang or a mismatch can say
// which op of which job each rank was in.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

class CommTrace;

// phi::ReduceType's order (kRedSum = 0 ... kRedAvg = 4), so a reduce_type attribute casts.
enum class ReduceOp : uint8_t { kSum, kMax, kMin, kProd, kAvg };
const char* ReduceOpName(ReduceOp op);  // "sum", "max", "min", "prod", "avg"

// The calls of the interface, as traces and hang reports name them.
enum class CommKind : uint8_t {
  kAllReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,
  kRecv,
  kBarrier,
};
const char* CommKindName(CommKind kind);  // "all_reduce", "broadcast", ..., "send", "barrier"

// Where a communication call comes from. An empty op type means a direct call (a test, a tool);
// op_index -1 means no op; an empty job means no plan runner set one.
struct CallSite {
  std::string op_type;
  std::string job;
  int micro_batch = 0;
  int step = 0;
  int op_index = -1;
};

// "ring 0, job forward, micro-batch 0, step 0, op 7": the parts that are set.
std::string DescribeSite(int ring_id, const CallSite& site);

class Communicator {
 public:
  virtual ~Communicator() = default;

  // This rank's index in the group and the group's size; the group's ring id.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int ring_id() const = 0;
  // The global rank of the group's rank `group_rank` (hang reports speak of global ranks).
  virtual int GlobalRank(int group_rank) const = 0;

  // Reduces `inout` over the group in place, every element over group ranks 0..N-1 in order.
  Status AllReduce(Tensor& inout, ReduceOp op, const CallSite& site = {});
  // Copies root's `inout` into every other rank's `inout` (same dtype and element count).
  Status Broadcast(Tensor& inout, int root, const CallSite& site = {});
  // `out` = every rank's `in` (same dtype and shape) concatenated along dim 0 in group order.
  Status AllGather(const Tensor& in, Tensor* out, const CallSite& site = {});
  // `in`'s dim 0 cut in size() equal parts; `out` = the reduction of every rank's part rank().
  Status ReduceScatter(const Tensor& in, Tensor* out, ReduceOp op, const CallSite& site = {});
  // `in`'s dim 0 cut in size() equal parts; part j goes to rank j, which stores it as its part
  // rank(): `out` has in's shape.
  Status AllToAll(const Tensor& in, Tensor* out, const CallSite& site = {});
  // Returns as the backend's point-to-point model says (schedules/p2p_model.h): once the peer's
  // matching Recv has taken the tensor (rendezvous), or once the message is buffered (buffered).
  // Messages between a pair of ranks match in order.
  Status Send(const Tensor& in, int peer, const CallSite& site = {});
  // The next message from `peer`. A defined `out` must have the message's dtype and shape (the
  // message is copied into its storage); an undefined one becomes a fresh tensor of the message.
  Status Recv(Tensor* out, int peer, const CallSite& site = {});
  Status Barrier(const CallSite& site = {});

  // Records every call into `trace` from now on; null stops recording.
  void set_trace(CommTrace* trace) { trace_ = trace; }
  CommTrace* trace() const { return trace_; }

 protected:
  virtual Status DoAllReduce(Tensor& inout, ReduceOp op, const CallSite& site) = 0;
  virtual Status DoBroadcast(Tensor& inout, int root, const CallSite& site) = 0;
  virtual Status DoAllGather(const Tensor& in, Tensor* out, const CallSite& site) = 0;
  virtual Status DoReduceScatter(const Tensor& in, Tensor* out, ReduceOp op,
                                 const CallSite& site) = 0;
  virtual Status DoAllToAll(const Tensor& in, Tensor* out, const CallSite& site) = 0;
  virtual Status DoSend(const Tensor& in, int peer, const CallSite& site) = 0;
  virtual Status DoRecv(Tensor* out, int peer, const CallSite& site) = 0;
  virtual Status DoBarrier(const CallSite& site) = 0;

 private:
  // kInvalidArgument naming `what` ("root", "peer") when it is not a rank of the group, or this
  // rank itself where `self_ok` is false.
  Status CheckRank(const char* call, const char* what, int value, bool self_ok,
                   const CallSite& site) const;
  Status CheckTensor(const char* call, const Tensor& t, const CallSite& site) const;
  // kInvalidArgument for a bool tensor, which no reduction takes.
  Status CheckReducible(const char* call, const Tensor& t, ReduceOp op, const CallSite& site) const;
  // kInvalidArgument when `t` has no dim 0 or dim 0 does not divide into size() parts.
  Status CheckDivisible(const char* call, const Tensor& t, const CallSite& site) const;

  CommTrace* trace_ = nullptr;
};

}  // namespace irm::rt
