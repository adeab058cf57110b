// The result of a parity run, as every report format renders it: what was compared (fetches,
// parameters and optimizer state, aligned intermediates — per rank, step and micro-batch) with
// each comparison's verdict and metrics, what could not be aligned, the first divergence with
// both ops in their IRs' text forms, the verdict of isolated re-execution and, for a bundle, each
// rank's communication-trace diff. Rendered as
// Markdown for people, canonical JSON (schema: docs/parity-report.schema.json) and JUnit XML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diff_tests/serial_arbitration.h"
#include "diff_tests/tensor_compare.h"

namespace irm::diff {

enum class TensorGroup { kFetch, kParameter, kIntermediate };
inline constexpr TensorGroup kEveryGroup[] = {TensorGroup::kFetch, TensorGroup::kParameter,
                                              TensorGroup::kIntermediate};
// "fetches", "parameters", "intermediates".
const char* TensorGroupName(TensorGroup group);

// The rank of a tensor a distributed-vs-serial check reassembled over the ranks.
inline constexpr int kAllRanks = -1;

struct ComparedTensor {
  TensorGroup group = TensorGroup::kIntermediate;
  int rank = 0;  // kAllRanks: reassembled over the ranks (distributed against serial)
  int step = 0;
  int micro_batch = 0;
  std::string name;
  int occurrence = 0;    // intermediates: the k-th write of the name in its step
  std::string old_op;    // intermediates: "relu (block 0, op 3)"
  std::string new_op;    // intermediates: "pd_op.relu (op 5)"
  bool compared = true;  // false: the tier needed tensors that were not kept
  bool by_hash = false;  // decided by the hash alone (or bit for bit): no metrics
  Comparison comparison;
  // Distributed against serial in the noise-floor tier: how the float64 shadow judged a tensor
  // that missed the reordered tier (noise floor, no signal: it passes; mismatch); unset when the
  // reordered tier sufficed or the tier arbitrates nothing.
  std::optional<Arbitration> arbitration;
};

struct OpDescription {
  std::string type;
  int block = 0;  // legacy: block index; new IR: nesting depth
  int op_index = 0;
  std::string text;  // the op in its IR's text form
};

struct DivergenceReport {
  int rank = 0;
  int step = 0;
  int micro_batch = 0;
  std::string job;
  OpDescription old_op;
  OpDescription new_op;
  std::vector<std::string> differing_outputs;
  // The first differing output's comparison (metrics when its tensors were kept or re-created).
  bool has_metrics = false;
  Comparison comparison;
  bool inputs_matched = true;
  std::vector<std::string> unmatched_inputs;
  int later_differing = 0;
};

struct IsolationReport {
  enum class Verdict { kOpDiffers, kInheritedDrift, kNotRun };
  Verdict verdict = Verdict::kNotRun;
  std::string detail;     // why it could not run; or what was compared
  Comparison comparison;  // the isolated op's output against the old output
};
// "the op itself computes differently", "inherited drift", "not run".
const char* IsolationVerdictName(IsolationReport::Verdict verdict);

struct UnalignedEntry {
  int rank = 0;
  int step = 0;
  int micro_batch = 0;
  std::string name;
  std::string op_type;
};

// One rank's communication calls compared (comm_trace.h): the legacy run's trace against the
// new-IR run's. Any difference is a mismatch: it predicts a hang or wrong data on some rank.
struct CommDiff {
  int rank = 0;
  int old_records = 0;
  int new_records = 0;
  bool equal = true;
  // When not equal: the first differing record and both records described ("all_reduce sum
  // float32 x6 (ring 0, op 3)"), "(none)" on the side whose trace ended first.
  int64_t index = 0;
  std::string old_record;
  std::string new_record;
};

// Distributed against serial: the earliest step after which a parameter or optimizer state
// differs (found by re-running fewer steps), and the vars that differ then, in the order the
// serial program first writes them.
struct DifferingState {
  int step = 0;
  std::vector<std::string> names;
};

struct ParityReport {
  // A distributed bundle (legacy_program) against its serial program (new_program), rather than
  // a legacy program against its new-IR twin.
  bool against_serial = false;
  std::string legacy_program;
  std::string new_program;  // a file, or "(translated)"
  Tier tier = Tier::kExact;
  int steps = 0;
  uint64_t seed = 0;
  std::string gemm;
  std::vector<ComparedTensor> tensors;
  std::vector<UnalignedEntry> old_only;
  std::vector<UnalignedEntry> new_only;
  std::vector<UnalignedEntry> unnamed_new;
  std::optional<DivergenceReport> first_divergence;
  std::optional<IsolationReport> isolation;
  // Per rank, in rank order; empty for a single program (no communication to compare).
  std::vector<CommDiff> communication;
  std::optional<DifferingState> first_differing_state;  // distributed against serial
  // The qualified names of the legacy functions and new-IR twins the run exercised (a suite
  // case's `covers`): what a passing report is evidence for (docs/deadcode.md). Written sorted,
  // and only when not empty.
  std::vector<std::string> covers;

  // Every compared tensor passes (a tensor the tier could not compare is no failure; it is
  // counted) and every rank communicates alike.
  bool parity() const;
  int CommMismatched() const;
  int Compared(std::optional<TensorGroup> group = std::nullopt) const;
  int Mismatched(std::optional<TensorGroup> group = std::nullopt) const;
  int NotCompared() const;
  // Tensors that passed only by the float64 shadow's arbitration.
  int Arbitrated() const;
};

std::string RenderMarkdown(const ParityReport& report);
// Canonical JSON: keys sorted, two-space indent, a trailing newline; non-finite numbers as null.
std::string RenderJson(const ParityReport& report);
// One test case per rank and group (fetches, parameters, intermediates), and one per rank named
// "communication" when the report compares communication.
std::string RenderJunit(const ParityReport& report, const std::string& suite_name = "parity");
// XML text and attribute values: the five entities; line breaks kept in attributes (&#10;);
// control characters XML 1.0 cannot hold become '?'.
std::string XmlEscape(std::string_view text);

}  // namespace irm::diff
