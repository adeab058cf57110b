// The parity suite's engine cases (docs/suite.md, "Engine cases"): the case fields (every error
// located by file and JSON pointer, and `ir-migrate suite` exiting 2 on one), and the runner on
// tiny engine cases — one passing, whose three pairs (serial-legacy, serial-pir, legacy-pir) are
// JUnit tests of their own, valid against docs/junit.xsd; one whose serial pairs are skipped
// (gradient merge over steps that are no whole number of updates), which passes but vouches for
// nothing; one whose new-IR gradient merge is broken on purpose (the test-only gm:drop-if), which
// fails naming the op the broken pass dropped; and one whose strategy the flow refuses (invalid) —
// and the evidence manifest as ir-deadcode reads it: each pair's report names exactly the vouched
// names of the roads it checks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/scratch_dir_test_support.h"
#include "diff_tests/schema_check_test_support.h"
#include "diff_tests/suite_case.h"
#include "diff_tests/suite_report.h"
#include "diff_tests/suite_runner.h"
#include "tools/commands.h"
#include "tools/deadcode/evidence.h"

namespace irm::diff {
namespace {

// A small plain case: the 2-linear mlp, SGD, one step of 4 rows per replica.
std::string TinyCase(const std::string& strategy, const std::string& more = "") {
  return R"({"model": {"name": "mlp", "depth": 2}, "optimizer": {"kind": "sgd"},
             "strategy": )" +
         strategy + R"(, "steps": 1, "batch_size": 4)" + more + "}";
}

std::string ParseError(std::string_view text) {
  StatusOr<SuiteCase> c = ParseSuiteCase(text, "cases/bad.json");
  EXPECT_FALSE(c.ok());
  if (c.ok()) return "";
  EXPECT_EQ(c.status().code(), StatusCode::kParseError);
  return c.status().diagnostic().Render();
}

SuiteCase Case(const std::string& name, const std::string& text) {
  StatusOr<SuiteCase> c = ParseSuiteCase(text, "cases/" + name + ".json");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : SuiteCase{};
}

SuiteRun RunCases(const std::vector<SuiteCase>& cases) {
  SuiteOptions options;
  options.jobs = 2;
  StatusOr<SuiteRun> run = RunSuite(cases, options);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return run.ok() ? *run : SuiteRun{};
}

// A small engine case on the 2-linear mlp, `steps` executor steps of 4 rows per replica: `more`
// adds fields.
std::string TinyEngineCase(const std::string& strategy, const std::string& more, int steps = 2) {
  return R"({"model": {"name": "mlp", "depth": 2}, "optimizer": {"kind": "sgd"},
             "compare": ["engine"], "strategy": )" +
         strategy + R"(, "steps": )" + std::to_string(steps) + R"(, "batch_size": 4)" + more + "}";
}

constexpr const char* kGm2Strategy = R"({"gradient_merge": {"enable": true, "k_steps": 2}})";

TEST(SuiteEngineCaseTest, ReadsTheEngineFields) {
  StatusOr<SuiteCase> c =
      ParseSuiteCase(TinyEngineCase(kGm2Strategy, R"(, "ir": "both", "test_fault": "gm:drop-if",
                     "covers": {"legacy": ["b.L", "a.L"], "pir": ["p.P", "a.L"]})"),
                     "cases/gm2_engine.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->IsEngine());
  EXPECT_EQ(c->compare, std::vector<SuiteComparison>{SuiteComparison::kEngine});
  EXPECT_EQ(c->engine_ir, EngineIr::kBoth);
  EXPECT_EQ(c->test_fault, "gm:drop-if");
  EXPECT_EQ(c->engine_fault.gradient_merge, newir::GradientMergeFault::kDropIf);
  EXPECT_EQ(c->covers_legacy, (std::vector<std::string>{"a.L", "b.L"}));
  EXPECT_EQ(c->covers_pir, (std::vector<std::string>{"a.L", "p.P"}));
  // Both roads' names once each: a name may be on both roads.
  EXPECT_EQ(c->covers, (std::vector<std::string>{"a.L", "b.L", "p.P"}));
  EXPECT_EQ(c->ComparisonNames(),
            (std::vector<std::string>{"serial-legacy", "serial-pir", "legacy-pir"}));
  // An engine case does not compare serial on its own: gradient merge is not refused here, the
  // flow skips its serial pairs.
  StatusOr<SuiteCase> legacy = ParseSuiteCase(
      TinyEngineCase(R"({"dp_degree": 2})", R"(, "ir": "legacy", "covers": {"legacy": ["a.L"]})"),
      "cases/legacy_engine.json");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->ComparisonNames(), std::vector<std::string>{"serial-legacy"});
  EXPECT_TRUE(legacy->covers_pir.empty());
}

TEST(SuiteEngineCaseTest, EveryEngineFieldErrorNamesTheFileAndTheField) {
  const std::string dp2 = R"({"dp_degree": 2})";
  const std::string covers = R"(, "covers": {"legacy": [], "pir": []})";
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "compare": ["serial", "engine"])")),
            "cases/bad.json: /compare/1: error: engine compares alone: the Engine flow builds its "
            "own bundles (serial, legacy, new IR) and compares them three ways\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "compare": ["engine", "translated"])")),
            "cases/bad.json: /compare/1: error: engine compares alone: the Engine flow builds its "
            "own bundles (serial, legacy, new IR) and compares them three ways\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "compare": ["engines"])")),
            "cases/bad.json: /compare/0: error: 'engines' is not one of serial, translated, "
            "engine\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "ir": "new")" + covers)),
            "cases/bad.json: /ir: error: 'new' is not one of legacy, pir, both\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "ir": 2)" + covers)),
            "cases/bad.json: /ir: error: expected a string, found an integer\n");
  const std::string fault =
      ParseError(TinyEngineCase(dp2, R"(, "test_fault": "gm:nope")" + covers));
  EXPECT_EQ(fault.substr(0, fault.find('\n') + 1),
            "cases/bad.json: /test_fault: error: unknown fault 'gm:nope'\n");
  EXPECT_NE(fault.find("gm:scale-by-k-plus-1, gm:drop-if"), std::string::npos) << fault;
  EXPECT_EQ(ParseError(TinyEngineCase(
                dp2, R"(, "ir": "legacy", "test_fault": "gm:drop-if", "covers": {"legacy": []})")),
            "cases/bad.json: /test_fault: error: the test-only faults break a new-IR pass: ir "
            "legacy never runs it\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "covers": ["a.L"])")),
            "cases/bad.json: /covers: error: expected an object {\"legacy\": [...], \"pir\": "
            "[...]} (an engine case says which road each name belongs to), found an array\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "covers": {"legacy": [], "new": []})")),
            "cases/bad.json: /covers/new: error: unknown key 'new'\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "covers": {"pir": ["a.P", "a.P"]})")),
            "cases/bad.json: /covers/pir/1: error: 'a.P' is listed twice\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "ir": "legacy", "covers": {"pir": ["a.P"]})")),
            "cases/bad.json: /covers/pir: error: ir legacy runs no pair that checks the pir "
            "road's functions\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "ir": "pir", "covers": {"legacy": ["a.L"]})")),
            "cases/bad.json: /covers/legacy: error: ir pir runs no pair that checks the legacy "
            "road's functions\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, "")),
            "cases/bad.json: /covers: error: missing: the qualified names the case exercises, by "
            "road: {\"legacy\": [...], \"pir\": [...]}\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "tier": "exact")" + covers)),
            "cases/bad.json: /tier: error: an engine case's pairs have their own tiers "
            "(docs/engine.md): serial pairs noise-floor, legacy-pir exact or reordered by op "
            "order\n");
  EXPECT_EQ(ParseError(TinyEngineCase(dp2, R"(, "p2p": "buffered")" + covers)),
            "cases/bad.json: /p2p: error: an engine case runs the point-to-point model its build "
            "found\n");
  // The engine's fields on a case that is not one.
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "ir": "both")")),
            "cases/bad.json: /ir: error: only an engine case (\"compare\": [\"engine\"]) takes "
            "this field\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "test_fault": "gm:drop-if")")),
            "cases/bad.json: /test_fault: error: only an engine case (\"compare\": [\"engine\"]) "
            "takes this field\n");
}

// `ir-migrate suite` on a folder holding a malformed engine case: the diagnostic names the file
// and the field, the exit code is 2, and nothing runs (no progress line).
TEST(SuiteEngineCaseTest, TheSuiteCommandRefusesAMalformedEngineCaseWithExit2) {
  ScratchDir dir("suite_engine_bad");
  std::filesystem::create_directories(dir.path());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/ok.json",
                                  TinyCase(R"({"dp_degree": 2})", R"(, "covers": [])"))
                  .ok());
  ASSERT_TRUE(
      WriteFileAtomically(dir.path() + "/typo_engine.json",
                          TinyEngineCase(R"({"dp_degree": 2})",
                                         R"(, "ir": "both", "covers": {"legacy": [], "pirr": []})"))
          .ok());
  tools::SuiteCommand command;
  command.dir = dir.path();
  std::ostringstream out, err;
  EXPECT_EQ(tools::RunSuite(command, out, err), 2);
  EXPECT_EQ(err.str(), dir.path() + "/typo_engine.json: /covers/pirr: error: unknown key 'pirr'\n");
  EXPECT_EQ(out.str(), "");
}

// Whether xmllint (libxml2-utils, installed by scripts/setup) accepts `xml` against the JUnit
// schema CI runners read, as tools/testdata/suite_junit.test checks the CLI's files.
void ExpectValidJunit(const std::string& xml, const std::string& name) {
  if (std::system("xmllint --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "xmllint is not installed (scripts/setup installs libxml2-utils)";
  }
  ScratchDir dir("suite_engine_junit");
  std::filesystem::create_directories(dir.path());
  const std::string file = dir.path() + "/" + name + ".xml";
  ASSERT_TRUE(WriteFileAtomically(file, xml).ok());
  const std::string command = "xmllint --noout --schema " + std::string(IRM_JUNIT_XSD) + " " +
                              file + " > " + file + ".log 2>&1";
  const int rc = std::system(command.c_str());
  const StatusOr<std::string> log = ReadFile(file + ".log");
  EXPECT_EQ(rc, 0) << (log.ok() ? *log : "") << xml;
}

constexpr const char* kLegacyName = "x.legacy_function";
constexpr const char* kPirName = "x._pir_twin";

class SuiteEngineRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string covers = std::string(R"(, "covers": {"legacy": [")") + kLegacyName +
                               R"("], "pir": [")" + kPirName + R"("]})";
    run_ = new SuiteRun(RunCases({
        Case("dp2_engine", TinyEngineCase(R"({"dp_degree": 2})", covers)),
        // 3 executor steps are no whole number of gradient merge's updates of 2: the flow skips
        // the serial pairs (they compare updates).
        Case("gm2_engine", TinyEngineCase(kGm2Strategy, covers, 3)),
        Case("gm2_drop_if_engine",
             TinyEngineCase(kGm2Strategy, R"(, "test_fault": "gm:drop-if")" + covers)),
        // width 8 does not split over 3 ranks: the flow refuses the strategy (bad input).
        Case("tp3_engine", TinyEngineCase(R"({"mp_degree": 3})", covers)),
    }));
  }
  static void TearDownTestSuite() { delete run_; }
  static const CaseOutcome& Outcome(const std::string& name) {
    for (const CaseOutcome& c : run_->cases) {
      if (c.suite_case.name == name) return c;
    }
    ADD_FAILURE() << "no case " << name;
    return run_->cases.front();
  }
  static SuiteRun* run_;
};
SuiteRun* SuiteEngineRunTest::run_ = nullptr;

TEST_F(SuiteEngineRunTest, APassingEngineCaseReportsEachPair) {
  const CaseOutcome& c = Outcome("dp2_engine");
  EXPECT_EQ(c.result, SuiteResult::kPass) << c.detail;
  ASSERT_EQ(c.comparisons.size(), 3u);
  const char* pairs[] = {"serial-legacy", "serial-pir", "legacy-pir"};
  for (size_t i = 0; i < 3; ++i) {
    const ComparisonOutcome& o = c.comparisons[i];
    EXPECT_EQ(o.comparison, SuiteComparison::kEngine);
    EXPECT_EQ(o.engine_pair, pairs[i]);
    EXPECT_EQ(ComparisonName(o), pairs[i]);
    EXPECT_EQ(o.result, SuiteResult::kPass) << o.detail;
    ASSERT_TRUE(o.report.has_value()) << pairs[i];
    EXPECT_GT(o.report->Compared(TensorGroup::kParameter), 0) << pairs[i];
  }
  EXPECT_EQ(c.comparisons[0].tier, Tier::kNoiseFloor);
  EXPECT_EQ(c.comparisons[1].tier, Tier::kNoiseFloor);
  // The two roads never give the same op order on the matrix's strategies (docs/engine.md).
  EXPECT_EQ(c.comparisons[2].tier, Tier::kReordered);

  const std::string xml = RenderSuiteJunit(*run_, "engine");
  for (const char* pair : pairs) {
    const std::string test = std::string(
                                 "<testcase classname=\"parity.engine.mlp.dp2_engine\" "
                                 "name=\"") +
                             pair + "\" time=\"";
    const size_t at = xml.find(test);
    ASSERT_NE(at, std::string::npos) << test << "\n" << xml;
    EXPECT_EQ(xml.find(test, at + 1), std::string::npos) << test;
    EXPECT_EQ(xml.compare(xml.find('>', at) - 1, 2, "/>"), 0) << "not a passing test: " << test;
  }
  ExpectValidJunit(xml, "engine");

  const std::string md = RenderSuiteMarkdown(*run_);
  EXPECT_NE(md.find("| dp2_engine | noise-floor / noise-floor / reordered | pass | serial-legacy: "
                    "normwise "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("; legacy-pir: "), std::string::npos) << md;
}

// Gradient merge over steps that are no whole number of updates: the serial check compares
// updates, so the flow skips both serial pairs; legacy-pir runs and passes. The case passes, but
// the skipped pairs withhold the evidence of their roads: legacy-pir alone is two roads agreeing.
TEST_F(SuiteEngineRunTest, SkippedSerialPairsPassTheCaseButWithholdTheirRoadsEvidence) {
  const CaseOutcome& c = Outcome("gm2_engine");
  EXPECT_EQ(c.result, SuiteResult::kPass) << c.detail;
  ASSERT_EQ(c.comparisons.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(c.comparisons[i].result, SuiteResult::kSkipped);
    EXPECT_FALSE(c.comparisons[i].report.has_value());
    EXPECT_NE(c.comparisons[i].detail.find("3 executor steps are not whole updates of gradient "
                                           "merge's 2 steps"),
              std::string::npos)
        << c.comparisons[i].detail;
  }
  EXPECT_EQ(c.comparisons[2].result, SuiteResult::kPass) << c.comparisons[2].detail;

  const CaseEvidence evidence = EvidenceOf(c);
  EXPECT_TRUE(evidence.vouched.empty());
  ASSERT_EQ(evidence.withheld.size(), 2u);
  EXPECT_EQ(evidence.withheld[0].first, kPirName);
  EXPECT_EQ(
      evidence.withheld[0].second.rfind("serial-pir skipped: 3 executor steps are not whole", 0),
      0u)
      << evidence.withheld[0].second;
  EXPECT_EQ(evidence.withheld[1].first, kLegacyName);
  EXPECT_EQ(
      evidence.withheld[1].second.rfind("serial-legacy skipped: 3 executor steps are not whole", 0),
      0u)
      << evidence.withheld[1].second;

  const nlohmann::json j = nlohmann::json::parse(RenderSuiteJson(*run_));
  const nlohmann::json* gm = nullptr;
  for (const nlohmann::json& entry : j["cases"]) {
    if (entry["name"] == "gm2_engine") gm = &entry;
  }
  ASSERT_NE(gm, nullptr);
  EXPECT_EQ((*gm)["result"], "pass");
  EXPECT_EQ((*gm)["comparisons"][0]["comparison"], "serial-legacy");
  EXPECT_EQ((*gm)["comparisons"][0]["result"], "skipped");
  EXPECT_EQ((*gm)["comparisons"][2]["result"], "pass");
  EXPECT_EQ((*gm)["vouched"], nlohmann::json::array());
  EXPECT_EQ((*gm)["withheld"].size(), 2u);
  EXPECT_EQ((*gm)["engine"]["ir"], "both");
  EXPECT_EQ((*gm)["engine"]["covers"]["pir"], nlohmann::json::array({kPirName}));

  const std::string md = RenderSuiteMarkdown(*run_);
  EXPECT_NE(md.find("| gm2_engine | - / - / "), std::string::npos) << md;
  EXPECT_NE(md.find("serial-legacy: skipped; serial-pir: skipped; legacy-pir: "), std::string::npos)
      << md;
  EXPECT_NE(md.find("## Skipped comparisons of passing cases\n"), std::string::npos) << md;
  EXPECT_NE(md.find(std::string("- **gm2_engine** serial-pir: 3 executor steps are not whole "
                                "updates of gradient merge's 2 steps (the serial run compares "
                                "updates: serial_parity.h); no evidence for ") +
                    kPirName + "\n"),
            std::string::npos)
      << md;

  const std::string xml = RenderSuiteJunit(*run_);
  EXPECT_NE(xml.find("<testcase classname=\"parity.mlp.gm2_engine\" name=\"serial-pir\" "
                     "time=\"0.000\">\n      <skipped message=\"3 executor steps are not whole"),
            std::string::npos)
      << xml;
}

// The new IR's gradient merge without its pd_op.if (a test-only fault) runs the optimizer every
// step: the flow's legacy-pir pair fails, and the case's detail names the first differing tensor
// and the first op whose place differs between the roads.
TEST_F(SuiteEngineRunTest, ABrokenNewIrPassFailsTheSuiteNamingTheOp) {
  const CaseOutcome& c = Outcome("gm2_drop_if_engine");
  EXPECT_EQ(c.result, SuiteResult::kMismatch) << c.detail;
  ASSERT_EQ(c.comparisons.size(), 3u);
  const ComparisonOutcome& pair = c.comparisons[2];
  EXPECT_EQ(pair.engine_pair, "legacy-pir");
  EXPECT_EQ(pair.result, SuiteResult::kMismatch);
  EXPECT_NE(c.detail.find("legacy-pir: "), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("first differing tensor: "), std::string::npos) << c.detail;
  // The legacy gradient merge's bookkeeping differs first (its step counter's initialisers); the
  // op the broken pass dropped is among the op types only the legacy road has.
  EXPECT_NE(c.detail.find("; first op that differs: rank 0 "), std::string::npos) << c.detail;
  const size_t types = c.detail.find(" (op types: only legacy has ");
  ASSERT_NE(types, std::string::npos) << c.detail;
  const std::string only_legacy = c.detail.substr(types, c.detail.find(';', types) - types);
  EXPECT_NE(only_legacy.find("pd_op.if"), std::string::npos) << c.detail;
  EXPECT_NE(pair.op_differences.find("  only in A: #"), std::string::npos);

  const std::string md = RenderSuiteMarkdown(*run_);
  // The serial program sees the optimizer run every step too.
  EXPECT_NE(md.find("- **gm2_drop_if_engine** (mismatch): serial-pir: state first differs after "
                    "step "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("; legacy-pir: first differing tensor: "), std::string::npos) << md;
  const std::string xml = RenderSuiteJunit(*run_);
  const size_t at =
      xml.find("<testcase classname=\"parity.mlp.gm2_drop_if_engine\" name=\"legacy-pir\"");
  ASSERT_NE(at, std::string::npos) << xml;
  const size_t failure = xml.find("<failure type=\"mismatch\" message=\"", at);
  ASSERT_NE(failure, std::string::npos) << xml;
  EXPECT_LT(failure, xml.find("</testcase>", at));
  EXPECT_NE(xml.substr(failure, xml.find("</failure>", failure) - failure).find("pd_op.if"),
            std::string::npos);
  EXPECT_TRUE(EvidenceOf(c).vouched.empty());
}

TEST_F(SuiteEngineRunTest, AStrategyTheFlowRefusesIsAnInvalidCase) {
  const CaseOutcome& c = Outcome("tp3_engine");
  EXPECT_EQ(c.result, SuiteResult::kInvalid) << c.detail;
  EXPECT_TRUE(c.comparisons.empty());
  EXPECT_NE(c.detail.find("3"), std::string::npos) << c.detail;
  // One errored test per pair the case would have run.
  const std::string xml = RenderSuiteJunit(*run_);
  for (const char* pair : {"serial-legacy", "serial-pir", "legacy-pir"}) {
    const std::string test =
        std::string("<testcase classname=\"parity.mlp.tp3_engine\" name=\"") + pair + "\"";
    const size_t at = xml.find(test);
    ASSERT_NE(at, std::string::npos) << test;
    EXPECT_EQ(xml.find("<error type=\"invalid\"", at), xml.find("<", at + 1)) << test;
  }
  EXPECT_EQ(SuiteExitCode(*run_), 2);  // the worst: invalid over a mismatch
}

// The evidence manifest as ir-deadcode reads it: the passing dp2 case vouches for its legacy name
// by serial-legacy and legacy-pir and for its new-IR twin by serial-pir and legacy-pir; the
// gradient-merge case (serial pairs skipped), the broken pass and the invalid case vouch for
// nothing.
TEST_F(SuiteEngineRunTest, OnlyEveryPairPassingVouchesAndEachReportNamesItsRoad) {
  ScratchDir dir("suite_engine_evidence");
  std::filesystem::create_directories(dir.path() + "/ev.reports");
  const SuiteEvidence evidence = RenderSuiteEvidence(*run_, "ev.reports");
  // The passing cases' pairs that ran: dp2's three and gm2's legacy-pir.
  ASSERT_EQ(evidence.reports.size(), 4u);
  std::map<std::string, nlohmann::json> covers;
  for (const auto& [ref, json] : evidence.reports) {
    EXPECT_TRUE(testing::SchemaErrors(json).empty())
        << ref << ::testing::PrintToString(testing::SchemaErrors(json));
    covers[ref] = nlohmann::json::parse(json).value("covers", nlohmann::json::array());
    ASSERT_TRUE(WriteFileAtomically(dir.path() + "/" + ref, json).ok());
  }
  EXPECT_EQ(covers["ev.reports/dp2_engine.serial-legacy.json"],
            nlohmann::json::array({kLegacyName}));
  EXPECT_EQ(covers["ev.reports/dp2_engine.serial-pir.json"], nlohmann::json::array({kPirName}));
  EXPECT_EQ(covers["ev.reports/dp2_engine.legacy-pir.json"],
            nlohmann::json::array({kPirName, kLegacyName}));
  EXPECT_EQ(covers["ev.reports/gm2_engine.legacy-pir.json"], nlohmann::json::array());

  const std::string manifest = dir.path() + "/ev.json";
  ASSERT_TRUE(WriteFileAtomically(manifest, evidence.manifest).ok());
  StatusOr<deadcode::EvidenceManifest> read = deadcode::LoadEvidence(manifest);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->problems.empty());
  ASSERT_EQ(read->entries.size(), 2u);
  EXPECT_EQ(read->Lookup("", kLegacyName).size(), 2u);
  EXPECT_EQ(read->Lookup("", kPirName).size(), 2u);
}

}  // namespace
}  // namespace irm::diff
