// The parity report as Markdown for people: the verdict, counts per group, the first divergence
// with both ops in their IRs' text forms, isolated re-execution, each rank's communication (a
// bundle's), the compared tensors worst first, and what could not be aligned; for a distributed
// bundle against its serial program, the first differing state and what the float64 shadow
// arbitrated.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "diff_tests/parity_report.h"

namespace irm::diff {
namespace {

constexpr size_t kMaxTableRows = 20;
constexpr size_t kMaxListed = 10;

std::string Num(double v) { return fmt::format("{:.3g}", v); }

std::string MetricsLine(const TensorMetrics& m) {
  return fmt::format(
      "max abs diff {} at {}, max rel diff {} at {}, normwise {}, mismatches {} of {} ({}%), "
      "ULP median {} max {}, cosine {:.9g}",
      Num(m.max_abs_diff), m.max_abs_index, Num(m.max_rel_diff), m.max_rel_index, Num(m.normwise),
      m.mismatch_count, m.numel, Num(m.mismatch_percent), Num(m.ulp_median), m.ulp_max, m.cosine);
}

std::string RankText(int rank) {
  return rank == kAllRanks ? std::string("all") : fmt::format("{}", rank);
}

std::string Where(int rank, int step, int micro_batch) {
  return fmt::format("rank {}, step {}, micro-batch {}", rank, step, micro_batch);
}

// Failures first; among them the most mismatched elements, then the largest normwise error; ties
// keep the run's order.
std::vector<size_t> WorstFirst(const std::vector<ComparedTensor>& tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  auto badness = [&](size_t i) {
    const ComparedTensor& t = tensors[i];
    const bool failed = t.compared && !t.comparison.pass;
    const double normwise =
        std::isnan(t.comparison.metrics.normwise) ? 0.0 : t.comparison.metrics.normwise;
    return std::make_tuple(failed ? 0 : 1, -t.comparison.metrics.mismatch_percent, -normwise);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return badness(a) < badness(b); });
  return order;
}

void ListUnaligned(std::string& md, const char* what, const std::vector<UnalignedEntry>& entries) {
  if (entries.empty()) return;
  md += fmt::format("- {}: {}", what, entries.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < entries.size() && i < kMaxListed; ++i) {
    names.push_back(
        fmt::format("`{}` ({}, step {})", entries[i].name, entries[i].op_type, entries[i].step));
  }
  md += fmt::format(" — {}{}\n", fmt::join(names, ", "), entries.size() > kMaxListed ? ", …" : "");
}

// Distributed against serial: the tensors the float64 shadow let pass, and why.
void Arbitrated(std::string& md, const ParityReport& report) {
  if (report.Arbitrated() == 0) return;
  md +=
      "\n## Arbitrated by the float64 shadow\n\n"
      "| group | step | name | verdict | the reordered tier said |\n|---|---|---|---|---|\n";
  for (const ComparedTensor& t : report.tensors) {
    if (!t.arbitration || t.arbitration->agreement == Agreement::kMismatch) continue;
    md += fmt::format("| {} | {} | `{}` | {} | {} |\n", TensorGroupName(t.group), t.step, t.name,
                      AgreementName(t.arbitration->agreement), t.arbitration->reason);
  }
}

void FirstDifferingState(std::string& md, const ParityReport& report) {
  if (!report.first_differing_state) return;
  const DifferingState& d = *report.first_differing_state;
  std::vector<std::string> names;
  for (size_t i = 0; i < d.names.size() && i < kMaxListed; ++i) {
    names.push_back(fmt::format("`{}`", d.names[i]));
  }
  md += fmt::format(
      "\n## First differing state\n\nAfter step {}, {} var{} differ{} from the serial run: "
      "{}{}.\n",
      d.step, d.names.size(), d.names.size() == 1 ? "" : "s", d.names.size() == 1 ? "s" : "",
      fmt::join(names, ", "), d.names.size() > kMaxListed ? ", …" : "");
}

void Communication(std::string& md, const std::vector<CommDiff>& diffs) {
  if (diffs.empty()) return;
  md +=
      "\n## Communication\n\n| rank | legacy calls | new-IR calls | result |\n|---|---|---|---|\n";
  for (const CommDiff& c : diffs) {
    md += fmt::format("| {} | {} | {} | {} |\n", c.rank, c.old_records, c.new_records,
                      c.equal ? "same" : fmt::format("DIFF at call {}", c.index));
  }
  for (const CommDiff& c : diffs) {
    if (c.equal) continue;
    md += fmt::format("\nRank {}, call {}: legacy `{}` vs new IR `{}`.\n", c.rank, c.index,
                      c.old_record, c.new_record);
  }
}

}  // namespace

std::string RenderMarkdown(const ParityReport& report) {
  std::string md = fmt::format("# Parity: {}\n\n", report.parity() ? "PASS" : "MISMATCH");
  if (report.against_serial) {
    md += fmt::format("- distributed bundle: `{}`\n- serial bundle: `{}`\n", report.legacy_program,
                      report.new_program);
  } else {
    md += fmt::format("- legacy program: `{}`\n- new-IR program: `{}`\n", report.legacy_program,
                      report.new_program);
  }
  md += fmt::format("- tier: {}; steps: {}; seed: {}; gemm: {}\n\n", TierName(report.tier),
                    report.steps, report.seed, report.gemm);
  md += "| group | compared | mismatched |\n|---|---|---|\n";
  for (TensorGroup g : kEveryGroup) {
    // Distributed against serial compares no intermediates: the programs differ.
    if (report.against_serial && g == TensorGroup::kIntermediate) continue;
    md += fmt::format("| {} | {} | {} |\n", TensorGroupName(g), report.Compared(g),
                      report.Mismatched(g));
  }
  if (report.NotCompared() > 0) {
    md += fmt::format("\n{} aligned tensors were not compared: the {} tier needs their values.\n",
                      report.NotCompared(), TierName(report.tier));
  }

  Communication(md, report.communication);
  FirstDifferingState(md, report);

  if (report.first_divergence) {
    const DivergenceReport& d = *report.first_divergence;
    md += fmt::format(
        "\n## First divergence\n\n{}{}: legacy `{}` (block {}, op {}) vs new IR "
        "`{}` (op {}{})\n\n",
        Where(d.rank, d.step, d.micro_batch), d.job.empty() ? "" : fmt::format(", job {}", d.job),
        d.old_op.type, d.old_op.block, d.old_op.op_index, d.new_op.type, d.new_op.op_index,
        d.new_op.block > 0 ? fmt::format(", nesting depth {}", d.new_op.block) : "");
    md += fmt::format("Legacy op:\n\n```\n{}\n```\n\nNew-IR op:\n\n```\n{}\n```\n\n", d.old_op.text,
                      d.new_op.text);
    md += fmt::format("Differing outputs: {}. {}.\n", fmt::join(d.differing_outputs, ", "),
                      d.comparison.reason);
    if (d.has_metrics) md += fmt::format("\n{}.\n", MetricsLine(d.comparison.metrics));
    if (!d.inputs_matched) {
      md += fmt::format(
          "\nNo differing op read only matching inputs; this is the earliest, and "
          "its inputs {} did not match.\n",
          fmt::join(d.unmatched_inputs, ", "));
    }
    md += fmt::format("\n{} later aligned tensor{} also differ{}.\n", d.later_differing,
                      d.later_differing == 1 ? "" : "s", d.later_differing == 1 ? "s" : "");
  }
  if (report.isolation) {
    const IsolationReport& iso = *report.isolation;
    md += fmt::format("\n## Isolated re-execution\n\n**{}**", IsolationVerdictName(iso.verdict));
    if (!iso.detail.empty()) md += fmt::format(": {}", iso.detail);
    md += ".\n";
    if (iso.verdict != IsolationReport::Verdict::kNotRun && !iso.comparison.pass) {
      md += fmt::format("\n{}.\n", MetricsLine(iso.comparison.metrics));
    }
  }

  if (report.Mismatched() == 0) {
    md += fmt::format(
        "\nAll {} compared tensors are equal under the {} tier{}.\n", report.Compared(),
        TierName(report.tier),
        report.Arbitrated() > 0
            ? fmt::format(" ({} by the float64 shadow's arbitration)", report.Arbitrated())
            : "");
  } else {
    md +=
        "\n## Compared tensors (worst first)\n\n"
        "| result | group | rank | step | name | old op | new op | max abs diff | normwise | "
        "mismatch % | ULP max | reason |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    const std::vector<size_t> order = WorstFirst(report.tensors);
    for (size_t i = 0; i < order.size() && i < kMaxTableRows; ++i) {
      const ComparedTensor& t = report.tensors[order[i]];
      const bool metrics = t.compared && !t.by_hash;
      const TensorMetrics& m = t.comparison.metrics;
      md += fmt::format("| {} | {} | {} | {} | `{}`{} | {} | {} | {} | {} | {} | {} | {} |\n",
                        !t.compared ? "—" : (t.comparison.pass ? "ok" : "DIFF"),
                        TensorGroupName(t.group), RankText(t.rank), t.step, t.name,
                        t.occurrence > 0 ? fmt::format(" #{}", t.occurrence + 1) : "", t.old_op,
                        t.new_op, metrics ? Num(m.max_abs_diff) : "",
                        metrics ? Num(m.normwise) : "", metrics ? Num(m.mismatch_percent) : "",
                        metrics ? fmt::format("{}", m.ulp_max) : "", t.comparison.reason);
    }
    if (order.size() > kMaxTableRows) {
      md += fmt::format("\n… and {} more (the JSON report lists them all).\n",
                        order.size() - kMaxTableRows);
    }
  }

  Arbitrated(md, report);

  if (!report.old_only.empty() || !report.new_only.empty() || !report.unnamed_new.empty()) {
    md += "\n## Not aligned\n\n";
    ListUnaligned(md, "written only by the legacy program", report.old_only);
    ListUnaligned(md, "written only by the new-IR program", report.new_only);
    ListUnaligned(md, "new-IR values without a legacy name", report.unnamed_new);
  }
  return md;
}

}  // namespace irm::diff
