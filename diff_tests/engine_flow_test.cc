// The Engine flow (engine_flow.h) on the zoo mlp, as Paddle's Engine runs a strategy
// (python/paddle/distributed/auto_parallel/static/engine.py, _prepare_program: build, plan,
// parallel, init comm, initialize): DP2, TP2, DP2xTP2, GM k=2 and k=4, GM with DP2 and with TP2,
// SGD and AdamW, by both roads — every pair passes (serial vs legacy and serial vs new in the
// noise-floor tier of the parity matrix, gradient merge against the serial run of the k steps'
// rows stacked; legacy vs new exact or reordered by op order). Pipelines by both roads: the new
// IR's road makes a pure pipeline's stages as process meshes of its own passes (pp2, pp4) and a
// hybrid's from the legacy partition (dp2 x pp2, dp2 x tp2 x pp2), splits them with the new IR's
// pipeline pass (FThenB, 1F1B, Eager1F1B, VPP, ZBH1), and every pair passes. The new-IR
// gradient merge broken on purpose (its test-only faults: scaling by 1/(k+1), the pd_op.if
// dropped) fails the new road's pairs and the report names the tensor and the op; a send to the
// wrong peer on the pipeline road is caught by the communication check, naming the op.
// Refusals are located and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/engine_flow.h"
#include "oldir/bundle.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

struct EngineCase {
  const char* name;
  int dp;
  int mp;
  int gm_k;  // 1: no gradient merge
  oldir::OptimizerKind optimizer;
};

// A fresh folder under the test's temporary directory; the flow's output goes in `out`.
fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("engine_flow_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

EngineOptions MlpOptions(const EngineCase& c) {
  EngineOptions options;
  options.ir = EngineIr::kBoth;
  options.strategy.dp_degree = c.dp;
  options.strategy.mp_degree = c.mp;
  if (c.gm_k > 1) {
    options.strategy.gradient_merge.enable = true;
    options.strategy.gradient_merge.k_steps = c.gm_k;
  }
  options.strategy_file = std::string(c.name) + ".json";
  options.recipe.model = corpus::ZooModel::kMlp;
  options.recipe.mlp.depth = 4;
  options.recipe.mlp.in_features = 4;
  options.recipe.mlp.width = 8;
  options.recipe.mlp.classes = 3;
  options.recipe.optimizer.kind = c.optimizer;
  options.recipe.optimizer.learning_rate = 0.05f;
  options.steps = c.gm_k > 1 ? 2 * c.gm_k : 3;  // gradient merge: two updates
  return options;
}

const EnginePair* FindPair(const EngineResult& result, const std::string& name) {
  for (const EnginePair& pair : result.pairs) {
    if (pair.name == name) return &pair;
  }
  return nullptr;
}

class EngineFlowTest : public ::testing::TestWithParam<EngineCase> {};

TEST_P(EngineFlowTest, EveryPairPasses) {
  const EngineCase& c = GetParam();
  const fs::path scratch = Scratch(c.name);
  EngineOptions options = MlpOptions(c);
  std::vector<std::string> lines;
  options.progress = [&lines](const std::string& line) { lines.push_back(line); };
  EngineFailure failure;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", c.name, &failure);
  ASSERT_TRUE(result.ok()) << result.status().ToString();

  ASSERT_EQ(result->pairs.size(), 3u);
  EXPECT_EQ(result->pairs[0].name, "serial-legacy");
  EXPECT_EQ(result->pairs[1].name, "serial-pir");
  EXPECT_EQ(result->pairs[2].name, "legacy-pir");
  for (const EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kPass)
        << pair.name << ": " << pair.first_failure << "\n"
        << pair.op_differences;
    EXPECT_GT(pair.report.Compared(TensorGroup::kParameter), 0) << pair.name;
    EXPECT_GT(pair.report.Compared(TensorGroup::kFetch), 0) << pair.name;
    // The mlp's serial pairs need no float64 arbitration (newir_parallelize_test.cc).
    EXPECT_EQ(pair.report.Arbitrated(), 0) << pair.name;
  }
  EXPECT_TRUE(result->parity());

  // The three bundles, the translation of the legacy one, and the reports; no scratch left.
  for (const char* dir : {"serial", "legacy", "pir", "legacy_pir"}) {
    EXPECT_TRUE(fs::exists(scratch / "out" / dir / "bundle.json")) << dir;
  }
  for (const char* file : {"report.md", "report.json", "report.xml"}) {
    EXPECT_TRUE(fs::exists(scratch / "out" / file)) << file;
  }
  EXPECT_FALSE(fs::exists(scratch / "out" / ".engine-scratch"));

  // A line per stage, in the Engine's order, and one per rank where the stage loops over ranks.
  const std::vector<std::string> stages = {"build",      "plan", "parallel", "init comm",
                                           "initialize", "run",  "compare"};
  std::vector<size_t> order;
  for (const std::string& line : lines) {
    for (size_t i = 0; i < stages.size(); ++i) {
      if (line.rfind("[engine] " + stages[i] + ":", 0) == 0) order.push_back(i);
    }
  }
  ASSERT_EQ(order.size(), lines.size()) << "a line of no stage";
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "stages out of order";
  EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), stages.size())
      << "a stage without a line";
  const int world = c.dp * c.mp;
  for (int rank = 0; rank < world; ++rank) {
    for (const std::string side : {"legacy", "pir"}) {
      const std::string want = "[engine] parallel: (" + side + ") rank " + std::to_string(rank);
      bool found = false;
      for (const std::string& line : lines) found = found || line.rfind(want, 0) == 0;
      EXPECT_TRUE(found) << want;
    }
  }

  // JUnit: one suite per pair, engine.<stem>.<pair>.
  const std::string junit = RenderEngineJunit(*result);
  for (const char* pair : {"serial-legacy", "serial-pir", "legacy-pir"}) {
    const std::string suite = "<testsuite name=\"engine." + std::string(c.name) + "." + pair + "\"";
    EXPECT_NE(junit.find(suite), std::string::npos) << suite;
    EXPECT_EQ(junit.find(suite), junit.rfind(suite)) << suite;
  }
  EXPECT_EQ(junit.find("<failure"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Mlp, EngineFlowTest,
    ::testing::Values(EngineCase{"mlp_sgd_dp2", 2, 1, 1, oldir::OptimizerKind::kSgd},
                      EngineCase{"mlp_adamw_dp2", 2, 1, 1, oldir::OptimizerKind::kAdamW},
                      EngineCase{"mlp_sgd_tp2", 1, 2, 1, oldir::OptimizerKind::kSgd},
                      EngineCase{"mlp_adamw_tp2", 1, 2, 1, oldir::OptimizerKind::kAdamW},
                      EngineCase{"mlp_sgd_dp2_tp2", 2, 2, 1, oldir::OptimizerKind::kSgd},
                      EngineCase{"mlp_adamw_dp2_tp2", 2, 2, 1, oldir::OptimizerKind::kAdamW},
                      EngineCase{"mlp_sgd_gm2", 1, 1, 2, oldir::OptimizerKind::kSgd},
                      EngineCase{"mlp_adamw_gm2", 1, 1, 2, oldir::OptimizerKind::kAdamW},
                      EngineCase{"mlp_sgd_gm4", 1, 1, 4, oldir::OptimizerKind::kSgd},
                      // Gradient merge with data parallelism: the new IR's buffers accumulate
                      // each replica's gradient and all-reduce once per update, the legacy
                      // pass's the gradients all-reduced every step (reordered tier).
                      EngineCase{"mlp_sgd_dp2_gm2", 2, 1, 2, oldir::OptimizerKind::kSgd},
                      EngineCase{"mlp_adamw_dp2_gm2", 2, 1, 2, oldir::OptimizerKind::kAdamW},
                      EngineCase{"mlp_sgd_tp2_gm2", 1, 2, 2, oldir::OptimizerKind::kSgd}),
    [](const ::testing::TestParamInfo<EngineCase>& info) { return std::string(info.param.name); });

struct FaultCase {
  const char* name;
  const char* fault;  // --test-fault's spelling
  oldir::OptimizerKind optimizer;
};

class EngineFlowFaultTest : public ::testing::TestWithParam<FaultCase> {};

// gradient_merge.h's test-only faults: the merged gradient scaled by 1/(k+1) changes every
// parameter after the first update; without the pd_op.if the optimizer runs every step. Either
// way the legacy-vs-new pair and the serial-vs-new pair fail on a parameter, and the report
// names it.
TEST_P(EngineFlowFaultTest, TheThreeWayCheckCatchesABrokenGradientMerge) {
  const FaultCase& f = GetParam();
  const fs::path scratch = Scratch(f.name);
  EngineOptions options = MlpOptions({f.name, 1, 1, 2, f.optimizer});
  StatusOr<EngineTestFault> fault = ParseEngineTestFault(f.fault);
  ASSERT_TRUE(fault.ok()) << fault.status().ToString();
  options.test_fault = *fault;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", f.name);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->parity());
  // The serial run of the stacked rows catches it too; the legacy road passes.
  const EnginePair* serial_pir = FindPair(*result, "serial-pir");
  ASSERT_NE(serial_pir, nullptr);
  EXPECT_EQ(serial_pir->verdict, EnginePair::Verdict::kFail);
  EXPECT_EQ(FindPair(*result, "serial-legacy")->verdict, EnginePair::Verdict::kPass);
  const EnginePair* pair = FindPair(*result, "legacy-pir");
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->verdict, EnginePair::Verdict::kFail);
  EXPECT_GT(pair->report.Mismatched(TensorGroup::kParameter), 0);
  // The report names the tensors: the first failure (the loss, a step after the first update
  // went wrong, or a parameter) and a parameter of the mlp (linear_<i>.w_0 / .b_0) among the
  // mismatches. (AdamW's update is nearly invariant to the gradient's scale: there a parameter goes
  // first.)
  EXPECT_TRUE(pair->first_failure.rfind("fetches mean_0", 0) == 0 ||
              pair->first_failure.rfind("parameters linear_", 0) == 0)
      << pair->first_failure;
  bool parameter_named = false;
  for (const ComparedTensor& t : pair->report.tensors) {
    parameter_named = parameter_named || (t.group == TensorGroup::kParameter && t.compared &&
                                          !t.comparison.pass && t.name.rfind("linear_", 0) == 0);
  }
  EXPECT_TRUE(parameter_named);
  if (std::string(f.fault) == "gm:drop-if") {
    // The legacy pass's cond block, translated, is a pd_op.if the broken pass lacks.
    EXPECT_FALSE(pair->same_op_order);
    EXPECT_NE(pair->op_differences.find("only in A"), std::string::npos) << pair->op_differences;
    EXPECT_NE(pair->op_differences.find("pd_op.if"), std::string::npos) << pair->op_differences;
  }
  const std::string markdown = RenderEngineMarkdown(*result);
  EXPECT_NE(markdown.find("| legacy-pir | FAIL |"), std::string::npos) << markdown;
  EXPECT_NE(RenderEngineJunit(*result).find("<failure"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, EngineFlowFaultTest,
    ::testing::Values(FaultCase{"sgd_scale", "gm:scale-by-k-plus-1", oldir::OptimizerKind::kSgd},
                      FaultCase{"sgd_drop_if", "gm:drop-if", oldir::OptimizerKind::kSgd},
                      FaultCase{"adamw_scale", "gm:scale-by-k-plus-1",
                                oldir::OptimizerKind::kAdamW},
                      FaultCase{"adamw_drop_if", "gm:drop-if", oldir::OptimizerKind::kAdamW}),
    [](const ::testing::TestParamInfo<FaultCase>& info) { return std::string(info.param.name); });

// Pipelines on the new IR's road: a pure pipeline's stages as process meshes of the new IR's
// passes, a hybrid's the legacy partition's stage programs translated; both split by the new
// IR's pipeline pass (PIR job programs and job lists), run against the serial program and against
// the legacy road's bundle translated.
struct PipelineCase {
  const char* name;
  int dp;
  int mp;
  int pp;
  const char* mode;
  int vpp;
};

EngineOptions PipelineOptions(const PipelineCase& c) {
  EngineOptions options = MlpOptions({c.name, c.dp, c.mp, 1, oldir::OptimizerKind::kSgd});
  options.strategy.pp_degree = c.pp;
  options.strategy.pipeline.enable = true;
  options.strategy.pipeline.schedule_mode = c.mode;
  options.strategy.pipeline.accumulate_steps = 4;
  options.strategy.pipeline.vpp_degree = c.vpp;
  options.recipe.mlp.depth = 8;  // 8 linears: 2 per chunk of pp4 or pp2 x vpp2
  options.batch_size = 8;        // 4 micro-batches of 2 rows
  options.steps = 2;
  return options;
}

class EnginePipelineTest : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(EnginePipelineTest, TheNewIrRoadSplitsTheStagesAndEveryPairPasses) {
  const PipelineCase& c = GetParam();
  const fs::path scratch = Scratch(c.name);
  EngineOptions options = PipelineOptions(c);
  std::vector<std::string> lines;
  options.progress = [&lines](const std::string& line) { lines.push_back(line); };
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", c.name);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 3u);
  for (const EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kPass)
        << pair.name << ": " << pair.first_failure << "\n"
        << pair.op_differences;
    EXPECT_GT(pair.report.Compared(TensorGroup::kParameter), 0) << pair.name;
    EXPECT_GT(pair.report.Compared(TensorGroup::kFetch), 0) << pair.name;
  }
  // Every rank of the new IR's bundle runs a plan of the PIR split's job programs.
  StatusOr<oldir::Bundle> pir = oldir::ReadBundle(scratch / "out/pir");
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  ASSERT_EQ(pir->world_size, c.dp * c.mp * c.pp);
  const std::string mode = c.mode;
  for (const oldir::BundleRank& rank : pir->ranks) {
    ASSERT_TRUE(rank.plan.has_value()) << rank.rank;
    EXPECT_EQ(rank.plan->back().type, "optimizer");
    // PIR 1F1B and VPP jobs (pipeline_1f1b.py / pipeline_vpp.py `_partial_pir_programs`).
    const bool recv_send = mode == "1F1B" || mode == "VPP";
    EXPECT_EQ(rank.programs.count(c.vpp > 1 ? "recv_forward0" : "recv_forward") == 1, recv_send)
        << rank.rank;
  }
  const std::string parallel = "[engine] parallel: (pir) rank 0: stage 0";
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.rfind(parallel, 0) == 0; }),
            lines.end());
  // The road: every pipeline, hybrids included, on stage meshes of the new IR's passes, whose
  // cross-mesh reshards are Paddle's send_v2/recv_v2 (same_status_reshard_func.py), not the
  // legacy partition's translated p_send/p_recv.
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) {
                           return l.rfind("[engine] plan: (pir)", 0) == 0 &&
                                  l.find("stage meshes") != std::string::npos;
                         }),
            lines.end());
  const std::string forward = c.vpp > 1 ? "forward0.json" : "forward.json";
  StatusOr<std::string> stage0 = ReadFile((scratch / "out/pir/rank0" / forward).string());
  ASSERT_TRUE(stage0.ok()) << stage0.status().ToString();
  // PIR JSON names an op by its dialect's id: "1.send_v2" is pd_op.send_v2.
  EXPECT_NE(stage0->find(".send_v2\""), std::string::npos);
  EXPECT_EQ(stage0->find(".p_send\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Mlp, EnginePipelineTest,
                         ::testing::Values(PipelineCase{"pp2_fthenb", 1, 1, 2, "FThenB", 1},
                                           PipelineCase{"pp4_fthenb", 1, 1, 4, "FThenB", 1},
                                           PipelineCase{"pp4_vpp2", 1, 1, 4, "VPP", 2},
                                           PipelineCase{"pp4_zbh1", 1, 1, 4, "ZBH1", 1},
                                           PipelineCase{"pp2_1f1b", 1, 1, 2, "1F1B", 1},
                                           PipelineCase{"pp4_1f1b", 1, 1, 4, "1F1B", 1},
                                           PipelineCase{"pp2_eager1f1b", 1, 1, 2, "Eager1F1B", 1},
                                           PipelineCase{"pp2_vpp2", 1, 1, 2, "VPP", 2},
                                           PipelineCase{"pp2_zbh1", 1, 1, 2, "ZBH1", 1},
                                           PipelineCase{"dp2_pp2_1f1b", 2, 1, 2, "1F1B", 1},
                                           PipelineCase{"dp2_tp2_pp2_1f1b", 2, 2, 2, "1F1B", 1}),
                         [](const ::testing::TestParamInfo<PipelineCase>& info) {
                           return std::string(info.param.name);
                         });

// The test-only fault "send to the wrong peer": stage 0's first forward send names the sending
// rank itself. The engine's communication check finds it before anything runs; both new-IR pairs
// fail and the report names the op.
TEST(EngineFlowFaultTest, ASendToTheWrongPeerIsCaughtAndTheReportNamesTheOp) {
  const fs::path scratch = Scratch("pp2_wrong_peer");
  EngineOptions options = PipelineOptions({"pp2_wrong_peer", 1, 1, 2, "1F1B", 1});
  StatusOr<EngineTestFault> fault = ParseEngineTestFault("pp:wrong-peer");
  ASSERT_TRUE(fault.ok()) << fault.status().ToString();
  options.test_fault = *fault;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "wrong_peer");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->parity());
  ASSERT_EQ(result->pairs.size(), 3u);
  EXPECT_EQ(result->pairs[0].verdict, EnginePair::Verdict::kPass);
  for (size_t i : {1u, 2u}) {
    const EnginePair& pair = result->pairs[i];
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kFail) << pair.name;
    // The pure pipeline's road: the lowered cross-mesh reshard's send (pipeline_meshes.h).
    EXPECT_NE(pair.first_failure.find("pd_op.send_v2"), std::string::npos) << pair.first_failure;
  }
  const std::string markdown = RenderEngineMarkdown(*result);
  EXPECT_NE(markdown.find("| legacy-pir | FAIL |"), std::string::npos) << markdown;
  EXPECT_NE(RenderEngineJunit(*result).find("<failure"), std::string::npos);
}

TEST(EngineFlowRefusalTest, APipelineOnTheLegacyRoadRunsAgainstTheSerialProgram) {
  const fs::path scratch = Scratch("pp2_legacy");
  EngineOptions options = MlpOptions({"pp2", 1, 1, 1, oldir::OptimizerKind::kSgd});
  options.ir = EngineIr::kLegacy;
  options.strategy.pp_degree = 2;
  options.strategy.pipeline.enable = true;
  options.strategy.pipeline.schedule_mode = "FThenB";
  options.strategy.pipeline.accumulate_steps = 2;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "pp2");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 1u);
  EXPECT_EQ(result->pairs[0].name, "serial-legacy");
  EXPECT_EQ(result->pairs[0].verdict, EnginePair::Verdict::kPass) << result->pairs[0].first_failure;
  EXPECT_TRUE(fs::exists(scratch / "out/legacy/bundle.json"));
  EXPECT_TRUE(fs::exists(scratch / "out/serial/bundle.json"));
  EXPECT_FALSE(fs::exists(scratch / "out/pir"));
}

TEST(EngineFlowRefusalTest, AStrategyTheModelDoesNotSplitIsAnInputErrorAndWritesNothing) {
  const fs::path scratch = Scratch("tp3");
  // Width 8 does not split over 3 model-parallel ranks.
  EngineOptions options = MlpOptions({"tp3", 1, 3, 1, oldir::OptimizerKind::kSgd});
  EngineFailure failure;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "tp3", &failure);
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(failure.input_error()) << EngineStageName(failure.stage);
  EXPECT_FALSE(fs::exists(scratch / "out"));
}

TEST(EngineFlowTest, ASerialBundleIsAStartingPointAsAZooModelIs) {
  const fs::path scratch = Scratch("from_bundle");
  corpus::ModelRecipe recipe;
  recipe.model = corpus::ZooModel::kMlp;
  recipe.steps = 3;
  StatusOr<corpus::ModelBundle> made = corpus::MakeModelBundle(recipe);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(corpus::WriteModelBundle(*made, scratch / "serial").ok());
  EngineOptions options;
  options.strategy.dp_degree = 2;
  options.strategy.mp_degree = 2;
  options.strategy_file = "dp2_tp2.json";
  options.serial_bundle = scratch / "serial";
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "bundle");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 3u);
  for (const EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kPass) << pair.name << ": " << pair.first_failure;
  }
  EXPECT_EQ(result->steps, 3);

  // Not a serial bundle: its legacy distributed output.
  StatusOr<EngineResult> again = RunEngineFlow(
      [&] {
        EngineOptions o = options;
        o.serial_bundle = scratch / "out/legacy";
        return o;
      }(),
      scratch / "out2", "bundle");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().ToString().find("not a serial legacy bundle"), std::string::npos)
      << again.status().ToString();
  EXPECT_FALSE(fs::exists(scratch / "out2"));
}

TEST(EngineTestFaultTest, OnlyTheDocumentedSpellings) {
  EXPECT_TRUE(ParseEngineTestFault("gm:drop-if").ok());
  EXPECT_EQ(ParseEngineTestFault("gm:scale-by-k-plus-1")->gradient_merge,
            newir::GradientMergeFault::kScaleByKPlusOne);
  EXPECT_TRUE(ParseEngineTestFault("pp:wrong-peer")->pipeline_wrong_peer);
  for (const char* bad : {"", "gm:", "drop-if", "gm:nope", "pp:drop-if", "pp:"}) {
    StatusOr<EngineTestFault> fault = ParseEngineTestFault(bad);
    ASSERT_FALSE(fault.ok()) << bad;
    EXPECT_NE(fault.status().ToString().find("--test-fault"), std::string::npos);
  }
}

}  // namespace
}  // namespace irm::diff
