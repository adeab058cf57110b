// The report renderers on a hand-built report: JSON against the schema's required fields and
// types (docs/parity-report.schema.json), canonical and with non-finite numbers as null; Markdown
// with the verdict, counts, the first divergence and the worst tensors first; JUnit XML with one
// test case per rank and group.
#include "diff_tests/parity_report.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diff_tests/schema_check_test_support.h"

namespace irm::diff {
namespace {

using nlohmann::json;
using testing::SchemaErrors;

ComparedTensor Tensor(TensorGroup group, std::string name, bool pass, double normwise) {
  ComparedTensor t;
  t.group = group;
  t.step = 1;
  t.name = std::move(name);
  t.comparison.pass = pass;
  t.comparison.reason = pass ? "" : "bits differ at 1 of 4 elements";
  t.comparison.metrics.numel = 4;
  t.comparison.metrics.bits_equal = pass;
  t.comparison.metrics.normwise = normwise;
  t.comparison.metrics.mismatch_count = pass ? 0 : 1;
  t.comparison.metrics.mismatch_percent = pass ? 0 : 25;
  return t;
}

ParityReport MismatchReport() {
  ParityReport r;
  r.legacy_program = "mlp.pdmodel";
  r.new_program = "(translated)";
  r.steps = 2;
  r.seed = 7;
  r.gemm = "blas";
  r.tensors.push_back(Tensor(TensorGroup::kFetch, "loss", true, 0));
  r.tensors.push_back(Tensor(TensorGroup::kParameter, "w", false, 0.5));
  ComparedTensor inf =
      Tensor(TensorGroup::kIntermediate, "logits", false, std::numeric_limits<double>::infinity());
  inf.old_op = "matmul_v2 (block 0, op 3)";
  inf.new_op = "pd_op.matmul (op 5)";
  r.tensors.push_back(inf);
  ComparedTensor hashed = Tensor(TensorGroup::kIntermediate, "h<1>", false, 0);
  hashed.by_hash = true;
  hashed.comparison.reason = "hash 1 vs 2";
  r.tensors.push_back(hashed);
  r.unnamed_new.push_back({0, 1, 0, "%0@4", "pd_op.full"});
  r.old_only.push_back({0, 1, 0, "tmp", "scale"});
  DivergenceReport d;
  d.step = 1;
  d.old_op = {"matmul_v2", 0, 3, "{Out=['logits']} = matmul_v2(inputs={X=['x'], Y=['w']})"};
  d.new_op = {"pd_op.matmul", 0, 5, "(%0) = \"pd_op.matmul\" (%1, %2) {transpose_y:true}"};
  d.differing_outputs = {"logits"};
  d.comparison = inf.comparison;
  d.has_metrics = true;
  d.later_differing = 2;
  r.first_divergence = d;
  IsolationReport iso;
  iso.verdict = IsolationReport::Verdict::kOpDiffers;
  iso.detail = "on the legacy op's inputs, 'logits' still differs";
  iso.comparison = inf.comparison;
  r.isolation = iso;
  return r;
}

TEST(ParityReportTest, CountsAndVerdict) {
  const ParityReport r = MismatchReport();
  EXPECT_FALSE(r.parity());
  EXPECT_EQ(r.Compared(), 4);
  EXPECT_EQ(r.Mismatched(), 3);
  EXPECT_EQ(r.Mismatched(TensorGroup::kFetch), 0);
  EXPECT_EQ(r.Mismatched(TensorGroup::kIntermediate), 2);
  EXPECT_EQ(r.NotCompared(), 0);
}

TEST(ParityReportTest, JsonFollowsTheSchema) {
  const std::string text = RenderJson(MismatchReport());
  const std::vector<std::string> errors = SchemaErrors(text);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  const json j = json::parse(text);
  EXPECT_EQ(j["verdict"], "mismatch");
  EXPECT_EQ(j["summary"]["mismatched"], 3);
  EXPECT_EQ(j["summary"]["intermediates"]["compared"], 2);
  EXPECT_EQ(j["summary"]["unnamed_new_values"], 1);
  EXPECT_TRUE(j["tensors"][2]["metrics"]["normwise"].is_null());  // infinite
  EXPECT_TRUE(j["tensors"][3]["metrics"].is_null());              // decided by hash
  EXPECT_EQ(j["first_divergence"]["new_op"]["type"], "pd_op.matmul");
  EXPECT_EQ(j["isolation"]["verdict"], "the op itself computes differently");
  // Canonical: the same report renders the same bytes; keys are sorted.
  EXPECT_EQ(text, RenderJson(MismatchReport()));
  EXPECT_LT(text.find("\"first_divergence\""), text.find("\"format\""));
}

TEST(ParityReportTest, APassingReportFollowsTheSchemaToo) {
  ParityReport r;
  r.legacy_program = "a.pdmodel";
  r.new_program = "a.json";
  r.gemm = "reference";
  r.tensors.push_back(Tensor(TensorGroup::kFetch, "loss", true, 0));
  const std::string text = RenderJson(r);
  EXPECT_TRUE(SchemaErrors(text).empty()) << ::testing::PrintToString(SchemaErrors(text));
  const json j = json::parse(text);
  EXPECT_EQ(j["verdict"], "parity");
  EXPECT_TRUE(j["first_divergence"].is_null());
  EXPECT_TRUE(j["isolation"].is_null());
  // The schema check can fail: a report without its verdict does not pass.
  json broken = j;
  broken.erase("verdict");
  broken["tier"] = "loose";
  EXPECT_EQ(SchemaErrors(broken.dump()),
            (std::vector<std::string>{": missing 'verdict'", "/tier: not in the enum: \"loose\""}));
  const std::string md = RenderMarkdown(r);
  EXPECT_EQ(md.rfind("# Parity: PASS\n", 0), 0u);
  EXPECT_EQ(md.find("First divergence"), std::string::npos);
}

TEST(ParityReportTest, MarkdownShowsTheDivergenceAndTheWorstFirst) {
  const std::string md = RenderMarkdown(MismatchReport());
  EXPECT_EQ(md.rfind("# Parity: MISMATCH\n", 0), 0u);
  EXPECT_NE(md.find("| parameters | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("## First divergence"), std::string::npos);
  EXPECT_NE(md.find("legacy `matmul_v2` (block 0, op 3) vs new IR `pd_op.matmul` (op 5)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("{transpose_y:true}"), std::string::npos);
  EXPECT_NE(md.find("2 later aligned tensors also differ."), std::string::npos) << md;
  EXPECT_NE(md.find("**the op itself computes differently**"), std::string::npos);
  EXPECT_NE(md.find("new-IR values without a legacy name: 1 — `%0@4` (pd_op.full, step 1)"),
            std::string::npos)
      << md;
  // Worst first: logits (25% mismatched, infinite normwise) before w (0.5), the passing loss last.
  const size_t logits = md.find("| `logits` |");
  const size_t w = md.find("| `w` |");
  const size_t loss = md.find("| `loss` |");
  ASSERT_NE(logits, std::string::npos);
  EXPECT_LT(logits, w);
  EXPECT_LT(w, loss);
}

TEST(ParityReportTest, JunitHasACasePerRankAndGroup) {
  const std::string xml = RenderJunit(MismatchReport());
  EXPECT_NE(xml.find("<testsuite name=\"parity\" tests=\"3\" failures=\"2\" errors=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"parity.rank0\" name=\"fetches\">"), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"2 of 2 intermediates differ\">"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("h&lt;1&gt;: hash 1 vs 2"), std::string::npos) << xml;  // escaped
  EXPECT_EQ(xml.find("h<1>"), std::string::npos);
}

// A bundle's report: every tensor equal, rank 1 calling differently.
ParityReport CommReport() {
  ParityReport r;
  r.legacy_program = "tp2";
  r.new_program = "(translated)";
  r.gemm = "blas";
  r.tensors.push_back(Tensor(TensorGroup::kFetch, "loss", true, 0));
  r.communication.push_back({0, 2, 2, true, 0, "", ""});
  r.communication.push_back({1, 2, 1, false, 1, "recv float32 x4 from 0 (ring 0)", "(none)"});
  return r;
}

TEST(ParityReportTest, ACommunicationDifferenceIsAMismatch) {
  const ParityReport r = CommReport();
  EXPECT_EQ(r.Mismatched(), 0);
  EXPECT_EQ(r.CommMismatched(), 1);
  EXPECT_FALSE(r.parity());
  const std::string text = RenderJson(r);
  EXPECT_TRUE(SchemaErrors(text).empty()) << ::testing::PrintToString(SchemaErrors(text));
  const json j = json::parse(text);
  EXPECT_EQ(j["verdict"], "mismatch");
  EXPECT_EQ(j["summary"]["communication_mismatched"], 1);
  EXPECT_TRUE(j["communication"][0]["first_difference"].is_null());
  EXPECT_EQ(j["communication"][1]["first_difference"]["index"], 1);
  EXPECT_EQ(j["communication"][1]["first_difference"]["old_record"],
            "recv float32 x4 from 0 (ring 0)");
  EXPECT_EQ(j["communication"][1]["new_records"], 1);
  // The schema checks the entries: one without its rank does not pass.
  json broken = j;
  broken["communication"][0].erase("rank");
  EXPECT_EQ(SchemaErrors(broken.dump()),
            (std::vector<std::string>{"/communication/0: missing 'rank'"}));

  const std::string md = RenderMarkdown(r);
  EXPECT_EQ(md.rfind("# Parity: MISMATCH\n", 0), 0u);
  EXPECT_NE(md.find("## Communication\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0 | 2 | 2 | same |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 2 | 1 | DIFF at call 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Rank 1, call 1: legacy `recv float32 x4 from 0 (ring 0)` vs new IR `(none)`."),
            std::string::npos)
      << md;

  const std::string xml = RenderJunit(r);
  EXPECT_NE(xml.find("<testsuite name=\"parity\" tests=\"8\" failures=\"1\" errors=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"parity.rank0\" name=\"communication\">\n"
                     "      <system-out>2 calls, the same on both sides</system-out>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"call 1 differs\">legacy: recv float32 x4 from 0 (ring "
                     "0)\nnew IR: (none)\n</failure>"),
            std::string::npos)
      << xml;
}

TEST(ParityReportTest, ASingleProgramReportHasNoCommunicationSection) {
  const ParityReport r = MismatchReport();
  EXPECT_EQ(RenderMarkdown(r).find("## Communication"), std::string::npos);
  EXPECT_EQ(RenderJunit(r).find("communication"), std::string::npos);
  EXPECT_TRUE(json::parse(RenderJson(r))["communication"].empty());
}

}  // namespace
}  // namespace irm::diff
