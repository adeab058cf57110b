// The canonical JSON form of an ir-deadcode report (schema docs/deadcode-report.schema.json,
// "ir-deadcode-report/1"), its reader, and the one way it is written out. Members keep the order
// of finding.h, findings and problems are sorted here (whatever order the caller used), and
// every record has the same keys: a missing twin or guard is null. The Markdown and SARIF
// renderers read this document, so the three outputs never disagree.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "tools/deadcode/finding.h"
#include "tools/deadcode/json_read.h"

namespace irm::deadcode {

inline constexpr std::string_view kReportSchema = "ir-deadcode-report/1";

// The status classes the summary counts: "verified", "twin-untested", "no-twin", "blocked" (for
// every "blocked-by:<qualname>"); "" for a string that is not a status.
std::string_view StatusClass(std::string_view status);

// The order of findings in a report: file, start line, kind, qualname, then the rest of the range
// and the id so that no two distinct findings tie.
bool FindingBefore(const Finding& a, const Finding& b);

// The document: {schema, tool_version, root, python_files, cpp_translation_units, summary
// {findings, deletable, problems, by_status, by_kind, by_language}, problems, findings}.
Json ReportToJson(const DeadcodeReport& report);

// Reads a document ReportToJson wrote (or one written by hand to its schema). Beyond the schema
// it checks what ties the document together: the summary matches the findings, ids are unique, a
// range does not end before it starts. Errors name `file_for_errors` and the JSON pointer.
StatusOr<DeadcodeReport> ReportFromJson(const Json& document, const std::string& file_for_errors);

// Two-space indent, a trailing newline; bytes that are not UTF-8 become U+FFFD rather than an
// exception. Golden files are compared byte for byte with this.
std::string DumpCanonical(const Json& document);
// A nlohmann::json would have lost the canonical member order already (its objects sort keys):
// keep the ordered document from ReportToJson / RenderSarif.
std::string DumpCanonical(const nlohmann::json& document) = delete;

}  // namespace irm::deadcode
