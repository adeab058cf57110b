// RunBundleRanks (multi_rank_run.h): every hosted rank of a bundle on a RankWorld, the thread
// world unless the config names another backend.
#include "reference_runtime/multi_rank_run.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

// The thread world as a RankWorld: it hosts every rank.
class ThreadRankWorld final : public RankWorld {
 public:
  explicit ThreadRankWorld(std::unique_ptr<ThreadWorld> world) : world_(std::move(world)) {
    for (int r = 0; r < world_->world_size(); ++r) hosted_.push_back(r);
  }
  int world_size() const override { return world_->world_size(); }
  const std::vector<int>& hosted_ranks() const override { return hosted_; }
  CommContext Context(int rank) override { return world_->Context(rank); }
  Status RunRanks(const std::function<Status(int rank)>& fn) override {
    return world_->RunRanks(fn);
  }
  const CommTrace* trace(int rank) const override { return world_->trace(rank); }

 private:
  std::unique_ptr<ThreadWorld> world_;
  std::vector<int> hosted_;
};

}  // namespace

StatusOr<int> DataParallelDegree(const oldir::Bundle& bundle) {
  int dp_degree = 1;
  if (bundle.strategy.is_object() && bundle.strategy.contains("dp_degree")) {
    const nlohmann::json& value = bundle.strategy["dp_degree"];
    if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
        bundle.world_size % value.get<int64_t>() != 0) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("strategy.dp_degree {} must be a positive integer dividing the "
                                "world size {}",
                                value.dump(), bundle.world_size));
    }
    dp_degree = value.get<int>();
  }
  return dp_degree;
}

StatusOr<MultiRankResult> RunBundleRanks(const std::string& dir, const MultiRankConfig& config) {
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle bundle, oldir::ReadBundle(dir));
  std::vector<CommGroup> groups;
  for (const oldir::ProcessGroup& group : bundle.process_groups) {
    groups.push_back({group.ring_id, group.ranks});
  }
  ThreadWorldOptions world = config.world;
  world.p2p = config.p2p.value_or(bundle.p2p.value_or(schedules::P2pModel::Rendezvous()));
  MultiRankResult result;
  if (config.make_world) {
    IRM_ASSIGN_OR_RETURN(result.world,
                         config.make_world(bundle.world_size, std::move(groups), world.p2p));
  } else {
    IRM_ASSIGN_OR_RETURN(std::unique_ptr<ThreadWorld> threads,
                         ThreadWorld::Create(bundle.world_size, std::move(groups), world));
    result.world = std::make_unique<ThreadRankWorld>(std::move(threads));
  }
  const int world_size = bundle.world_size;
  if (result.world->world_size() != world_size) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  fmt::format("the backend's world has {} ranks, the bundle's {}",
                              result.world->world_size(), world_size));
  }
  IRM_ASSIGN_OR_RETURN(const int replicas, DataParallelDegree(bundle));

  // Stable addresses: the executors keep pointers to their rank's context.
  std::vector<std::unique_ptr<CommContext>> contexts;
  std::map<int, BundleRankRunner> runners;
  for (int rank : result.world->hosted_ranks()) {
    contexts.push_back(std::make_unique<CommContext>(result.world->Context(rank)));
    CommContext* context = contexts.back().get();
    BundleRunConfig rank_config = config.rank_config;
    rank_config.rank = rank;
    // A feed may be one only some ranks read (the labels of a pipeline's last stage).
    rank_config.check_feed_names = false;
    const int replica = rank / (world_size / replicas);
    rank_config.feed_replica = replica;
    rank_config.feed_replicas = replicas;
    rank_config.options.comm = context;
    rank_config.options.observer = config.observer ? config.observer(rank) : nullptr;
    rank_config.on_job = [context, rank, &config](const JobContext& job) {
      context->job = std::string(job.job_type);
      context->micro_batch = job.micro_batch;
      context->step = job.step;
      if (config.on_job) config.on_job(rank, job);
    };
    StatusOr<BundleRankRunner> runner = BundleRankRunner::Load(dir, rank_config);
    if (!runner.ok()) return Status(runner.status()).AddNote(fmt::format("loading rank {}", rank));
    runners.emplace(rank, std::move(runner).value());
  }
  if (config.rank_config.check_feed_names) {
    std::set<std::string> known;
    for (const auto& [rank, runner] : runners) {
      known.insert(runner.feed_names().begin(), runner.feed_names().end());
    }
    IRM_RETURN_IF_ERROR(CheckFeedNames(config.rank_config.feeds,
                                       std::vector<std::string>(known.begin(), known.end()),
                                       "the bundle")
                            .InFile(dir));
  }
  if (config.on_loaded) config.on_loaded();

  result.ranks.resize(static_cast<size_t>(world_size));
  for (RankOutcome& outcome : result.ranks) outcome.scope = std::make_unique<Scope>();
  const Status status = result.world->RunRanks([&](int rank) -> Status {
    RankOutcome& outcome = result.ranks[static_cast<size_t>(rank)];
    StatusOr<std::vector<PlanStepResult>> steps =
        runners.at(rank).Run(*outcome.scope, [&](const PlanStepResult& step) {
          if (config.on_step) config.on_step(rank, step);
        });
    if (!steps.ok()) return Status(steps.status()).AddNote(fmt::format("on rank {}", rank));
    outcome.steps = std::move(steps).value();
    return Status::Ok();
  });
  IRM_RETURN_IF_ERROR(status);
  return result;
}

}  // namespace irm::rt
