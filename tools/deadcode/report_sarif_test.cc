#include "tools/deadcode/report_sarif.h"

#include <gtest/gtest.h>

#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_test_support.h"

namespace irm::deadcode {
namespace {

Json SampleSarif() { return RenderSarif(ReportToJson(SampleReport())); }

TEST(DeadcodeReportSarifTest, OneRunOfIrDeadcodeWithItsFiveRules) {
  const Json sarif = SampleSarif();
  EXPECT_EQ(sarif["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  EXPECT_EQ(sarif["version"], "2.1.0");
  ASSERT_EQ(sarif["runs"].size(), 1u);
  const Json& driver = sarif["runs"][0]["tool"]["driver"];
  EXPECT_EQ(driver["name"], "ir-deadcode");
  EXPECT_EQ(driver["version"], "0.1.0");
  EXPECT_EQ(driver["informationUri"],
            "https://github.com/ir-migrate/ir-migrate/blob/main/docs/deadcode.md");
  std::vector<std::string> ids, levels;
  for (const Json& rule : driver["rules"]) {
    ids.push_back(rule["id"]);
    levels.push_back(rule["defaultConfiguration"]["level"]);
    EXPECT_FALSE(rule["shortDescription"]["text"].get<std::string>().empty());
    EXPECT_FALSE(rule["fullDescription"]["text"].get<std::string>().empty());
    EXPECT_FALSE(rule["help"]["text"].get<std::string>().empty());
  }
  EXPECT_EQ(ids,
            (std::vector<std::string>{"IRMDC001", "IRMDC002", "IRMDC003", "IRMDC004", "IRMDC005"}));
  EXPECT_EQ(levels, (std::vector<std::string>{"warning", "note", "note", "note", "note"}));
  EXPECT_EQ(sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["description"]["text"],
            "The directory ir-deadcode analysed: src");
}

// Results follow the report's order (dc-3, dc-1, dc-2, dc-4); each status class to its rule.
TEST(DeadcodeReportSarifTest, ResultsCarryRuleLocationFingerprintAndProperties) {
  const Json sarif = SampleSarif();
  const Json& results = sarif["runs"][0]["results"];
  ASSERT_EQ(results.size(), 4u);
  std::vector<std::string> rules;
  std::vector<int> indices;
  std::vector<std::string> fingerprints;
  for (const Json& r : results) {
    rules.push_back(r["ruleId"]);
    indices.push_back(r["ruleIndex"]);
    fingerprints.push_back(r["partialFingerprints"]["irmDeadcodeId/v1"]);
  }
  EXPECT_EQ(rules, (std::vector<std::string>{"IRMDC003", "IRMDC001", "IRMDC002", "IRMDC004"}));
  EXPECT_EQ(indices, (std::vector<int>{2, 0, 1, 3}));
  EXPECT_EQ(fingerprints, (std::vector<std::string>{"dc-3", "dc-1", "dc-2", "dc-4"}));

  const Json& deletable = results[1];
  EXPECT_EQ(deletable["level"], "warning");
  EXPECT_EQ(deletable["message"]["text"],
            "Legacy method pkg.engine.Engine._build_program (new-IR twin "
            "pkg.engine.Engine._pir_build_program): deletable. The twin has parity evidence and no "
            "kept code calls it.");
  EXPECT_EQ(deletable["locations"][0]["physicalLocation"],
            Json::parse(R"({"artifactLocation": {"uri": "pkg/engine.py", "uriBaseId": "SRCROOT"},
                            "region": {"startLine": 10, "startColumn": 5, "endLine": 20,
                                       "endColumn": 30}})"));
  EXPECT_EQ(deletable["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "pkg.engine.Engine._build_program");
  ASSERT_EQ(deletable["relatedLocations"].size(), 1u);
  EXPECT_EQ(deletable["relatedLocations"][0]["physicalLocation"]["region"],
            Json::parse(R"({"startLine": 22, "startColumn": 5, "endLine": 35, "endColumn": 40})"));
  EXPECT_EQ(deletable["properties"],
            Json::parse(R"({"status": "verified", "deletable": true, "kind": "method",
                            "legacyKind": "", "language": "python",
                            "twin": "pkg.engine.Engine._pir_build_program", "twinRule": "_{}",
                            "guard": null,
                            "evidence": [{"kind": "parity", "ref": "parity/gpt.json"}]})"));

  // The branch: the twin and the guard as related locations.
  const Json& branch = results[2];
  EXPECT_EQ(branch["message"]["text"],
            "Legacy else-branch in pkg.engine.Engine.run (new-IR part at lines 37-39): the twin "
            "has no evidence. No evidence names the twin.");
  ASSERT_EQ(branch["relatedLocations"].size(), 2u);
  EXPECT_EQ(branch["relatedLocations"][0]["id"], 1);
  EXPECT_EQ(branch["relatedLocations"][0]["message"]["text"], "New-IR twin pkg.engine.Engine.run");
  EXPECT_EQ(branch["relatedLocations"][1],
            Json::parse(R"j({"id": 2, "physicalLocation": {"artifactLocation":
                              {"uri": "pkg/engine.py", "uriBaseId": "SRCROOT"},
                              "region": {"startLine": 36}},
                            "message": {"text": "Guard in_pir_mode()"}})j"));
  EXPECT_EQ(branch["properties"]["guard"], "in_pir_mode()");

  EXPECT_EQ(results[0]["message"]["text"],
            "Legacy overload paddle::framework::Run (new-IR twin paddle::framework::Run): blocked "
            "by paddle::framework::Driver::Start. Kept code calls it: "
            "paddle::framework::Driver::Start.");
  // No twin, no guard: no related locations, a null twin property.
  EXPECT_FALSE(results[3].contains("relatedLocations"));
  EXPECT_TRUE(results[3]["properties"]["twin"].is_null());
  EXPECT_EQ(results[3]["message"]["text"],
            "Legacy function pkg.util.legacy_only: no new-IR twin, kept. Nothing replaces it.");
}

TEST(DeadcodeReportSarifTest, AVerifiedFindingThatIsKeptHasItsOwnRule) {
  DeadcodeReport report;
  Finding f = SampleReport().findings[3];  // verified and deletable
  f.deletable = false;
  f.reason = "A decorator registers it.";
  report.findings = {f};
  const Json result = RenderSarif(ReportToJson(report))["runs"][0]["results"][0];
  EXPECT_EQ(result["ruleId"], "IRMDC005");
  EXPECT_EQ(result["ruleIndex"], 4);
  EXPECT_EQ(result["level"], "note");
}

TEST(DeadcodeReportSarifTest, ProblemsAreToolExecutionNotifications) {
  DeadcodeReport report = SampleReport();
  report.problems.push_back({"", 0, 0, "no compile_commands.json in build"});
  report.problems.push_back({"pkg/gone.py", 0, 0, "cannot read"});
  // In the report's order: by file ("" first), then line.
  const Json invocation = RenderSarif(ReportToJson(report))["runs"][0]["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], true);
  EXPECT_EQ(invocation["toolExecutionNotifications"], Json::parse(R"([
              {"level": "error", "message": {"text": "no compile_commands.json in build"}},
              {"level": "error", "message": {"text": "cannot parse: unexpected token"},
               "locations": [{"physicalLocation": {"artifactLocation":
                 {"uri": "pkg/broken.py", "uriBaseId": "SRCROOT"},
                 "region": {"startLine": 4, "startColumn": 7}}}]},
              {"level": "error", "message": {"text": "cannot read"},
               "locations": [{"physicalLocation": {"artifactLocation":
                 {"uri": "pkg/gone.py", "uriBaseId": "SRCROOT"}}}]}])"));
}

TEST(DeadcodeReportSarifTest, PathsAreRelativeUrisAndAnAbsoluteRootIsAFileUri) {
  DeadcodeReport report;
  report.root = "/src/my tree";
  Finding f = SampleReport().findings[0];
  f.unit.file = "a b/c:d.py";
  f.unit.range = Range(3, 0, 8, 0);  // columns unknown
  report.findings = {f};
  const Json run = RenderSarif(ReportToJson(report))["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["SRCROOT"],
            Json::parse(R"({"uri": "file:///src/my%20tree/"})"));
  EXPECT_EQ(run["results"][0]["locations"][0]["physicalLocation"],
            Json::parse(R"({"artifactLocation": {"uri": "a%20b/c%3Ad.py", "uriBaseId": "SRCROOT"},
                            "region": {"startLine": 3, "endLine": 8}})"));
  EXPECT_FALSE(run["tool"]["driver"].contains("version"));  // none given
}

TEST(DeadcodeReportSarifTest, ADocumentOfTheWrongShapeDoesNotThrow) {
  const Json sarif =
      RenderSarif(Json::parse(R"({"findings": [null, {"unit": 1, "twin": {}, "guard": "x"}]})"));
  ASSERT_EQ(sarif["runs"][0]["results"].size(), 2u);
  EXPECT_EQ(sarif["runs"][0]["results"][0]["ruleId"], "IRMDC002");
}

}  // namespace
}  // namespace irm::deadcode
