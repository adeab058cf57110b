// The corpus bundles on the Gloo backend (every rank a thread, TCP on loopback) against the thread
// backend: on 2-rank bundles every fetch, every persistable var and every rank's communication
// trace are bit-identical (a two-term sum does not depend on its order); on the 4-rank
// data-parallel bundle the float32 results agree within the reordered tier (Gloo's ring sums in
// another order) and the traces are identical. A bundle whose ranks both send first is reported
// by the hang watch, with both ranks' pending sends, long before the default timeout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/tensor_compare.h"
#include "reference_runtime/comm/gloo_world.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::corpus {
namespace {

namespace fs = std::filesystem;
using rt::MultiRankConfig;
using rt::MultiRankResult;
using rt::Tensor;

StatusOr<MultiRankResult> RunBundle(const std::string& dir, bool gloo,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = 4;
  config.world.trace = true;
  if (gloo) {
    rt::GlooWorldOptions options;
    options.timeout = timeout;
    options.trace = true;
    config.make_world = rt::GlooWorld::ThreadsFactory(options);
  }
  return rt::RunBundleRanks(dir, config);
}

// Bit for bit when `exact`, else within the reordered tier (docs/parity.md, "Tiers"), as the parity
// engine applies it.
::testing::AssertionResult Agree(const Tensor& a, const Tensor& b, bool exact) {
  const diff::Comparison c =
      diff::CompareTensors(a, b, exact ? diff::Tier::kExact : diff::Tier::kReordered);
  if (c.pass) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.reason;
}

class GlooCorpusTest : public ::testing::TestWithParam<int> {};

TEST_P(GlooCorpusTest, GlooRunsAsTheThreadBackendDoes) {
  StatusOr<std::vector<BundleCase>> cases = StandardCases();
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  const BundleCase& c = cases->at(static_cast<size_t>(GetParam()));
  SCOPED_TRACE(c.name);
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("irm_gloo_corpus_" + std::to_string(::getpid()) + "_" + c.name);
  fs::remove_all(dir);
  ASSERT_TRUE(WriteBundleCase(c, dir.string()).ok());
  StatusOr<MultiRankResult> threads = RunBundle(dir.string(), /*gloo=*/false);
  ASSERT_TRUE(threads.ok()) << threads.status().ToString();
  StatusOr<MultiRankResult> gloo = RunBundle(dir.string(), /*gloo=*/true);
  fs::remove_all(dir);
  ASSERT_TRUE(gloo.ok()) << gloo.status().ToString();

  const bool exact = c.ranks.size() == 2;
  for (size_t r = 0; r < c.ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const rt::RankOutcome& a = threads->ranks[r];
    const rt::RankOutcome& b = gloo->ranks[r];
    ASSERT_EQ(b.steps.size(), a.steps.size());
    for (size_t s = 0; s < a.steps.size(); ++s) {
      ASSERT_EQ(b.steps[s].merged.size(), a.steps[s].merged.size());
      for (size_t f = 0; f < a.steps[s].merged.size(); ++f) {
        EXPECT_TRUE(Agree(b.steps[s].merged[f].tensor, a.steps[s].merged[f].tensor, exact))
            << "step " << s + 1 << ", fetch " << a.steps[s].merged[f].name;
      }
    }
    const std::vector<std::string> names = a.scope->LocalNames();
    EXPECT_FALSE(names.empty());
    for (const std::string& name : names) {
      const Tensor* want = a.scope->FindLocal(name);
      const Tensor* got = b.scope->FindLocal(name);
      ASSERT_NE(got, nullptr) << name;
      if (want->defined()) {
        EXPECT_TRUE(Agree(*got, *want, exact)) << name;
      }
    }
    ASSERT_NE(gloo->world->trace(static_cast<int>(r)), nullptr);
    EXPECT_FALSE(gloo->world->trace(static_cast<int>(r))->records().empty());
    EXPECT_EQ(rt::FirstCommDifference(*threads->world->trace(static_cast<int>(r)),
                                      *gloo->world->trace(static_cast<int>(r))),
              std::nullopt);
  }
}

INSTANTIATE_TEST_SUITE_P(StandardCases, GlooCorpusTest,
                         ::testing::Range(0, static_cast<int>((*StandardCases()).size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return (*StandardCases()).at(static_cast<size_t>(info.param)).name;
                         });

TEST(GlooHangTest, TwoRanksThatBothSendFirstAreReported) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<MultiRankResult> run = RunBundle(std::string(IRM_PARITY_TESTDATA) + "/hang_both_send",
                                            /*gloo=*/true);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kInternal);
  // The thread backend's words for the same hang (tools/testdata/run_ranks.test).
  EXPECT_EQ(run.status().message(),
            "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, job main, "
            "micro-batch 0, step 1, op 1); rank 1 waits in send_v2 to rank 0 (ring 0, job main, "
            "micro-batch 0, step 1, op 1)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace irm::corpus
