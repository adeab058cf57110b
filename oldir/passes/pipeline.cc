// The legacy pipeline pass for a pipeline-only strategy (pipeline.h).
#include "oldir/passes/pipeline.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "oldir/passes/pipeline_jobs.h"
#include "oldir/passes/pipeline_stages.h"

namespace irm::oldir::passes {

StatusOr<DistributedPrograms> ApplyPipeline(const Program& startup, const Program& main,
                                            const Strategy& strategy, int64_t micro_batch_size,
                                            schedules::JobListIr job_lists) {
  if (strategy.dp_degree != 1 || strategy.mp_degree != 1 || !strategy.pipeline.enable ||
      strategy.pp_degree < 2) {
    return Status(StatusCode::kInvalidArgument, Location::File("strategy").AtAttr("pp_degree"),
                  fmt::format("ApplyPipeline takes a pipeline-only strategy (pipeline.enable, "
                              "pp_degree >= 2, dp and mp 1), not dp {} mp {} pp {}{}",
                              strategy.dp_degree, strategy.mp_degree, strategy.pp_degree,
                              strategy.pipeline.enable ? "" : " without pipeline.enable"));
  }
  Topology topology;
  topology.pp = strategy.pp_degree;
  RingRegistry rings;
  PipelinePartitionOptions options;
  options.pp_degree = strategy.pp_degree;
  options.vpp_degree = strategy.pipeline.vpp_degree;
  options.micro_batch_size = micro_batch_size;
  options.ring = [&](int from, int to) {
    return rings.Ring({topology.Rank(0, from, 0), topology.Rank(0, to, 0)});
  };
  options.file = "main";
  IRM_ASSIGN_OR_RETURN(std::vector<StagePrograms> stages, PartitionStages(startup, main, options));
  DistributedPrograms programs;
  programs.world_size = topology.world_size();
  programs.micro_batches = strategy.pipeline.accumulate_steps;
  for (const StagePrograms& stage : stages) {
    IRM_ASSIGN_OR_RETURN(RankPrograms rank, SplitPipelineJobs(stage, strategy.pipeline, job_lists));
    programs.ranks.push_back(std::move(rank));
  }
  programs.process_groups = rings.groups();
  return programs;
}

}  // namespace irm::oldir::passes
