// Every model-zoo program — mlp and gpt, every optimizer, with and without gradient clipping — run
// as legacy and as translated on the fly, is bit-identical over 3 steps: the losses, every
// parameter and accumulator after the startup and after each step, and every aligned
// intermediate.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "diff_tests/parity_run.h"
#include "diff_tests/parity_test_support.h"
#include "oldir/optimizer.h"

namespace irm::diff {
namespace {

TEST(ModelZooParityTest, EveryProgramIsBitIdenticalToItsTranslation) {
  const std::vector<testing::ZooCase> cases = testing::EveryZooCase();
  ASSERT_EQ(cases.size(), 2 * oldir::EveryOptimizerConfiguration().size());
  int clipped = 0;
  for (const testing::ZooCase& c : cases) clipped += c.name.ends_with("+clip") ? 1 : 0;
  EXPECT_GT(clipped, 0);
  EXPECT_LT(clipped, static_cast<int>(cases.size()));
  for (const testing::ZooCase& c : cases) {
    SCOPED_TRACE(c.name);
    ParityPrograms programs{.legacy_main = &c.main,
                            .legacy_startup = &c.startup,
                            .new_main = nullptr,
                            .new_startup = nullptr,
                            .legacy_file = c.name,
                            .new_file = ""};
    ParityOptions options;
    options.steps = 3;
    options.seed = 11;
    StatusOr<ParityResult> result = RunParity(programs, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
    EXPECT_FALSE(report.first_divergence.has_value());
    // The loss of each step, every persistable var after the startup and after each of the 3
    // steps, and the intermediates: all compared, none left out by the tier.
    EXPECT_EQ(report.Compared(TensorGroup::kFetch), 3);
    EXPECT_GT(report.Compared(TensorGroup::kParameter), 0);
    EXPECT_EQ(report.Compared(TensorGroup::kParameter) % 4, 0);
    EXPECT_EQ(report.NotCompared(), 0);
    // Nearly every legacy write has its twin (only what the translator legitimately folds away
    // is missing).
    const int intermediates = report.Compared(TensorGroup::kIntermediate);
    EXPECT_GT(intermediates, 0);
    EXPECT_LE(report.old_only.size() * 10, static_cast<size_t>(intermediates))
        << fmt::format("{} legacy writes without a twin", report.old_only.size());
  }
}

}  // namespace
}  // namespace irm::diff
