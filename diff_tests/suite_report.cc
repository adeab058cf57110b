// Rendering a suite run for CI (JUnit XML), for machines (JSON), for people (Markdown) and for the
// dead-code report (an evidence manifest and the parity reports it names).
#include "diff_tests/suite_report.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace irm::diff {
namespace {

using nlohmann::json;

// Whether a comparison of the case checks `name`: every comparison of a plain case; an engine
// pair the names of the roads it checks.
bool Checks(const CaseOutcome& c, const ComparisonOutcome& o, const std::string& name) {
  if (!c.suite_case.IsEngine()) return true;
  auto on = [&name](const std::vector<std::string>& names) {
    return std::binary_search(names.begin(), names.end(), name);
  };
  return (on(c.suite_case.covers_legacy) && EnginePairChecks(o.engine_pair, EngineRoad::kLegacy)) ||
         (on(c.suite_case.covers_pir) && EnginePairChecks(o.engine_pair, EngineRoad::kPir));
}

// The tier a case's comparisons use: "noise-floor / exact"; an engine case's pairs' as they ran
// ("-" for a skipped pair), or "engine" before any ran.
std::string Tiers(const CaseOutcome& c) {
  if (c.suite_case.IsEngine()) {
    std::vector<std::string> tiers;
    for (const ComparisonOutcome& o : c.comparisons) {
      tiers.push_back(o.result == SuiteResult::kSkipped ? "-" : TierName(o.tier));
    }
    return tiers.empty() ? "engine" : fmt::format("{}", fmt::join(tiers, " / "));
  }
  std::vector<std::string> tiers;
  for (SuiteComparison comparison : c.suite_case.compare) {
    tiers.push_back(
        TierName(comparison == SuiteComparison::kSerial ? c.suite_case.tier : Tier::kExact));
  }
  return fmt::format("{}", fmt::join(tiers, " / "));
}

std::string CaseWorstMetric(const CaseOutcome& c) {
  std::vector<std::string> parts;
  for (const ComparisonOutcome& o : c.comparisons) {
    parts.push_back(fmt::format(
        "{}: {}", ComparisonName(o),
        o.report ? WorstMetric(*o.report) : (o.result == SuiteResult::kSkipped ? "skipped" : "-")));
  }
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

// Markdown table cells hold no '|' or line break.
std::string Cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

struct Counts {
  int pass = 0, mismatch = 0, hang = 0, error = 0, invalid = 0, skipped = 0;
  void Add(SuiteResult r) {
    switch (r) {
      case SuiteResult::kPass:
        ++pass;
        break;
      case SuiteResult::kMismatch:
        ++mismatch;
        break;
      case SuiteResult::kHang:
        ++hang;
        break;
      case SuiteResult::kError:
        ++error;
        break;
      case SuiteResult::kInvalid:
        ++invalid;
        break;
      case SuiteResult::kSkipped:
        ++skipped;
        break;
    }
  }
};

// One test case: passed, failed (a mismatch; a hang, whose message names every rank's pending
// op), errored (another runtime failure, or an invalid case) or skipped.
std::string TestCase(const std::string& classname, const std::string& name, double seconds,
                     SuiteResult result, const std::string& detail) {
  std::string body;
  switch (result) {
    case SuiteResult::kPass:
      break;
    case SuiteResult::kMismatch:
    case SuiteResult::kHang:
      body = fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                         SuiteResultName(result), XmlEscape(FirstLine(detail)), XmlEscape(detail));
      break;
    case SuiteResult::kError:
    case SuiteResult::kInvalid:
      body = fmt::format("      <error type=\"{}\" message=\"{}\">{}</error>\n",
                         SuiteResultName(result), XmlEscape(FirstLine(detail)), XmlEscape(detail));
      break;
    case SuiteResult::kSkipped:
      body = fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(detail));
      break;
  }
  return fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"{}",
                     XmlEscape(classname), XmlEscape(name), seconds,
                     body.empty() ? "/>\n" : fmt::format(">\n{}    </testcase>\n", body));
}

}  // namespace

std::string RenderSuiteJunit(const SuiteRun& run, const std::string& run_name) {
  const std::string prefix = run_name.empty() ? "parity" : "parity." + run_name;
  struct Suite {
    std::string body;
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    double seconds = 0;
  };
  std::map<std::string, Suite> suites;  // by group: unique names
  for (const CaseOutcome& c : run.cases) {
    Suite& s = suites[c.suite_case.group];
    s.seconds += c.seconds;
    const std::string classname =
        fmt::format("{}.{}.{}", prefix, c.suite_case.group, c.suite_case.name);
    auto add = [&s, &classname](const std::string& name, double seconds, SuiteResult result,
                                const std::string& detail) {
      ++s.tests;
      s.failures += result == SuiteResult::kMismatch || result == SuiteResult::kHang ? 1 : 0;
      s.errors += result == SuiteResult::kError || result == SuiteResult::kInvalid ? 1 : 0;
      s.skipped += result == SuiteResult::kSkipped ? 1 : 0;
      s.body += TestCase(classname, name, seconds, result, detail);
    };
    if (c.comparisons.empty()) {
      // Skipped, or failed before any comparison ran: one test per comparison asked for.
      for (const std::string& name : c.suite_case.ComparisonNames()) {
        add(name, 0, c.result, c.detail);
      }
      continue;
    }
    for (const ComparisonOutcome& o : c.comparisons) {
      // A failure's text (not its message) also holds the roads' op alignment.
      const bool failed = o.result == SuiteResult::kMismatch && !o.op_differences.empty();
      add(ComparisonName(o), o.seconds, o.result,
          failed ? o.detail + "\n\n" + o.op_differences : o.detail);
    }
  }
  Suite total;
  std::string body;
  // The attributes Jenkins' and Ant's JUnit format give a test suite besides its counts: its
  // ordinal in the file, the package its tests' classnames start with, when and where it ran.
  std::string where;
  if (!run.started.empty()) where += fmt::format(" timestamp=\"{}\"", XmlEscape(run.started));
  if (!run.hostname.empty()) where += fmt::format(" hostname=\"{}\"", XmlEscape(run.hostname));
  int id = 0;
  for (const auto& [group, s] : suites) {
    body += fmt::format(
        "  <testsuite name=\"{0}\" tests=\"{1}\" failures=\"{2}\" errors=\"{3}\" "
        "skipped=\"{4}\" time=\"{5:.3f}\" id=\"{6}\" package=\"{0}\"{7}>\n{8}"
        "  </testsuite>\n",
        XmlEscape(prefix + "." + group), s.tests, s.failures, s.errors, s.skipped, s.seconds, id++,
        where, s.body);
    total.tests += s.tests;
    total.failures += s.failures;
    total.errors += s.errors;
    total.skipped += s.skipped;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ir-migrate suite\" "
      "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n{}"
      "</testsuites>\n",
      total.tests, total.failures, total.errors, total.skipped, run.seconds, body);
}

std::string RenderSuiteJson(const SuiteRun& run) {
  Counts counts;
  json cases = json::array();
  for (const CaseOutcome& c : run.cases) {
    counts.Add(c.result);
    json comparisons = json::array();
    for (const ComparisonOutcome& o : c.comparisons) {
      json j = {{"comparison", ComparisonName(o)},
                {"tier", TierName(o.tier)},
                {"result", SuiteResultName(o.result)},
                {"detail", o.detail},
                {"seconds", o.seconds}};
      if (!o.op_differences.empty()) j["op_differences"] = o.op_differences;
      if (o.report) {
        j["compared"] = o.report->Compared();
        j["mismatched"] = o.report->Mismatched();
        j["worst_metric"] = WorstMetric(*o.report);
      }
      comparisons.push_back(j);
    }
    const CaseEvidence evidence = EvidenceOf(c);
    json withheld = json::array();
    for (const auto& [name, why] : evidence.withheld) {
      withheld.push_back({{"name", name}, {"reason", why}});
    }
    json entry = {{"name", c.suite_case.name},
                  {"file", c.suite_case.file},
                  {"group", c.suite_case.group},
                  {"tags", c.suite_case.tags},
                  {"covers", c.suite_case.covers},
                  {"vouched", evidence.vouched},
                  {"withheld", withheld},
                  {"result", SuiteResultName(c.result)},
                  {"detail", c.detail},
                  {"seconds", c.seconds},
                  {"comparisons", comparisons}};
    if (c.suite_case.IsEngine()) {
      entry["engine"] = {
          {"ir", EngineIrName(c.suite_case.engine_ir)},
          {"covers", {{"legacy", c.suite_case.covers_legacy}, {"pir", c.suite_case.covers_pir}}}};
      if (!c.suite_case.test_fault.empty()) entry["engine"]["test_fault"] = c.suite_case.test_fault;
    }
    cases.push_back(std::move(entry));
  }
  json j = {{"format", "ir-migrate-suite-report"},
            {"version", 1},
            {"exit_code", SuiteExitCode(run)},
            {"seconds", run.seconds},
            {"summary",
             {{"cases", run.cases.size()},
              {"pass", counts.pass},
              {"mismatch", counts.mismatch},
              {"hang", counts.hang},
              {"error", counts.error},
              {"invalid", counts.invalid},
              {"skipped", counts.skipped}}},
            {"cases", cases}};
  return j.dump(2) + "\n";
}

std::string RenderSuiteMarkdown(const SuiteRun& run) {
  Counts counts;
  for (const CaseOutcome& c : run.cases) counts.Add(c.result);
  std::string out = fmt::format(
      "# Parity suite: {}\n\n{} cases: {} pass, {} mismatch, {} hang, {} error, {} invalid, {} "
      "skipped ({:.1f} s)\n\n| case | tier | result | worst metric | time "
      "|\n|---|---|---|---|---|\n",
      SuiteExitCode(run) == 0 ? "PASS" : "FAIL", run.cases.size(), counts.pass, counts.mismatch,
      counts.hang, counts.error, counts.invalid, counts.skipped, run.seconds);
  for (const CaseOutcome& c : run.cases) {
    out += fmt::format("| {} | {} | {} | {} | {:.2f} s |\n", Cell(c.suite_case.name), Tiers(c),
                       SuiteResultName(c.result), Cell(CaseWorstMetric(c)), c.seconds);
  }
  std::string failures;
  for (const CaseOutcome& c : run.cases) {
    if (c.result == SuiteResult::kPass) continue;
    failures += fmt::format("- **{}** ({}): {}\n", c.suite_case.name, SuiteResultName(c.result),
                            Cell(c.detail));
  }
  if (!failures.empty()) out += "\n## Not passed\n\n" + failures;
  // A passing case's skipped comparisons (an engine case's serial pairs under gradient merge) and
  // the names they keep it from vouching for.
  std::string skipped;
  for (const CaseOutcome& c : run.cases) {
    if (c.result != SuiteResult::kPass) continue;
    for (const ComparisonOutcome& o : c.comparisons) {
      if (o.result != SuiteResult::kSkipped) continue;
      std::vector<std::string> names;
      for (const std::string& name : c.suite_case.covers) {
        if (Checks(c, o, name)) names.push_back(name);
      }
      skipped += fmt::format(
          "- **{}** {}: {}; no evidence for {}\n", c.suite_case.name, ComparisonName(o),
          Cell(o.detail), names.empty() ? "any name" : fmt::format("{}", fmt::join(names, ", ")));
    }
  }
  if (!skipped.empty()) out += "\n## Skipped comparisons of passing cases\n\n" + skipped;
  return out;
}

CaseEvidence EvidenceOf(const CaseOutcome& c) {
  CaseEvidence evidence;
  for (const std::string& name : c.suite_case.covers) {
    if (c.result != SuiteResult::kPass) {
      evidence.withheld.emplace_back(
          name, fmt::format("the case did not pass ({})", SuiteResultName(c.result)));
      continue;
    }
    std::string why;
    bool checked = false;
    for (const ComparisonOutcome& o : c.comparisons) {
      if (!Checks(c, o, name)) continue;
      checked = true;
      if (o.result != SuiteResult::kPass && why.empty()) {
        why = fmt::format("{} {}: {}", ComparisonName(o), SuiteResultName(o.result), o.detail);
      }
    }
    if (!checked) why = "no comparison of the case checks it";
    if (why.empty()) {
      evidence.vouched.push_back(name);
    } else {
      evidence.withheld.emplace_back(name, why);
    }
  }
  return evidence;
}

SuiteEvidence RenderSuiteEvidence(const SuiteRun& run, const std::string& reports_folder) {
  SuiteEvidence evidence;
  std::map<std::string, json> by_name;  // covered name -> its evidence items
  for (const CaseOutcome& c : run.cases) {
    if (c.result != SuiteResult::kPass) continue;
    const std::vector<std::string> vouched = EvidenceOf(c).vouched;
    for (const ComparisonOutcome& o : c.comparisons) {
      if (!o.report) continue;
      ParityReport report = *o.report;
      report.covers.clear();
      for (const std::string& name : vouched) {
        if (Checks(c, o, name)) report.covers.push_back(name);
      }
      const std::string ref =
          fmt::format("{}/{}.{}.json", reports_folder, c.suite_case.name, ComparisonName(o));
      evidence.reports.emplace_back(ref, RenderJson(report));
      for (const std::string& name : report.covers) {
        by_name[name].push_back(
            {{"kind", "parity"},
             {"ref", ref},
             {"detail", fmt::format("suite case {}: {}, {} tier", c.suite_case.name,
                                    ComparisonName(o), TierName(o.tier))}});
      }
    }
  }
  json entries = json::array();
  for (auto& [name, items] : by_name) entries.push_back({{"twin", name}, {"evidence", items}});
  evidence.manifest =
      json{{"schema", "ir-deadcode-evidence/1"}, {"entries", entries}}.dump(2) + "\n";
  return evidence;
}

}  // namespace irm::diff
