// Running every rank of a bundle at once: the bundle's world (process groups from bundle.json) on a
// communication backend — by default N threads of one ThreadWorld; any RankWorld a factory makes
// otherwise (Gloo: ranks as threads, or this process's one rank of a world of processes) — each
// hosted rank a BundleRankRunner whose
// executors communicate through the rank's CommContext, whose call sites follow the jobs the
// rank's plan runs. A hang (two ranks that both send first) or a rank's failure ends every rank
// at once with what each was waiting for; nothing waits forever.
//
// Random feeds: the ranks of one data-parallel replica read the same rows; replicas read
// different ones. bundle.json's strategy says how many replicas there are (`dp_degree`, default
// 1); with world size W, rank r belongs to replica r / (W / dp_degree). Every step's global batch
// is drawn once from the seed and replica k takes its k-th block of rows (BundleRunConfig's
// feed_replica), as a distributed sampler splits a global batch — so a serial run of the global
// batch sees exactly the rows the replicas saw together.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/bundle_run.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/comm/thread_world.h"

namespace irm::rt {

struct MultiRankConfig {
  // What every rank runs with; `rank`, the feed replica, `options.comm` and `on_job` are set per
  // rank. A feed must be one some hosted rank takes (BundleRankRunner::feed_names()), unless
  // `check_feed_names` is unset.
  BundleRunConfig rank_config;
  // The thread backend's options (timeout, trace), when `make_world` is unset; its `p2p` is
  // replaced by the model below.
  ThreadWorldOptions world;
  // When sends return, in whichever world runs the ranks (the thread backend's, or the one
  // `make_world` makes); unset: the model bundle.json states (Bundle::p2p), else rendezvous.
  std::optional<schedules::P2pModel> p2p;
  // The backend: unset runs every rank as a thread of a ThreadWorld; a factory (e.g.
  // GlooWorld::ThreadsFactory) makes another world, which may host only some of the ranks.
  RankWorldFactory make_world;
  // The observer of rank r's ops (e.g. an OpTraceRecorder's); null or unset: none. Asked once per
  // rank before the ranks start; the observer is then called on the rank's thread only.
  std::function<const OpObserver*(int rank)> observer;
  // Before each job and after each step of rank r, on the rank's thread.
  std::function<void(int rank, const JobContext&)> on_job;
  std::function<void(int rank, const PlanStepResult&)> on_step;
  // Once every hosted rank has loaded, before any runs: a caller can tell a failure to load (bad
  // input, a check of the programs failed) from one while running (a runtime failure), as a run
  // of one rank can.
  std::function<void()> on_loaded;
};

struct RankOutcome {
  // Empty for a rank this process does not host.
  std::vector<PlanStepResult> steps;
  // The rank's root scope after the run: parameters and optimizer state.
  std::unique_ptr<Scope> scope;
};

struct MultiRankResult {
  std::vector<RankOutcome> ranks;
  // The world the ranks ran in: the communication traces (world->trace(rank)) when asked for.
  std::unique_ptr<RankWorld> world;
};

// The strategy's `dp_degree` (1 when absent). kInvalidArgument when it is not a positive integer
// dividing the world size.
StatusOr<int> DataParallelDegree(const oldir::Bundle& bundle);

// Loads every hosted rank of the bundle in `dir` (BundleRankRunner::Load, in rank order: the
// first failure is returned), checks the feeds' names, and runs them together. A rank's error
// carries a note naming the rank and keeps its code (the first rank to fail, not one its failure
// stopped); a hang is kInternal with every rank's pending call.
StatusOr<MultiRankResult> RunBundleRanks(const std::string& dir, const MultiRankConfig& config);

}  // namespace irm::rt
