// A 2-rank legacy bundle whose startup programs each initialise one half of two parameters — w
// [4, 6] split by columns (a column-parallel weight) and b [6] split in halves — with rank<N>/
// shards.json saying where each half lies, run on the thread backend (multi_rank_run.h): each
// rank's halves equal, bit for bit, the halves of the serial startup program's draw. The
// translated (pir) bundle keeps the same shards.json and its ranks hold the same bits.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/scratch_dir_test_support.h"
#include "oldir/builder.h"
#include "oldir/bundle.h"
#include "oldir/initializer.h"
#include "reference_runtime/kernels/shard_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/multi_rank_run.h"
#include "translator/bundle_translate.h"

namespace irm::translator {
namespace {

constexpr int64_t kSeed = 31;

// The startup program initialising w (uniform) and b (gaussian) of the given shapes, seeds from
// the program (the bundle's seed at run time).
oldir::Program Startup(const std::vector<int64_t>& w, const std::vector<int64_t>& b) {
  oldir::ProgramBuilder startup;
  oldir::AppendInitializer(startup, "w", oldir::proto::VarType::FP32, w,
                           oldir::Initializer::Uniform(-0.5f, 0.5f));
  oldir::AppendInitializer(startup, "b", oldir::proto::VarType::FP32, b,
                           oldir::Initializer::Normal(0.0f, 0.02f));
  return startup.Build();
}

// main reads the local w: y = 2 w.
oldir::Program Main(const std::vector<int64_t>& w) {
  oldir::ProgramBuilder main;
  oldir::BlockBuilder& block = main.root();
  block.CreateVar("w", oldir::proto::VarType::FP32, w, {.persistable = true});
  block.CreateVar("y", oldir::proto::VarType::FP32, w);
  block.AppendOp("scale", {{"X", {"w"}}}, {{"Out", {"y"}}},
                 {{"scale", 2.0f}, {"bias", 0.0f}, {"bias_after_scale", true}});
  return main.Build();
}

// Column half r of w [4, 6] and half r of b [6].
std::map<std::string, oldir::ShardSlice> HalfShards(int r) {
  return {{"w", {{4, 6}, {0, 3 * r}}}, {"b", {{6}, {3 * r}}}};
}

void WriteHalvesBundle(const std::string& dir) {
  oldir::Bundle bundle;
  bundle.world_size = 2;
  bundle.process_groups = {{0, {0, 1}}};
  bundle.seed = kSeed;
  for (int r = 0; r < 2; ++r) {
    StatusOr<oldir::BundleRank> rank =
        oldir::WriteLegacyRankPrograms(dir, r, Startup({4, 3}, {3}), {{"main", Main({4, 3})}});
    ASSERT_TRUE(rank.ok()) << rank.status().ToString();
    rank->shards = HalfShards(r);
    bundle.ranks.push_back(*rank);
  }
  ASSERT_TRUE(oldir::WriteBundle(bundle, dir).ok());
}

// The serial startup program's w and b, run alone with the bundle's seed.
std::map<std::string, rt::Tensor> SerialInit() {
  rt::ExecutorOptions options;
  options.seed = kSeed;
  const oldir::Program startup = Startup({4, 6}, {6});
  rt::LegacyExecutor executor(startup, options);
  rt::Scope scope;
  const StatusOr<std::vector<rt::Fetch>> run = executor.Run(scope, {});
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  std::map<std::string, rt::Tensor> out;
  for (const char* name : {"w", "b"}) {
    const rt::Tensor* t = scope.Find(name);
    EXPECT_NE(t, nullptr) << name;
    if (t != nullptr) out[name] = t->Clone();
  }
  return out;
}

StatusOr<rt::MultiRankResult> RunOnThreads(const std::string& dir) {
  rt::MultiRankConfig config;  // the thread backend
  return rt::RunBundleRanks(dir, config);
}

TEST(ShardedInitRunTest, EachRankHoldsItsHalfOfTheSerialInitInBothIrs) {
  const ScratchDir scratch("sharded_init_run");
  const std::string legacy = scratch / "legacy";
  const std::string pir = scratch / "pir";
  WriteHalvesBundle(legacy);
  const std::map<std::string, rt::Tensor> serial = SerialInit();
  ASSERT_EQ(serial.size(), 2u);

  StatusOr<rt::MultiRankResult> legacy_run = RunOnThreads(legacy);
  ASSERT_TRUE(legacy_run.ok()) << legacy_run.status().ToString();
  ASSERT_EQ(legacy_run->ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE(r);
    const rt::Scope& scope = *legacy_run->ranks[static_cast<size_t>(r)].scope;
    const rt::Tensor* w = scope.Find("w");
    const rt::Tensor* b = scope.Find("b");
    ASSERT_NE(w, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(w->BitwiseEqual(rt::testing::BoxOf(serial.at("w"), {0, 3 * r}, {4, 3})));
    EXPECT_TRUE(b->BitwiseEqual(rt::testing::BoxOf(serial.at("b"), {3 * r}, {3})));
  }
  // Without the shards, both ranks would draw the serial tensor's first elements.
  EXPECT_FALSE(
      legacy_run->ranks[0].scope->Find("w")->BitwiseEqual(*legacy_run->ranks[1].scope->Find("w")));

  StatusOr<BundleTranslation> translated = TranslateBundle(legacy, pir);
  ASSERT_TRUE(translated.ok()) << translated.status().ToString();
  StatusOr<oldir::Bundle> pir_bundle = oldir::ReadBundle(pir);
  ASSERT_TRUE(pir_bundle.ok()) << pir_bundle.status().ToString();
  ASSERT_EQ(pir_bundle->ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(pir_bundle->ranks[static_cast<size_t>(r)].shards, HalfShards(r));
    const StatusOr<std::string> written = ReadFile(oldir::RankFile(pir, r, "shards.json"));
    const StatusOr<std::string> read = ReadFile(oldir::RankFile(legacy, r, "shards.json"));
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*written, *read);
  }

  StatusOr<rt::MultiRankResult> pir_run = RunOnThreads(pir);
  ASSERT_TRUE(pir_run.ok()) << pir_run.status().ToString();
  ASSERT_EQ(pir_run->ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    SCOPED_TRACE(r);
    for (const char* name : {"w", "b"}) {
      const rt::Tensor* a = legacy_run->ranks[r].scope->Find(name);
      const rt::Tensor* b = pir_run->ranks[r].scope->Find(name);
      ASSERT_NE(b, nullptr) << name;
      EXPECT_TRUE(a->BitwiseEqual(*b)) << name;
    }
  }
}

// The rank's shards reach its executors over a caller's shard of the same name.
TEST(ShardedInitRunTest, TheBundlesShardReplacesACallersShardOfTheSameName) {
  const ScratchDir scratch("sharded_init_caller");
  const std::string legacy = scratch / "legacy";
  WriteHalvesBundle(legacy);
  const std::map<std::string, rt::Tensor> serial = SerialInit();
  ASSERT_EQ(serial.size(), 2u);
  rt::BundleRunConfig config;
  config.rank = 1;
  config.options.shards = {{"w", {{4, 6}, {0, 0}}}, {"y", {{8, 3}, {4, 0}}}};
  StatusOr<rt::BundleRankRunner> runner = rt::BundleRankRunner::Load(legacy, config);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  rt::Scope root;
  const StatusOr<std::vector<rt::PlanStepResult>> steps = runner->Run(root);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  ASSERT_NE(root.Find("w"), nullptr);
  EXPECT_TRUE(root.Find("w")->BitwiseEqual(rt::testing::BoxOf(serial.at("w"), {0, 3}, {4, 3})));
}

}  // namespace
}  // namespace irm::translator
