// Running the suite's cases: build, compare, judge, clean up — each case in its own scratch
// folder, N cases at a time.
#include "diff_tests/suite_runner.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "diff_tests/bundle_parity.h"
#include "diff_tests/serial_parity.h"

namespace irm::diff {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Worse results rank higher: a case is as bad as its worst comparison.
int Severity(SuiteResult result) {
  switch (result) {
    case SuiteResult::kSkipped:
      return 0;
    case SuiteResult::kPass:
      return 1;
    case SuiteResult::kMismatch:
      return 2;
    case SuiteResult::kInvalid:
      return 3;
    case SuiteResult::kHang:
      return 4;
    case SuiteResult::kError:
      return 5;
  }
  return 5;
}

// Input problems (what the case asks cannot be built) against runtime failures (a hang, a rank
// that failed): the exit codes differ.
// A hang is told apart from the other runtime failures: it is a finding about the case (its
// schedule cannot complete under its point-to-point model), reported as a failure naming every
// rank's pending op, never as a timeout.
SuiteResult ResultOfFailure(const Status& status) {
  if (IsHang(status)) return SuiteResult::kHang;
  return status.code() == StatusCode::kInternal ? SuiteResult::kError : SuiteResult::kInvalid;
}

std::string DescribeFailure(const Status& status) {
  return IsHang(status) ? DescribeHang(status) : status.ToString();
}

// A folder of its own for one case, removed with everything in it when the case is done.
class ScratchFolder {
 public:
  static StatusOr<ScratchFolder> Make(const std::string& root, const std::string& name) {
    std::error_code ec;
    const std::filesystem::path base =
        root.empty() ? std::filesystem::temp_directory_path(ec) : std::filesystem::path(root);
    std::string pattern = (base / ("irm-suite-" + name + "-XXXXXX")).string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr) {
      return Status(StatusCode::kIoError, Location::File(pattern),
                    "cannot make the case's scratch folder");
    }
    return ScratchFolder(pattern);
  }
  ScratchFolder(ScratchFolder&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ScratchFolder& operator=(ScratchFolder&&) = delete;
  ~ScratchFolder() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit ScratchFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Why a case cannot run here; empty when it can.
std::string SkipReason(const SuiteCase& c, const SuiteOptions& options) {
  if (c.device == "gpu" && !options.gpu_available) {
    return "device gpu: no GPU is available to the reference runtime here (skipped, not passed)";
  }
  if (c.backend != "thread") {
    return fmt::format(
        "backend {}: the parity runs put the ranks on the thread world only (skipped, not "
        "passed)",
        c.backend);
  }
  return "";
}

ComparisonOutcome Judge(SuiteComparison comparison, Tier tier, StatusOr<ParityResult> result,
                        Clock::time_point start) {
  ComparisonOutcome outcome;
  outcome.comparison = comparison;
  outcome.tier = tier;
  outcome.seconds = SecondsSince(start);
  if (!result.ok()) {
    outcome.result = ResultOfFailure(result.status());
    outcome.detail = DescribeFailure(result.status());
    return outcome;
  }
  outcome.report = std::move(result->report);
  outcome.result = outcome.report->parity() ? SuiteResult::kPass : SuiteResult::kMismatch;
  outcome.detail = DescribeMismatch(*outcome.report);
  return outcome;
}

ComparisonOutcome CompareWithSerial(const SuiteCase& c, const std::string& distributed,
                                    const ScratchFolder& scratch) {
  const Clock::time_point start = Clock::now();
  corpus::ModelRecipe serial_recipe = c.recipe;
  serial_recipe.strategy.reset();
  serial_recipe.annotations.clear();
  const std::string serial = scratch / "serial";
  StatusOr<corpus::ModelBundle> made = corpus::MakeModelBundle(serial_recipe);
  Status written = made.ok() ? corpus::WriteModelBundle(*made, serial).status() : made.status();
  if (!written.ok()) return Judge(SuiteComparison::kSerial, c.tier, written, start);
  SerialParityOptions options;
  options.steps = c.recipe.steps;
  options.batch_size = c.recipe.batch_size;
  options.tier = c.tier;
  options.p2p = c.p2p;
  return Judge(SuiteComparison::kSerial, c.tier, RunSerialParity(distributed, serial, options),
               start);
}

ComparisonOutcome CompareWithTranslation(const SuiteCase& c, const std::string& distributed) {
  const Clock::time_point start = Clock::now();
  BundleParityOptions options;
  options.steps = c.recipe.steps;
  options.batch_size = c.recipe.batch_size;
  options.tier = Tier::kExact;
  options.p2p = c.p2p;
  return Judge(SuiteComparison::kTranslated, Tier::kExact,
               RunBundleParity(distributed, "", options), start);
}

// The op types only one road's programs hold, from the alignment's lines ("  only in A: #37
// pd_op.if"; A is the legacy road translated, B the new IR's): where a broken pass dropped or
// added an op, its type shows here, whatever bookkeeping ops come first.
std::string OneSidedOpTypes(const std::string& op_differences) {
  std::set<std::string> legacy, pir;
  size_t start = 0;
  while (start < op_differences.size()) {
    size_t end = op_differences.find('\n', start);
    if (end == std::string::npos) end = op_differences.size();
    const std::string_view line(op_differences.data() + start, end - start);
    start = end + 1;
    for (auto [prefix, types] :
         {std::pair<std::string_view, std::set<std::string>*>{"  only in A: #", &legacy},
          {"  only in B: #", &pir}}) {
      if (!line.starts_with(prefix)) continue;
      const size_t space = line.find(' ', prefix.size());
      if (space != std::string_view::npos) types->insert(std::string(line.substr(space + 1)));
    }
  }
  std::vector<std::string> parts;
  if (!legacy.empty()) parts.push_back(fmt::format("only legacy has {}", fmt::join(legacy, ", ")));
  if (!pir.empty()) parts.push_back(fmt::format("only pir has {}", fmt::join(pir, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// A failing pair's detail: the report's first divergence or differing state and tensor, and for
// legacy-pir the first op whose place differs between the roads and the op types only one road
// has (the op a broken pass added or dropped).
std::string DescribeFailingPair(const EnginePair& pair) {
  std::string detail = DescribeMismatch(pair.report);
  if (detail.empty()) detail = pair.first_failure;
  if (!pair.same_op_order && !pair.first_op_difference.empty()) {
    detail += fmt::format("; first op that differs: {}", pair.first_op_difference);
    const std::string types = OneSidedOpTypes(pair.op_differences);
    if (!types.empty()) detail += fmt::format(" (op types: {})", types);
  }
  return detail;
}

// An engine case: the flow writes its bundles and reports into the case's scratch folder, and each
// pair becomes a comparison. The flow runs its pairs in one go, so its time is shared evenly by
// the pairs that ran.
std::vector<ComparisonOutcome> CompareByEngine(const SuiteCase& c, const ScratchFolder& scratch,
                                               SuiteResult* failed, std::string* why) {
  const Clock::time_point start = Clock::now();
  EngineOptions options;
  options.ir = c.engine_ir;
  options.strategy = *c.recipe.strategy;
  options.strategy_file = c.file;
  options.recipe = c.recipe;
  options.steps = c.recipe.steps;
  options.batch_size = c.recipe.batch_size;
  options.test_fault = c.engine_fault;
  EngineFailure failure;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "engine", c.name, &failure);
  if (!result.ok()) {
    // The flow's input stages fail on what the case asks (a strategy a road cannot take);
    // later stages on a run.
    *failed = IsHang(result.status()) ? SuiteResult::kHang
              : failure.input_error() ? SuiteResult::kInvalid
                                      : SuiteResult::kError;
    *why = DescribeFailure(result.status());
    return {};
  }
  int ran = 0;
  for (const EnginePair& pair : result->pairs) {
    ran += pair.verdict == EnginePair::Verdict::kSkipped ? 0 : 1;
  }
  const double share = ran == 0 ? 0 : SecondsSince(start) / ran;
  std::vector<ComparisonOutcome> outcomes;
  for (EnginePair& pair : result->pairs) {
    ComparisonOutcome outcome;
    outcome.comparison = SuiteComparison::kEngine;
    outcome.engine_pair = pair.name;
    if (pair.verdict == EnginePair::Verdict::kSkipped) {
      // It met no tier: the reports show the one it would have been judged in, at the least.
      outcome.tier = pair.name == "legacy-pir" ? Tier::kReordered : Tier::kNoiseFloor;
      outcome.result = SuiteResult::kSkipped;
      outcome.detail = pair.skipped_reason;
      outcomes.push_back(std::move(outcome));
      continue;
    }
    outcome.tier = pair.report.tier;
    outcome.seconds = share;
    if (pair.verdict == EnginePair::Verdict::kFail) {
      outcome.result = SuiteResult::kMismatch;
      outcome.detail = DescribeFailingPair(pair);
      if (!pair.same_op_order) outcome.op_differences = pair.op_differences;
    }
    outcome.report = std::move(pair.report);
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

// "2025-01-31T09:05:00": xs:dateTime without a zone, as JUnit's timestamp is written.
std::string UtcNow() {
  const time_t now = ::time(nullptr);
  struct tm utc {};
  ::gmtime_r(&now, &utc);
  char text[32] = {};
  ::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return text;
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

const char* SuiteResultName(SuiteResult result) {
  switch (result) {
    case SuiteResult::kPass:
      return "pass";
    case SuiteResult::kMismatch:
      return "mismatch";
    case SuiteResult::kHang:
      return "hang";
    case SuiteResult::kError:
      return "error";
    case SuiteResult::kInvalid:
      return "invalid";
    case SuiteResult::kSkipped:
      return "skipped";
  }
  return "error";
}

std::string ComparisonName(const ComparisonOutcome& outcome) {
  return outcome.engine_pair.empty() ? SuiteComparisonName(outcome.comparison)
                                     : outcome.engine_pair;
}

std::string DescribeMismatch(const ParityReport& report) {
  if (report.parity()) return "";
  std::vector<std::string> parts;
  if (report.first_divergence) {
    const DivergenceReport& d = *report.first_divergence;
    parts.push_back(fmt::format(
        "first divergence: rank {} step {} micro-batch {}{}: legacy {} (block {}, op {}) / new IR "
        "{} (op {}); {} differ{}",
        d.rank, d.step, d.micro_batch, d.job.empty() ? "" : " job " + d.job, d.old_op.type,
        d.old_op.block, d.old_op.op_index, d.new_op.type, d.new_op.op_index,
        fmt::join(d.differing_outputs, ", "),
        d.comparison.reason.empty() ? "" : " (" + d.comparison.reason + ")"));
  }
  if (report.first_differing_state) {
    parts.push_back(fmt::format("state first differs after step {}: {}",
                                report.first_differing_state->step,
                                fmt::join(report.first_differing_state->names, ", ")));
  }
  for (const ComparedTensor& t : report.tensors) {
    if (!t.compared || t.comparison.pass) continue;
    parts.push_back(fmt::format("first differing tensor: {} {} ({}, step {}, micro-batch {}): {}",
                                TensorGroupName(t.group), t.name,
                                t.rank == kAllRanks ? "all ranks" : fmt::format("rank {}", t.rank),
                                t.step, t.micro_batch, t.comparison.reason));
    break;
  }
  for (const CommDiff& c : report.communication) {
    if (c.equal) continue;
    parts.push_back(fmt::format("rank {} communication call {} differs: legacy {} / new IR {}",
                                c.rank, c.index, c.old_record, c.new_record));
    break;
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

bool IsHang(const Status& status) {
  return !status.ok() && status.code() == StatusCode::kInternal &&
         status.diagnostic().message.starts_with("hang: ");
}

std::string DescribeHang(const Status& status) {
  const Diagnostic& d = status.diagnostic();
  if (d.notes.empty()) return d.message;
  return fmt::format("{} ({})", d.message, fmt::join(d.notes, "; "));
}

std::string WorstMetric(const ParityReport& report) {
  const ComparedTensor* worst = nullptr;
  double worst_value = -1;
  int compared = 0;
  for (const ComparedTensor& t : report.tensors) {
    if (!t.compared) continue;
    ++compared;
    if (t.by_hash) continue;
    const double v =
        std::isnan(t.comparison.metrics.normwise) ? HUGE_VAL : t.comparison.metrics.normwise;
    if (v > worst_value) {
      worst_value = v;
      worst = &t;
    }
  }
  if (compared == 0) return "-";
  if (worst == nullptr || worst_value == 0) return "bits equal";
  // A tensor the float64 shadow let pass (noise floor) says so: its distance is rounding noise.
  return fmt::format("normwise {:.3g} ({}, {}, step {}{})", worst->comparison.metrics.normwise,
                     worst->name,
                     worst->rank == kAllRanks ? "all ranks" : fmt::format("rank {}", worst->rank),
                     worst->step, worst->arbitration ? ", arbitrated" : "");
}

CaseOutcome RunSuiteCase(const SuiteCase& c, const SuiteOptions& options) {
  const Clock::time_point start = Clock::now();
  CaseOutcome outcome;
  outcome.suite_case = c;
  auto finish = [&outcome, start](SuiteResult result, std::string detail) {
    outcome.result = result;
    outcome.detail = std::move(detail);
    outcome.seconds = SecondsSince(start);
    return outcome;
  };
  if (std::string reason = SkipReason(c, options); !reason.empty()) {
    return finish(SuiteResult::kSkipped, reason);
  }
  StatusOr<ScratchFolder> scratch = ScratchFolder::Make(options.scratch_root, c.name);
  if (!scratch.ok()) return finish(SuiteResult::kError, scratch.status().ToString());
  if (c.IsEngine()) {
    SuiteResult failed = SuiteResult::kPass;
    std::string why;
    outcome.comparisons = CompareByEngine(c, *scratch, &failed, &why);
    if (failed != SuiteResult::kPass) return finish(failed, why);
    // Every failing pair's finding: a broken new-IR pass shows against the serial program and
    // against the legacy road, and only the latter names the op whose place differs.
    SuiteResult worst = SuiteResult::kSkipped;
    std::vector<std::string> failures;
    for (const ComparisonOutcome& compared : outcome.comparisons) {
      worst = Severity(compared.result) > Severity(worst) ? compared.result : worst;
      if (compared.result != SuiteResult::kPass && compared.result != SuiteResult::kSkipped) {
        failures.push_back(fmt::format("{}: {}", compared.engine_pair, compared.detail));
      }
    }
    return finish(worst, fmt::format("{}", fmt::join(failures, "; ")));
  }
  const std::string distributed = *scratch / "distributed";
  StatusOr<corpus::ModelBundle> made = corpus::MakeModelBundle(c.recipe);
  if (!made.ok()) return finish(SuiteResult::kInvalid, made.status().ToString());
  if (Status written = corpus::WriteModelBundle(*made, distributed).status(); !written.ok()) {
    return finish(ResultOfFailure(written), DescribeFailure(written));
  }
  SuiteResult worst = SuiteResult::kPass;
  std::string detail;
  for (SuiteComparison comparison : c.compare) {
    ComparisonOutcome compared = comparison == SuiteComparison::kSerial
                                     ? CompareWithSerial(c, distributed, *scratch)
                                     : CompareWithTranslation(c, distributed);
    if (Severity(compared.result) > Severity(worst)) {
      worst = compared.result;
      detail = fmt::format("{}: {}", SuiteComparisonName(comparison), compared.detail);
    }
    outcome.comparisons.push_back(std::move(compared));
  }
  return finish(worst, detail);
}

StatusOr<SuiteRun> RunSuite(const std::vector<SuiteCase>& cases, const SuiteOptions& options) {
  if (options.jobs < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("--jobs must be at least 1, got {}", options.jobs));
  }
  const Clock::time_point start = Clock::now();
  SuiteRun run;
  run.started = UtcNow();
  run.hostname = HostName();
  run.cases.resize(cases.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  int done = 0;
  auto worker = [&]() {
    for (size_t i = next++; i < cases.size(); i = next++) {
      run.cases[i] = RunSuiteCase(cases[i], options);
      std::lock_guard<std::mutex> lock(progress_mutex);
      ++done;
      if (options.progress) options.progress(run.cases[i], done, static_cast<int>(cases.size()));
    }
  };
  const int threads = std::min<int>(options.jobs, std::max<int>(1, static_cast<int>(cases.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  run.seconds = SecondsSince(start);
  return run;
}

int SuiteExitCode(const SuiteRun& run) {
  int worst = 0;
  for (const CaseOutcome& c : run.cases) worst = std::max(worst, Severity(c.result));
  switch (worst) {
    case 2:
      return 1;
    case 3:
      return 2;
    case 4:
    case 5:
      return 3;
    default:
      return 0;
  }
}

}  // namespace irm::diff
