// Tests of the plan executor (plan_executor.h) and of running a bundle rank (bundle_run.h):
// splitting feeds and merging fetches; the plan checks; the order of jobs, the callback and the
// micro-batch scopes on a recording executor; both executors' job scopes (legacy vars, new-IR
// shadow_output / pd_op.data); and a gradient-merge model split into forward, backward and
// optimizer jobs over 2 and 4 micro-batches, bit-identical to running its forward+backward once
// per micro-batch and the optimizer once, and within a derived bound of full-batch SGD.
#include "reference_runtime/plan_executor.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "reference_runtime/bundle_run.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/pir_test_kernels.h"
#include "reference_runtime/plan_test_support.h"
#include "reference_runtime/run.h"

namespace irm::rt {
namespace {

using oldir::FeedSplit;
using oldir::PlanJob;
using testing::ToDoubles;
using Doubles = std::vector<double>;

ExecutorOptions Options(uint64_t seed, const std::string& file = "") {
  ExecutorOptions options;
  options.seed = seed;
  options.file = file;
  return options;
}

Tensor F32(const Doubles& values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), DType::kFloat32);
}
Tensor Zeros(std::vector<int64_t> shape) {
  return Tensor::ZerosUnchecked(DType::kFloat32, std::move(shape));
}

// ---- SplitFeeds and MergeFetches ----------------------------------------------------------------

TEST(SplitFeedsTest, BatchFeedsAreContiguousViewsAndReplicatedOnesWhole) {
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2});
  const Tensor scale = F32({9}, {1});
  StatusOr<std::vector<FeedMap>> split =
      SplitFeeds({{"x", x}, {"scale", scale}}, 2, {{"scale", FeedSplit::kReplicate}});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  ASSERT_EQ(split->size(), 2u);
  EXPECT_EQ((*split)[0].at("x").shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ToDoubles((*split)[0].at("x")), (Doubles{0, 1, 2, 3}));
  EXPECT_EQ(ToDoubles((*split)[1].at("x")), (Doubles{4, 5, 6, 7}));
  EXPECT_TRUE((*split)[1].at("x").SharesStorageWith(x));
  EXPECT_TRUE((*split)[1].at("scale").BitwiseEqual(scale));
  EXPECT_TRUE((*split)[1].at("scale").SharesStorageWith(scale));
}

TEST(SplitFeedsTest, OneMicroBatchTakesTheFeedsAsTheyAre) {
  StatusOr<std::vector<FeedMap>> split = SplitFeeds({{"s", F32({5}, {})}}, 1, {});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ((*split)[0].at("s").rank(), 0);
}

TEST(SplitFeedsTest, BatchFeedsMustDivide) {
  StatusOr<std::vector<FeedMap>> split = SplitFeeds({{"x", Zeros({6, 4})}}, 4, {});
  EXPECT_EQ(split.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(split.status().message(),
            "feed 'x' is float32[6, 4]: its dim 0 (6) does not split into 4 equal micro-batches");
  split = SplitFeeds({{"s", F32({1}, {})}}, 2, {});
  EXPECT_EQ(split.status().message(),
            "feed 's' is float32[]: a feed split by batch needs a dim 0 to cut into 2 "
            "micro-batches");
  EXPECT_EQ(SplitFeeds({}, 0, {}).status().message(), "micro_batches must be at least 1, got 0");
}

TEST(MergeFetchesTest, ConcatenatesAlongDimZeroAndStacksScalars) {
  StatusOr<Tensor> merged = MergeFetches("l", {F32({1.5}, {}), F32({2.5}, {}), F32({-1}, {})});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(ToDoubles(*merged), (Doubles{1.5, 2.5, -1}));
  merged = MergeFetches("y", {F32({1, 2}, {1, 2}), F32({3, 4, 5, 6}, {2, 2})});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ToDoubles(*merged), (Doubles{1, 2, 3, 4, 5, 6}));
}

TEST(MergeFetchesTest, RefusesPartsThatDoNotConcatenate) {
  EXPECT_EQ(MergeFetches("y", {F32({1, 2}, {1, 2}), F32({1, 2, 3}, {1, 3})}).status().message(),
            "fetch 'y' is float32[1, 2] in micro-batch 0 but float32[1, 3] in another: they do "
            "not concatenate along dim 0");
  EXPECT_EQ(MergeFetches("y", {F32({1}, {}), F32({1}, {1})}).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(MergeFetches("y", {}).status().message(),
            "fetch 'y' has no micro-batch values to merge");
}

// ---- the plan on a recording executor
// ------------------------------------------------------------

// Records each job and, in its job scope, what it was fed ("<type>.seen" = the feed x) and a
// counter of earlier jobs of the micro-batch; fetches "x" and its job type's name.
class RecordingExecutor : public Executor {
 public:
  RecordingExecutor(std::string type, std::vector<std::string>* log) : type_(type), log_(log) {}
  StatusOr<std::vector<Fetch>> Run(Scope&, const FeedMap&) override {
    return Status(StatusCode::kInternal, Location{}, "Run is not for jobs");
  }
  StatusOr<std::vector<Fetch>> RunJob(Scope& persistent, Scope& job_scope,
                                      const FeedMap& feeds) override {
    IRM_RETURN_IF_ERROR(CheckJobScope(persistent, job_scope));
    const Tensor* earlier = job_scope.FindLocal("jobs");
    const double count = earlier != nullptr ? ToDoubles(*earlier)[0] : 0;
    job_scope.SetLocal("jobs", F32({count + 1}, {}));
    log_->push_back(fmt::format("{} x={} earlier={}", type_,
                                feeds.contains("x") ? feeds.at("x").Describe() : "-", count));
    std::vector<Fetch> fetches;
    if (feeds.contains("x")) fetches.push_back({"x", feeds.at("x").Clone()});
    fetches.push_back({type_, F32({count}, {})});
    return fetches;
  }
  std::vector<FeedSpec> FeedSpecs() const override { return {}; }
  std::vector<std::string> FetchNames() const override { return {"x", type_}; }

 private:
  std::string type_;
  std::vector<std::string>* log_;
};

class RecordedPlanTest : public ::testing::Test {
 protected:
  RecordedPlanTest() : f_("f", &log_), b_("b", &log_) {}
  StatusOr<PlanExecutor> Create(std::optional<std::vector<PlanJob>> jobs, int m,
                                std::vector<std::string> fetches = {}) {
    PlanConfig config;
    config.jobs = std::move(jobs);
    config.micro_batches = m;
    config.fetches = std::move(fetches);
    config.file = "rank0/plan.json";
    return PlanExecutor::Create({{"f", &f_}, {"b", &b_}, {"main", &f_}}, std::move(config));
  }
  std::vector<std::string> log_;
  RecordingExecutor f_, b_;
};

TEST_F(RecordedPlanTest, RunsJobsInPlanOrderInFreshMicroBatchScopes) {
  StatusOr<PlanExecutor> plan =
      Create(std::vector<PlanJob>{{"f", 0}, {"f", 1}, {"b", 0}, {"b", 1}}, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::string> contexts;
  plan->set_job_callback([&](const JobContext& c) {
    contexts.push_back(fmt::format("{}:{}:{}:{}/{}", c.step, c.job_index, c.job_type, c.micro_batch,
                                   c.micro_batches));
  });
  Scope root;
  for (int step = 1; step <= 2; ++step) {
    StatusOr<PlanStepResult> result = plan->RunStep(root, {{"x", F32({1, 2, 3, 4}, {4, 1})}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->step, step);
    // Fetches: the programs' lists in plan order; per micro-batch, then merged.
    ASSERT_EQ(result->micro_batches.size(), 2u);
    ASSERT_EQ(result->merged.size(), 3u);
    EXPECT_EQ(result->merged[0].name, "x");
    EXPECT_EQ(ToDoubles(result->micro_batches[1][0].tensor), (Doubles{3, 4}));
    EXPECT_EQ(ToDoubles(result->merged[0].tensor), (Doubles{1, 2, 3, 4}));
    // "b" ran after one "f" in each micro-batch; scalars stack into [m].
    EXPECT_EQ(result->merged[2].name, "b");
    EXPECT_EQ(result->merged[2].tensor.shape(), (std::vector<int64_t>{2}));
    EXPECT_EQ(ToDoubles(result->merged[2].tensor), (Doubles{1, 1}));
  }
  // Each step starts from empty micro-batch scopes: no job sees the previous step's.
  const std::vector<std::string> step_log = {
      "f x=float32[2, 1] earlier=0", "f x=float32[2, 1] earlier=0", "b x=float32[2, 1] earlier=1",
      "b x=float32[2, 1] earlier=1"};
  std::vector<std::string> both = step_log;
  both.insert(both.end(), step_log.begin(), step_log.end());
  EXPECT_EQ(log_, both);
  EXPECT_EQ(contexts,
            (std::vector<std::string>{"1:0:f:0/2", "1:1:f:1/2", "1:2:b:0/2", "1:3:b:1/2",
                                      "2:0:f:0/2", "2:1:f:1/2", "2:2:b:0/2", "2:3:b:1/2"}));
  EXPECT_TRUE(root.LocalNames().empty());
}

TEST_F(RecordedPlanTest, WithoutAPlanMainRunsOncePerStepOnTheWholeBatch) {
  StatusOr<PlanExecutor> plan = Create(std::nullopt, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->jobs(), (std::vector<PlanJob>{{"main", 0}}));
  Scope root;
  StatusOr<PlanStepResult> result = plan->RunStep(root, {{"x", F32({1, 2, 3}, {3})}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // One micro-batch: fetches as they are (a 0-D value stays 0-D).
  EXPECT_EQ(result->merged[0].tensor.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(result->merged[1].name, "f");
  EXPECT_EQ(result->merged[1].tensor.rank(), 0);
}

TEST_F(RecordedPlanTest, FetchesComeFromTheLastJobOrTheScopes) {
  StatusOr<PlanExecutor> plan =
      Create(std::vector<PlanJob>{{"f", 0}, {"f", 0}, {"f", 1}}, 2, {"f", "jobs", "w"});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Scope root;
  root.SetLocal("w", F32({7}, {1}));
  StatusOr<PlanStepResult> result = plan->RunStep(root, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->merged.size(), 3u);
  // Micro-batch 0's second job fetched 1; "jobs" is left in the micro-batch scopes; "w" is the
  // root's, in each micro-batch.
  EXPECT_EQ(ToDoubles(result->merged[0].tensor), (Doubles{1, 0}));
  EXPECT_EQ(ToDoubles(result->merged[1].tensor), (Doubles{2, 1}));
  EXPECT_EQ(ToDoubles(result->merged[2].tensor), (Doubles{7, 7}));
}

TEST_F(RecordedPlanTest, FetchesMissingEverywhereOrSomewhere) {
  Scope root;
  StatusOr<PlanExecutor> plan = Create(std::vector<PlanJob>{{"f", 0}, {"b", 1}}, 2, {"nothing"});
  ASSERT_TRUE(plan.ok());
  StatusOr<PlanStepResult> result = plan->RunStep(root, {});
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(result.status().ToString(),
            "rank0/plan.json: error: step 1: no job fetched or wrote 'nothing', and no "
            "persistable var has that name");
  plan = Create(std::vector<PlanJob>{{"f", 0}, {"b", 1}}, 2, {"b"});
  ASSERT_TRUE(plan.ok());
  result = plan->RunStep(root, {});
  EXPECT_EQ(result.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(result.status().message(),
            "step 1: 'b' has a value in 1 of 2 micro-batches, not in micro-batch 0");
  // Not required (a rank that does not compute a bundle fetch): left out.
  PlanConfig config;
  config.jobs = std::vector<PlanJob>{{"f", 0}};
  config.fetches = {"nothing", "f"};
  config.require_fetches = false;
  plan = PlanExecutor::Create({{"f", &f_}}, config);
  ASSERT_TRUE(plan.ok());
  result = plan->RunStep(root, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->merged.size(), 1u);
  EXPECT_EQ(result->merged[0].name, "f");
}

TEST_F(RecordedPlanTest, PlanChecks) {
  auto error = [&](std::optional<std::vector<PlanJob>> jobs, int m) {
    StatusOr<PlanExecutor> plan = Create(std::move(jobs), m);
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    return plan.status().ToString();
  };
  EXPECT_EQ(error(std::vector<PlanJob>{{"f", 0}, {"backward", 0}}, 1),
            "rank0/plan.json: error: job 1 has type 'backward', which has no program");
  EXPECT_EQ(error(std::vector<PlanJob>{{"f", 0}, {"f", 1}, {"b", 2}}, 2),
            "rank0/plan.json: error: job 2 ('b') runs micro-batch 2, outside [0, 2)");
  EXPECT_EQ(error(std::vector<PlanJob>{{"f", -1}}, 1),
            "rank0/plan.json: error: job 0 ('f') runs micro-batch -1, outside [0, 1)");
  EXPECT_EQ(error(std::vector<PlanJob>{{"f", 0}, {"b", 0}, {"f", 2}}, 3),
            "rank0/plan.json: error: no job of the plan runs micro-batch 1 (of 3)");
  EXPECT_EQ(error(std::vector<PlanJob>{}, 1), "rank0/plan.json: error: the plan has no jobs");
  EXPECT_EQ(error(std::nullopt, 0),
            "rank0/plan.json: error: micro_batches must be at least 1, got 0");
  EXPECT_EQ(error(std::nullopt, 2),
            "rank0/plan.json: error: no job of the plan runs micro-batch 1 (of 2)");
}

TEST_F(RecordedPlanTest, FeedAndJobErrorsNameTheirPlace) {
  StatusOr<PlanExecutor> plan = Create(std::vector<PlanJob>{{"f", 0}, {"f", 1}}, 2);
  ASSERT_TRUE(plan.ok());
  Scope root;
  EXPECT_EQ(plan->RunStep(root, {{"x", F32({1, 2, 3}, {3})}}).status().message(),
            "feed 'x' is float32[3]: its dim 0 (3) does not split into 2 equal micro-batches");
  // The default RunJob of an executor that has none.
  class RunOnly : public Executor {
   public:
    StatusOr<std::vector<Fetch>> Run(Scope&, const FeedMap&) override {
      return std::vector<Fetch>();
    }
    std::vector<FeedSpec> FeedSpecs() const override { return {}; }
    std::vector<std::string> FetchNames() const override { return {}; }
  } run_only;
  StatusOr<PlanExecutor> only = PlanExecutor::Create({{"main", &run_only}}, {});
  ASSERT_TRUE(only.ok());
  const Status status = only->RunStep(root, {}).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.ToString(),
            "error: this executor cannot run a program as a job of a plan\n"
            "  note: in job 0 ('main', micro-batch 0) of step 1");
}

// ---- the new-IR executor's job scopes
// -------------------------------------------------------------

class PirJobTest : public ::testing::Test {
 protected:
  Executor* Program(const std::string& text) {
    programs_.push_back(std::make_unique<newir::Program>(testing::ParseVerified(text)));
    executors_.push_back(std::make_unique<PirExecutor>(*programs_.back(), Options(0, "t.pir")));
    return executors_.back().get();
  }
  std::vector<std::unique_ptr<newir::Program>> programs_;
  std::vector<std::unique_ptr<Executor>> executors_;
};

// a: h = relu(x), handed on, and x stored as w (a name the root holds). b: out = h * h.
const char* kProducer = R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,2],stop_gradient:[true]} : () -> tensor<-1x2xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<-1x2xf32>) -> tensor<-1x2xf32>
    () = "builtin.shadow_output" (%1) {output_name:"h"} : (tensor<-1x2xf32>) ->
    () = "builtin.shadow_output" (%0) {output_name:"w"} : (tensor<-1x2xf32>) ->
})";
const char* kConsumer = R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"h",place:Place(cpu),shape:[-1,2],stop_gradient:[true]} : () -> tensor<-1x2xf32>
    (%1) = "pd_op.multiply" (%0, %0) {} : (tensor<-1x2xf32>, tensor<-1x2xf32>) -> tensor<-1x2xf32>
    (%2) = "pd_op.fetch" (%1) {col:0,name:"out"} : (tensor<-1x2xf32>) -> tensor<-1x2xf32>
})";

TEST_F(PirJobTest, ShadowOutputsReachTheMicroBatchsLaterJobs) {
  PlanConfig config;
  config.jobs = std::vector<PlanJob>{{"a", 0}, {"a", 1}, {"b", 1}, {"b", 0}};
  config.micro_batches = 2;
  StatusOr<PlanExecutor> plan =
      PlanExecutor::Create({{"a", Program(kProducer)}, {"b", Program(kConsumer)}}, config);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Scope root;
  root.SetLocal("w", F32({0, 0}, {1, 2}));
  StatusOr<PlanStepResult> result = plan->RunStep(root, {{"x", F32({-1, 2, 3, -4}, {2, 2})}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->merged.size(), 1u);
  // out = relu(x)^2, each micro-batch its own rows.
  EXPECT_EQ(ToDoubles(result->micro_batches[0][0].tensor), (Doubles{0, 4}));
  EXPECT_EQ(ToDoubles(result->merged[0].tensor), (Doubles{0, 4, 9, 0}));
  // h lived in the micro-batch scopes only; w, a name of the root, was written there (by the
  // last job writing it: micro-batch 1's).
  EXPECT_EQ(root.Find("h"), nullptr);
  EXPECT_EQ(ToDoubles(*root.Find("w")), (Doubles{3, -4}));
}

TEST_F(PirJobTest, AJobReadingWhatNoEarlierJobWroteFails) {
  PlanConfig config;
  config.jobs = std::vector<PlanJob>{{"a", 0}, {"b", 1}, {"a", 1}};
  config.micro_batches = 2;
  StatusOr<PlanExecutor> plan =
      PlanExecutor::Create({{"a", Program(kProducer)}, {"b", Program(kConsumer)}}, config);
  ASSERT_TRUE(plan.ok());
  Scope root;
  const Status status = plan->RunStep(root, {{"x", F32({1, 2, 3, 4}, {2, 2})}}).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.ToString(),
            "t.pir: op 0 (pd_op.data): error: feed 'h' is missing\n"
            "  note: in job 1 ('b', micro-batch 1) of step 1");
}

TEST_F(PirJobTest, WhatAnEarlierJobHandsOnMustMatchTheDeclaration) {
  Executor* producer = Program(kProducer);
  Executor* consumer = Program(R"({
    (%0) = "pd_op.data" () {dtype:float32,name:"h",place:Place(cpu),shape:[-1,3],stop_gradient:[true]} : () -> tensor<-1x3xf32>
})");
  Scope root;
  Scope job(&root);
  ASSERT_TRUE(producer->RunJob(root, job, {{"x", F32({1, 2}, {1, 2})}}).ok());
  const Status status = consumer->RunJob(root, job, {}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "t.pir: op 0 (pd_op.data): error: 'h' in the micro-batch scope is float32[1, 2] but "
            "the program declares builtin.tensor<-1x3xf32>");
  // Run (a program on its own) reads only the feeds, and shadow_output writes the root.
  EXPECT_EQ(consumer->Run(root, {}).status().message(), "feed 'h' is missing");
  ASSERT_TRUE(producer->Run(root, {{"x", F32({1, 2}, {1, 2})}}).ok());
  EXPECT_NE(root.FindLocal("h"), nullptr);
}

TEST_F(PirJobTest, AJobScopeMustBeAChildOfThePersistentScope) {
  Scope root, other;
  Scope job(&other);
  const std::string message = "a job's scope must be a child of the persistent scope";
  EXPECT_EQ(Program(kConsumer)->RunJob(root, job, {}).status().message(), message);
  oldir::Program empty;
  LegacyExecutor legacy(empty, {});
  EXPECT_EQ(legacy.RunJob(root, job, {}).status().message(), message);
}

// ---- the gradient-merge model on the legacy executor
// ---------------------------------------------

// The whole batch of step `step`: x and label drawn as a bundle run draws them.
FeedMap BatchFeeds(const testing::GradMergeModel& model, int step, int64_t batch) {
  FeedMap feeds;
  feeds["x"] = RandomFeed({"x", DType::kFloat32, {-1, model.in}, 0}, 5, step, batch);
  feeds["label"] = RandomFeed({"label", DType::kFloat32, {-1, model.out}, 0}, 5, step, batch);
  return feeds;
}

struct Trained {
  Scope root;
  std::vector<Tensor> losses;  // per step, [m]
};

// The plan, `steps` steps.
void RunPlan(const testing::GradMergeModel& model, const std::vector<PlanJob>& jobs, int steps,
             int64_t batch, Trained* out) {
  const ExecutorOptions options = Options(3);
  LegacyExecutor startup(model.startup, options);
  std::map<std::string, std::unique_ptr<LegacyExecutor>> executors;
  std::map<std::string, Executor*, std::less<>> programs;
  for (const auto& [type, program] : model.jobs) {
    executors[type] = std::make_unique<LegacyExecutor>(program, options);
    ASSERT_TRUE(executors[type]->plan_status().ok()) << executors[type]->plan_status().ToString();
    programs[type] = executors[type].get();
  }
  PlanConfig config;
  config.jobs = jobs;
  config.micro_batches = model.micro_batches;
  config.fetches = {model.loss};
  StatusOr<PlanExecutor> plan = PlanExecutor::Create(programs, config);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(startup.Run(out->root, {}).ok());
  for (int step = 1; step <= steps; ++step) {
    StatusOr<PlanStepResult> result = plan->RunStep(out->root, BatchFeeds(model, step, batch));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    out->losses.push_back(result->merged.at(0).tensor);
  }
}

// The reference: per step, the forward+backward program run on each micro-batch's rows on its
// own (Executor::Run, no plan, no shared scope), then the optimizer job once.
void RunReference(const testing::GradMergeModel& model, int steps, int64_t batch, Trained* out) {
  const ExecutorOptions options = Options(3);
  LegacyExecutor startup(model.startup, options);
  LegacyExecutor forward_backward(model.forward_backward, options);
  LegacyExecutor optimizer(model.jobs.at("optimizer"), options);
  ASSERT_TRUE(startup.Run(out->root, {}).ok());
  const int m = model.micro_batches;
  for (int step = 1; step <= steps; ++step) {
    const FeedMap whole = BatchFeeds(model, step, batch);
    const int64_t rows = batch / m;
    Doubles losses;
    for (int mb = 0; mb < m; ++mb) {
      FeedMap slice;
      for (const auto& [name, t] : whole) slice[name] = *t.Slice(mb * rows, (mb + 1) * rows);
      StatusOr<std::vector<Fetch>> fetched = forward_backward.Run(out->root, slice);
      ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
      losses.push_back(ToDoubles(fetched->at(0).tensor)[0]);
    }
    // The optimizer program declares the data vars too (split from one program): fed, unused.
    const StatusOr<std::vector<Fetch>> updated = optimizer.Run(out->root, whole);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
    out->losses.push_back(F32(losses, {m}));
  }
}

void ExpectSameParams(const testing::GradMergeModel& model, const Scope& a, const Scope& b) {
  for (const oldir::ParamGrad& pg : model.params_grads) {
    SCOPED_TRACE(pg.param);
    ASSERT_NE(a.Find(pg.param), nullptr);
    ASSERT_NE(b.Find(pg.param), nullptr);
    EXPECT_TRUE(a.Find(pg.param)->BitwiseEqual(*b.Find(pg.param)));
  }
}

class GradMergePlanTest : public ::testing::TestWithParam<int> {};

TEST_P(GradMergePlanTest, BitIdenticalToEachMicroBatchRunAloneWithAccumulatedGrads) {
  const int m = GetParam();
  StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(m);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int steps = 3;
  const int64_t batch = 8;
  Trained plan, interleaved, reference;
  RunPlan(*model, testing::FThenBPlan(m), steps, batch, &plan);
  RunPlan(*model, testing::InterleavedPlan(m), steps, batch, &interleaved);
  RunReference(*model, steps, batch, &reference);
  ExpectSameParams(*model, plan.root, reference.root);
  ExpectSameParams(*model, interleaved.root, reference.root);
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE(s);
    EXPECT_EQ(plan.losses[static_cast<size_t>(s)].shape(), (std::vector<int64_t>{m}));
    EXPECT_TRUE(
        plan.losses[static_cast<size_t>(s)].BitwiseEqual(reference.losses[static_cast<size_t>(s)]));
    EXPECT_TRUE(interleaved.losses[static_cast<size_t>(s)].BitwiseEqual(
        reference.losses[static_cast<size_t>(s)]));
  }
  // The training moved the parameters (the comparison above is not of untouched values).
  Scope fresh;
  ASSERT_TRUE(LegacyExecutor(model->startup, Options(3)).Run(fresh, {}).ok());
  EXPECT_FALSE(fresh.Find(model->params_grads[0].param)
                   ->BitwiseEqual(*plan.root.Find(model->params_grads[0].param)));
}

// One step of the plan against one step of plain SGD on the whole batch (the model without
// gradient merge). In exact arithmetic they agree: with the mean over B = m·b elements, the
// merged gradient (1/m)·Σ_mb ∇loss_mb equals ∇loss. In float32 only rounding separates them, and
// it is bounded (u = 2^-24, γ_n = n·u / (1 - n·u)) per gradient element by
//   |Δg_ij| ≤ 2·(γ_B·S_ij + Σ_k |x_ki|·e_kj),   S_ij = Σ_k |x_ki|·|δ_kj|,
// δ = ∂loss/∂y = 2(y - label)/(B·out) and e_kj ≤ 2/(B·out)·γ_{in+2}·A_kj + 4u·|δ_kj| the error
// of δ (A_kj = Σ_i |x_ki||W_ij| + |b_j| + |label_kj| bounds the forward pass's rounding of y -
// label, which the two runs may round differently, and 4u the grad ops' own roundings); each side
// is at most half of that from the exact gradient (the sums over the batch and the m-term merge
// are one sum of B products split differently; the 1/m and 1/(B·out) scalings are exact for
// powers of two or add u). The bias gradient is the same with x_ki = 1. SGD then moves the bound
// through p - lr·g: |Δp| ≤ lr·(1 + u)·|Δg| + 2u·(|p| + lr·|g|) (both sides round the product and
// the difference). The test doubles the bound once more for the terms of order u² left out.
TEST_P(GradMergePlanTest, WithinTheDerivedRoundingBoundOfFullBatchSgd) {
  const int m = GetParam();
  StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(m);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const int64_t batch = 8;
  Trained plan;
  RunPlan(*model, testing::FThenBPlan(m), 1, batch, &plan);

  Scope full;
  LegacyExecutor plain_startup(model->plain_startup, Options(3));
  LegacyExecutor plain(model->plain, Options(3));
  ASSERT_TRUE(plain_startup.Run(full, {}).ok());
  const FeedMap feeds = BatchFeeds(*model, 1, batch);
  // The initial parameters, for the float64 bound.
  const std::string w_name = model->params_grads[0].param;
  const std::string b_name = model->params_grads[1].param;
  ASSERT_NE(w_name.find(".w_"), std::string::npos);
  const Doubles w0 = ToDoubles(*full.Find(w_name));
  const Doubles b0 = ToDoubles(*full.Find(b_name));
  ASSERT_TRUE(plain.Run(full, feeds).ok());

  const int64_t in = model->in, out = model->out;
  const Doubles x = ToDoubles(feeds.at("x"));
  const Doubles label = ToDoubles(feeds.at("label"));
  const double u = std::ldexp(1.0, -24);
  auto gamma = [&](double n) { return n * u / (1 - n * u); };
  const double lr = model->learning_rate;
  const double scale = 2.0 / static_cast<double>(batch * out);
  // Per (k, j): δ, its error bound e.
  std::vector<double> delta(static_cast<size_t>(batch * out)), err(delta.size());
  std::vector<double> grad_w(static_cast<size_t>(in * out), 0), grad_b(static_cast<size_t>(out), 0);
  for (int64_t k = 0; k < batch; ++k) {
    for (int64_t j = 0; j < out; ++j) {
      double y = b0[static_cast<size_t>(j)], a = std::abs(b0[static_cast<size_t>(j)]);
      for (int64_t i = 0; i < in; ++i) {
        y += x[static_cast<size_t>(k * in + i)] * w0[static_cast<size_t>(i * out + j)];
        a += std::abs(x[static_cast<size_t>(k * in + i)] * w0[static_cast<size_t>(i * out + j)]);
      }
      const double l = label[static_cast<size_t>(k * out + j)];
      a += std::abs(l);
      const size_t kj = static_cast<size_t>(k * out + j);
      delta[kj] = scale * (y - l);
      err[kj] = scale * gamma(static_cast<double>(in + 2)) * a + 4 * u * std::abs(delta[kj]);
    }
  }
  for (int64_t j = 0; j < out; ++j) {
    double s = 0, e = 0;
    for (int64_t k = 0; k < batch; ++k) {
      const size_t kj = static_cast<size_t>(k * out + j);
      grad_b[static_cast<size_t>(j)] += delta[kj];
      s += std::abs(delta[kj]);
      e += err[kj];
    }
    const double dg = 2 * (gamma(static_cast<double>(batch)) * s + e);
    const double p = b0[static_cast<size_t>(j)];
    const double bound =
        2 *
        (lr * (1 + u) * dg + 2 * u * (std::abs(p) + lr * std::abs(grad_b[static_cast<size_t>(j)])));
    const double got = ToDoubles(*plan.root.Find(b_name))[static_cast<size_t>(j)];
    const double want = ToDoubles(*full.Find(b_name))[static_cast<size_t>(j)];
    EXPECT_LE(std::abs(got - want), bound) << b_name << "[" << j << "]";
    // The step is far larger than the bound: the comparison is not of untouched values.
    EXPECT_GT(std::abs(want - p), 10 * bound) << b_name << "[" << j << "]";
  }
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      double s = 0, e = 0, g = 0;
      for (int64_t k = 0; k < batch; ++k) {
        const size_t kj = static_cast<size_t>(k * out + j);
        const double xk = std::abs(x[static_cast<size_t>(k * in + i)]);
        g += x[static_cast<size_t>(k * in + i)] * delta[kj];
        s += xk * std::abs(delta[kj]);
        e += xk * err[kj];
      }
      const size_t ij = static_cast<size_t>(i * out + j);
      const double dg = 2 * (gamma(static_cast<double>(batch)) * s + e);
      const double bound = 2 * (lr * (1 + u) * dg + 2 * u * (std::abs(w0[ij]) + lr * std::abs(g)));
      const double got = ToDoubles(*plan.root.Find(w_name))[ij];
      const double want = ToDoubles(*full.Find(w_name))[ij];
      EXPECT_LE(std::abs(got - want), bound) << w_name << "[" << i << ", " << j << "]";
      // And the float64 step itself agrees with both, to the same order.
      EXPECT_NEAR(want, w0[ij] - lr * g, 2 * bound + 1e-6 * std::abs(lr * g));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(MicroBatches, GradMergePlanTest, ::testing::Values(2, 4));

TEST(GradMergePlanErrorsTest, ABackwardBeforeItsMicroBatchsForwardFails) {
  StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(2);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::map<std::string, std::unique_ptr<LegacyExecutor>> executors;
  std::map<std::string, Executor*, std::less<>> programs;
  for (const auto& [type, program] : model->jobs) {
    executors[type] = std::make_unique<LegacyExecutor>(program, Options(0, type));
    programs[type] = executors[type].get();
  }
  PlanConfig config;
  // Micro-batch 0's activations exist, but backward 1 runs before forward 1.
  config.jobs = std::vector<PlanJob>{
      {"forward", 0}, {"backward", 1}, {"forward", 1}, {"backward", 0}, {"optimizer", 0}};
  config.micro_batches = 2;
  StatusOr<PlanExecutor> plan = PlanExecutor::Create(programs, config);
  ASSERT_TRUE(plan.ok());
  Scope root;
  ASSERT_TRUE(LegacyExecutor(model->startup, {}).Run(root, {}).ok());
  const Status status = plan->RunStep(root, BatchFeeds(*model, 1, 4)).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "var 'tmp_1' is read before any op writes it");
  EXPECT_EQ(status.diagnostic().notes,
            (std::vector<std::string>{"in job 1 ('backward', micro-batch 1) of step 1"}));
}

// ---- a bundle rank
// -------------------------------------------------------------------------------

class BundleRunTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::TestDir("bundle_run"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(BundleRunTest, RunsTheRanksPlanWithRandomFeeds) {
  StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(2);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(testing::WriteGradMergeBundle(*model, testing::FThenBPlan(2), 2, 3, dir_).ok());
  BundleRunConfig config;
  config.random_feeds = true;
  config.batch_size = 8;
  std::vector<std::string> jobs;
  config.on_job = [&](const JobContext& c) {
    jobs.push_back(fmt::format("{}{}", c.job_type, c.micro_batch));
  };
  StatusOr<BundleRankRunner> runner = BundleRankRunner::Load(dir_, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_EQ(runner->steps(), 2);
  EXPECT_EQ(runner->seed(), 3u);
  EXPECT_FALSE(runner->new_ir());
  Scope root;
  int seen = 0;
  StatusOr<std::vector<PlanStepResult>> results =
      runner->Run(root, [&](const PlanStepResult&) { ++seen; });
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(jobs.size(), 10u);
  EXPECT_EQ(jobs[0], "forward0");
  EXPECT_EQ(jobs[4], "optimizer0");
  ASSERT_EQ((*results)[1].merged.size(), 1u);
  EXPECT_EQ((*results)[1].merged[0].name, model->loss);
  EXPECT_EQ((*results)[1].merged[0].tensor.shape(), (std::vector<int64_t>{2}));

  // The same numbers as the plan run by hand on the same random feeds: seed 3 for the programs,
  // RandomFeed(seed 3) for x and label.
  Trained by_hand;
  const ExecutorOptions options = Options(3);
  LegacyExecutor startup(model->startup, options);
  ASSERT_TRUE(startup.Run(by_hand.root, {}).ok());
  std::map<std::string, std::unique_ptr<LegacyExecutor>> executors;
  std::map<std::string, Executor*, std::less<>> programs;
  for (const auto& [type, program] : model->jobs) {
    executors[type] = std::make_unique<LegacyExecutor>(program, options);
    programs[type] = executors[type].get();
  }
  PlanConfig plan_config;
  plan_config.jobs = testing::FThenBPlan(2);
  plan_config.micro_batches = 2;
  StatusOr<PlanExecutor> plan = PlanExecutor::Create(programs, plan_config);
  ASSERT_TRUE(plan.ok());
  for (int step = 1; step <= 2; ++step) {
    FeedMap feeds;
    feeds["x"] = RandomFeed({"x", DType::kFloat32, {-1, model->in}, 0}, 3, step, 8);
    feeds["label"] = RandomFeed({"label", DType::kFloat32, {-1, model->out}, 0}, 3, step, 8);
    ASSERT_TRUE(plan->RunStep(by_hand.root, feeds).ok());
  }
  ExpectSameParams(*model, by_hand.root, root);
}

TEST_F(BundleRunTest, ErrorsOfTheRankAndItsFeeds) {
  StatusOr<testing::GradMergeModel> model = testing::BuildGradMergeModel(2);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE(testing::WriteGradMergeBundle(*model, testing::FThenBPlan(2), 1, 3, dir_).ok());
  BundleRunConfig config;
  config.rank = 1;
  EXPECT_EQ(BundleRankRunner::Load(dir_, config).status().ToString(),
            dir_ + ": error: the bundle has no rank 1");
  config.rank = 0;
  Scope root;
  StatusOr<BundleRankRunner> runner = BundleRankRunner::Load(dir_, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_EQ(runner->Run(root).status().ToString(),
            "error: no feed for 'x' (float32[-1, 4]); give one, or ask for random feeds\n"
            "  note: in step 1");
  config.feeds["x"] = Zeros({3, 4});
  config.feeds["label"] = Zeros({3, 3});
  runner = BundleRankRunner::Load(dir_, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  Scope root2;
  EXPECT_EQ(runner->Run(root2).status().message(),
            "feed 'label' is float32[3, 3]: its dim 0 (3) does not split into 2 equal "
            "micro-batches");
}

}  // namespace
}  // namespace irm::rt
