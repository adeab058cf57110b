// NcclCommunicator and NcclWorld: the Communicator interface (comm/communicator.h) on NCCL, one
// rank per GPU — NCCL 2.28 refuses two ranks on one device ("invalid usage"), so N ranks need N
// visible GPUs; the device world (device_world.h) is the backend for N ranks sharing one GPU.
//
// The world hosts its ranks as threads of this process, rank r on GPU r, one NCCL communicator
// per (rank, process group): ncclGetUniqueId once per group by the world, ncclCommInitRank on
// every rank's thread (each rank initialises its groups in ring order, so ranks of overlapping
// groups never wait on each other in a cycle). Every collective works on device buffers: the
// host tensors the executors hold are staged to the rank's GPU on the rank's own stream and back
// (as the host-staged kernels of gpu_kernel_registry.h do). Send/recv carry a small header
// (dtype, shape) so that a recv into an undefined tensor learns the message's shape.
//
// Determinism (NcclWorldOptions::deterministic, on for parity): NCCL_ALGO=Ring, NCCL_PROTO=Simple,
// NCCL_NVLS_ENABLE=0 (NVLink SHARP was not reproducible between calls), NCCL_COLLNET_ENABLE=0 and
// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = 1, so each element's reduction order depends on the
// world size and the buffer's size only (docs/runtime.md, "GPU"). It is a fixed order, not the
// thread backend's rank order: float sums agree within the reordered tier; integers, max and min
// exactly. 16-bit floats accumulate in their own type along the ring.
//
// Hangs: each rank publishes its pending call (a Watchdog, comm/watchdog.h, under the world's
// lock) and counts the calls it has enqueued per group and per channel, so a call can tell which
// ranks it still waits for. While a rank waits for its stream it polls ncclCommGetAsyncError and
// the board: a structural hang (a rank waits on one that finished, or every unfinished rank waits
// and no wait can end), an asynchronous NCCL error or the timeout fails every waiting rank with
// the thread backend's words ("hang: no rank can progress: rank 0 waits in send_v2 to rank 1
// ..."), and each rank then aborts its communicators (ncclCommAbort). A world whose run failed is
// spent.
#pragma once

#include <chrono>
#include <condition_variable>
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
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/comm/thread_world.h"
#include "reference_runtime/comm/watchdog.h"

namespace irm::rt::cuda {

struct NcclWorldOptions {
  // How long a rank may wait for its stream without the world making progress.
  std::chrono::milliseconds timeout{60000};
  bool trace = false;
  // Set NCCL's environment for reproducible reductions (above) before the first communicator.
  bool deterministic = true;
  // How often a waiting rank polls its stream, NCCL's async error and the board.
  std::chrono::microseconds poll{200};
};

// The environment `deterministic` sets, in order (name, value): for the docs and the tests.
const std::vector<std::pair<std::string, std::string>>& NcclDeterministicEnvironment();

class NcclWorld;

// A call on the world's board: its kind, group and sequence number in its group (collectives) or
// channel (send, recv), so that a wait can tell which ranks it still needs.
struct NcclWorldCall {
  CommKind kind = CommKind::kBarrier;
  int ring_id = 0;
  int group = 0;      // index of the group in the world
  int peer = -1;      // global rank, send and recv
  int64_t index = 0;  // the call's sequence number in its group or channel
};

class NcclCommunicator final : public Communicator {
 public:
  ~NcclCommunicator() override;
  int rank() const override { return group_rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  int ring_id() const override { return ring_id_; }
  int GlobalRank(int group_rank) const override { return ranks_[static_cast<size_t>(group_rank)]; }

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
  friend class NcclWorld;
  struct Impl;
  NcclCommunicator(NcclWorld* world, int ring_id, std::vector<int> ranks, int group_rank);
  // Waits for the stream under the world's watch; on a failure aborts the communicator.
  Status Await(const NcclWorldCall& call, const CallSite& site);
  // ncclCommAbort, once.
  void Abort();

  NcclWorld* world_;
  const int ring_id_;
  const std::vector<int> ranks_;
  const int group_rank_;
  std::unique_ptr<Impl> impl_;
};

class NcclWorld final : public RankWorld {
 public:
  // kInternal where fewer GPUs are visible than ranks ("one rank per GPU"), or a communicator
  // cannot be created (NCCL's error, naming the rank and the ring); kInvalidArgument for groups
  // ThreadWorld would refuse.
  static StatusOr<std::unique_ptr<NcclWorld>> Create(int world_size,
                                                     std::vector<CommGroup> groups = {},
                                                     NcclWorldOptions options = {});
  ~NcclWorld() override;
  NcclWorld(const NcclWorld&) = delete;
  NcclWorld& operator=(const NcclWorld&) = delete;

  int world_size() const override { return world_size_; }
  const std::vector<int>& hosted_ranks() const override { return hosted_; }
  // The communicator of `rank` in group `ring_id`, for that rank's thread only.
  StatusOr<Communicator*> For(int rank, int ring_id);
  CommContext Context(int rank) override;
  // Runs fn(r) on N threads, rank r's thread on GPU r, and waits for all of them: OK or the first
  // failure in rank order among the ranks that failed on their own, else the first failure.
  Status RunRanks(const std::function<Status(int rank)>& fn) override;
  const std::vector<Status>& rank_statuses() const { return statuses_; }
  const CommTrace* trace(int rank) const override;

  // For RunBundleRanks (ir-migrate run --ranks N --device gpu --backend nccl).
  static RankWorldFactory Factory(NcclWorldOptions options);

 private:
  friend class NcclCommunicator;
  NcclWorld(int world_size, std::vector<CommGroup> groups, NcclWorldOptions options);
  Status Connect();

  using Call = NcclWorldCall;
  int GroupIndex(int ring_id) const;
  // Counts `call` as posted by global rank `rank` (before it is enqueued).
  void Post(int rank, const Call& call);
  // Blocks `rank` in `call` until `done` says its stream finished, polling NCCL's asynchronous
  // error (`poll_error`) and the board; OK, or the failure (the world's, or the hang report).
  Status Await(int rank, const Call& call, const CallSite& site,
               const std::function<Status(bool*)>& done, const std::function<Status()>& poll_error);
  // The world fails with `status` (the first failure stays), every waiting rank with it.
  void Fail(Status status);
  // With mu_ held: the global ranks `rank`'s call still needs.
  std::vector<int> WaitingFor(int rank, const Call& call) const;

  const int world_size_;
  const NcclWorldOptions options_;
  std::vector<CommGroup> groups_;
  std::vector<int> hosted_;
  std::map<std::pair<int, int>, std::unique_ptr<NcclCommunicator>> comms_;  // (rank, ring_id)
  std::vector<std::unique_ptr<CommTrace>> traces_;
  std::vector<Status> statuses_;

  std::mutex mu_;
  Status failed_;  // guarded by mu_
  Watchdog watchdog_;
  // Per group and global rank: collectives posted. Per (ring, sender, receiver): sends and recvs.
  std::vector<std::map<int, int64_t>> posted_;
  std::map<std::tuple<int, int, int>, std::pair<int64_t, int64_t>> channels_;
};

}  // namespace irm::rt::cuda
