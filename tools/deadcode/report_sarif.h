// The SARIF 2.1.0 report for code scanning in CI, rendered from the canonical JSON document
// (report_json.h): one run of the tool "ir-deadcode", one result per finding with its physical
// location relative to the base id SRCROOT (the analysis root), the twin and the guard as related
// locations, a partial fingerprint from the finding's stable id, and the per-file problems as tool
// execution notifications.
//
// Rules are status classes, so that a code-scanning view sorts by what to do; the finding kind
// (function, method, branch, registration, overload) is in each result's properties. The ids and
// their order never change (ruleIndex is the position in this list):
//   IRMDC001 deletable                  legacy code with a verified twin that nothing kept calls
//   IRMDC002 twin without evidence      status twin-untested
//   IRMDC003 blocked                    status blocked-by:<qualname>
//   IRMDC004 no twin                    status no-twin (kept)
//   IRMDC005 verified, kept             status verified but not deletable
#pragma once

#include <string_view>

#include "tools/deadcode/json_read.h"

namespace irm::deadcode {

inline constexpr std::string_view kSarifSchemaUri = "https://json.schemastore.org/sarif-2.1.0.json";
inline constexpr std::string_view kDeadcodeInformationUri =
    "https://github.com/ir-migrate/ir-migrate/blob/main/docs/deadcode.md";

// `report` is a document ReportToJson wrote or ReportFromJson accepts; members that are missing or
// of another type render as empty, never as a crash. Write it with DumpCanonical.
Json RenderSarif(const Json& report);

}  // namespace irm::deadcode
