// The passes of a strategy in Paddle's order (apply_strategy.h).
#include "oldir/passes/apply_strategy.h"

#include <utility>
#include <vector>

#include "oldir/passes/data_parallel.h"
#include "oldir/passes/gradient_merge.h"
#include "oldir/passes/pipeline_jobs.h"
#include "oldir/passes/pipeline_stages.h"
#include "oldir/passes/tensor_parallel.h"

namespace irm::oldir::passes {

namespace {

// The shards of the vars `startup` still declares (a stage keeps only its own parameters).
std::map<std::string, ShardSlice> ShardsOf(const std::map<std::string, ShardSlice>& shards,
                                           const Program& startup) {
  std::map<std::string, ShardSlice> kept;
  for (const auto& entry : shards) {
    if (startup.root().FindVar(entry.first)) kept.insert(entry);
  }
  return kept;
}

}  // namespace

StatusOr<DistributedPrograms> ApplyStrategy(const Program& startup, const Program& main,
                                            const Strategy& strategy,
                                            const ApplyStrategyOptions& options) {
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  const Topology topology{strategy.dp_degree, strategy.pp_degree, strategy.mp_degree};
  Placements placements;
  if (topology.mp > 1) {
    if (options.placements) {
      placements = *options.placements;
    } else {
      IRM_ASSIGN_OR_RETURN(placements, MegatronPlacements(main));
    }
  }
  RingRegistry rings;
  DistributedPrograms out;
  out.world_size = topology.world_size();
  out.micro_batches = topology.pp > 1 ? strategy.pipeline.accumulate_steps : 1;
  for (int rank = 0; rank < topology.world_size(); ++rank) {
    const int d = topology.DpIndex(rank);
    const int p = topology.PpIndex(rank);
    const int m = topology.MpIndex(rank);
    RankPrograms programs = SingleProgramRank(startup, main);
    if (topology.mp > 1) {
      TensorParallelOptions tp;
      tp.mp_degree = topology.mp;
      tp.mp_rank = m;
      tp.ring_id = rings.Ring(topology.MpGroup(rank));
      tp.placements = placements;
      IRM_ASSIGN_OR_RETURN(programs, ApplyTensorParallel(startup, main, tp));
    }
    std::optional<StagePrograms> stage;
    if (topology.pp > 1) {
      PipelinePartitionOptions partition;
      partition.pp_degree = topology.pp;
      partition.vpp_degree = strategy.pipeline.vpp_degree;
      partition.micro_batch_size = options.micro_batch_size;
      partition.ring = [&](int from, int to) {
        return rings.Ring({topology.Rank(d, from, m), topology.Rank(d, to, m)});
      };
      partition.file = "main";
      IRM_ASSIGN_OR_RETURN(std::vector<StagePrograms> stages,
                           PartitionStages(programs.startup, programs.main, partition));
      stage = std::move(stages[p]);
      programs.shards = ShardsOf(programs.shards, stage->startup);
      programs.startup = stage->startup;
      programs.main = stage->main;
    }
    if (topology.dp > 1) {
      IRM_ASSIGN_OR_RETURN(programs.main, SynchronizeGradients(programs.main, strategy,
                                                               rings.Ring(topology.DpGroup(rank))));
    }
    if (stage) {
      stage->main = programs.main;
      std::map<std::string, ShardSlice> shards = std::move(programs.shards);
      IRM_ASSIGN_OR_RETURN(programs,
                           SplitPipelineJobs(*stage, strategy.pipeline, options.job_lists));
      programs.shards = std::move(shards);
    } else if (strategy.gradient_merge.enable) {
      GradientMergeOptions merge;
      merge.k_steps = strategy.gradient_merge.k_steps;
      merge.avg = strategy.gradient_merge.avg;
      IRM_RETURN_IF_ERROR(ApplyGradientMerge(programs.main, programs.startup, merge));
    }
    out.ranks.push_back(std::move(programs));
  }
  out.process_groups = rings.groups();
  return out;
}

}  // namespace irm::oldir::passes
