// DeviceWorld: N ranks sharing ONE GPU — the common machine, and the case NCCL refuses (two ranks
// on one device). Each rank is a thread of this process with a CUDA stream of its own; the world's
// rendezvous, call checks, point-to-point models and hang reports are the thread backend's (one
// RankMatcher, comm/rank_matcher.h), the data lives on the device:
// - a rank stages its host tensor into a device buffer on its stream before it joins a collective;
//   the last rank to join completes the round on its stream: all_reduce and reduce_scatter by one
//   kernel that reduces every element over the ranks' buffers in rank order 0..N-1 with the
//   reference reduction's operations (collective_launch.h), so the bits are the thread backend's;
//   broadcast, all_gather and all_to_all by device-to-device copies; every rank then copies its
//   result back;
// - send stages the tensor into a device buffer that becomes the message; recv copies it
//   device-to-device into a buffer of its own and back to the host. A send returns as the world's
//   p2p model says (rendezvous: once taken; buffered(K): at once while its channel holds fewer
//   than K unreceived messages), exactly as on the thread world;
// - ranks that call different collectives fail with every rank's call named; a hang is reported
//   at once with what every rank waits for (comm/watchdog.h); the timeout is the backstop.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/comm/rank_matcher.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/comm/thread_world.h"
#include "schedules/p2p_model.h"

namespace irm::rt::cuda {

struct DeviceWorldOptions {
  // How long a rank may wait in a call without the world making progress.
  std::chrono::milliseconds timeout{60000};
  bool trace = false;
  schedules::P2pModel p2p;
};

class DeviceWorld final : public RankWorld {
 public:
  // kInternal where no GPU can be used (naming why); kInvalidArgument for groups ThreadWorld
  // would refuse or more than 64 ranks in one group (collective_launch.h).
  static StatusOr<std::unique_ptr<DeviceWorld>> Create(int world_size,
                                                       std::vector<CommGroup> groups = {},
                                                       DeviceWorldOptions options = {});
  ~DeviceWorld() override;
  DeviceWorld(const DeviceWorld&) = delete;
  DeviceWorld& operator=(const DeviceWorld&) = delete;

  int world_size() const override { return matcher_.world_size(); }
  const std::vector<int>& hosted_ranks() const override { return hosted_; }
  // The communicator of `rank` in group `ring_id`, for that rank's thread only.
  StatusOr<Communicator*> For(int rank, int ring_id) { return matcher_.For(rank, ring_id); }
  CommContext Context(int rank) override { return matcher_.Context(rank); }
  // ThreadWorld::RunRanks's contract.
  Status RunRanks(const std::function<Status(int rank)>& fn) override {
    return matcher_.RunRanks(fn);
  }
  const std::vector<Status>& rank_statuses() const { return matcher_.rank_statuses(); }
  const CommTrace* trace(int rank) const override { return matcher_.trace(rank); }

  // For RunBundleRanks (ir-migrate run --ranks N --device gpu --backend device): the world's
  // sends under the runner's p2p model.
  static RankWorldFactory Factory(DeviceWorldOptions options);

 private:
  class GroupComm;
  struct Part;
  struct Round;
  struct Message;

  DeviceWorld(int world_size, std::vector<CommGroup> groups, DeviceWorldOptions options);

  // Joins `part` to the group's next round and waits for it to complete; the result is in the
  // part's device output.
  Status Collective(int group, int group_rank, std::shared_ptr<Part> part);
  Status Send(int group, int group_rank, const Tensor& in, int peer, const CallSite& site);
  Status Recv(int group, int group_rank, Tensor* out, int peer, const CallSite& site);
  // The device work of a full round, on `stream`, waited for.
  Status Complete(const Round& round, cudaStream_t stream);

  std::vector<int> hosted_;
  std::vector<cudaStream_t> streams_;  // per global rank
  // The groups, rounds, channels, runs, aborts and hang checks: the thread world's.
  RankMatcher matcher_;
};

}  // namespace irm::rt::cuda
