// The Markdown report for people (PR comments, issue bodies), rendered from the canonical JSON
// document (report_json.h), never from the records, so that it says what the JSON says: a title, a
// summary table (status class -> count, then how many findings can be deleted), the deletable
// findings as a short list, one section per file with a table of its findings (line ranges link
// to `file#L10-L20`), and the problems. Table cells escape what would break a table or a code span.
#pragma once

#include <string>

#include "tools/deadcode/json_read.h"

namespace irm::deadcode {

// `report` is a document ReportToJson wrote or ReportFromJson accepts; members that are missing or
// of another type render as empty, never as a crash. Deterministic: the same document gives the
// same bytes.
std::string RenderMarkdown(const Json& report);

namespace markdown {
// A table cell holding code: a code span whose fence is longer than any run of backticks inside
// it, "|" escaped (GitHub reads it as a column break even in a code span), newlines as spaces.
std::string CodeCell(std::string_view text);
// A table cell holding prose: Markdown's punctuation (\ ` * _ [ ] < > |) escaped with a
// backslash, newlines as spaces.
std::string TextCell(std::string_view text);
}  // namespace markdown

}  // namespace irm::deadcode
