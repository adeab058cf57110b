// The parity suite's runner (docs/suite.md): each case's distributed bundle is built by the code
// `ir-migrate build --strategy` uses (corpus/model_bundle.h) into a scratch folder that is removed
// afterwards, then compared with its serial program (serial_parity.h) and with its translation
// (bundle_parity.h, exact tier), as the case asks; an engine case runs the Engine flow
// (engine_flow.h) in its scratch folder and reports each of its pairs (serial-legacy, serial-pir,
// legacy-pir) as a comparison of its own. Cases run N at a time; each outcome says pass,
// mismatch (with the first divergence or first differing state), hang (the runtime's watchdog saw
// that no rank can progress: the detail names every rank's pending op), error (any other runtime
// failure), invalid (the case cannot be built: bad input) or skipped (with the reason: a GPU case
// on a machine without one is never passed).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diff_tests/parity_report.h"
#include "diff_tests/suite_case.h"

namespace irm::diff {

enum class SuiteResult { kPass, kMismatch, kHang, kError, kInvalid, kSkipped };
// "pass", "mismatch", "hang", "error", "invalid", "skipped".
const char* SuiteResultName(SuiteResult result);

struct ComparisonOutcome {
  SuiteComparison comparison = SuiteComparison::kSerial;
  // An engine case's pair: "serial-legacy", "serial-pir" or "legacy-pir"; empty otherwise.
  std::string engine_pair;
  Tier tier = Tier::kExact;
  SuiteResult result = SuiteResult::kPass;
  std::optional<ParityReport> report;  // set when the comparison ran to a verdict
  // A mismatch's first divergence (for legacy-pir also the first op that differs); a hang's
  // report (every rank's pending op, and which run hung); an error's diagnostic; a skipped
  // pair's reason.
  std::string detail;
  // A failing legacy-pir whose roads' op orders differ: the alignment, program by program
  // (DescribeOpDifferences), for the JUnit failure's text and the JSON.
  std::string op_differences;
  double seconds = 0;
};
// The comparison's name in the reports: "serial", "translated", or the engine pair's.
std::string ComparisonName(const ComparisonOutcome& outcome);

struct CaseOutcome {
  SuiteCase suite_case;
  SuiteResult result = SuiteResult::kPass;  // the worst of the comparisons'
  std::string detail;                       // why skipped, invalid, or the first failure's detail
  std::vector<ComparisonOutcome> comparisons;
  double seconds = 0;
};

struct SuiteRun {
  std::vector<CaseOutcome> cases;  // in the order of the cases given
  double seconds = 0;
  // When the run began, ISO 8601 in UTC ("2025-01-31T09:05:00"), and the machine it ran on: the
  // JUnit test suites' timestamp and hostname, which tell two merged runs' files apart.
  std::string started;
  std::string hostname;
};

struct SuiteOptions {
  int jobs = 1;
  // Where each case's scratch folder is made; empty: the system's temporary folder.
  std::string scratch_root;
  // Whether this machine offers a GPU to the reference runtime (this build has no GPU backend).
  bool gpu_available = false;
  // After each case, one call at a time: the outcome, how many cases are done, how many in all.
  std::function<void(const CaseOutcome& outcome, int done, int total)> progress;
};

StatusOr<SuiteRun> RunSuite(const std::vector<SuiteCase>& cases, const SuiteOptions& options);

// One case, as RunSuite runs it.
CaseOutcome RunSuiteCase(const SuiteCase& suite_case, const SuiteOptions& options);

// 0 every case passed or was skipped, 1 a mismatch, 2 an invalid case, 3 a runtime failure — a
// hang or an error (the worst wins: 3 over 2 over 1).
int SuiteExitCode(const SuiteRun& run);

// What a failed report shows first: the first divergence (translated) or the first differing
// state (serial), then the first differing tensor and communication call. Empty on parity.
std::string DescribeMismatch(const ParityReport& report);
// The worst compared tensor's metric ("normwise 3.1e-07 (fc_0.w_0, all ranks, step 1)", with
// ", arbitrated" when the float64 shadow let it pass), "bits
// equal" when every tensor was decided bit for bit, "-" when nothing was compared.
std::string WorstMetric(const ParityReport& report);

// Whether a failed run's status is the runtime's hang report (reference_runtime/comm/watchdog.h,
// gloo_watch.h: kInternal, "hang: ..."), and that report as one line — the message, then the notes
// that say which run hung: "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (...);
// rank 1 waits in ... (in job 1 ('forward', micro-batch 1) of step 1; on rank 0; in the
// distributed run)".
bool IsHang(const Status& status);
std::string DescribeHang(const Status& status);

}  // namespace irm::diff
