// The corpus bundles on the thread world: each runs as written (legacy) and translated (new IR)
// with the same fetches and the same persistable vars, bit for bit, on every rank, and the same
// communication on every rank; data parallelism over 2 ranks matches the serial run of the
// global batch within the reordered tier; a bundle whose ranks both send first is reported as a
// hang, naming both pending sends, within seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/corpus/corpus.h"
#include "diff_tests/tensor_compare.h"
#include "reference_runtime/multi_rank_run.h"
#include "translator/bundle_translate.h"

namespace irm::corpus {
namespace {

using rt::MultiRankConfig;
using rt::MultiRankResult;
using rt::Tensor;

::testing::AssertionResult SameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return ::testing::AssertionFailure() << "dtype or shape differs";
  }
  if (a.nbytes() > 0 && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "bits differ";
  }
  return ::testing::AssertionSuccess();
}

StatusOr<MultiRankResult> RunAll(const std::string& dir, int64_t batch_size = 4) {
  MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = batch_size;
  config.world.trace = true;
  return rt::RunBundleRanks(dir, config);
}

std::vector<float> Floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.raw(), t.nbytes());
  return v;
}

class CorpusBundleTest : public ::testing::TestWithParam<int> {};

TEST_P(CorpusBundleTest, TranslationComputesTheSameBitsOnEveryRank) {
  StatusOr<std::vector<BundleCase>> cases = StandardCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  const BundleCase& c = cases->at(static_cast<size_t>(GetParam()));
  SCOPED_TRACE(c.name);
  ScratchDir dir(c.name);
  ASSERT_TRUE(WriteBundleCase(c, dir / "legacy").ok());
  StatusOr<translator::BundleTranslation> translated =
      translator::TranslateBundle(dir / "legacy", dir / "pir");
  ASSERT_TRUE(translated.ok()) << translated.status().ToString();

  StatusOr<MultiRankResult> old_run = RunAll(dir / "legacy");
  ASSERT_TRUE(old_run.ok()) << old_run.status().ToString();
  StatusOr<MultiRankResult> new_run = RunAll(dir / "pir");
  ASSERT_TRUE(new_run.ok()) << new_run.status().ToString();

  int losses = 0;
  for (size_t r = 0; r < c.ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const rt::RankOutcome& a = old_run->ranks[r];
    const rt::RankOutcome& b = new_run->ranks[r];
    ASSERT_EQ(a.steps.size(), static_cast<size_t>(c.bundle.steps));
    ASSERT_EQ(b.steps.size(), a.steps.size());
    for (size_t s = 0; s < a.steps.size(); ++s) {
      ASSERT_EQ(a.steps[s].merged.size(), b.steps[s].merged.size());
      for (size_t f = 0; f < a.steps[s].merged.size(); ++f) {
        EXPECT_EQ(a.steps[s].merged[f].name, b.steps[s].merged[f].name);
        EXPECT_TRUE(SameBits(a.steps[s].merged[f].tensor, b.steps[s].merged[f].tensor))
            << "step " << s + 1 << ", fetch " << a.steps[s].merged[f].name;
      }
    }
    // Training happened: the rank fetching the loss sees it change from the first step to the last.
    if (!a.steps.front().merged.empty()) {
      ++losses;
      EXPECT_NE(Floats(a.steps.front().merged[0].tensor), Floats(a.steps.back().merged[0].tensor));
    }
    const std::vector<std::string> persistables = a.scope->LocalNames();
    EXPECT_FALSE(persistables.empty());
    for (const std::string& name : persistables) {
      const Tensor* old_value = a.scope->FindLocal(name);
      const Tensor* new_value = b.scope->FindLocal(name);
      ASSERT_NE(new_value, nullptr) << name << " is missing after the new-IR run";
      if (!old_value->defined()) continue;
      EXPECT_TRUE(SameBits(*old_value, *new_value)) << name;
    }
    const rt::CommTrace* old_trace = old_run->world->trace(static_cast<int>(r));
    const rt::CommTrace* new_trace = new_run->world->trace(static_cast<int>(r));
    ASSERT_NE(old_trace, nullptr);
    EXPECT_FALSE(old_trace->records().empty());
    EXPECT_EQ(rt::FirstCommDifference(*old_trace, *new_trace), std::nullopt);
  }
  EXPECT_GE(losses, 1);
}

INSTANTIATE_TEST_SUITE_P(StandardCases, CorpusBundleTest,
                         ::testing::Range(0, static_cast<int>((*StandardCases()).size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return (*StandardCases()).at(static_cast<size_t>(info.param)).name;
                         });

// The reordered tier (docs/parity.md, "Tiers"), as the parity engine applies it.
::testing::AssertionResult WithinReorderedTier(const Tensor& a, const Tensor& b) {
  const diff::Comparison c = diff::CompareTensors(a, b, diff::Tier::kReordered);
  if (c.pass) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.reason;
}

TEST(DataParallelTest, TwoRanksMatchTheSerialRunOfTheGlobalBatchWithinTheReorderedTier) {
  StatusOr<BundleCase> dp = DataParallelMlp(2);
  StatusOr<BundleCase> serial = SerialMlp(8);
  ASSERT_TRUE(dp.ok() && serial.ok());
  ScratchDir dir("dp_vs_serial");
  ASSERT_TRUE(WriteBundleCase(*dp, dir / "dp").ok());
  ASSERT_TRUE(WriteBundleCase(*serial, dir / "serial").ok());
  StatusOr<MultiRankResult> dp_run = RunAll(dir / "dp", 4);
  ASSERT_TRUE(dp_run.ok()) << dp_run.status().ToString();
  StatusOr<MultiRankResult> serial_run = RunAll(dir / "serial", 8);
  ASSERT_TRUE(serial_run.ok()) << serial_run.status().ToString();

  rt::Scope& rank0 = *dp_run->ranks[0].scope;
  rt::Scope& rank1 = *dp_run->ranks[1].scope;
  rt::Scope& one = *serial_run->ranks[0].scope;
  int compared = 0;
  for (const std::string& name : one.LocalNames()) {
    const Tensor* s = one.FindLocal(name);
    if (name.find(".w_") == std::string::npos && name.find(".b_") == std::string::npos) continue;
    SCOPED_TRACE(name);
    // The replicas stay identical, and agree with the serial run up to summation order.
    EXPECT_TRUE(SameBits(*rank0.FindLocal(name), *rank1.FindLocal(name)));
    EXPECT_TRUE(WithinReorderedTier(*rank0.FindLocal(name), *s));
    ++compared;
  }
  EXPECT_EQ(compared, 6);
  // The serial loss is the mean of the replicas' losses.
  for (size_t step = 0; step < serial_run->ranks[0].steps.size(); ++step) {
    const float l0 = Floats(dp_run->ranks[0].steps[step].merged[0].tensor)[0];
    const float l1 = Floats(dp_run->ranks[1].steps[step].merged[0].tensor)[0];
    const float ls = Floats(serial_run->ranks[0].steps[step].merged[0].tensor)[0];
    EXPECT_NE(l0, l1);  // the replicas read different rows
    EXPECT_NEAR((double(l0) + l1) / 2, ls, 1e-5 * std::fabs(ls));
  }
}

TEST(HangTest, TwoRanksThatBothSendFirstAreReportedWithBothPendingSends) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<MultiRankResult> run = RunAll(std::string(IRM_PARITY_TESTDATA) + "/hang_both_send");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInternal);
  const std::string message = run.status().ToString();
  EXPECT_NE(message.find("hang: no rank can progress"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 waits in send_v2 to rank 1"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1 waits in send_v2 to rank 0"), std::string::npos) << message;
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace irm::corpus
