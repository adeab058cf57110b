// The parity driver (parity_run.h): run both sides traced, compare, localise, isolate.
#include "diff_tests/parity_run.h"

#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "diff_tests/first_divergence.h"
#include "diff_tests/isolate.h"
#include "diff_tests/parity_compare.h"
#include "newir/printer.h"
#include "newir/verifier.h"
#include "reference_runtime/chrome_trace.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/op_trace.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/run.h"
#include "translator/translate.h"

namespace irm::diff {
namespace {

using Snapshot = std::map<std::string, rt::Tensor>;

Snapshot Take(const rt::Scope& scope) {
  Snapshot snapshot;
  for (const std::string& name : scope.LocalNames()) {
    const rt::Tensor* t = scope.Find(name);
    if (t != nullptr && t->defined()) snapshot[name] = t->Clone();
  }
  return snapshot;
}

// What one run of a program saw and left: its feeds, and the persistable vars before and after.
struct RunRecord {
  rt::FeedMap feeds;
  Snapshot before;
  Snapshot after;
};

// An executor that sets the trace context before each run (the step: 0 for a startup program,
// 1.. for the main one) and keeps what comparison and isolation need of each run.
class TracedExecutor : public rt::Executor {
 public:
  TracedExecutor(std::unique_ptr<rt::Executor> inner, rt::OpTraceRecorder& recorder, int first_step,
                 std::string job, rt::ChromeTraceRecorder* chrome)
      : inner_(std::move(inner)),
        recorder_(recorder),
        step_(first_step),
        job_(std::move(job)),
        chrome_(chrome) {}

  StatusOr<std::vector<rt::Fetch>> Run(rt::Scope& persistent, const rt::FeedMap& feeds) override {
    if (chrome_ != nullptr) {
      chrome_->OnJob(0, {.step = step_, .job_type = job_.empty() ? "main" : job_});
    }
    recorder_.SetContext(0, step_++, 0, job_);
    RunRecord run{feeds, Take(persistent), {}};
    StatusOr<std::vector<rt::Fetch>> fetched = inner_->Run(persistent, feeds);
    if (fetched.ok()) run.after = Take(persistent);
    runs_.push_back(std::move(run));
    return fetched;
  }
  std::vector<rt::FeedSpec> FeedSpecs() const override { return inner_->FeedSpecs(); }
  std::vector<std::string> FetchNames() const override { return inner_->FetchNames(); }
  std::vector<RunRecord>& runs() { return runs_; }

 private:
  std::unique_ptr<rt::Executor> inner_;
  rt::OpTraceRecorder& recorder_;
  int step_;
  std::string job_;
  rt::ChromeTraceRecorder* chrome_;
  std::vector<RunRecord> runs_;
};

struct SideRun {
  Trace trace;
  std::vector<rt::StepResult> steps;
  std::optional<RunRecord> startup;
  std::vector<RunRecord> main;  // per step
};

using ExecutorFactory = std::function<std::unique_ptr<rt::Executor>(const rt::ExecutorOptions&)>;

// `chrome`, when given, draws the run too.
StatusOr<SideRun> RunSide(const ExecutorFactory& main, const ExecutorFactory& startup,
                          const ParityOptions& options, const rt::KeepPredicate& keep,
                          const std::string& side, const std::string& file,
                          rt::ChromeTraceRecorder* chrome = nullptr) {
  rt::OpTraceRecorder recorder(keep);
  rt::ExecutorOptions eo;
  eo.gemm = options.gemm;
  eo.seed = options.seed;
  eo.kernels = options.kernels;
  eo.observer = recorder.observer();
  rt::OpObserver both;
  if (chrome != nullptr) {
    both = [&recorder, chrome](const rt::OpEvent& event) {
      (*recorder.observer())(event);
      (*chrome->observer(0))(event);
    };
    eo.observer = &both;
  }
  eo.file = file;
  TracedExecutor main_executor(main(eo), recorder, 1, "", chrome);
  std::optional<TracedExecutor> startup_executor;
  if (startup) startup_executor.emplace(startup(eo), recorder, 0, "startup", chrome);
  rt::TrainingConfig config;
  config.steps = options.steps;
  config.feeds = options.feeds;
  config.random_feeds = true;
  config.seed = options.seed;
  config.batch_size = options.batch_size;
  rt::Scope scope;
  auto on_step = [&](const rt::StepResult& step) {
    if (options.progress) options.progress(side, step.step, options.steps);
  };
  StatusOr<std::vector<rt::StepResult>> ran = rt::RunTraining(
      startup_executor ? &*startup_executor : nullptr, main_executor, scope, config, on_step);
  if (!ran.ok()) return Status(ran.status()).AddNote(fmt::format("in the {} run", side));
  SideRun out;
  out.trace = recorder.TakeRecords();
  out.steps = std::move(ran).value();
  if (startup_executor && !startup_executor->runs().empty()) {
    out.startup = std::move(startup_executor->runs().front());
  }
  out.main = std::move(main_executor.runs());
  return out;
}

StatusOr<translator::Translation> TranslateVerified(const oldir::Program& legacy,
                                                    const std::string& file) {
  IRM_ASSIGN_OR_RETURN(translator::Translation t,
                       translator::TranslateProgram(legacy, {.file = file}));
  IRM_RETURN_IF_ERROR(newir::VerifyProgram(t.program, {.file = file + " (translated)"}));
  return t;
}

}  // namespace

StatusOr<ParityResult> RunParity(const ParityPrograms& programs, const ParityOptions& options) {
  if (programs.legacy_main == nullptr) {
    return Status(StatusCode::kInvalidArgument, Location{}, "no legacy program to run");
  }
  if (options.tier == Tier::kNoiseFloor) {
    // Comparing without the shadow would quietly be the reordered tier.
    return Status(StatusCode::kUnimplemented, Location{},
                  "the noise-floor tier arbitrates a distributed run against its serial "
                  "program (parity --serial); a translation is checked in the exact or "
                  "reordered tier");
  }
  const std::string legacy_file = programs.legacy_file.empty() ? "legacy" : programs.legacy_file;
  std::optional<translator::Translation> translated_main;
  std::optional<translator::Translation> translated_startup;
  const newir::Program* new_main = programs.new_main;
  const newir::Program* new_startup = programs.new_startup;
  if (new_main == nullptr) {
    IRM_ASSIGN_OR_RETURN(translated_main, TranslateVerified(*programs.legacy_main, legacy_file));
    new_main = &translated_main->program;
  }
  if (new_startup == nullptr && programs.legacy_startup != nullptr) {
    IRM_ASSIGN_OR_RETURN(translated_startup,
                         TranslateVerified(*programs.legacy_startup, legacy_file + " (startup)"));
    new_startup = &translated_startup->program;
  }
  const std::string new_file = programs.new_file.empty() ? "(translated)" : programs.new_file;

  ExecutorFactory old_main = [&](const rt::ExecutorOptions& eo) {
    return std::make_unique<rt::LegacyExecutor>(*programs.legacy_main, eo);
  };
  ExecutorFactory old_startup;
  if (programs.legacy_startup != nullptr) {
    old_startup = [&](const rt::ExecutorOptions& eo) {
      return std::make_unique<rt::LegacyExecutor>(*programs.legacy_startup, eo);
    };
  }
  ExecutorFactory pir_main = [&](const rt::ExecutorOptions& eo) {
    return std::make_unique<rt::PirExecutor>(*new_main, eo);
  };
  ExecutorFactory pir_startup;
  if (new_startup != nullptr) {
    pir_startup = [&](const rt::ExecutorOptions& eo) {
      return std::make_unique<rt::PirExecutor>(*new_startup, eo);
    };
  }

  // The exact tier decides by hash; the others compare values, so every output is kept.
  const rt::KeepPredicate user_keep =
      options.keep.empty() ? rt::KeepNone() : rt::KeepMatching(options.keep);
  const rt::KeepPredicate keep = options.tier == Tier::kExact ? user_keep : rt::KeepAll();
  std::optional<rt::ChromeTraceRecorder> old_chrome;
  std::optional<rt::ChromeTraceRecorder> new_chrome;
  if (options.chrome_trace) {
    old_chrome.emplace(1, "legacy", 0);
    new_chrome.emplace(1, "new IR", 1);
  }
  IRM_ASSIGN_OR_RETURN(SideRun old_run, RunSide(old_main, old_startup, options, keep, "legacy",
                                                legacy_file, old_chrome ? &*old_chrome : nullptr));
  IRM_ASSIGN_OR_RETURN(SideRun new_run, RunSide(pir_main, pir_startup, options, keep, "new-IR",
                                                new_file, new_chrome ? &*new_chrome : nullptr));

  ParityResult result;
  if (options.chrome_trace) {
    IRM_ASSIGN_OR_RETURN(result.chrome_trace, rt::MergeChromeTraces({old_chrome->Render({}, {}),
                                                                     new_chrome->Render({}, {})}));
  }
  ParityReport& report = result.report;
  report.legacy_program = legacy_file;
  report.new_program = new_file;
  report.tier = options.tier;
  report.steps = options.steps;
  report.seed = options.seed;
  report.gemm = rt::GemmModeName(options.gemm);

  for (size_t s = 0; s < old_run.steps.size() && s < new_run.steps.size(); ++s) {
    CompareFetches(0, old_run.steps[s].step, old_run.steps[s].fetches, new_run.steps[s].fetches,
                   "program", report);
  }
  if (old_run.startup && new_run.startup) {
    CompareVars(0, 0, ViewOf(old_run.startup->after), ViewOf(new_run.startup->after), report);
  }
  for (size_t s = 0; s < old_run.main.size() && s < new_run.main.size(); ++s) {
    CompareVars(0, static_cast<int>(s) + 1, ViewOf(old_run.main[s].after),
                ViewOf(new_run.main[s].after), report);
  }

  const Alignment alignment = AlignTraces(old_run.trace, new_run.trace);
  std::vector<PairResult> results =
      CompareAligned(old_run.trace, new_run.trace, alignment, options.tier);
  std::optional<FirstDivergence> divergence =
      FindFirstDivergence(old_run.trace, new_run.trace, alignment, results, options.tier);

  if (divergence && options.tier == Tier::kExact) {
    // Hashes found it; re-run both sides keeping the op's inputs and outputs to measure it.
    const DivergenceKeep again_keep = KeepForDivergence(
        old_run.trace[divergence->old_record], new_run.trace[divergence->new_record], user_keep);
    IRM_ASSIGN_OR_RETURN(SideRun old_again, RunSide(old_main, old_startup, options,
                                                    again_keep.old_side, "legacy", legacy_file));
    IRM_ASSIGN_OR_RETURN(SideRun new_again, RunSide(pir_main, pir_startup, options,
                                                    again_keep.new_side, "new-IR", new_file));
    if (old_again.trace.size() == old_run.trace.size() &&
        new_again.trace.size() == new_run.trace.size()) {
      old_run.trace = std::move(old_again.trace);
      new_run.trace = std::move(new_again.trace);
      RecompareDiffering(*divergence, alignment, old_run.trace, new_run.trace, options.tier,
                         results);
    }
  }

  AppendIntermediates(alignment, results, old_run.trace, new_run.trace, report);
  AppendUnaligned(alignment, old_run.trace, new_run.trace, report);

  if (divergence) {
    const rt::OpRecord& old_op = old_run.trace[divergence->old_record];
    const rt::OpRecord& new_op = new_run.trace[divergence->new_record];
    const oldir::Program& old_program = old_op.step == 0 && programs.legacy_startup
                                            ? *programs.legacy_startup
                                            : *programs.legacy_main;
    const newir::Program& new_program =
        new_op.step == 0 && new_startup != nullptr ? *new_startup : *new_main;
    DivergenceReport d =
        DescribeDivergence(*divergence, alignment, results, old_run.trace, new_run.trace);
    d.old_op.text = LegacyOpText(old_program, old_op);
    const newir::Operation* suspect = TopLevelOp(new_program, new_op.block, new_op.op_index);
    if (suspect != nullptr) d.new_op.text = newir::PrintOperation(*suspect);
    report.first_divergence = std::move(d);

    if (options.isolate && suspect != nullptr) {
      const WriteIndex old_writes(old_run.trace);
      const size_t record = divergence->old_record;
      const RunRecord* run = nullptr;
      if (old_op.step == 0) {
        run = old_run.startup ? &*old_run.startup : nullptr;
      } else if (static_cast<size_t>(old_op.step) <= old_run.main.size()) {
        run = &old_run.main[static_cast<size_t>(old_op.step) - 1];
      }
      const LegacyValue inputs = [&](const std::string& name) -> const rt::Tensor* {
        if (std::optional<TensorRef> w = old_writes.LatestBefore(old_op.rank, name, record)) {
          return KeptTensor(old_run.trace, *w);
        }
        if (run == nullptr) return nullptr;
        if (auto it = run->feeds.find(name); it != run->feeds.end()) return &it->second;
        if (auto it = run->before.find(name); it != run->before.end()) return &it->second;
        return nullptr;
      };
      const LegacyValue outputs = [&](const std::string& name) {
        return KeptOutput(old_run.trace, record, name);
      };
      rt::ExecutorOptions eo;
      eo.gemm = options.gemm;
      eo.seed = options.seed;
      eo.kernels = options.kernels;
      report.isolation = IsolateNewOp(*suspect, inputs, outputs, options.tier, eo);
    }
  }
  result.old_trace = std::move(old_run.trace);
  result.new_trace = std::move(new_run.trace);
  return result;
}

}  // namespace irm::diff
