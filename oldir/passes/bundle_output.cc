// Writing a pass's per-rank programs as a bundle (bundle_output.h).
#include "oldir/passes/bundle_output.h"

#include <map>

namespace irm::oldir::passes {

StatusOr<Bundle> WriteDistributedBundle(const DistributedPrograms& programs, Bundle bundle,
                                        const std::string& dir,
                                        const RankProgramsOptions& options) {
  bundle.world_size = programs.world_size;
  bundle.process_groups = programs.process_groups;
  bundle.micro_batches = programs.micro_batches;
  bundle.ranks.clear();
  for (size_t r = 0; r < programs.ranks.size(); ++r) {
    const RankPrograms& source = programs.ranks[r];
    std::map<std::string, Program> jobs = source.jobs;
    if (jobs.empty()) jobs.emplace("main", source.main);
    IRM_ASSIGN_OR_RETURN(BundleRank rank, WriteLegacyRankPrograms(dir, static_cast<int>(r),
                                                                  source.startup, jobs, options));
    rank.plan = source.plan;
    rank.shards = source.shards;
    bundle.ranks.push_back(std::move(rank));
  }
  IRM_RETURN_IF_ERROR(WriteBundle(bundle, dir));
  return bundle;
}

}  // namespace irm::oldir::passes
