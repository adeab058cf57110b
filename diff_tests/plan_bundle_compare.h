// Two pir bundles whose ranks run plans of jobs (pipeline stages) compared rank by rank: the
// engine's legacy-vs-new check for a pipeline strategy, where the legacy passes' bundle
// translated runs Paddle's legacy job programs and plans (forward, backward, optimizer) and the
// new IR's road runs the PIR split's (recv_forward / send_backward of PIR 1F1B and VPP,
// pipeline_split.h). pir_bundle_compare.h takes ranks with one main program; this is its twin for
// plans: each rank's startup and each job type's program (the union of both sides' types) are
// aligned op by op, a job type only one side has counted as all its ops on that side only; where
// every program of every rank has the same ops in the same order, the runs must agree bit for bit,
// else in the reordered tier. Both bundles run on the thread world with the same seed and random
// feeds, each with the point-to-point model its bundle.json states; every step's fetches (merged
// over the micro-batches) and every persistable var of every rank after the run are compared; with
// data parallelism the loss as its mean over the replicas of the last stage
// (CompareFetchesOverReplicas: the legacy passes fetch each replica's own loss, the new IR's stage
// meshes the replicas' mean). The report's "legacy" side is bundle A, its "new-IR" side bundle B.
#pragma once

#include <string>

#include "common/status.h"
#include "diff_tests/pir_bundle_compare.h"

namespace irm::diff {

// Errors: ReadBundle's; kInvalidArgument when either is not a pir bundle or their world sizes or
// data-parallel degrees differ; a program that does not load; either run's failure, with a note
// naming the side (a hang is kInternal). PirBundleCompareOptions::shadow arbitrates as
// ComparePirBundles does.
StatusOr<PirBundleComparison> ComparePlanBundles(const std::string& a_dir, const std::string& b_dir,
                                                 const PirBundleCompareOptions& options = {});

}  // namespace irm::diff
