// GlooWorld: the ranks of a world on the Gloo backend — one Gloo context per (rank, process
// group) over the TCP device, rendezvous through a store. Two ways to host the ranks: all of them
// as threads of this process (an in-memory HashStore shared by the threads), or one rank per
// process (a FileStore in a directory every process of the world sees: the way runs scale to
// several processes and hosts). Groups are as in ThreadWorld (ring_id -> global ranks; ring 0 is
// every rank when not declared); each rank connects its groups in ring order, so ranks of
// overlapping groups never wait on each other in a cycle.
//
// A Gloo world has no shared state to watch its ranks with, so each rank publishes its pending
// call on a board (gloo_watch.h: in memory for threads, files beside the store for processes):
// a hang (two ranks that both send first, a rank that never joins a collective, ranks in
// different collectives) is reported within about a second (hang_settle) with every rank's
// pending call, in both launch modes; the per-call timeout is the backstop for a rank busy
// outside communication. A rank that fails on its own closes its connections so that its peers
// fail at once instead of waiting out the timeout.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/comm/gloo_communicator.h"
#include "reference_runtime/comm/gloo_watch.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/comm/thread_world.h"

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}
namespace transport {
class Device;
}
}  // namespace gloo

namespace irm::rt {

struct GlooWorldOptions {
  // Every Gloo call (and the rendezvous) gives up after this long with a kInternal timeout.
  std::chrono::milliseconds timeout{60000};
  // Record each hosted rank's communication calls (trace()).
  bool trace = false;
  // The address the TCP device listens on: loopback for ranks on one host.
  std::string hostname = "127.0.0.1";
  // When a Send returns (rendezvous: once acknowledged; buffered(K): K messages of slack).
  schedules::P2pModel p2p{};
  // The hang watch: how often it reads the board, and how long a deadlock must stay unchanged
  // before it is reported (capped at a third of `timeout`, so that the report comes first).
  std::chrono::milliseconds hang_check{100};
  std::chrono::milliseconds hang_settle{1000};
};

class GlooWorld final : public RankWorld {
 public:
  // Every rank as a thread of this process. kInvalidArgument for groups ThreadWorld would refuse;
  // kInternal when a rank cannot connect (naming the rank and the group).
  static StatusOr<std::unique_ptr<GlooWorld>> CreateThreads(int world_size,
                                                            std::vector<CommGroup> groups = {},
                                                            GlooWorldOptions options = {});
  // Rank `rank` of a world whose ranks are processes, meeting through files in `store_dir`
  // (created if missing; it must start empty for each run of the world).
  static StatusOr<std::unique_ptr<GlooWorld>> CreateProcessRank(int world_size, int rank,
                                                                std::vector<CommGroup> groups,
                                                                const std::string& store_dir,
                                                                GlooWorldOptions options = {});
  ~GlooWorld() override;
  GlooWorld(const GlooWorld&) = delete;
  GlooWorld& operator=(const GlooWorld&) = delete;

  int world_size() const override { return world_size_; }
  // The ranks this process hosts, ascending.
  const std::vector<int>& hosted_ranks() const override { return hosted_; }
  // The communicator of hosted rank `rank` in group `ring_id`, for that rank's thread only.
  // kNotFound for an unknown ring, kInvalidArgument for a rank outside it or not hosted here.
  StatusOr<Communicator*> For(int rank, int ring_id);
  // The CommContext of a hosted rank for an executor; the world must outlive it.
  CommContext Context(int rank) override;

  // Runs fn(r) for every hosted rank, each on its own thread, and waits for all of them (a rank
  // whose fn succeeds then waits for its buffered sends' acknowledgements). Returns OK, or the
  // first failure in rank order among the ranks that failed on their own (not in a Gloo call
  // because a peer failed or timed out); else the first failure. A hang fails every waiting rank
  // with the world's hang report. A rank that fails closes its connections: the world is spent
  // after a failed run.
  Status RunRanks(const std::function<Status(int rank)>& fn) override;
  // Each hosted rank's status from the last RunRanks (indexed by global rank; OK for others).
  const std::vector<Status>& rank_statuses() const { return statuses_; }
  // The calls of a hosted rank in the last run; null when options.trace is off.
  const CommTrace* trace(int rank) const override;

  // The Gloo context of a hosted rank in a group (benchmarks call Gloo on it directly).
  StatusOr<std::shared_ptr<gloo::Context>> GlooContext(int rank, int ring_id);

  // Factories for RunBundleRanks: every rank as a thread, or only `rank` (ranks as processes
  // meeting in `store_dir`).
  static RankWorldFactory ThreadsFactory(GlooWorldOptions options);
  static RankWorldFactory ProcessRankFactory(int rank, std::string store_dir,
                                             GlooWorldOptions options);

 private:
  GlooWorld(int world_size, std::vector<CommGroup> groups, GlooWorldOptions options);
  // Connects hosted rank `rank` to every group that holds it, in ring order.
  StatusOr<std::vector<std::unique_ptr<GlooCommunicator>>> Connect(int rank,
                                                                   gloo::rendezvous::Store& store);
  // Creates the watch (its board in `watch_folder`, empty: in memory) and the device, and
  // connects every hosted rank (each on its own thread).
  Status ConnectHosted(gloo::rendezvous::Store& store, const std::string& watch_folder);

  const int world_size_;
  const GlooWorldOptions options_;
  std::vector<CommGroup> groups_;  // sorted by ring id
  std::vector<int> hosted_;
  std::unique_ptr<GlooWatch> watch_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::map<std::pair<int, int>, std::unique_ptr<GlooCommunicator>> comms_;  // (rank, ring_id)
  std::map<int, std::unique_ptr<CommTrace>> traces_;
  std::vector<Status> statuses_;
};

}  // namespace irm::rt
