// The parity report as canonical JSON (docs/parity-report.schema.json): nlohmann's objects keep
// keys sorted, so equal reports give equal bytes.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "diff_tests/parity_report.h"

namespace irm::diff {
namespace {

using nlohmann::json;

// Infinite ratios (x / 0) and NaN have no JSON spelling: null.
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json MetricsJson(const TensorMetrics& m) {
  return {{"numel", m.numel},
          {"bits_equal", m.bits_equal},
          {"max_abs_diff", Number(m.max_abs_diff)},
          {"max_abs_index", m.max_abs_index},
          {"max_rel_diff", Number(m.max_rel_diff)},
          {"max_rel_index", m.max_rel_index},
          {"normwise", Number(m.normwise)},
          {"mismatch_count", m.mismatch_count},
          {"mismatch_percent", Number(m.mismatch_percent)},
          {"ulp_median", Number(m.ulp_median)},
          {"ulp_max", m.ulp_max},
          {"cosine", Number(m.cosine)},
          {"nonfinite_mismatches", m.nonfinite_mismatches},
          {"first_nonfinite_mismatch", m.first_nonfinite_mismatch}};
}

json ComparisonJson(const Comparison& c, bool with_metrics) {
  json j = {{"pass", c.pass}, {"reason", c.reason}};
  j["metrics"] = with_metrics ? MetricsJson(c.metrics) : json(nullptr);
  return j;
}

json TensorJson(const ComparedTensor& t) {
  json j = {{"group", TensorGroupName(t.group)},
            {"rank", t.rank},
            {"step", t.step},
            {"micro_batch", t.micro_batch},
            {"name", t.name},
            {"occurrence", t.occurrence},
            {"old_op", t.old_op},
            {"new_op", t.new_op},
            {"compared", t.compared},
            {"by_hash", t.by_hash}};
  j.update(ComparisonJson(t.comparison, t.compared && !t.by_hash));
  j["arbitration"] = t.arbitration ? json{{"agreement", AgreementName(t.arbitration->agreement)},
                                          {"reason", t.arbitration->reason}}
                                   : json(nullptr);
  return j;
}

json OpJson(const OpDescription& op) {
  return {{"type", op.type}, {"block", op.block}, {"op_index", op.op_index}, {"text", op.text}};
}

json UnalignedJson(const std::vector<UnalignedEntry>& entries) {
  json list = json::array();
  for (const UnalignedEntry& e : entries) {
    list.push_back({{"rank", e.rank},
                    {"step", e.step},
                    {"micro_batch", e.micro_batch},
                    {"name", e.name},
                    {"op_type", e.op_type}});
  }
  return list;
}

json CommJson(const std::vector<CommDiff>& diffs) {
  json list = json::array();
  for (const CommDiff& c : diffs) {
    json j = {{"rank", c.rank},
              {"equal", c.equal},
              {"old_records", c.old_records},
              {"new_records", c.new_records}};
    j["first_difference"] =
        c.equal
            ? json(nullptr)
            : json{{"index", c.index}, {"old_record", c.old_record}, {"new_record", c.new_record}};
    list.push_back(j);
  }
  return list;
}

}  // namespace

std::string RenderJson(const ParityReport& report) {
  json summary = {{"compared", report.Compared()},
                  {"mismatched", report.Mismatched()},
                  {"not_compared", report.NotCompared()},
                  {"unnamed_new_values", report.unnamed_new.size()},
                  {"old_only", report.old_only.size()},
                  {"new_only", report.new_only.size()},
                  {"communication_mismatched", report.CommMismatched()},
                  {"arbitrated", report.Arbitrated()}};
  for (TensorGroup g : kEveryGroup) {
    summary[TensorGroupName(g)] = {{"compared", report.Compared(g)},
                                   {"mismatched", report.Mismatched(g)}};
  }
  json tensors = json::array();
  for (const ComparedTensor& t : report.tensors) tensors.push_back(TensorJson(t));
  json j = {{"format", "ir-migrate-parity-report"},
            {"version", 1},
            {"verdict", report.parity() ? "parity" : "mismatch"},
            {"against_serial", report.against_serial},
            {"legacy_program", report.legacy_program},
            {"new_program", report.new_program},
            {"tier", TierName(report.tier)},
            {"steps", report.steps},
            {"seed", report.seed},
            {"gemm", report.gemm},
            {"summary", summary},
            {"tensors", tensors},
            {"communication", CommJson(report.communication)},
            {"unaligned",
             {{"old_only", UnalignedJson(report.old_only)},
              {"new_only", UnalignedJson(report.new_only)},
              {"unnamed_new", UnalignedJson(report.unnamed_new)}}}};
  if (report.first_divergence) {
    const DivergenceReport& d = *report.first_divergence;
    json div = {{"rank", d.rank},
                {"step", d.step},
                {"micro_batch", d.micro_batch},
                {"job", d.job},
                {"old_op", OpJson(d.old_op)},
                {"new_op", OpJson(d.new_op)},
                {"differing_outputs", d.differing_outputs},
                {"inputs_matched", d.inputs_matched},
                {"unmatched_inputs", d.unmatched_inputs},
                {"later_differing", d.later_differing}};
    div.update(ComparisonJson(d.comparison, d.has_metrics));
    j["first_divergence"] = div;
  } else {
    j["first_divergence"] = nullptr;
  }
  if (report.first_differing_state) {
    j["first_differing_state"] = {{"step", report.first_differing_state->step},
                                  {"names", report.first_differing_state->names}};
  } else {
    j["first_differing_state"] = nullptr;
  }
  if (!report.covers.empty()) {
    std::vector<std::string> covers = report.covers;
    std::sort(covers.begin(), covers.end());
    covers.erase(std::unique(covers.begin(), covers.end()), covers.end());
    j["covers"] = covers;
  }
  if (report.isolation) {
    const IsolationReport& iso = *report.isolation;
    json i = {{"verdict", IsolationVerdictName(iso.verdict)}, {"detail", iso.detail}};
    i["comparison"] = iso.verdict == IsolationReport::Verdict::kNotRun
                          ? json(nullptr)
                          : ComparisonJson(iso.comparison, true);
    j["isolation"] = i;
  } else {
    j["isolation"] = nullptr;
  }
  return j.dump(2) + "\n";
}

}  // namespace irm::diff
