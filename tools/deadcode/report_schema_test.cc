// The documents against their JSON Schemas, validated by scripts/validate-json-schema (python3 +
// Debian's python3-jsonschema): the report against docs/deadcode-report.schema.json, its SARIF
// against the official SARIF 2.1.0 schema (third_party/sarif, fetched by scripts/setup), the
// evidence manifest against docs/deadcode-evidence.schema.json. Broken documents must fail, so
// that the validation cannot pass vacuously.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "common/file_io.h"
#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_sarif.h"
#include "tools/deadcode/report_test_support.h"

namespace irm::deadcode {
namespace {

std::string SourcePath(const std::string& relative) {
  const char* root = std::getenv("IRM_SOURCE_DIR");
  return std::string(root ? root : ".") + "/" + relative;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Validation {
  int exit_code = -1;
  std::string output;
};

Validation Validate(const std::string& schema, const std::string& document) {
  const std::string command = Quote(IRM_PYTHON3) + " " +
                              Quote(SourcePath("scripts/validate-json-schema")) + " " +
                              Quote(schema) + " " + Quote(document) + " 2>&1";
  Validation v;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return v;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) v.output.append(buffer, n);
  const int status = pclose(pipe);
  v.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return v;
}

class DeadcodeSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("irm_deadcode_schema_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return path;
  }
  // The official SARIF schema, or a failure that says how to get it.
  std::string SarifSchema() {
    const std::string path = SourcePath("third_party/sarif/sarif-2.1.0.json");
    if (!std::filesystem::exists(path)) {
      ADD_FAILURE() << "third_party/sarif/sarif-2.1.0.json is missing: run scripts/setup, which "
                       "fetches the SARIF 2.1.0 schema";
      return "";
    }
    return path;
  }
  std::filesystem::path dir_;
};

DeadcodeReport EdgeReport() {
  // An absolute root, no tool version, a problem without a file, a unit without columns.
  DeadcodeReport report = SampleReport();
  report.root = "/src/tree";
  report.tool_version = "";
  report.problems.push_back({"", 0, 0, "no compile_commands.json"});
  report.findings[0].unit.range = Range(3, 0, 3, 0);
  return report;
}

TEST_F(DeadcodeSchemaTest, TheReportMatchesItsSchema) {
  const std::string schema = SourcePath("docs/deadcode-report.schema.json");
  for (const auto& [name, report] :
       {std::pair{"sample.json", SampleReport()}, std::pair{"edge.json", EdgeReport()},
        std::pair{"empty.json", DeadcodeReport{}}}) {
    const Validation v = Validate(schema, Write(name, DumpCanonical(ReportToJson(report))));
    EXPECT_EQ(v.exit_code, 0) << v.output;
  }
}

TEST_F(DeadcodeSchemaTest, TheSarifMatchesTheOfficialSchema) {
  const std::string schema = SarifSchema();
  if (schema.empty()) return;
  for (const auto& [name, report] :
       {std::pair{"sample.sarif", SampleReport()}, std::pair{"edge.sarif", EdgeReport()},
        std::pair{"empty.sarif", DeadcodeReport{}}}) {
    const Validation v =
        Validate(schema, Write(name, DumpCanonical(RenderSarif(ReportToJson(report)))));
    EXPECT_EQ(v.exit_code, 0) << v.output;
  }
}

TEST_F(DeadcodeSchemaTest, TheEvidenceManifestMatchesItsSchema) {
  const Validation v = Validate(SourcePath("docs/deadcode-evidence.schema.json"),
                                ReportTestdata("sample.evidence.json"));
  EXPECT_EQ(v.exit_code, 0) << v.output;
  // The parity reports the manifest names as genuine are what `ir-migrate parity --report` writes.
  for (const char* name : {"parity/gpt.json", "parity/mismatch.json"}) {
    const Validation p =
        Validate(SourcePath("docs/parity-report.schema.json"), ReportTestdata(name));
    EXPECT_EQ(p.exit_code, 0) << p.output;
  }
}

// Whether the validator's output has a violation at `pointer` of `document` (the wording after it
// is jsonschema's own and changes between its versions).
bool Flags(const Validation& v, const std::string& document, const std::string& pointer) {
  return v.output.find(document + ": " + pointer + ": ") != std::string::npos;
}

// Each schema rejects a broken document, naming where it is broken.
TEST_F(DeadcodeSchemaTest, BrokenDocumentsFail) {
  Json report = ReportToJson(SampleReport());
  report["findings"][0]["status"] = "blocked";
  report["findings"][1]["evidence"] = Json::array();  // verified without evidence
  report["findings"][3]["twin"] = "none";
  const std::string bad = Write("bad.json", report.dump());
  const Validation r = Validate(SourcePath("docs/deadcode-report.schema.json"), bad);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Flags(r, bad, "/findings/0/status")) << r.output;
  EXPECT_TRUE(Flags(r, bad, "/findings/1/evidence")) << r.output;
  EXPECT_TRUE(Flags(r, bad, "/findings/3/twin")) << r.output;
  EXPECT_FALSE(Flags(r, bad, "/findings/2")) << r.output;

  const std::string schema = SarifSchema();
  if (!schema.empty()) {
    Json sarif = RenderSarif(ReportToJson(SampleReport()));
    sarif["runs"][0]["results"][0].erase("message");
    sarif["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0;
    const std::string bad_sarif = Write("bad.sarif", sarif.dump());
    const Validation s = Validate(schema, bad_sarif);
    EXPECT_EQ(s.exit_code, 1) << s.output;
    EXPECT_TRUE(Flags(s, bad_sarif, "/runs/0/results/0")) << s.output;
    EXPECT_TRUE(
        Flags(s, bad_sarif, "/runs/0/results/1/locations/0/physicalLocation/region/startLine"))
        << s.output;
  }

  const std::string bad_evidence =
      Write("bad_evidence.json", R"({"schema": "ir-deadcode-evidence/1", "entries": [
          {"twin": "a.b", "evidence": [{"kind": "manual", "ref": "r"}]},
          {"twin": "a.c", "evidence": []}]})");
  const Validation e = Validate(SourcePath("docs/deadcode-evidence.schema.json"), bad_evidence);
  EXPECT_EQ(e.exit_code, 1) << e.output;
  EXPECT_TRUE(Flags(e, bad_evidence, "/entries/0/evidence/0")) << e.output;
  EXPECT_TRUE(Flags(e, bad_evidence, "/entries/1/evidence")) << e.output;
}

TEST_F(DeadcodeSchemaTest, TheValidatorSaysWhatIsWrongWithItsInput) {
  const Validation missing =
      Validate(SourcePath("docs/deadcode-report.schema.json"), (dir_ / "none.json").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("none.json: cannot read JSON"), std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace irm::deadcode
