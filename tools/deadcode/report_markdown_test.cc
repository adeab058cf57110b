#include "tools/deadcode/report_markdown.h"

#include <gtest/gtest.h>

#include "common/file_io.h"
#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_test_support.h"

namespace irm::deadcode {
namespace {

// The sample report's Markdown, written by hand in testdata.
TEST(DeadcodeReportMarkdownTest, RendersTheHandWrittenSample) {
  StatusOr<std::string> expected = ReadFile(ReportTestdata("sample.md"));
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(RenderMarkdown(ReportToJson(SampleReport())), *expected);
}

TEST(DeadcodeReportMarkdownTest, AnEmptyReportSaysNone) {
  const std::string expected =
      "# ir-deadcode report\n\n"
      "ir-deadcode: 0 Python files, 0 C++ translation units.\n\n"
      "## Summary\n\n"
      "| Status | Findings |\n|---|---:|\n"
      "| verified | 0 |\n| twin-untested | 0 |\n| blocked | 0 |\n| no-twin | 0 |\n"
      "| **all** | **0** |\n\n"
      "**0** of 0 findings can be deleted. 0 problems.\n\n"
      "## Deletable\n\nNone.\n\n"
      "## Findings by file\n\nNone.\n\n"
      "## Problems\n\nNone.\n";
  EXPECT_EQ(RenderMarkdown(ReportToJson(DeadcodeReport{})), expected);
}

TEST(DeadcodeReportMarkdownTest, CellsEscapePipesAndBackticks) {
  EXPECT_EQ(markdown::CodeCell("a|b"), "`a\\|b`");
  EXPECT_EQ(markdown::CodeCell("x = `y`"), "`` x = `y` ``");
  EXPECT_EQ(markdown::CodeCell("a``b"), "```a``b```");
  EXPECT_EQ(markdown::CodeCell("two\nlines"), "`two lines`");
  EXPECT_EQ(markdown::CodeCell(""), "");
  EXPECT_EQ(markdown::TextCell("a | b `c` *d* _e_ [f] <g> \\"),
            "a \\| b \\`c\\` \\*d\\* \\_e\\_ \\[f\\] \\<g\\> \\\\");

  DeadcodeReport report;
  Finding f = SampleReport().findings[1];  // the guarded branch
  f.guard->text = "flags[\"a|b\"]";
  f.reason = "Uses `x|y`.";
  report.findings = {f};
  const std::string md = RenderMarkdown(ReportToJson(report));
  EXPECT_NE(md.find("| `flags[\"a\\|b\"]` (line 36, if-else) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Uses \\`x\\|y\\`. |"), std::string::npos) << md;
}

TEST(DeadcodeReportMarkdownTest, LinksEncodePathsAndSingleLines) {
  DeadcodeReport report;
  Finding f = SampleReport().findings[0];  // no twin, not deletable
  f.unit.file = "my dir/a#b.py";
  f.unit.range = Range(7, 1, 7, 9);
  report.findings = {f};
  const std::string md = RenderMarkdown(ReportToJson(report));
  EXPECT_NE(md.find("### `my dir/a#b.py`"), std::string::npos) << md;
  EXPECT_NE(md.find("| [7](my%20dir/a%23b.py#L7) | function |"), std::string::npos) << md;
}

// A document of the wrong shape renders what it can rather than throwing.
TEST(DeadcodeReportMarkdownTest, ADocumentOfTheWrongShapeDoesNotThrow) {
  const Json weird = Json::parse(
      R"({"summary": 3, "findings": [1, {"unit": "x", "guard": [], "evidence": {}}], "problems": {}})");
  const std::string md = RenderMarkdown(weird);
  EXPECT_NE(md.find("## Findings by file"), std::string::npos);
  EXPECT_EQ(RenderMarkdown(Json::array()).substr(0, 20), "# ir-deadcode report");
}

}  // namespace
}  // namespace irm::deadcode
