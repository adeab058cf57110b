// Running one rank of a bundle (docs/bundle.md) on the reference runtime: its programs loaded and
// bound to the executor of the bundle's IR (legacy or pir), the startup program once, then the
// bundle's steps of the rank's plan (plan_executor.h) — or of its `main` program, one job per step,
// for a rank without plan.json — with the step's whole-batch feeds given by name or drawn at
// random from the seed (run.h's RandomFeed), and the fetches of every step. The rank's shards
// (shards.json) reach the startup program's executor (ExecutorOptions::shards), so a sharded
// parameter starts from the serial initialiser's numbers for its elements.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/plan_executor.h"
#include "reference_runtime/program_file.h"

namespace irm::rt {

struct BundleRunConfig {
  int rank = 0;
  int steps = 0;                 // 0: the bundle's steps; below 0 is an error
  std::optional<uint64_t> seed;  // default: the bundle's seed
  std::string startup;           // a startup program file instead of the rank's own
  // Whole-batch feeds by name, used at every step (split into micro-batches by the bundle's rules).
  // Each must be a feed the rank can take (feed_names()) unless check_feed_names is unset.
  FeedMap feeds;
  // Unset by a caller that checks `feeds` itself: RunBundleRanks, against every hosted rank's.
  bool check_feed_names = true;
  // Feeds the rank's programs declare that `feeds` lacks are drawn at random when set (the
  // bundle's dtype and dims, -1 dims of batch_size); otherwise a missing feed is an error.
  bool random_feeds = false;
  int64_t batch_size = 4;  // at least 1 when a random feed has a -1 dim (CheckRandomFeed)
  // This rank's data-parallel replica and the number of replicas. Random feeds split by batch are
  // drawn for every replica at once (dim 0 times feed_replicas) and the replica takes its rows,
  // so a serial run of feed_replicas times the rows draws the very same global batch.
  int feed_replica = 0;
  int feed_replicas = 1;
  // Fetch these (each must have a value in every micro-batch); default: the bundle's fetches that
  // the rank has, or without any, the job programs' fetch lists.
  std::vector<std::string> fetch;
  // Kernels, GEMM mode, observer; the seed and file are set per program, and the rank's shards
  // are added to the startup program's `options.shards` (a shard of the bundle replaces one of the
  // same name).
  ExecutorOptions options;
  JobCallback on_job;  // before each job, when set
};

using PlanStepCallback = std::function<void(const PlanStepResult&)>;

class BundleRankRunner {
 public:
  // Reads the bundle in `dir`, loads and checks (LoadProgramForRun) the startup program and the
  // program of every job type the rank's plan runs, and checks the plan (PlanExecutor::Create).
  // Errors: ReadBundle's; kNotFound for a rank the bundle lacks or a rank without plan.json and
  // without `main`; LoadProgramForRun's; kInvalidArgument for a program in the other IR than the
  // bundle's `ir`, for a plan PlanExecutor refuses, for steps below 1, for a feed not in
  // feed_names(); CheckRandomFeed's for a random feed that cannot be drawn.
  static StatusOr<BundleRankRunner> Load(const std::string& dir, const BundleRunConfig& config);

  // Runs the startup program in `root`, then steps() steps; `on_step` after each.
  StatusOr<std::vector<PlanStepResult>> Run(Scope& root, const PlanStepCallback& on_step = {});

  const oldir::Bundle& bundle() const { return bundle_; }
  int steps() const { return steps_; }
  uint64_t seed() const { return seed_; }
  bool new_ir() const { return bundle_.ir == oldir::BundleIr::kPir; }
  // The rank folder ("DIR/rank0").
  const std::string& rank_dir() const { return rank_dir_; }
  // The names the rank takes as feeds: the bundle's declared feeds and every feed of the rank's
  // job programs; sorted.
  const std::vector<std::string>& feed_names() const { return feed_names_; }

 private:
  BundleRankRunner() = default;
  // The whole-batch feeds of step `step`: the given ones plus random ones for what is missing.
  StatusOr<FeedMap> StepFeeds(int step) const;
  // A random feed of this rank's replica (BundleRunConfig::feed_replica).
  StatusOr<Tensor> RandomReplicaFeed(const FeedSpec& spec, int step) const;
  // Whether `spec`'s random feed is drawn for every replica at once and split by rows.
  bool SplitAmongReplicas(const FeedSpec& spec) const;
  // What RandomFeed draws for `spec`: with several replicas and a feed split by rows, the global
  // batch of every replica. CheckRandomFeed's errors, and kInternal when the global batch
  // overflows.
  StatusOr<FeedSpec> DrawnSpec(const FeedSpec& spec) const;

  BundleRunConfig config_;
  oldir::Bundle bundle_;
  std::string rank_dir_;
  int steps_ = 1;
  uint64_t seed_ = 0;
  std::optional<LoadedProgram> startup_;
  // By job type; the PlanExecutor points at their executors (heap objects, stable under moves).
  std::map<std::string, LoadedProgram, std::less<>> programs_;
  // The feeds the rank's programs read: what RandomFeed draws for each.
  std::vector<FeedSpec> feed_specs_;
  std::vector<std::string> feed_names_;
  std::optional<PlanExecutor> plan_;
};

}  // namespace irm::rt
