// GlooWorld (gloo_world.h): checking the groups, the rendezvous of each hosted rank's contexts,
// and running the hosted ranks on threads.
#include "reference_runtime/comm/gloo_world.h"

#include <signal.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

namespace irm::rt {
namespace {

// The groups as every world checks them (CheckCommGroups), sorted by ring id.
StatusOr<std::vector<CommGroup>> CheckGroups(int world_size, std::vector<CommGroup> groups) {
  IRM_ASSIGN_OR_RETURN(groups, CheckCommGroups(world_size, std::move(groups)));
  std::sort(groups.begin(), groups.end(),
            [](const CommGroup& a, const CommGroup& b) { return a.ring_id < b.ring_id; });
  return groups;
}

// Gloo's TCP pairs write with writev, which raises SIGPIPE when the peer has closed its end — as
// when a rank fails and its world goes down. The default action would end the whole process
// silently; ignored, the write fails with EPIPE and the failure comes back as the rank's status.
// A handler the embedding program installed is left alone.
void IgnoreBrokenPipes() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

GlooWorld::GlooWorld(int world_size, std::vector<CommGroup> groups, GlooWorldOptions options)
    : world_size_(world_size),
      options_(std::move(options)),
      groups_(std::move(groups)),
      statuses_(static_cast<size_t>(world_size)) {}

GlooWorld::~GlooWorld() {
  // Communicators (and their contexts' pairs) go before the device that runs their I/O loop.
  if (watch_ != nullptr) watch_->Stop();
  comms_.clear();
  device_.reset();
}

StatusOr<std::unique_ptr<GlooWorld>> GlooWorld::CreateThreads(int world_size,
                                                              std::vector<CommGroup> groups,
                                                              GlooWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckGroups(world_size, std::move(groups)));
  IgnoreBrokenPipes();
  std::unique_ptr<GlooWorld> world(
      new GlooWorld(world_size, std::move(groups), std::move(options)));
  for (int r = 0; r < world_size; ++r) world->hosted_.push_back(r);
  gloo::rendezvous::HashStore store;
  IRM_RETURN_IF_ERROR(world->ConnectHosted(store, ""));
  return world;
}

StatusOr<std::unique_ptr<GlooWorld>> GlooWorld::CreateProcessRank(int world_size, int rank,
                                                                  std::vector<CommGroup> groups,
                                                                  const std::string& store_dir,
                                                                  GlooWorldOptions options) {
  IRM_ASSIGN_OR_RETURN(groups, CheckGroups(world_size, std::move(groups)));
  if (rank < 0 || rank >= world_size) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("rank {} is outside the world of {}", rank, world_size));
  }
  std::error_code error;
  std::filesystem::create_directories(store_dir, error);
  if (error) {
    return Status(StatusCode::kInvalidArgument, Location::File(store_dir),
                  fmt::format("cannot create the rendezvous directory: {}", error.message()));
  }
  IgnoreBrokenPipes();
  std::unique_ptr<GlooWorld> world(
      new GlooWorld(world_size, std::move(groups), std::move(options)));
  world->hosted_.push_back(rank);
  std::unique_ptr<gloo::rendezvous::FileStore> store;
  try {
    store = std::make_unique<gloo::rendezvous::FileStore>(store_dir);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, Location::File(store_dir),
                  fmt::format("gloo: cannot open the file store: {}", e.what()));
  }
  IRM_RETURN_IF_ERROR(
      world->ConnectHosted(*store, (std::filesystem::path(store_dir) / "watch").string()));
  return world;
}

Status GlooWorld::ConnectHosted(gloo::rendezvous::Store& store, const std::string& watch_folder) {
  GlooWatchOptions watch;
  watch.settle =
      std::max(std::chrono::milliseconds(1), std::min(options_.hang_settle, options_.timeout / 3));
  watch.period =
      std::max(std::chrono::milliseconds(1), std::min(options_.hang_check, watch.settle / 4));
  watch.folder = watch_folder;
  std::map<int, std::vector<int>> groups;
  for (const CommGroup& group : groups_) groups[group.ring_id] = group.ranks;
  watch_ = std::make_unique<GlooWatch>(world_size_, hosted_, std::move(groups), std::move(watch));
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options_.hostname;
    device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    return Status(
        StatusCode::kInternal, Location{},
        fmt::format("gloo: cannot create a TCP device on {}: {}", options_.hostname, e.what()));
  }
  std::vector<StatusOr<std::vector<std::unique_ptr<GlooCommunicator>>>> connected;
  for (size_t i = 0; i < hosted_.size(); ++i) {
    connected.emplace_back(std::vector<std::unique_ptr<GlooCommunicator>>{});
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < hosted_.size(); ++i) {
    threads.emplace_back([&, i] { connected[i] = Connect(hosted_[i], store); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < hosted_.size(); ++i) {
    IRM_RETURN_IF_ERROR(connected[i].status());
    const int rank = hosted_[i];
    if (options_.trace) traces_[rank] = std::make_unique<CommTrace>();
    for (std::unique_ptr<GlooCommunicator>& comm : connected[i].value()) {
      if (options_.trace) comm->set_trace(traces_[rank].get());
      const int ring_id = comm->ring_id();
      comms_[{rank, ring_id}] = std::move(comm);
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<std::unique_ptr<GlooCommunicator>>> GlooWorld::Connect(
    int rank, gloo::rendezvous::Store& store) {
  std::vector<std::unique_ptr<GlooCommunicator>> comms;
  for (const CommGroup& group : groups_) {
    const auto it = std::find(group.ranks.begin(), group.ranks.end(), rank);
    if (it == group.ranks.end()) continue;
    const int group_rank = static_cast<int>(it - group.ranks.begin());
    try {
      gloo::rendezvous::PrefixStore prefixed(fmt::format("ring{}", group.ring_id), store);
      auto context = std::make_shared<gloo::rendezvous::Context>(
          group_rank, static_cast<int>(group.ranks.size()));
      context->setTimeout(options_.timeout);
      context->connectFullMesh(prefixed, device_);
      comms.push_back(std::make_unique<GlooCommunicator>(std::move(context), group.ring_id,
                                                         group.ranks, options_.timeout,
                                                         options_.p2p, watch_.get()));
    } catch (const std::exception& e) {
      return Status(StatusCode::kInternal, Location{},
                    fmt::format("gloo: rank {} cannot connect to process group {} (ranks [{}]): {}",
                                rank, group.ring_id, fmt::join(group.ranks, ", "), e.what()));
    }
  }
  return comms;
}

RankWorldFactory GlooWorld::ThreadsFactory(GlooWorldOptions options) {
  return [options](int world_size, std::vector<CommGroup> groups,
                   const schedules::P2pModel& p2p) -> StatusOr<std::unique_ptr<RankWorld>> {
    GlooWorldOptions with_model = options;
    with_model.p2p = p2p;
    IRM_ASSIGN_OR_RETURN(std::unique_ptr<GlooWorld> world,
                         CreateThreads(world_size, std::move(groups), with_model));
    return std::unique_ptr<RankWorld>(std::move(world));
  };
}

RankWorldFactory GlooWorld::ProcessRankFactory(int rank, std::string store_dir,
                                               GlooWorldOptions options) {
  return [rank, store_dir, options](
             int world_size, std::vector<CommGroup> groups,
             const schedules::P2pModel& p2p) -> StatusOr<std::unique_ptr<RankWorld>> {
    GlooWorldOptions with_model = options;
    with_model.p2p = p2p;
    IRM_ASSIGN_OR_RETURN(
        std::unique_ptr<GlooWorld> world,
        CreateProcessRank(world_size, rank, std::move(groups), store_dir, with_model));
    return std::unique_ptr<RankWorld>(std::move(world));
  };
}

StatusOr<Communicator*> GlooWorld::For(int rank, int ring_id) {
  auto it = comms_.find({rank, ring_id});
  if (it != comms_.end()) return static_cast<Communicator*>(it->second.get());
  auto group = std::find_if(groups_.begin(), groups_.end(),
                            [&](const CommGroup& g) { return g.ring_id == ring_id; });
  if (group == groups_.end()) {
    return Status(StatusCode::kNotFound, Location{},
                  fmt::format("ring_id {} names no process group", ring_id));
  }
  if (std::find(group->ranks.begin(), group->ranks.end(), rank) == group->ranks.end()) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("process group {} (ranks [{}]) does not hold rank {}", ring_id,
                              fmt::join(group->ranks, ", "), rank));
  }
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("rank {} is not hosted by this process", rank));
}

CommContext GlooWorld::Context(int rank) {
  CommContext context;
  context.rank = rank;
  context.communicator = [this, rank](int ring_id) { return For(rank, ring_id); };
  return context;
}

StatusOr<std::shared_ptr<gloo::Context>> GlooWorld::GlooContext(int rank, int ring_id) {
  auto it = comms_.find({rank, ring_id});
  if (it == comms_.end()) {
    IRM_RETURN_IF_ERROR(For(rank, ring_id).status());
  }
  return it->second->context();
}

const CommTrace* GlooWorld::trace(int rank) const {
  auto it = traces_.find(rank);
  return it == traces_.end() ? nullptr : it->second.get();
}

Status GlooWorld::RunRanks(const std::function<Status(int rank)>& fn) {
  std::fill(statuses_.begin(), statuses_.end(), Status::Ok());
  for (auto& [rank, trace] : traces_) trace->Clear();
  // Whether `rank` failed in a Gloo call (a timeout, a peer gone) rather than on its own, and
  // whether in a timeout.
  const auto failed_in_gloo = [this](int rank, bool timeouts_only) {
    for (const auto& [key, comm] : comms_) {
      if (key.first == rank && comm->failed() && (!timeouts_only || comm->timed_out())) {
        return true;
      }
    }
    return false;
  };
  // A hang decided by the watch ends every hosted rank's pending call at once.
  watch_->Start([this] {
    for (auto& [key, comm] : comms_) comm->AbortWaits();
  });
  std::vector<std::thread> threads;
  for (int rank : hosted_) {
    threads.emplace_back([this, &fn, &failed_in_gloo, rank] {
      Status status = fn(rank);
      // Buffered messages must be taken before the rank counts as finished.
      for (auto& [key, comm] : comms_) {
        if (!status.ok()) break;
        if (key.first == rank) status = comm->Flush();
      }
      watch_->Finish(rank, status.ok());
      if (!status.ok() && !failed_in_gloo(rank, false)) {
        // Peers blocked on this rank fail now rather than after the timeout. (A rank that timed
        // out is not closed here; its peers report their own timeouts, or see the connection
        // closed when Gloo drops the timed-out pair first.)
        for (auto& [key, comm] : comms_) {
          if (key.first == rank) comm->Close();
        }
      }
      statuses_[static_cast<size_t>(rank)] = std::move(status);
    });
  }
  for (std::thread& t : threads) t.join();
  watch_->Stop();
  // The cause before its consequences: a rank's own failure, then a timeout (a hang: when one
  // rank gives up, Gloo closes its connections and a peer still waiting sees them closed), then
  // any other.
  const auto first_failed = [&](const auto& picked) -> const Status* {
    for (int rank : hosted_) {
      const Status& status = statuses_[static_cast<size_t>(rank)];
      if (!status.ok() && picked(rank)) return &status;
    }
    return nullptr;
  };
  for (const Status* status : {first_failed([&](int rank) { return !failed_in_gloo(rank, false); }),
                               first_failed([&](int rank) { return failed_in_gloo(rank, true); }),
                               first_failed([](int) { return true; })}) {
    if (status != nullptr) return *status;
  }
  return Status::Ok();
}

}  // namespace irm::rt
