// The passes of a strategy in Paddle's order (apply_strategy.h).
#include "oldir/passes/apply_strategy.h"

#include <utility>

#include "oldir/passes/gradient_merge.h"

namespace irm::oldir::passes {

StatusOr<DistributedPrograms> ApplyStrategy(const Program& startup, const Program& main,
                                            const Strategy& strategy) {
  IRM_ASSIGN_OR_RETURN(DistributedPrograms programs, ApplyDataParallel(startup, main, strategy));
  if (!strategy.gradient_merge.enable) return programs;
  GradientMergeOptions options;
  options.k_steps = strategy.gradient_merge.k_steps;
  options.avg = strategy.gradient_merge.avg;
  // The replicas' programs are identical: merge one and copy it, so that they stay so.
  RankPrograms merged = programs.ranks.front();
  IRM_RETURN_IF_ERROR(ApplyGradientMerge(merged.main, merged.startup, options));
  for (RankPrograms& rank : programs.ranks) rank = merged;
  return programs;
}

}  // namespace irm::oldir::passes
