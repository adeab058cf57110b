// The Engine flow over the legacy passes' strategy matrix (issue 22's acceptance): every cpu case
// file of the parity suite that is not an engine case itself (diff_tests/cases: mlp and gpt, SGD
// and AdamW; DP2, DP4, bucketed DP, TP2, TP4, pp2/pp4 under FThenB, 1F1B, Eager1F1B, VPP and
// ZBH1, gradient merge k=2 and k=4, dp2 x tp2, dp2 x pp2, dp2 x tp2 x pp2 on 8 ranks) runs through
// RunEngineFlow with --ir both, as Paddle's Engine would prepare it
// (python/paddle/distributed/auto_parallel/static/engine.py `_prepare_program`):
//   - serial vs legacy and serial vs new pass in the noise-floor tier of the matrix (the reordered
//     tier, a miss arbitrated by the serial program's float64 shadow);
//   - legacy vs new is exact where every rank's programs have the same ops in the same order, and
//     otherwise the report names the first op that differs and the reordered tier holds.
// Gradient merge runs whole updates (2·k executor steps) so that the serial pairs compare them.
// Each case prints its legacy-vs-new finding (exact, or the first differing op).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "diff_tests/engine_flow.h"
#include "diff_tests/suite_case.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

// The matrix: the cpu cases that are not engine cases (those run through the suite).
const std::vector<SuiteCase>& Cases() {
  static const std::vector<SuiteCase>* cases = [] {
    auto* out = new std::vector<SuiteCase>();
    StatusOr<std::vector<SuiteCase>> read = ReadSuiteCases(IRM_SUITE_CASES);
    if (!read.ok()) {
      ADD_FAILURE() << read.status().ToString();
      return out;
    }
    for (SuiteCase& c : *read) {
      if (c.device == "cpu" && !c.IsEngine() && c.recipe.strategy) out->push_back(std::move(c));
    }
    return out;
  }();
  return *cases;
}

class EngineMatrixTest : public ::testing::TestWithParam<int> {};

TEST_P(EngineMatrixTest, SerialLegacyAndNewAgree) {
  const SuiteCase& c = Cases().at(static_cast<size_t>(GetParam()));
  EngineOptions options;
  options.ir = EngineIr::kBoth;
  options.strategy = *c.recipe.strategy;
  options.strategy_file = c.file;
  options.recipe = c.recipe;
  options.batch_size = c.recipe.batch_size;
  options.steps = c.recipe.steps;
  const auto& gm = options.strategy.gradient_merge;
  if (gm.enable && gm.k_steps > 1) options.steps = 2 * gm.k_steps;
  const fs::path out = fs::path(::testing::TempDir()) / ("engine_matrix_" + c.name);
  fs::remove_all(out);
  StatusOr<EngineResult> result = RunEngineFlow(options, out.string(), c.name);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 3u);
  for (const EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kPass)
        << pair.name << ": " << pair.first_failure << "\n"
        << pair.op_differences;
    EXPECT_GT(pair.report.Compared(TensorGroup::kParameter), 0) << pair.name;
    EXPECT_GT(pair.report.Compared(TensorGroup::kFetch), 0) << pair.name;
  }
  const EnginePair& three_way = result->pairs[2];
  ASSERT_EQ(three_way.name, "legacy-pir");
  if (three_way.same_op_order) {
    EXPECT_EQ(three_way.report.tier, Tier::kExact);
    std::cout << c.name << ": legacy-pir exact (same op order)\n";
  } else {
    EXPECT_EQ(three_way.report.tier, Tier::kReordered);
    EXPECT_FALSE(three_way.first_op_difference.empty());
    std::cout << c.name << ": legacy-pir reordered, first op difference "
              << three_way.first_op_difference << "\n";
  }
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Cases, EngineMatrixTest,
                         ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return Cases().at(static_cast<size_t>(info.param)).name;
                         });

}  // namespace
}  // namespace irm::diff
