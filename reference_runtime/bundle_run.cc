// BundleRankRunner (bundle_run.h): loading a bundle rank's programs, its feeds, and the steps.
#include "reference_runtime/bundle_run.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "common/file_io.h"
#include "newir/program_io.h"
#include "oldir/program_io.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

const char* IrWords(bool new_ir) { return new_ir ? "new-IR" : "legacy"; }

// The bundle check (oldir::CheckBundle) of a legacy bundle: its errors, the first one with the
// others as notes. A job program reads what earlier jobs of its micro-batch wrote, so it is
// validated with the bundle's rules, not alone as LoadProgramForRun would.
Status CheckLegacyBundle(const oldir::Bundle& bundle, const std::string& dir,
                         const FeedMap& given_feeds) {
  oldir::BundleValidateOptions options;
  for (const auto& [name, tensor] : given_feeds) options.extra_feeds.insert(name);
  const oldir::BundleCheck check = oldir::CheckBundle(bundle, dir, options);
  std::optional<Status> status;
  for (const Diagnostic& d : check.findings.items()) {
    if (d.severity != Severity::kError) continue;
    if (!status.has_value()) {
      status = Status(check.usable ? StatusCode::kInvalid : StatusCode::kInvalidArgument, d);
    } else {
      status->AddNote(d.location.Render() + ": " + d.message);
    }
  }
  return status.value_or(Status::Ok());
}

// A program of the bundle bound to its executor: a legacy one parsed (the bundle check validated
// it), a new-IR one through LoadProgramForRun (parsed and verified).
StatusOr<LoadedProgram> LoadForBundle(const oldir::Bundle& bundle, const std::string& path,
                                      ExecutorOptions options) {
  IRM_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  const bool new_ir = newir::DetectFileFormat(bytes).has_value();
  if (new_ir != (bundle.ir == oldir::BundleIr::kPir)) {
    return Status(StatusCode::kInvalidArgument, Location::File(path),
                  fmt::format("a {} program in a bundle whose ir is '{}'", IrWords(new_ir),
                              oldir::BundleIrName(bundle.ir)));
  }
  if (new_ir) return LoadProgramForRun(path, std::move(options));
  LoadedProgram loaded;
  loaded.file = path;
  options.file = path;
  IRM_ASSIGN_OR_RETURN(oldir::Program program, oldir::ParseProgram(bytes, path));
  loaded.legacy = std::make_unique<oldir::Program>(std::move(program));
  auto executor = std::make_unique<LegacyExecutor>(*loaded.legacy, std::move(options));
  IRM_RETURN_IF_ERROR(executor->plan_status());
  loaded.executor = std::move(executor);
  return loaded;
}

}  // namespace

StatusOr<BundleRankRunner> BundleRankRunner::Load(const std::string& dir,
                                                  const BundleRunConfig& config) {
  BundleRankRunner runner;
  runner.config_ = config;
  IRM_ASSIGN_OR_RETURN(runner.bundle_, oldir::ReadBundle(dir));
  const oldir::Bundle& bundle = runner.bundle_;
  auto rank = std::find_if(bundle.ranks.begin(), bundle.ranks.end(),
                           [&](const oldir::BundleRank& r) { return r.rank == config.rank; });
  if (rank == bundle.ranks.end()) {
    return Status(StatusCode::kNotFound, Location::File(dir),
                  fmt::format("the bundle has no rank {}", config.rank));
  }
  runner.rank_dir_ = oldir::RankDir(dir, config.rank);
  if (bundle.ir == oldir::BundleIr::kLegacy) {
    IRM_RETURN_IF_ERROR(CheckLegacyBundle(bundle, dir, config.feeds));
  }
  if (!rank->plan.has_value() && !rank->programs.contains("main")) {
    return Status(StatusCode::kNotFound, Location::File(runner.rank_dir_),
                  "a rank without a plan runs its main program, and there is none");
  }
  runner.steps_ = config.steps > 0 ? config.steps : bundle.steps;
  if (config.steps < 0 || runner.steps_ < 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  fmt::format("steps must be at least 1, got {}{}",
                              config.steps < 0 ? config.steps : runner.steps_,
                              config.steps < 0 ? "" : " (the bundle's)"));
  }
  runner.seed_ = config.seed.has_value() ? *config.seed : static_cast<uint64_t>(bundle.seed);
  ExecutorOptions options = config.options;
  options.seed = runner.seed_;
  // The startup program, in either IR: its random initialisers draw the serial numbers of each
  // sharded parameter's elements. The job programs initialise nothing, so their executors skip
  // the per-op shard lookup.
  ExecutorOptions startup_options = options;
  for (const auto& [name, slice] : rank->shards) {
    startup_options.shards.insert_or_assign(name, OutputShard{slice.global_shape, slice.offsets});
  }

  const std::string startup = !config.startup.empty() ? config.startup
                              : rank->startup.empty()
                                  ? std::string()
                                  : oldir::RankFile(dir, config.rank, rank->startup);
  if (!startup.empty()) {
    IRM_ASSIGN_OR_RETURN(LoadedProgram loaded, LoadForBundle(bundle, startup, startup_options));
    runner.startup_ = std::move(loaded);
  }

  // The programs of the job types the plan runs, in the order it first runs them; a job type
  // without a program file is left to PlanExecutor::Create to report.
  const std::vector<oldir::PlanJob> jobs =
      rank->plan.has_value() ? *rank->plan : std::vector<oldir::PlanJob>{{"main", 0}};
  std::map<std::string, Executor*, std::less<>> executors;
  for (const oldir::PlanJob& job : jobs) {
    auto file = rank->programs.find(job.type);
    if (executors.contains(job.type) || file == rank->programs.end()) continue;
    IRM_ASSIGN_OR_RETURN(
        LoadedProgram loaded,
        LoadForBundle(bundle, oldir::RankFile(dir, config.rank, file->second), options));
    executors[job.type] = loaded.executor.get();
    for (FeedSpec& spec : loaded.executor->FeedSpecs()) {
      runner.feed_names_.push_back(spec.name);
      auto listed = std::find_if(bundle.feeds.begin(), bundle.feeds.end(),
                                 [&](const oldir::FeedSpec& f) { return f.name == spec.name; });
      const bool known = std::any_of(runner.feed_specs_.begin(), runner.feed_specs_.end(),
                                     [&](const FeedSpec& f) { return f.name == spec.name; });
      if (known) continue;
      if (listed != bundle.feeds.end() && rank->plan.has_value()) {
        // The whole batch is drawn as the bundle declares it, then split.
        std::optional<DType> dtype = DTypeFromName(listed->dtype);
        if (!dtype) {
          return Status(StatusCode::kInvalidArgument, Location::File(dir + "/bundle.json"),
                        fmt::format("feed '{}' has dtype '{}', which is not a dtype name",
                                    listed->name, listed->dtype));
        }
        spec.dtype = *dtype;
        spec.shape = listed->shape;
        runner.feed_specs_.push_back(std::move(spec));
      } else if (listed != bundle.feeds.end() || !rank->plan.has_value()) {
        // A rank running main takes its program's own declarations, as `run` of a program does.
        runner.feed_specs_.push_back(std::move(spec));
      }
      // Otherwise, in a plan, a value an earlier job of the micro-batch hands on: not a feed.
    }
    runner.programs_.emplace(job.type, std::move(loaded));
  }
  // An index feed one job feeds and another reads (VPP's labels: fed in forward0, read by the
  // loss in the last chunk's job) takes its bound from the job that reads it.
  for (FeedSpec& spec : runner.feed_specs_) {
    if (spec.index_bound > 0) continue;
    for (const auto& [type, loaded] : runner.programs_) {
      spec.index_bound = loaded.executor->IndexBound(spec.name);
      if (spec.index_bound > 0) break;
    }
  }
  for (const oldir::FeedSpec& feed : bundle.feeds) runner.feed_names_.push_back(feed.name);
  std::vector<std::string>& names = runner.feed_names_;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (config.check_feed_names) {
    IRM_RETURN_IF_ERROR(
        CheckFeedNames(config.feeds, names, fmt::format("rank {} of the bundle", config.rank))
            .InFile(dir));
  }
  // Random feeds that cannot be drawn fail here, before the startup program runs.
  if (config.random_feeds) {
    for (const FeedSpec& spec : runner.feed_specs_) {
      if (config.feeds.contains(spec.name)) continue;
      IRM_RETURN_IF_ERROR(Status(runner.DrawnSpec(spec).status()).InFile(runner.rank_dir_));
    }
  }

  PlanConfig plan;
  plan.jobs = rank->plan;
  plan.micro_batches = bundle.micro_batches;
  for (const oldir::FeedSpec& feed : bundle.feeds) plan.splits[feed.name] = feed.split;
  if (!config.fetch.empty()) {
    plan.fetches = config.fetch;
  } else {
    plan.fetches = bundle.fetches;
    plan.require_fetches = false;
  }
  plan.file =
      rank->plan.has_value() ? oldir::RankFile(dir, config.rank, "plan.json") : runner.rank_dir_;
  IRM_ASSIGN_OR_RETURN(PlanExecutor executor, PlanExecutor::Create(executors, std::move(plan)));
  runner.plan_ = std::move(executor);
  if (config.on_job) runner.plan_->set_job_callback(config.on_job);
  return runner;
}

StatusOr<FeedMap> BundleRankRunner::StepFeeds(int step) const {
  FeedMap feeds = config_.feeds;
  for (const FeedSpec& spec : feed_specs_) {
    if (feeds.contains(spec.name)) continue;
    if (!config_.random_feeds) {
      return Status(StatusCode::kNotFound, Location{},
                    fmt::format("no feed for '{}' ({}{}); give one, or ask for random feeds",
                                spec.name, DTypeName(spec.dtype), ShapeToString(spec.shape)));
    }
    IRM_ASSIGN_OR_RETURN(feeds[spec.name], RandomReplicaFeed(spec, step));
  }
  return feeds;
}

bool BundleRankRunner::SplitAmongReplicas(const FeedSpec& spec) const {
  auto listed = std::find_if(bundle_.feeds.begin(), bundle_.feeds.end(),
                             [&](const oldir::FeedSpec& f) { return f.name == spec.name; });
  const bool replicated =
      listed != bundle_.feeds.end() && listed->split == oldir::FeedSplit::kReplicate;
  return config_.feed_replicas > 1 && !spec.shape.empty() && !replicated;
}

StatusOr<FeedSpec> BundleRankRunner::DrawnSpec(const FeedSpec& spec) const {
  IRM_RETURN_IF_ERROR(CheckRandomFeed(spec, config_.batch_size));
  if (!SplitAmongReplicas(spec)) return spec;
  FeedSpec global = spec;
  const int64_t rows = spec.shape[0] < 0 ? config_.batch_size : spec.shape[0];
  const int64_t replicas = config_.feed_replicas;
  if (__builtin_mul_overflow(rows, replicas, &global.shape[0])) {
    return Status(StatusCode::kInternal, Location{}.AtVar(spec.name),
                  fmt::format("feed '{}': {} rows for each of {} replicas overflow a dim",
                              spec.name, rows, replicas));
  }
  IRM_RETURN_IF_ERROR(CheckRandomFeed(global, config_.batch_size));
  return global;
}

StatusOr<Tensor> BundleRankRunner::RandomReplicaFeed(const FeedSpec& spec, int step) const {
  IRM_ASSIGN_OR_RETURN(const FeedSpec drawn, DrawnSpec(spec));
  const Tensor whole = RandomFeed(drawn, seed_, step, config_.batch_size);
  if (!SplitAmongReplicas(spec)) return whole;
  const int64_t rows = spec.shape[0] < 0 ? config_.batch_size : spec.shape[0];
  return whole.Slice(rows * config_.feed_replica, rows * (config_.feed_replica + 1));
}

StatusOr<std::vector<PlanStepResult>> BundleRankRunner::Run(Scope& root,
                                                            const PlanStepCallback& on_step) {
  if (startup_.has_value()) {
    StatusOr<std::vector<Fetch>> ignored = startup_->executor->Run(root, {});
    if (!ignored.ok()) {
      return Status(ignored.status()).InFile(startup_->file).AddNote("in the startup program");
    }
  }
  std::vector<PlanStepResult> results;
  for (int step = 1; step <= steps_; ++step) {
    StatusOr<FeedMap> feeds = StepFeeds(step);
    if (!feeds.ok()) return Status(feeds.status()).AddNote(fmt::format("in step {}", step));
    StatusOr<PlanStepResult> result = plan_->RunStep(root, *feeds);
    if (!result.ok()) return result.status();  // a job's error names the step
    if (on_step) on_step(*result);
    results.push_back(std::move(result).value());
  }
  return results;
}

}  // namespace irm::rt
