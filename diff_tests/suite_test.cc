// The parity suite (docs/suite.md): case files (every error located by file and JSON pointer), the
// runner on tiny cases — one passing, one failing on purpose (the exact tier against the serial
// run: a data-parallel run sums in another order), one GPU case skipped, one that hangs (1F1B
// under rendezvous sends) — its reports (the failure's detail in the Markdown and the JUnit
// message, the hang's pending op of every rank, distinct JUnit tests across merged runs) and the
// evidence manifest as ir-deadcode reads it: a passing FThenB case vouches for the FThenB
// functions only, never for a 1F1B twin (docs/deadcode.md, "Evidence is bound to the twin").
// The engine cases' own tests are in suite_engine_test.cc; the checked-in engine cases' `covers`
// are checked here with the others'.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
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
          "p2p": "buffered=2", "steps": 3, "batch_size": 8, "tier": "reordered", "tags": ["fast", "pp"],
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
  EXPECT_EQ(c->p2p, schedules::P2pModel::Buffered(2));
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
  EXPECT_FALSE(c->p2p.has_value());  // the built bundle's own
}

TEST(SuiteCaseTest, EveryErrorNamesTheFileAndTheField) {
  const std::string dp2 = R"({"dp_degree": 2})";
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "modle": 1)")),
            "cases/bad.json: /modle: error: unknown key 'modle'\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "p2p": "buffered=0")")),
            "cases/bad.json: /p2p: error: p2p model 'buffered=0' is not 'rendezvous', 'buffered' "
            "or 'buffered=K' (K >= 1 unreceived messages per channel)\n");
  EXPECT_EQ(ParseError(R"({"model": {"name": "mlp"}, "optimizer": {"kind": "sgd"},
                           "strategy": {"dp_degree": 2}, "steps": "3", "covers": []})"),
            "cases/bad.json: /steps: error: expected an integer, found a string\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": ["a.X", ""])")),
            "cases/bad.json: /covers/1: error: must not be empty\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "tier": "bitwise")")),
            "cases/bad.json: /tier: error: 'bitwise' is not one of exact, reordered, "
            "noise-floor\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "compare": ["serial", "other"])")),
            "cases/bad.json: /compare/1: error: 'other' is not one of serial, translated, "
            "engine\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "device": 1)")),
            "cases/bad.json: /device: error: expected a string, found an integer\n");
  EXPECT_EQ(ParseError(TinyCase(dp2)),
            "cases/bad.json: /covers: error: missing: the qualified names the case exercises "
            "([] for none)\n");
  EXPECT_EQ(ParseError(TinyCase(dp2, R"(, "covers": [], "steps": 0)")),
            "cases/bad.json: /steps: error: must be an integer of at least 1, found 0\n");
  EXPECT_EQ(ParseError(R"({"model": {"name": "mlp", "depht": 2}, "optimizer": {"kind": "sgd"},
                           "strategy": {}, "steps": 1, "covers": []})"),
            "cases/bad.json: /model/depht: error: unknown key 'depht'\n");
  EXPECT_EQ(ParseError(R"({"model": {"name": "resnet"}})"),
            "cases/bad.json: /model/name: error: 'resnet' is not one of mlp, gpt\n");
  // The strategy reader's own pointer goes under /strategy.
  EXPECT_EQ(ParseError(TinyCase(R"({"dp_degre": 2})", R"(, "covers": [])")).substr(0, 51),
            "cases/bad.json: /strategy/dp_degre: error: unknown ");
  EXPECT_EQ(ParseError(TinyCase(R"({"gradient_merge": {"enable": true, "k_steps": 2}})",
                                R"(, "covers": [])")),
            "cases/bad.json: /steps: error: gradient merge makes one update of k_steps = 2 "
            "executor steps: compared with the serial program, steps must be a multiple of it, "
            "not 1\n");
  const std::string not_json = ParseError("{\"model\": ");
  EXPECT_NE(not_json.find("cases/bad.json: byte "), std::string::npos) << not_json;
  EXPECT_NE(not_json.find("error: not JSON"), std::string::npos) << not_json;
}

TEST(SuiteCaseTest, TheCheckedInCasesAllRead) {
  StatusOr<std::vector<SuiteCase>> cases = ReadSuiteCases(IRM_SUITE_CASES);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  EXPECT_GE(cases->size(), 99u);
  int fast = 0, engine = 0, fast_engine = 0;
  for (const SuiteCase& c : *cases) {
    fast += c.HasTag("fast") ? 1 : 0;
    engine += c.IsEngine() ? 1 : 0;
    fast_engine += c.IsEngine() && c.HasTag("fast") ? 1 : 0;
    // Every engine case is tagged so, and named after the legacy case of its strategy.
    EXPECT_EQ(c.IsEngine(), c.HasTag("engine")) << c.name;
    EXPECT_EQ(c.IsEngine(), c.name.ends_with("_engine")) << c.name;
  }
  EXPECT_GE(fast, 3);
  EXPECT_LE(fast, 8);
  EXPECT_GE(engine, 17);
  // CI's fast subset runs one or two tiny engine cases.
  EXPECT_GE(fast_engine, 1);
  EXPECT_LE(fast_engine, 2);
}

// What each checked-in case vouches for follows from what its strategy runs, by the Paddle
// functions the legacy passes reproduce (each verified at Paddle ccd49a3de4):
// - dp_degree > 1: the per-gradient c_allreduce_sum + scale of auto_parallel/static/operators/
//   common.py `sync_and_scale_gradients` (oldir/passes/data_parallel.cc);
// - dp_optimization: the bucketing of passes/auto_parallel_data_parallel_optimization.py
//   `DataParallelOptimizationPass._group_grads` (its `_update_program` places coalesce_tensor
//   elsewhere than the legacy pass does, so no case vouches for it);
// - mp_degree > 1: the column- and row-parallel matmul impls of operators/dist_matmul.py and their
//   shared backward; on gpt also the vocabulary-parallel embedding (dist_embedding.py) and the
//   parallel cross entropy (dist_cross_entropy.py, Impl1) (oldir/passes/tensor_parallel.cc);
// - gradient merge: passes/auto_parallel_gradient_merge.py `parse_program` and the four steps it
//   calls (oldir/passes/gradient_merge.cc);
// - a pipeline: the merge buffers of `_append_gradient_merge_backward_op`
//   (oldir/passes/pipeline_accumulation.h), and its schedule's pass methods (not checked here).
// No case names a new-IR pass function other than Paddle's PIR job list: the suite runs the
// legacy passes and the translator, never the new-IR passes.
std::set<std::string> ExpectedNonPipelineCovers(const SuiteCase& c) {
  const std::string ops = "paddle.distributed.auto_parallel.static.operators.";
  const std::string gm = "paddle.distributed.passes.auto_parallel_gradient_merge.";
  const oldir::passes::Strategy& s = *c.recipe.strategy;
  std::set<std::string> names;
  if (s.dp_degree > 1) names.insert(ops + "common.sync_and_scale_gradients");
  if (s.dp_optimization.enable) {
    names.insert(
        "paddle.distributed.passes.auto_parallel_data_parallel_optimization."
        "DataParallelOptimizationPass._group_grads");
  }
  if (s.mp_degree > 1) {
    for (const char* impl : {"DistributedMatmulV2Impl0", "DistributedMatmulV2Impl1"}) {
      names.insert(ops + "dist_matmul." + impl + ".forward");
      names.insert(ops + "dist_matmul." + impl + ".backward");
    }
    names.insert(ops + "dist_matmul._right_operand_parameter_matmul_backward");
    if (c.recipe.model == corpus::ZooModel::kGpt) {
      names.insert(ops + "dist_embedding.DistributedEmbeddingImpl.forward");
      names.insert(ops + "dist_embedding.DistributedEmbeddingImpl.backward");
      names.insert(ops + "dist_cross_entropy.DistributedCrossEntropyImpl1.forward");
      names.insert(ops + "dist_cross_entropy.DistributedCrossEntropyImpl1.backward");
    }
  }
  if (s.gradient_merge.enable) {
    for (const char* f :
         {"parse_program", "_remove_and_get_optimizer_op", "_append_gradient_merge_backward_op",
          "_get_gm_cond_var", "_create_cond_block_and_update_optimizer"}) {
      names.insert(gm + f);
    }
  }
  if (s.pipeline.enable) names.insert(gm + "_append_gradient_merge_backward_op");
  return names;
}

// An engine case's new-IR road (engine_flow.h: ParallelizeBundle, then the new IR's gradient
// merge) runs the counterparts of these PIR functions (Paddle ccd49a3de4):
// - dp_degree or mp_degree > 1: auto_parallel/static/pir_pass.py `apply_partition_pass` (the
//   reshards an op's layouts ask for: newir/auto_parallel/spmd_completion.h),
//   `ReshardPasses.apply_reshard_pass` (reshard_lowering.h) and
//   `RemovePasses.remove_other_rank_op_pass` (remove_other_ranks.h);
// - gradient merge: passes/auto_parallel_gradient_merge.py `_pir_parse_program`, the merge buffers
//   of `_pir_append_gradient_merge_backward_op` and, with avg, the 1/k of `_pir_append_scale_op`
//   (newir/auto_parallel/gradient_merge.h).
// - a pipeline: the new-IR road splits the translated stage programs of the legacy partition
//   (newir/auto_parallel/pipeline_split.h): the schedule pass's `_partial_pir_programs`
//   (pipeline_fthenb.py, pipeline_1f1b.py, pipeline_vpp.py), and for 1F1B the PIR job list of
//   `_create_job_list_in_pir`; none of the SPMD passes run there.
// The Engine's own methods are named by no case: `Engine._prepare_program` holds both roads in one
// function, and `_parallel_pir` also runs passes the new-IR road does not model (mix2dist, the
// parallel embedding and cross-entropy passes, recompute).
std::set<std::string> ExpectedPirCovers(const SuiteCase& c) {
  const std::string pir_pass = "paddle.distributed.auto_parallel.static.pir_pass.";
  const std::string gm = "paddle.distributed.passes.auto_parallel_gradient_merge.";
  const std::string schedules = "paddle.distributed.passes.pipeline_scheduler_pass.";
  const oldir::passes::Strategy& s = *c.recipe.strategy;
  std::set<std::string> names;
  if (s.pipeline.enable) {
    const std::map<std::string, std::string> pass = {
        {"FThenB", "pipeline_fthenb.PipelineFThenBPass."},
        {"1F1B", "pipeline_1f1b.Pipeline1F1BPass."},
        {"VPP", "pipeline_vpp.PipelineVirtualPipelinePass."}};
    const auto it = pass.find(s.pipeline.schedule_mode);
    if (it == pass.end()) return {"(no PIR split of " + s.pipeline.schedule_mode + ")"};
    names.insert(schedules + it->second + "_partial_pir_programs");
    if (it->first == "1F1B") names.insert(schedules + it->second + "_create_job_list_in_pir");
    return names;
  }
  if (s.dp_degree > 1 || s.mp_degree > 1) {
    names.insert(pir_pass + "apply_partition_pass");
    names.insert(pir_pass + "ReshardPasses.apply_reshard_pass");
    names.insert(pir_pass + "RemovePasses.remove_other_rank_op_pass");
  }
  if (s.gradient_merge.enable) {
    names.insert(gm + "_pir_parse_program");
    names.insert(gm + "_pir_append_gradient_merge_backward_op");
    if (s.gradient_merge.avg) names.insert(gm + "_pir_append_scale_op");
  }
  return names;
}

TEST(SuiteCaseTest, TheCheckedInCasesCoverExactlyWhatTheirPassesRun) {
  StatusOr<std::vector<SuiteCase>> cases = ReadSuiteCases(IRM_SUITE_CASES);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  const std::string schedules = "paddle.distributed.passes.pipeline_scheduler_pass.";
  for (const SuiteCase& c : *cases) {
    if (c.IsEngine()) {
      // The legacy road runs the legacy passes as the other cases do; the new-IR road its twins.
      // (A pipeline's legacy schedule-pass methods are not checked here, as below; on the legacy
      // road never a PIR one.)
      const bool legacy = c.engine_ir != EngineIr::kPir;
      const bool pir = c.engine_ir != EngineIr::kLegacy;
      std::set<std::string> legacy_names;
      for (const std::string& name : c.covers_legacy) {
        if (name.rfind(schedules, 0) == 0) {
          EXPECT_TRUE(c.recipe.strategy->pipeline.enable) << c.name << ": " << name;
          EXPECT_EQ(name.find("pir"), std::string::npos) << c.name << ": " << name;
        } else {
          legacy_names.insert(name);
        }
      }
      EXPECT_EQ(legacy_names, legacy ? ExpectedNonPipelineCovers(c) : std::set<std::string>())
          << c.name;
      EXPECT_EQ(std::set<std::string>(c.covers_pir.begin(), c.covers_pir.end()),
                pir ? ExpectedPirCovers(c) : std::set<std::string>())
          << c.name;
      // The new-IR road's pipelines start from the legacy partition: no hybrid yet.
      if (c.recipe.strategy->pipeline.enable) {
        EXPECT_EQ(c.recipe.strategy->world_size(), c.recipe.strategy->pp_degree) << c.name;
      }
      EXPECT_TRUE(c.test_fault.empty()) << c.name << ": a checked-in case breaks no pass";
      continue;
    }
    std::set<std::string> others;
    for (const std::string& name : c.covers) {
      if (name.rfind(schedules, 0) == 0) {
        EXPECT_TRUE(c.recipe.strategy->pipeline.enable) << c.name << ": " << name;
        // A PIR method only where the case runs Paddle's PIR job lists.
        if (name.find("pir") != std::string::npos) {
          EXPECT_EQ(c.recipe.job_lists, schedules::JobListIr::kPir) << c.name << ": " << name;
        }
      } else {
        others.insert(name);
      }
    }
    EXPECT_EQ(others, ExpectedNonPipelineCovers(c)) << c.name;
    // Every data-, tensor-parallel and gradient-merge case vouches for something.
    const oldir::passes::Strategy& s = *c.recipe.strategy;
    if (s.dp_degree > 1 || s.mp_degree > 1 || s.gradient_merge.enable) {
      EXPECT_FALSE(c.covers.empty()) << c.name;
    }
  }
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
  EXPECT_NE(md.find("# Parity suite: FAIL\n\n3 cases: 1 pass, 1 mismatch, 0 hang, 0 error, 0 "
                    "invalid, 1 skipped"),
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

// Every <testsuite name="..."> of a JUnit file.
std::vector<std::string> SuiteNames(const std::string& xml) {
  std::vector<std::string> names;
  const std::regex testsuite("<testsuite name=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), testsuite);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

TEST_F(SuiteRunTest, TheSameCasesRunTwiceStayDistinctByTheRunsName) {
  // The CLI names a run by its JUnit file's stem: fast.xml, nightly.xml.
  const std::string fast = RenderSuiteJunit(*run_, "fast");
  const std::string nightly = RenderSuiteJunit(*run_, "nightly");
  EXPECT_EQ(SuiteNames(fast), std::vector<std::string>{"parity.fast.mlp"});
  EXPECT_EQ(SuiteNames(nightly), std::vector<std::string>{"parity.nightly.mlp"});
  std::set<std::pair<std::string, std::string>> seen;
  for (const std::string& xml : {fast, nightly}) {
    for (const auto& id : TestIds(xml)) EXPECT_TRUE(seen.insert(id).second) << id.first;
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_NE(fast.find("classname=\"parity.fast.mlp.dp2_exact\" name=\"serial\""),
            std::string::npos);
  // Without a run's name the two files would clash test for test.
  EXPECT_EQ(TestIds(RenderSuiteJunit(*run_)), TestIds(RenderSuiteJunit(*run_)));
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

// A translated comparison that misses its exact tier (only a wrong translation does:
// docs/parity.md) fails the case with the first divergence — rank, step, micro-batch, job, the op
// in both programs — as the Markdown's detail and the JUnit failure's message. The report is made
// by hand here: no checked-in translation is wrong.
TEST(SuiteReportTest, ATranslatedMismatchShowsTheFirstDivergence) {
  ParityReport report;
  ComparedTensor t;
  t.group = TensorGroup::kIntermediate;
  t.rank = 1;
  t.step = 2;
  t.name = "linear_1.tmp_0";
  t.comparison.reason = "bits differ at 3 of 8 elements";
  report.tensors.push_back(t);
  DivergenceReport d;
  d.rank = 1;
  d.step = 2;
  d.job = "forward";
  d.old_op = {"matmul_v2", 0, 7, ""};
  d.new_op = {"pd_op.matmul", 0, 9, ""};
  d.differing_outputs = {"linear_1.tmp_0"};
  report.first_divergence = d;
  const std::string first =
      "first divergence: rank 1 step 2 micro-batch 0 job forward: legacy matmul_v2 (block 0, op "
      "7) / new IR pd_op.matmul (op 9); linear_1.tmp_0 differ";
  EXPECT_EQ(DescribeMismatch(report),
            first +
                "; first differing tensor: intermediates linear_1.tmp_0 (rank 1, step 2, "
                "micro-batch 0): bits differ at 3 of 8 elements");

  SuiteRun run;
  CaseOutcome c;
  c.suite_case = Case("tp2_wrong", TinyCase(R"({"mp_degree": 2})",
                                            R"(, "covers": ["x.Y"], "compare": ["translated"])"));
  c.result = SuiteResult::kMismatch;
  ComparisonOutcome o;
  o.comparison = SuiteComparison::kTranslated;
  o.result = SuiteResult::kMismatch;
  o.report = report;
  o.detail = DescribeMismatch(report);
  c.detail = "translated: " + o.detail;
  c.comparisons.push_back(o);
  run.cases.push_back(c);
  EXPECT_EQ(SuiteExitCode(run), 1);
  EXPECT_NE(RenderSuiteMarkdown(run).find("- **tp2_wrong** (mismatch): translated: " + first),
            std::string::npos)
      << RenderSuiteMarkdown(run);
  EXPECT_NE(RenderSuiteJunit(run).find("<failure type=\"mismatch\" message=\"" + first),
            std::string::npos)
      << RenderSuiteJunit(run);
  EXPECT_TRUE(RenderSuiteEvidence(run, "r").reports.empty());
}

// Paddle's 1F1B on 2 stages and 2 micro-batches (pipeline_1f1b.py `_create_job_list`: stage 0
// forward0 forward1 backward0 backward1, stage 1 forward0 backward0 forward1 backward1): under
// rendezvous sends, stage 0's send of micro-batch 1's activation meets stage 1's send of
// micro-batch 0's gradient and neither returns — the hang of Paddle PR #70360
// (tools/testdata/run_p2p.test). The runtime's watchdog sees it at once.
constexpr const char* k1F1BStrategy =
    R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "1F1B", "accumulate_steps": 2}})";
constexpr const char* kStage0Pending =
    "rank 0 waits in send_v2 to rank 1 (ring 0, job forward, micro-batch 1, step 1, op ";
constexpr const char* kStage1Pending =
    "rank 1 waits in send_v2 to rank 0 (ring 1, job backward, micro-batch 0, step 1, op ";

class SuiteHangTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new SuiteRun(RunCases(
        {Case("pp2_1f1b_rendezvous",
              TinyCase(k1F1BStrategy,
                       R"(, "covers": ["x.Y"], "p2p": "rendezvous", "group": "hangs")"))}));
  }
  static void TearDownTestSuite() { delete run_; }
  static SuiteRun* run_;
};
SuiteRun* SuiteHangTest::run_ = nullptr;

// A hang is its own result — not a pass, not a timeout, not a generic error — and every
// comparison's detail is the watchdog's report: every rank's pending op, and which run hung.
TEST_F(SuiteHangTest, AHangFailsTheCaseWithEveryRanksPendingOp) {
  ASSERT_EQ(run_->cases.size(), 1u);
  const CaseOutcome& c = run_->cases[0];
  EXPECT_EQ(c.result, SuiteResult::kHang) << c.detail;
  ASSERT_EQ(c.comparisons.size(), 2u);
  const char* runs[] = {"; in the distributed run)", "; in the legacy run)"};
  for (size_t i = 0; i < 2; ++i) {
    const ComparisonOutcome& o = c.comparisons[i];
    EXPECT_EQ(o.result, SuiteResult::kHang) << o.detail;
    EXPECT_FALSE(o.report.has_value());
    EXPECT_EQ(o.detail.rfind(std::string("hang: no rank can progress: ") + kStage0Pending, 0), 0u)
        << o.detail;
    EXPECT_NE(o.detail.find(std::string("); ") + kStage1Pending), std::string::npos) << o.detail;
    EXPECT_NE(o.detail.find(runs[i]), std::string::npos) << o.detail;
    // The backstop's words (a rank "waited N ms without progress", Gloo's "timed out"): never.
    EXPECT_EQ(o.detail.find("waited"), std::string::npos) << o.detail;
    EXPECT_EQ(o.detail.find("timed out"), std::string::npos) << o.detail;
  }
  EXPECT_EQ(c.detail.rfind(std::string("serial: hang: no rank can progress: ") + kStage0Pending, 0),
            0u)
      << c.detail;
  EXPECT_EQ(SuiteExitCode(*run_), 3);  // a runtime failure
}

TEST_F(SuiteHangTest, MarkdownAndJunitNameEveryRanksPendingOp) {
  const std::string md = RenderSuiteMarkdown(*run_);
  EXPECT_NE(md.find("1 cases: 0 pass, 0 mismatch, 1 hang, 0 error, 0 invalid, 0 skipped"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| pp2_1f1b_rendezvous | noise-floor / exact | hang | serial: -; translated: - |"),
      std::string::npos)
      << md;
  const std::string item = std::string("- **pp2_1f1b_rendezvous** (hang): serial: hang: no rank ") +
                           "can progress: " + kStage0Pending;
  const size_t at = md.find(item);
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_NE(md.find(kStage1Pending, at), std::string::npos) << md;

  const std::string xml = RenderSuiteJunit(*run_);
  EXPECT_NE(xml.find("<testsuite name=\"parity.hangs\" tests=\"2\" failures=\"2\" errors=\"0\" "
                     "skipped=\"0\""),
            std::string::npos)
      << xml;
  // Both tests fail, each message naming both ranks' pending sends.
  const std::regex failure(
      std::string("<failure type=\"hang\" message=\"hang: no rank can ") +
      "progress: " + std::regex_replace(kStage0Pending, std::regex("[()]"), "\\$&") +
      "[0-9]+\\); " + std::regex_replace(kStage1Pending, std::regex("[()]"), "\\$&") +
      "[0-9]+\\) \\([^\"]*; in the (distributed|legacy) run\\)\">");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(xml.begin(), xml.end(), failure), std::sregex_iterator()),
      2)
      << xml;
  EXPECT_EQ(xml.find("<error"), std::string::npos) << xml;

  const nlohmann::json j = nlohmann::json::parse(RenderSuiteJson(*run_));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["summary"]["hang"], 1);
  EXPECT_EQ(j["cases"][0]["result"], "hang");
  // A case that hung vouches for nothing.
  const SuiteEvidence evidence = RenderSuiteEvidence(*run_, "r");
  EXPECT_TRUE(evidence.reports.empty());
  EXPECT_EQ(nlohmann::json::parse(evidence.manifest)["entries"], nlohmann::json::array());
}

// The same pipeline under buffered sends (as NCCL gives them while a message fits its buffers)
// completes: the hang above is the point-to-point model's, not the case's building.
TEST(SuiteP2pTest, The1F1BCaseRunsUnderBufferedSends) {
  const SuiteRun run = RunCases(
      {Case("pp2_1f1b_buffered", TinyCase(k1F1BStrategy, R"(, "covers": [], "p2p": "buffered")"))});
  ASSERT_EQ(run.cases.size(), 1u);
  EXPECT_EQ(run.cases[0].result, SuiteResult::kPass) << run.cases[0].detail;
}

}  // namespace
}  // namespace irm::diff
