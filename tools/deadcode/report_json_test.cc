#include "tools/deadcode/report_json.h"

#include <gtest/gtest.h>

#include "common/file_io.h"
#include "tools/deadcode/report_markdown.h"
#include "tools/deadcode/report_sarif.h"
#include "tools/deadcode/report_test_support.h"

namespace irm::deadcode {
namespace {

// The sample report's document, written by hand in testdata (member order of finding.h, findings
// sorted by file, line, kind, qualname; counts taken by hand).
TEST(DeadcodeReportJsonTest, WritesTheHandWrittenCanonicalDocument) {
  StatusOr<std::string> expected = ReadFile(ReportTestdata("sample.report.json"));
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(DumpCanonical(ReportToJson(SampleReport())), *expected);
}

TEST(DeadcodeReportJsonTest, SortsWhateverOrderTheCallerUsed) {
  DeadcodeReport report = SampleReport();
  std::vector<std::string> ids;
  Json doc = ReportToJson(report);
  for (const Json& f : doc["findings"]) ids.push_back(f["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"dc-3", "dc-1", "dc-2", "dc-4"}));

  // Same file and line: kind decides ("branch" < "function"), then qualname.
  Finding a = report.findings[3];
  a.id = "x-function-b";
  a.kind = "function";
  a.unit = {"pkg.b", "z.py", Range(5, 1, 6, 1)};
  Finding b = a;
  b.id = "x-function-a";
  b.unit.qualname = "pkg.a";
  Finding c = a;
  c.id = "x-branch";
  c.kind = "branch";
  c.unit.qualname = "pkg.z";
  report.findings = {a, b, c};
  ids.clear();
  doc = ReportToJson(report);
  for (const Json& f : doc["findings"]) ids.push_back(f["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"x-branch", "x-function-a", "x-function-b"}));
}

TEST(DeadcodeReportJsonTest, RoundTripsThroughTheReader) {
  const Json first = ReportToJson(SampleReport());
  StatusOr<DeadcodeReport> read = ReportFromJson(first, "sample.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(DumpCanonical(ReportToJson(*read)), DumpCanonical(first));
  // The records themselves, not only their rendering.
  ASSERT_EQ(read->findings.size(), 4u);
  const Finding& blocked = read->findings[0];
  EXPECT_EQ(blocked.language, Language::kCpp);
  EXPECT_EQ(blocked.unit.range, Range(12, 1, 30, 2));
  ASSERT_EQ(blocked.callers.size(), 1u);
  EXPECT_TRUE(blocked.callers[0].kept);
  EXPECT_EQ(blocked.callers[0].line, 77);
  const Finding& branch = read->findings[2];
  ASSERT_TRUE(branch.guard.has_value());
  EXPECT_EQ(branch.guard->line, 36);
  EXPECT_EQ(branch.guard->shape, "if-else");
  EXPECT_FALSE(read->findings[3].twin.has_value());
  EXPECT_EQ(read->python_files, 3);
  ASSERT_EQ(read->problems.size(), 1u);
  EXPECT_EQ(read->problems[0].column, 7);
}

TEST(DeadcodeReportJsonTest, ReadsTheDocumentFromItsText) {
  StatusOr<std::string> text = ReadFile(ReportTestdata("sample.report.json"));
  ASSERT_TRUE(text.ok());
  StatusOr<DeadcodeReport> read = ReportFromJson(Json::parse(*text), "sample.report.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(DumpCanonical(ReportToJson(*read)), *text);
}

TEST(DeadcodeReportJsonTest, StatusClasses) {
  EXPECT_EQ(StatusClass("verified"), "verified");
  EXPECT_EQ(StatusClass("twin-untested"), "twin-untested");
  EXPECT_EQ(StatusClass("no-twin"), "no-twin");
  EXPECT_EQ(StatusClass("blocked-by:pkg.f"), "blocked");
  EXPECT_EQ(StatusClass("blocked-by:"), "");
  EXPECT_EQ(StatusClass("deletable"), "");
}

TEST(DeadcodeReportJsonTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  DeadcodeReport report;
  report.problems = {{"bad\xff.py", 0, 0, "cannot read"}};
  const std::string text = DumpCanonical(ReportToJson(report));
  EXPECT_NE(text.find("\"bad\xEF\xBF\xBD.py\""), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

// Every reader error: the sample document with one value changed (a JSON pointer and the value
// put there; a null value with `erase` removes the member instead).
TEST(DeadcodeReportJsonTest, ErrorsNameTheFileAndTheJsonPointer) {
  struct Case {
    std::string pointer;
    Json value;
    bool erase;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/schema", "ir-deadcode-report/2", false,
       "/schema: error: 'ir-deadcode-report/2' is not \"ir-deadcode-report/1\""},
      {"/root", nullptr, true, "/: error: missing key 'root'"},
      {"/colour", "red", false, "/colour: error: unknown key 'colour'"},
      {"/python_files", -1, false,
       "/python_files: error: expected an integer of at least 0, found -1"},
      {"/python_files", 1.5, false, "/python_files: error: expected an integer, found a float"},
      {"/findings", Json::object(), false, "/findings: error: expected an array, found an object"},
      {"/findings/0/language", "go", false,
       "/findings/0/language: error: 'go' is not a language (python, cpp)"},
      {"/findings/0/kind", "class", false,
       "/findings/0/kind: error: 'class' is not a finding kind (function, method, branch, "
       "registration, overload)"},
      {"/findings/2/legacy_kind", "then-branch", false,
       "/findings/2/legacy_kind: error: 'then-branch' is not a legacy part (else-branch, if-body, "
       "tail-after-early-return, or empty)"},
      {"/findings/1/unit/range/start_line", 0, false,
       "/findings/1/unit/range/start_line: error: expected an integer of at least 1, found 0"},
      {"/findings/1/unit/range/end_line", 9, false,
       "/findings/1/unit/range: error: ends (line 9) before it starts (line 10)"},
      {"/findings/1/unit/qualname", "", false,
       "/findings/1/unit/qualname: error: expected a non-empty string"},
      {"/findings/1/twin/file", 3, false,
       "/findings/1/twin/file: error: expected a string, found an integer"},
      {"/findings/3/twin", "none", false,
       "/findings/3/twin: error: expected an object, found a string"},
      {"/findings/2/guard/shape", "switch", false,
       "/findings/2/guard/shape: error: 'switch' is not a guard shape (if-else, elif, negated, "
       "early-return, guard-variable, ternary)"},
      {"/findings/2/guard/negated", "no", false,
       "/findings/2/guard/negated: error: expected a boolean, found a string"},
      {"/findings/0/callers/0/kept", nullptr, true,
       "/findings/0/callers/0: error: missing key 'kept'"},
      {"/findings/0/status", "blocked", false,
       "/findings/0/status: error: 'blocked' is not a status (verified, twin-untested, no-twin, "
       "blocked-by:<qualname>)"},
      {"/findings/1/evidence/0/kind", "rumour", false,
       "/findings/1/evidence/0/kind: error: 'rumour' is not an evidence kind (parity, test, "
       "coverage, manual)"},
      {"/findings/1/evidence", Json::array(), false,
       "/findings/1/evidence: error: a verified finding names its evidence"},
      {"/findings/2/deletable", true, false,
       "/findings/2/deletable: error: only a verified finding is deletable (status "
       "'twin-untested')"},
      {"/findings/3/id", "dc-3", false,
       "/findings/3/id: error: 'dc-3' is the id of /findings/0 too"},
      {"/summary/by_status/verified", 2, false,
       "/summary/by_status/verified: error: says 2, the findings give 1"},
      {"/summary/problems", nullptr, true, "/summary: error: missing key 'problems'"},
      {"/summary/by_kind/class", 0, false, "/summary/by_kind/class: error: unknown key 'class'"},
      {"/problems/0/message", "", false, "/problems/0/message: error: expected a non-empty string"},
  };
  const Json sample = ReportToJson(SampleReport());
  for (const Case& c : cases) {
    Json doc = sample;
    const Json::json_pointer pointer(c.pointer);
    if (c.erase) {
      doc[pointer.parent_pointer()].erase(pointer.back());
    } else {
      doc[pointer] = c.value;
    }
    StatusOr<DeadcodeReport> read = ReportFromJson(doc, "r.json");
    ASSERT_FALSE(read.ok()) << c.pointer;
    EXPECT_EQ(read.status().ToString(), "r.json: " + c.message) << c.pointer;
  }
  StatusOr<DeadcodeReport> not_object = ReportFromJson(Json::array(), "r.json");
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().ToString(), "r.json: /: error: expected an object, found an array");
}

// Bad input never crashes: every value of the sample document, in turn, replaced by a value of
// each JSON type. The reader must refuse or accept without throwing, and the renderers, which take
// any document, must render it.
TEST(DeadcodeReportJsonTest, NoDocumentMakesTheReaderOrTheRenderersThrow) {
  const Json sample = ReportToJson(SampleReport());
  const std::vector<Json> replacements = {nullptr,       true,          -1, 4294967296LL, 2.5, "",
                                          Json::array(), Json::object()};
  int refused = 0;
  int checked = 0;
  const Json leaves = sample.flatten();
  for (const auto& [pointer, value] : leaves.items()) {
    for (const Json& replacement : replacements) {
      Json doc = sample;
      doc[Json::json_pointer(pointer)] = replacement;
      ++checked;
      EXPECT_NO_THROW({
        StatusOr<DeadcodeReport> read = ReportFromJson(doc, "r.json");
        refused += read.ok() ? 0 : 1;
        RenderMarkdown(doc);
        DumpCanonical(RenderSarif(doc));
      }) << pointer;
    }
  }
  // Most replacements break the document; the reader noticed (a few, such as a string for a
  // string, are fine).
  EXPECT_GT(refused, checked * 3 / 4);
}

}  // namespace
}  // namespace irm::deadcode
