// The evidence manifest: which new-IR twins are verified, and by what. ir-deadcode reads it to
// tell "verified" twins from "twin-untested" ones (schema docs/deadcode-evidence.schema.json):
//
//   {"schema": "ir-deadcode-evidence/1",
//    "entries": [{"legacy": "pkg.Engine._parallel_program",        (optional)
//                 "twin": "pkg.Engine._parallel_pir_program",
//                 "evidence": [{"kind": "parity", "ref": "parity/gpt.json", "detail": "..."},
//                              {"kind": "test", "ref": "test/auto_parallel/pir/test_engine.py"}]}]}
//
// Names are Python qualnames (pkg.mod.Class.method) or C++ qualified names (pir::Foo::Run). An
// entry without "legacy" covers every legacy unit paired with its twin. Evidence kinds: parity,
// test, coverage, manual. A parity ref is a report of `ir-migrate parity --report` (path relative
// to the manifest's folder); the loader reads it, and the evidence counts only when the report
// says "parity", agrees with itself and names the entry's twin in its "covers" (a list of twin
// names, as this tool's report gives them). A mismatch, or a report that is missing or
// unreadable, is a problem of that entry (the rest of the manifest still counts) and the evidence
// is dropped; a passing report that does not cover the twin is listed as unrelated evidence and
// not used: a manifest cannot claim a parity that no report shows for that twin.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tools/deadcode/finding.h"

namespace irm::deadcode {

struct EvidenceEntry {
  std::string legacy;  // "" covers every legacy unit paired with `twin`
  std::string twin;
  std::vector<Evidence> evidence;  // the evidence that counts, in manifest order
  // Parity reports that pass but do not name `twin` in their "covers": listed, never counted.
  std::vector<Evidence> unrelated;
  std::string pointer;  // where the entry is in the manifest: "/entries/3"
};

struct EvidenceManifest {
  std::string path;
  std::vector<EvidenceEntry> entries;
  // Evidence that was dropped, each with the manifest's JSON pointer in its message.
  std::vector<FileProblem> problems;

  // The evidence for the legacy unit `legacy` paired with `twin`: entries that name both, and
  // entries that name the twin alone. An empty `legacy` asks by the twin alone: only entries that
  // name no legacy unit count. In manifest order; the same evidence twice is given once.
  std::vector<Evidence> Lookup(const std::string& legacy, const std::string& twin) const;
};

inline constexpr std::string_view kEvidenceSchema = "ir-deadcode-evidence/1";

// Reads the manifest and every parity report it names. A malformed manifest is an error (naming
// the file and the JSON pointer); a parity report that does not show parity is a problem.
StatusOr<EvidenceManifest> LoadEvidence(const std::string& path);

}  // namespace irm::deadcode
