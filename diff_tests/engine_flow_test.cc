// The Engine flow (engine_flow.h) on the zoo mlp, as Paddle's Engine runs a strategy
// (python/paddle/distributed/auto_parallel/static/engine.py, _prepare_program: build, plan,
// parallel, init comm, initialize): DP2, TP2, DP2xTP2 and GM k=2, SGD and AdamW, by both roads —
// every pair passes (serial vs legacy and serial vs new in the noise-floor tier of the parity
// matrix, legacy vs new exact or reordered by op order; gradient merge's serial pairs skipped, as
// the matrix's gm cases compare translation only). The new-IR gradient merge broken on purpose
// (its test-only faults: scaling by 1/(k+1), the pd_op.if dropped) fails the legacy-vs-new pair
// and the report names the tensor and the op. Refusals are located and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "diff_tests/corpus/model_bundle.h"
#include "diff_tests/engine_flow.h"

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
    const bool serial_pair = pair.name != "legacy-pir";
    if (c.gm_k > 1 && serial_pair) {
      EXPECT_EQ(pair.verdict, EnginePair::Verdict::kSkipped) << pair.name;
      continue;
    }
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
                      EngineCase{"mlp_adamw_gm2", 1, 1, 2, oldir::OptimizerKind::kAdamW}),
    [](const ::testing::TestParamInfo<EngineCase>& info) { return std::string(info.param.name); });

struct FaultCase {
  const char* name;
  const char* fault;  // --test-fault's spelling
  oldir::OptimizerKind optimizer;
};

class EngineFlowFaultTest : public ::testing::TestWithParam<FaultCase> {};

// gradient_merge.h's test-only faults: the merged gradient scaled by 1/(k+1) changes every
// parameter after the first update; without the pd_op.if the optimizer runs every step. Either
// way the legacy-vs-new pair fails on a parameter, and the report names it.
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

TEST(EngineFlowRefusalTest, APipelineOnTheNewIrRoadIsRefusedAndNothingIsWritten) {
  const fs::path scratch = Scratch("pp2_pir");
  EngineOptions options = MlpOptions({"pp2", 1, 1, 1, oldir::OptimizerKind::kSgd});
  options.strategy.pp_degree = 2;
  options.strategy.pipeline.enable = true;
  options.strategy.pipeline.accumulate_steps = 2;
  for (EngineIr ir : {EngineIr::kPir, EngineIr::kBoth}) {
    options.ir = ir;
    EngineFailure failure;
    StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "pp2", &failure);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
    EXPECT_TRUE(failure.input_error());
    const std::string text = result.status().ToString();
    EXPECT_NE(text.find("pp2.json"), std::string::npos) << text;
    EXPECT_NE(text.find("pipeline stages are not made by the new IR's passes yet"),
              std::string::npos)
        << text;
    EXPECT_FALSE(fs::exists(scratch / "out"));
  }
}

// Data parallelism puts the all-reduce between the gradients and the optimizer; the new IR's
// gradient merge does not take those programs yet: a located refusal, nothing written.
TEST(EngineFlowRefusalTest, GradientMergeWithDataParallelismIsRefusedOnTheNewIrRoad) {
  const fs::path scratch = Scratch("dp2_gm2");
  EngineOptions options = MlpOptions({"dp2_gm2", 2, 1, 2, oldir::OptimizerKind::kSgd});
  EngineFailure failure;
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "dp2_gm2", &failure);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(failure.input_error());
  EXPECT_NE(result.status().ToString().find("dp2_gm2.json"), std::string::npos)
      << result.status().ToString();
  EXPECT_FALSE(fs::exists(scratch / "out"));
  // The legacy road runs it (the serial pair skipped: gradient merge).
  options.ir = EngineIr::kLegacy;
  StatusOr<EngineResult> legacy = RunEngineFlow(options, scratch / "legacy", "dp2_gm2");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  ASSERT_EQ(legacy->pairs.size(), 1u);
  EXPECT_EQ(legacy->pairs[0].verdict, EnginePair::Verdict::kSkipped);
  EXPECT_TRUE(fs::exists(scratch / "legacy/legacy/bundle.json"));
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
  for (const char* bad : {"", "gm:", "drop-if", "gm:nope", "pp:drop-if"}) {
    StatusOr<EngineTestFault> fault = ParseEngineTestFault(bad);
    ASSERT_FALSE(fault.ok()) << bad;
    EXPECT_NE(fault.status().ToString().find("--test-fault"), std::string::npos);
  }
}

}  // namespace
}  // namespace irm::diff
