// A small report for the renderer tests: one finding of each status class, Python and C++, a
// twin in the same file and a guarded branch, one per-file problem. Given in an order that is not
// the report's, so that every test also sees the sorting.
#pragma once

#include <cstdlib>
#include <string>

#include "tools/deadcode/finding.h"

namespace irm::deadcode {

// A file under tools/deadcode/testdata/reports/ (ctest runs the tests with IRM_SOURCE_DIR set, or
// from the repository root).
inline std::string ReportTestdata(const std::string& name) {
  const char* root = std::getenv("IRM_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tools/deadcode/testdata/reports/" + name;
}

inline SourceRange Range(int start_line, int start_column, int end_line, int end_column) {
  SourceRange r;
  r.start_line = start_line;
  r.start_column = start_column;
  r.end_line = end_line;
  r.end_column = end_column;
  return r;
}

inline DeadcodeReport SampleReport() {
  DeadcodeReport report;
  report.tool_version = "0.1.0";
  report.root = "src";
  report.python_files = 3;
  report.cpp_translation_units = 1;

  Finding no_twin;
  no_twin.id = "dc-4";
  no_twin.kind = "function";
  no_twin.unit = {"pkg.util.legacy_only", "pkg/util.py", Range(3, 1, 8, 20)};
  no_twin.status = "no-twin";
  no_twin.reason = "Nothing replaces it.";

  Finding branch;
  branch.id = "dc-2";
  branch.kind = "branch";
  branch.unit = {"pkg.engine.Engine.run", "pkg/engine.py", Range(40, 9, 44, 30)};
  branch.legacy_kind = "else-branch";
  branch.twin = UnitRef{"pkg.engine.Engine.run", "pkg/engine.py", Range(37, 9, 39, 30)};
  branch.twin_rule = "guard";
  branch.guard = GuardInfo{"in_pir_mode()", "in_pir_mode", 36, false, "if-else"};
  branch.status = "twin-untested";
  branch.reason = "No evidence names the twin.";

  Finding verified;
  verified.id = "dc-1";
  verified.kind = "method";
  verified.unit = {"pkg.engine.Engine._build_program", "pkg/engine.py", Range(10, 5, 20, 30)};
  verified.twin =
      UnitRef{"pkg.engine.Engine._pir_build_program", "pkg/engine.py", Range(22, 5, 35, 40)};
  verified.twin_rule = "_{}";
  verified.status = "verified";
  verified.deletable = true;
  verified.reason = "The twin has parity evidence and no kept code calls it.";
  verified.evidence = {{"parity", "parity/gpt.json", "gpt 3 steps bit-identical"}};

  Finding blocked;
  blocked.id = "dc-3";
  blocked.language = Language::kCpp;
  blocked.kind = "overload";
  blocked.unit = {"paddle::framework::Run", "paddle/run.cc", Range(12, 1, 30, 2)};
  blocked.twin = UnitRef{"paddle::framework::Run", "paddle/run.cc", Range(32, 1, 50, 2)};
  blocked.twin_rule = "overload";
  blocked.callers = {{"paddle::framework::Driver::Start", "paddle/driver.cc", 77, true}};
  blocked.status = "blocked-by:paddle::framework::Driver::Start";
  blocked.reason = "Kept code calls it: paddle::framework::Driver::Start.";

  report.findings = {no_twin, branch, blocked, verified};
  report.problems = {{"pkg/broken.py", 4, 7, "cannot parse: unexpected token"}};
  return report;
}

}  // namespace irm::deadcode
