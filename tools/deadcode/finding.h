// ir-deadcode's result: one Finding per legacy unit, gathered in a DeadcodeReport. The canonical
// form is JSON (report_json.h, schema docs/deadcode-report.schema.json); Markdown and SARIF are
// rendered from the JSON document, so the three never disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/deadcode/code_model.h"

namespace irm::deadcode {

// A place in the sources: a unit's qualified name with where it is written.
struct UnitRef {
  std::string
      qualname;  // for a branch: the enclosing function's qualname ("<module>" at top level)
  std::string file;
  SourceRange range;
};

struct GuardInfo {
  std::string text;  // as written: "not in_pir_mode()"
  std::string name;  // the vocabulary entry: "in_pir_mode"
  int line = 0;
  bool negated = false;
  std::string shape;  // "if-else", "elif", "negated", "early-return", "guard-variable", "ternary"
};

struct Evidence {
  std::string kind;  // "parity", "test", "coverage", "manual"
  std::string ref;   // a report file, a test id, a URL
  std::string detail;
};

struct Caller {
  std::string qualname;
  std::string file;
  int line = 0;
  bool kept = false;  // the caller stays after the legacy code is removed
};

struct Finding {
  std::string id;  // stable: a hash of language, file, qualname, kind and ordinal
  Language language = Language::kPython;
  // "function", "method", "branch", "registration", "overload"
  std::string kind;
  UnitRef unit;  // the legacy unit itself
  // Branches: "else-branch", "if-body", "tail-after-early-return"; "" for the other kinds.
  std::string legacy_kind;
  std::optional<UnitRef> twin;
  std::string twin_rule;  // how the twin was found: "_pir_{}", "guard", "registration:pass",
                          // "overload"; "" without a twin
  std::optional<GuardInfo> guard;
  std::vector<Caller> callers;
  // "verified" (twin with parity/test evidence — never without `evidence`; a helper with no twin
  // of its own carries its callers'), "twin-untested" (twin, no evidence),
  // "no-twin" (legacy-only, nothing replaces it: kept), "blocked-by:<qualname>" (would be dead
  // once legacy code goes, but kept code still calls it).
  std::string status;
  bool deletable = false;  // only ever with "verified"
  std::string reason;      // one sentence: why deletable, or why not
  std::vector<Evidence> evidence;
};

struct DeadcodeReport {
  std::string schema = "ir-deadcode-report/1";
  std::string tool_version;
  std::string root;  // the directory paths are relative to
  int python_files = 0;
  int cpp_translation_units = 0;
  std::vector<FileProblem> problems;  // per-file errors that did not stop the analysis
  std::vector<Finding> findings;      // sorted by file, then line, then kind, then qualname
};

}  // namespace irm::deadcode
