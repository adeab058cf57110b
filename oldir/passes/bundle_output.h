// Writing what a pass made of a serial program (DistributedPrograms) as a legacy bundle
// (docs/bundle.md): per rank its startup program and either its main program as job "main" run
// once per step or its job programs and plan, and its shards; the process groups, world size and
// micro-batches from the pass, everything else from the caller.
#pragma once

#include <string>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/passes/distributed_programs.h"

namespace irm::oldir::passes {

// Writes `programs` into `dir` with bundle.json from `bundle` (feeds, fetches, steps, seed,
// strategy: the caller's; world_size, process_groups, micro_batches and ranks: replaced from
// `programs`).
// Returns the bundle as written.
StatusOr<Bundle> WriteDistributedBundle(const DistributedPrograms& programs, Bundle bundle,
                                        const std::string& dir,
                                        const RankProgramsOptions& options = {});

}  // namespace irm::oldir::passes
