// The parity suite's reports (docs/suite.md): JUnit XML with one test suite per case group (test
// cases named by run, group, case and comparison, so that merging two runs' files keeps every test
// distinct), a JSON summary, a Markdown table (case, tier, result, worst metric, time) with each
// failure's first divergence, and an ir-deadcode evidence manifest (docs/deadcode.md) in which each
// passing case vouches for exactly the names in its `covers`, by its parity reports.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "diff_tests/suite_runner.h"

namespace irm::diff {

// What a case's run proves by name: the names of its `covers` it vouches for, and those it
// withholds with the reason. A case that did not pass vouches for nothing. A passing engine case
// vouches for a name only when every pair that checks the name's road ran and passed
// (EnginePairChecks): a skipped pair withholds the names of its road — legacy-pir passing alone is
// two roads agreeing, which the serial program, the ground truth, has not confirmed.
struct CaseEvidence {
  std::vector<std::string> vouched;                           // sorted
  std::vector<std::pair<std::string, std::string>> withheld;  // name, why; sorted by name
};
CaseEvidence EvidenceOf(const CaseOutcome& outcome);

// One <testsuite name="parity.<run_name>.<group>"> per group (the run's name left out when
// empty), a <testcase classname="<that>.<case>" name="serial|translated"> per comparison (an
// engine case: name="serial-legacy|serial-pir|legacy-pir", one per pair, a skipped pair skipped).
// Case names are unique in a folder, so two runs of different cases merge without a clash; the
// run's name (the CLI gives the JUnit file's stem) keeps apart two runs of the same cases.
std::string RenderSuiteJunit(const SuiteRun& run, const std::string& run_name = "");
// Canonical JSON: keys sorted, two-space indent, a trailing newline.
std::string RenderSuiteJson(const SuiteRun& run);
std::string RenderSuiteMarkdown(const SuiteRun& run);

// The evidence manifest and the parity reports it names, each report's path relative to the
// manifest's folder (`reports_folder` + "/" + case + "." + comparison + ".json") with the names it
// vouches for as its `covers` (EvidenceOf; for an engine pair the vouched names of the roads it
// checks). Only passing cases give reports and entries; a name no passing case vouches for has no
// entry.
struct SuiteEvidence {
  std::string manifest;
  std::vector<std::pair<std::string, std::string>> reports;  // relative path, JSON
};
SuiteEvidence RenderSuiteEvidence(const SuiteRun& run, const std::string& reports_folder);

}  // namespace irm::diff
