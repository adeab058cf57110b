// RankWorld: what running a bundle's ranks needs of a communication backend's world, whichever
// backend it is — the thread world (every rank a thread of this process), or Gloo (ranks as
// threads or as processes, each process hosting some of them). A world is made by a
// RankWorldFactory, so that a backend living in its own library (Gloo) plugs into the bundle
// runner without the runner depending on it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/thread_world.h"
#include "schedules/p2p_model.h"

namespace irm::rt {

class RankWorld {
 public:
  virtual ~RankWorld() = default;

  virtual int world_size() const = 0;
  // The ranks this process runs, ascending (every rank unless ranks are processes).
  virtual const std::vector<int>& hosted_ranks() const = 0;
  // The CommContext of hosted rank `rank`; the world must outlive it.
  virtual CommContext Context(int rank) = 0;
  // Runs fn(r) for every hosted rank at once and waits for all of them: OK or the failure that
  // explains the run (a rank's own failure before the failures it caused in its peers).
  virtual Status RunRanks(const std::function<Status(int rank)>& fn) = 0;
  // The calls of hosted rank `rank` in the last run; null when not recorded.
  virtual const CommTrace* trace(int rank) const = 0;
};

// Makes the world of `world_size` ranks with the bundle's process groups (ThreadWorld's rules),
// its sends under `p2p` (the runner's choice: the bundle's model or the caller's).
using RankWorldFactory = std::function<StatusOr<std::unique_ptr<RankWorld>>(
    int world_size, std::vector<CommGroup> groups, const schedules::P2pModel& p2p)>;

}  // namespace irm::rt
