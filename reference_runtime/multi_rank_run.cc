// RunBundleRanks (multi_rank_run.h): every rank of a bundle on the thread world.
#include "reference_runtime/multi_rank_run.h"

#include <fmt/format.h>

namespace irm::rt {

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
  MultiRankResult result;
  IRM_ASSIGN_OR_RETURN(result.world,
                       ThreadWorld::Create(bundle.world_size, std::move(groups), config.world));
  const int world_size = bundle.world_size;
  IRM_ASSIGN_OR_RETURN(const int replicas, DataParallelDegree(bundle));

  // Stable addresses: the executors keep pointers to their rank's context.
  std::vector<std::unique_ptr<CommContext>> contexts;
  std::vector<BundleRankRunner> runners;
  for (int rank = 0; rank < world_size; ++rank) {
    contexts.push_back(std::make_unique<CommContext>(result.world->Context(rank)));
    CommContext* context = contexts.back().get();
    BundleRunConfig rank_config = config.rank_config;
    rank_config.rank = rank;
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
    runners.push_back(std::move(runner).value());
  }

  result.ranks.resize(static_cast<size_t>(world_size));
  for (RankOutcome& outcome : result.ranks) outcome.scope = std::make_unique<Scope>();
  const Status status = result.world->RunRanks([&](int rank) -> Status {
    RankOutcome& outcome = result.ranks[static_cast<size_t>(rank)];
    StatusOr<std::vector<PlanStepResult>> steps =
        runners[static_cast<size_t>(rank)].Run(*outcome.scope, [&](const PlanStepResult& step) {
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
