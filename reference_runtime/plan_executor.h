// PlanExecutor: one rank's training step as Paddle's StandaloneExecutor runs a job plan
// (docs/bundle.md; pipelines.md §1.4-1.5). The whole batch's feeds are cut along dim 0 into m equal
// contiguous micro-batch slices (views; SplitFeedTensors) or replicated; the jobs run in plan
// order, each through its job type's Executor::RunJob in the scope of its micro-batch — a child of
// the root scope, which holds the persistable vars — so what a forward job computes, the backward
// job of the same micro-batch reads by name, while only persistable vars cross micro-batches. The
// micro-batch scopes are made fresh for every step. Fetches are collected per micro-batch and
// merged along dim 0 (MergeFetchTensors; a 0-D loss becomes [m]). A callback hears which
// (step, job, micro-batch) is about to run, for per-op traces and communicators.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "reference_runtime/executor.h"

namespace irm::rt {

// The job about to run.
struct JobContext {
  int step = 0;       // 1-based: the PlanExecutor's RunStep calls so far, this one included
  int job_index = 0;  // position in the plan
  std::string_view job_type;
  int micro_batch = 0;
  int micro_batches = 1;
};
using JobCallback = std::function<void(const JobContext&)>;

using FeedSplits = std::map<std::string, oldir::FeedSplit, std::less<>>;

struct PlanConfig {
  // The ordered jobs; nullopt: one job "main" on micro-batch 0 per step (a rank without plan.json).
  std::optional<std::vector<oldir::PlanJob>> jobs;
  int micro_batches = 1;
  // How each feed reaches the micro-batches; a feed not listed is split by batch (the bundle
  // format's default).
  FeedSplits splits;
  // The names fetched from each micro-batch: what the micro-batch's last job fetching the name
  // fetched, else the name's tensor in the micro-batch scope (or the root scope) after the step.
  // Empty: the fetch lists of the job programs, in plan order.
  std::vector<std::string> fetches;
  // A name of `fetches` that no micro-batch has is an error when set; otherwise it is left out
  // (a pipeline rank that does not compute the loss).
  bool require_fetches = true;
  // Names the plan in diagnostics ("my_bundle/rank0/plan.json").
  std::string file;
};

struct PlanStepResult {
  int step = 0;  // 1-based
  // The fetches of each micro-batch, in fetch order.
  std::vector<std::vector<Fetch>> micro_batches;
  // Each fetch over the micro-batches concatenated along dim 0 (0-D values stacked into [m]);
  // with one micro-batch, its fetches as they are.
  std::vector<Fetch> merged;
};

class PlanExecutor {
 public:
  // `programs`: job type -> executor, not owned (they must outlive the PlanExecutor). Checks the
  // plan: micro_batches >= 1, at least one job, every job's type has a program, every job's
  // micro-batch lies in [0, micro_batches), and every micro-batch has a job (kInvalidArgument,
  // located at config.file).
  static StatusOr<PlanExecutor> Create(std::map<std::string, Executor*, std::less<>> programs,
                                       PlanConfig config);

  // One step over `root` (startup already run): splits the feeds, runs every job in its
  // micro-batch's fresh scope, collects the fetches. Errors: SplitFeeds's; a job's, with a note
  // naming the job; a required fetch no micro-batch has (kNotFound), or one some micro-batches
  // have and others not (kInvalid).
  StatusOr<PlanStepResult> RunStep(Scope& root, const FeedMap& whole_batch_feeds);

  // Called before each job when set.
  void set_job_callback(JobCallback callback) { on_job_ = std::move(callback); }
  const std::vector<oldir::PlanJob>& jobs() const { return jobs_; }
  int micro_batches() const { return config_.micro_batches; }
  int steps_run() const { return steps_run_; }

 private:
  PlanExecutor(std::map<std::string, Executor*, std::less<>> programs, PlanConfig config,
               std::vector<oldir::PlanJob> jobs);
  std::vector<std::string> FetchNames() const;

  std::map<std::string, Executor*, std::less<>> programs_;
  PlanConfig config_;
  std::vector<oldir::PlanJob> jobs_;
  JobCallback on_job_;
  int steps_run_ = 0;
};

// The micro-batches' feeds: each `batch` feed cut along dim 0 into `micro_batches` equal
// contiguous slices sharing its storage, each `replicate` feed whole in every micro-batch; with
// one micro-batch, the feeds as they are. kInvalidArgument naming the feed when a batch feed is
// 0-D or its dim 0 does not divide by `micro_batches`.
StatusOr<std::vector<FeedMap>> SplitFeeds(const FeedMap& feeds, int micro_batches,
                                          const FeedSplits& splits);

// The micro-batches' values of fetch `name` concatenated along dim 0 (0-D values stacked into a
// 1-D tensor). kInvalid naming the fetch when their dtypes or trailing dims differ, or when some
// are 0-D and others not.
StatusOr<Tensor> MergeFetches(const std::string& name, const std::vector<Tensor>& parts);

}  // namespace irm::rt
