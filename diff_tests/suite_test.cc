// The parity suite (docs/suite.md): case files (every error located by file and JSON pointer), the
// runner on tiny cases — one passing, one failing on purpose (the exact tier against the serial
// run: a data-parallel run sums in another order), one GPU case skipped — its reports (the
// failure's detail in the Markdown and the JUnit message, distinct JUnit tests across merged runs)
// and the evidence manifest as ir-deadcode reads it: a passing FThenB case vouches for the FThenB
// functions only, never for a 1F1B twin (docs/deadcode.md, "Evidence is bound to the twin").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/scratch_dir_test_support.h"
#include "diff_tests/schema_check_test_support.h"
#include "diff_tests/suite_case.h"
#include "diff_tests/suite_report.h"
#include "diff_tests/suite_runner.h"
#include "tools/deadcode/evidence.h"

namespace irm::diff {
namespace {

constexpr const char* kFThenB =
    "paddle.distributed.passes.pipeline_scheduler_pass.pipeline_fthenb.PipelineFThenBPass._"
    "partial_programs";
constexpr const char* k1F1BTwin =
    "paddle.distributed.passes.pipeline_scheduler_pass.pipeline_1f1b.Pipeline1F1BPass._partial_"
    "pir_programs";

// A small case: the 2-linear mlp, SGD, one step of 4 rows per replica.
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

TEST(SuiteCaseTest, ReadsEveryField) {
  StatusOr<SuiteCase> c = ParseSuiteCase(
      R"({"description": "d", "group": "pipelines",
          "model": {"name": "gpt", "layers": 2, "hidden": 8, "heads": 4, "vocab": 12, "seq": 4,
                    "dropout": 0.0},
          "optimizer": {"kind": "adamw", "learning_rate": 0.05},
          "strategy": {"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "1F1B",
                                                    "accumulate_steps": 2}},
          "job_lists": "pir", "compare": ["translated"], "backend": "thread", "device": "gpu",
          "steps": 3, "batch_size": 8, "tier": "reordered", "tags": ["fast", "pp"],
          "covers": ["b.Y", "a.X"]})",
      "cases/gpt_pp2.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "gpt_pp2");
  EXPECT_EQ(c->group, "pipelines");
  EXPECT_EQ(c->recipe.model, corpus::ZooModel::kGpt);
  EXPECT_EQ(c->recipe.gpt.vocab, 12);
  EXPECT_EQ(c->recipe.optimizer.kind, oldir::OptimizerKind::kAdamW);
  ASSERT_TRUE(c->recipe.strategy.has_value());
  EXPECT_EQ(c->recipe.strategy->pipeline.schedule_mode, "1F1B");
  EXPECT_EQ(c->recipe.job_lists, schedules::JobListIr::kPir);
  EXPECT_EQ(c->compare, std::vector<SuiteComparison>{SuiteComparison::kTranslated});
  EXPECT_EQ(c->device, "gpu");
  EXPECT_EQ(c->recipe.steps, 3);
  EXPECT_EQ(c->recipe.batch_size, 8);
  EXPECT_EQ(c->tier, Tier::kReordered);
  EXPECT_TRUE(c->HasTag("fast"));
  EXPECT_EQ(c->covers, (std::vector<std::string>{"a.X", "b.Y"}));  // sorted
}

TEST(SuiteCaseTest, DefaultsCompareBothInTheNoiseFloorTierOnTheThreadBackend) {
  StatusOr<SuiteCase> c =
      ParseSuiteCase(TinyCase(R"({"dp_degree": 2})", R"(, "covers": [])"), "cases/mlp_dp2.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->group, "mlp");
  EXPECT_EQ(c->compare,
            (std::vector<SuiteComparison>{SuiteComparison::kSerial, SuiteComparison::kTranslated}));
  EXPECT_EQ(c->tier, Tier::kNoiseFloor);
  EXPECT_EQ(c->backend, "thread");
  EXPECT_EQ(c->device, "cpu");
}

TEST(SuiteCaseTest, EveryErrorNamesTheFileAndTheField) {
  const std::string dp2 = R"({"dp_degree": 2})";
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "modle": 1)")),
            "cases/bad.json: /modle: error: unknown field 'modle' (known: description, group, "
            "model, optimizer, strategy, job_lists, compare, backend, device, steps, batch_size, "
            "tier, tags, covers)\n");
  EXPECT_EQ(ParseError(R"({"model": {"name": "mlp"}, "optimizer": {"kind": "sgd"},
                           "strategy": {"dp_degree": 2}, "steps": "3", "covers": []})"),
            "cases/bad.json: /steps: error: expected an integer, got a string\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": ["a.X", ""])")),
            "cases/bad.json: /covers/1: error: must not be empty\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "tier": "bitwise")")),
            "cases/bad.json: /tier: error: 'bitwise' is not one of exact, reordered, "
            "noise-floor\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "compare": ["serial", "other"])")),
            "cases/bad.json: /compare/1: error: 'other' is not one of serial, translated\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "device": 1)")),
            "cases/bad.json: /device: error: expected a string, got an integer\n");
  EXPECT_EQ(ParseError(TinyCase(dp2)),
            "cases/bad.json: /covers: error: missing: the qualified names the case exercises "
            "([] for none)\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "steps": 0)")),
            "cases/bad.json: /steps: error: must be an integer of at least 1, got 0\n");
  EXPECT_EQ(ParseError(R"({"model": {"name": "mlp", "depht": 2}, "optimizer": {"kind": "sgd"},
                           "strategy": {}, "steps": 1, "covers": []})")
                .substr(0, 59),
            "cases/bad.json: /model/depht: error: unknown field 'depht' ");
  EXPECT_EQ(ParseError(R"({"model": {"name": "resnet"}})"),
            "cases/bad.json: /model/name: error: 'resnet' is not one of mlp, gpt\n");
  // The strategy reader's own pointer goes under /strategy.
  EXPECT_EQ(ParseError(TinyCase(R"({"dp_degre": 2})", R"(, "covers": [])")).substr(0, 51),
            "cases/bad.json: /strategy/dp_degre: error: unknown ");
  EXPECT_EQ(ParseError(TinyCase(R"({"gradient_merge": {"enable": true, "k_steps": 2}})",
                                R"(, "covers": [])")),
            "cases/bad.json: /compare: error: gradient merge takes k executor steps per update, "
            "which the serial check does not model: compare [\"translated\"] only\n");
  const std::string not_json = ParseError("{\"model\": ");
  EXPECT_NE(not_json.find("cases/bad.json: byte "), std::string::npos) << not_json;
  EXPECT_NE(not_json.find("error: not JSON"), std::string::npos) << not_json;
}

TEST(SuiteCaseTest, TheCheckedInCasesAllRead) {
  StatusOr<std::vector<SuiteCase>> cases = ReadSuiteCases(IRM_SUITE_CASES);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  EXPECT_GE(cases->size(), 80u);
  int fast = 0;
  for (const SuiteCase& c : *cases) fast += c.HasTag("fast") ? 1 : 0;
  EXPECT_GE(fast, 3);
  EXPECT_LE(fast, 8);
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

constexpr const char* kFThenBStrategy =
    R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "FThenB", "accumulate_steps": 2}})";

class SuiteRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new SuiteRun(RunCases({
        Case("fthenb", TinyCase(kFThenBStrategy, std::string(R"(, "covers": [")") + kFThenB +
                                                     R"("], "tags": ["fast"])")),
        Case("dp2_exact",
             TinyCase(R"({"dp_degree": 2})",
                      R"(, "covers": ["x.Y"], "tier": "exact", "compare": ["serial"])")),
        Case("dp2_gpu", TinyCase(R"({"dp_degree": 2})", R"(, "covers": ["x.Z"], "device": "gpu")")),
    }));
  }
  static void TearDownTestSuite() { delete run_; }
  static SuiteRun* run_;
};
SuiteRun* SuiteRunTest::run_ = nullptr;

TEST_F(SuiteRunTest, JudgesEachCase) {
  ASSERT_EQ(run_->cases.size(), 3u);
  const CaseOutcome& pass = run_->cases[0];
  EXPECT_EQ(pass.result, SuiteResult::kPass) << pass.detail;
  ASSERT_EQ(pass.comparisons.size(), 2u);
  EXPECT_EQ(pass.comparisons[0].comparison, SuiteComparison::kSerial);
  EXPECT_EQ(pass.comparisons[0].tier, Tier::kNoiseFloor);
  EXPECT_EQ(pass.comparisons[1].comparison, SuiteComparison::kTranslated);
  EXPECT_EQ(pass.comparisons[1].tier, Tier::kExact);

  // A data-parallel run sums its gradients in another order than the serial run: not bit for bit.
  const CaseOutcome& exact = run_->cases[1];
  EXPECT_EQ(exact.result, SuiteResult::kMismatch);
  ASSERT_EQ(exact.comparisons.size(), 1u);
  ASSERT_TRUE(exact.comparisons[0].report.has_value());
  ASSERT_TRUE(exact.comparisons[0].report->first_differing_state.has_value());
  EXPECT_EQ(exact.detail.rfind("serial: state first differs after step 1: ", 0), 0u)
      << exact.detail;

  const CaseOutcome& gpu = run_->cases[2];
  EXPECT_EQ(gpu.result, SuiteResult::kSkipped);
  EXPECT_TRUE(gpu.comparisons.empty());
  EXPECT_NE(gpu.detail.find("device gpu"), std::string::npos) << gpu.detail;
  EXPECT_NE(gpu.detail.find("not passed"), std::string::npos) << gpu.detail;

  EXPECT_EQ(SuiteExitCode(*run_), 1);
}

TEST_F(SuiteRunTest, MarkdownTableAndTheFirstDifferingState) {
  const std::string md = RenderSuiteMarkdown(*run_);
  EXPECT_NE(md.find("# Parity suite: FAIL\n\n3 cases: 1 pass, 1 mismatch, 0 error, 0 invalid, "
                    "1 skipped"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| case | tier | result | worst metric | time |\n"), std::string::npos);
  EXPECT_NE(md.find("| fthenb | noise-floor / exact | pass | serial: "), std::string::npos) << md;
  EXPECT_NE(md.find("| dp2_exact | exact | mismatch | serial: normwise "), std::string::npos) << md;
  EXPECT_NE(md.find("| dp2_gpu | noise-floor / exact | skipped | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("- **dp2_exact** (mismatch): serial: state first differs after step 1: "),
            std::string::npos)
      << md;
}

TEST_F(SuiteRunTest, JunitFailureMessageSkipAndCounts) {
  const std::string xml = RenderSuiteJunit(*run_);
  EXPECT_NE(xml.find("<testsuite name=\"parity.mlp\" tests=\"5\" failures=\"1\" errors=\"0\" "
                     "skipped=\"2\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"parity.mlp.dp2_exact\" name=\"serial\""),
            std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"mismatch\" message=\"state first differs after step 1: "),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"device gpu: "), std::string::npos) << xml;
}

// Every (classname, name) of a JUnit file.
std::vector<std::pair<std::string, std::string>> TestIds(const std::string& xml) {
  std::vector<std::pair<std::string, std::string>> ids;
  const std::regex testcase("<testcase classname=\"([^\"]*)\" name=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testcase);
       it != std::sregex_iterator(); ++it) {
    ids.emplace_back((*it)[1].str(), (*it)[2].str());
  }
  return ids;
}

TEST_F(SuiteRunTest, MergingTwoRunsKeepsEveryTestDistinct) {
  // A second run of other cases in the same group.
  const SuiteRun other =
      RunCases({Case("tp2", TinyCase(R"({"mp_degree": 2})", R"(, "covers": [])"))});
  std::set<std::pair<std::string, std::string>> seen;
  size_t total = 0;
  for (const std::string& xml : {RenderSuiteJunit(*run_), RenderSuiteJunit(other)}) {
    for (const auto& id : TestIds(xml)) {
      ++total;
      EXPECT_TRUE(seen.insert(id).second) << id.first << " " << id.second;
    }
  }
  EXPECT_EQ(total, 7u);  // 5 tests and 2
  // Within one file, one test suite per group.
  const std::string xml = RenderSuiteJunit(*run_);
  EXPECT_EQ(xml.find("<testsuite name=\"parity.mlp\""),
            xml.rfind("<testsuite name=\"parity.mlp\""));
}

TEST_F(SuiteRunTest, JsonSummary) {
  const nlohmann::json j = nlohmann::json::parse(RenderSuiteJson(*run_));
  EXPECT_EQ(j["format"], "ir-migrate-suite-report");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["summary"]["pass"], 1);
  EXPECT_EQ(j["summary"]["mismatch"], 1);
  EXPECT_EQ(j["summary"]["skipped"], 1);
  EXPECT_EQ(j["cases"][1]["name"], "dp2_exact");
  EXPECT_EQ(j["cases"][1]["comparisons"][0]["result"], "mismatch");
}

TEST_F(SuiteRunTest, APassingFThenBCaseIsNoEvidenceForA1F1BTwin) {
  ScratchDir dir("suite_evidence");
  std::filesystem::create_directories(dir.path() + "/ev.reports");
  const SuiteEvidence evidence = RenderSuiteEvidence(*run_, "ev.reports");
  // Only the passing case gives reports: its two comparisons.
  ASSERT_EQ(evidence.reports.size(), 2u);
  for (const auto& [ref, json] : evidence.reports) {
    EXPECT_TRUE(testing::SchemaErrors(json).empty()) << ref;
    EXPECT_EQ(nlohmann::json::parse(json)["covers"], nlohmann::json::array({kFThenB}));
    ASSERT_TRUE(WriteFileAtomically(dir.path() + "/" + ref, json).ok());
  }
  const std::string manifest = dir.path() + "/ev.json";
  ASSERT_TRUE(WriteFileAtomically(manifest, evidence.manifest).ok());

  StatusOr<deadcode::EvidenceManifest> read = deadcode::LoadEvidence(manifest);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->problems.empty());
  // Exactly the passing case's covers: no entry for the failing case's x.Y or the skipped x.Z.
  ASSERT_EQ(read->entries.size(), 1u);
  EXPECT_EQ(read->entries[0].twin, kFThenB);
  EXPECT_EQ(read->Lookup("", kFThenB).size(), 2u);
  EXPECT_TRUE(read->Lookup("", k1F1BTwin).empty());
  EXPECT_TRUE(read->Lookup("", "x.Y").empty());
}

}  // namespace
}  // namespace irm::diff
