// Tests of the bundle as folders (docs/bundle.md): bundle.json and plan.json written by hand here
// read into the structs spelled out by hand, write -> read round trips, job type names, and what
// is not a bundle directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "common/file_io.h"
#include "oldir/bundle.h"
#include "oldir/bundle_test_support.h"
#include "oldir/program_io.h"

namespace irm::oldir {
namespace {

namespace fs = std::filesystem;

// --- reading ----------------------------------------------------------------------------------

TEST_F(BundleTest, ReadsEveryField) {
  Write("bundle.json", R"({
  "format": "ir-migrate.bundle", "version": 1, "ir": "legacy", "world_size": 2,
  "process_groups": [{"ring_id": 0, "ranks": [0, 1]}, {"ring_id": 3, "ranks": [1]}],
  "strategy": {"pipeline": {"schedule": "1F1B", "micro_batches": 2}},
  "feeds": [{"name": "x", "shape": [-1, 4], "dtype": "float32", "split": "batch"},
            {"name": "mask", "shape": [4], "dtype": "bool", "split": "replicate"},
            {"name": "label", "shape": [8, 1], "dtype": "int64"}],
  "fetches": ["loss", "y"], "steps": 3, "seed": -9007199254740993, "micro_batches": 2
})");
  WritePipelineRank(0, kPlan2);
  WriteMainRank(1);
  Write("rank1/plan.json", R"({"jobs": [{"type": "main", "micro_batch": 0},
                                         {"type": "main", "micro_batch": 1}]})");
  Write("rank1/main.prototxt", "a text copy, never read");
  Write("rank1/notes.txt", "ignored");
  Write("rank1/not-a-job.pdmodel", "ignored: not a job type name");
  Write("rank01/startup.pdmodel", "ignored: not a rank folder name");
  Write("rank7", "ignored: a file, not a folder");

  StatusOr<Bundle> bundle = ReadBundle(dir_);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  Bundle want;
  want.ir = BundleIr::kLegacy;
  want.world_size = 2;
  want.process_groups = {{0, {0, 1}}, {3, {1}}};
  want.strategy = {{"pipeline", {{"schedule", "1F1B"}, {"micro_batches", 2}}}};
  want.feeds = {{"x", {-1, 4}, "float32", FeedSplit::kBatch},
                {"mask", {4}, "bool", FeedSplit::kReplicate},
                {"label", {8, 1}, "int64", FeedSplit::kBatch}};
  want.fetches = {"loss", "y"};
  want.steps = 3;
  want.seed = -9007199254740993;
  want.micro_batches = 2;
  want.ranks = {
      {0,
       "startup.pdmodel",
       {{"backward", "backward.pdmodel"},
        {"forward", "forward.pdmodel"},
        {"optimizer", "optimizer.pdmodel"}},
       std::vector<PlanJob>{
           {"forward", 0}, {"forward", 1}, {"backward", 0}, {"backward", 1}, {"optimizer", 0}}},
      {1,
       "startup.pdmodel",
       {{"main", "main.pdmodel"}},
       std::vector<PlanJob>{{"main", 0}, {"main", 1}}}};
  EXPECT_EQ(*bundle, want);
  // The test programs declare x, loss and y only.
  EXPECT_EQ(Check(), P("bundle.json") +
                         ": /feeds/1/name: warning: feed 'mask' is not declared by any program\n" +
                         P("bundle.json") +
                         ": /feeds/2/name: warning: feed 'label' is not declared by any program\n");
}

TEST_F(BundleTest, DefaultsOfOptionalFields) {
  WriteBundleJson(1);
  WriteMainRank(0);
  StatusOr<Bundle> bundle = ReadBundle(dir_);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_TRUE(bundle->process_groups.empty());
  EXPECT_EQ(bundle->strategy, nlohmann::json::object());
  EXPECT_TRUE(bundle->feeds.empty());
  EXPECT_TRUE(bundle->fetches.empty());
  EXPECT_EQ(bundle->steps, 1);
  EXPECT_EQ(bundle->seed, 0);
  EXPECT_EQ(bundle->micro_batches, 1);
  EXPECT_FALSE(bundle->p2p.has_value());
}

TEST_F(BundleTest, PirBundleListsJsonPrograms) {
  Write("bundle.json",
        R"({"format": "ir-migrate.bundle", "version": 1, "ir": "pir", "world_size": 1})");
  Write("rank0/startup.json", "{}");
  Write("rank0/forward.json", "{}");
  Write("rank0/forward.pdmodel", "not a program of this bundle");
  Write("rank0/plan.json", R"({"jobs": [{"type": "forward"}]})");
  StatusOr<Bundle> bundle = ReadBundle(dir_);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  ASSERT_EQ(bundle->ranks.size(), 1u);
  EXPECT_EQ(bundle->ranks[0].startup, "startup.json");
  EXPECT_EQ(bundle->ranks[0].programs,
            (std::map<std::string, std::string>{{"forward", "forward.json"}}));
  // Programs of a pir bundle are not read: only the layout is checked.
  EXPECT_EQ(Check(), "");
}

// --- writing ----------------------------------------------------------------------------------

TEST_F(BundleTest, WriteThenReadIsEqual) {
  Bundle bundle;
  bundle.world_size = 2;
  bundle.process_groups = {{0, {0, 1}}};
  bundle.strategy = {{"pipeline", {{"schedule", "FThenB"}, {"micro_batches", 2}}}};
  bundle.feeds = {{"x", {-1, 4}, "float32", FeedSplit::kBatch},
                  {"m", {4}, "bool", FeedSplit::kReplicate}};
  bundle.fetches = {"loss"};
  bundle.steps = 2;
  bundle.seed = 7;
  bundle.micro_batches = 2;
  bundle.p2p = schedules::P2pModel::Buffered(2);

  StatusOr<BundleRank> rank0 = WriteLegacyRankPrograms(dir_, 0, Parse(kStartupText),
                                                       {{"forward", Parse(kForwardText)},
                                                        {"backward", Parse(kBackwardText)},
                                                        {"optimizer", Parse(kOptimizerText)}},
                                                       {.text_copies = true});
  ASSERT_TRUE(rank0.ok()) << rank0.status().ToString();
  rank0->plan = std::vector<PlanJob>{
      {"forward", 0}, {"forward", 1}, {"backward", 0}, {"backward", 1}, {"optimizer", 0}};
  StatusOr<BundleRank> rank1 =
      WriteLegacyRankPrograms(dir_, 1, Parse(kStartupText), {{"main", Parse(kForwardText)}});
  ASSERT_TRUE(rank1.ok()) << rank1.status().ToString();
  EXPECT_EQ(rank1->startup, "startup.pdmodel");
  EXPECT_EQ(rank1->programs, (std::map<std::string, std::string>{{"main", "main.pdmodel"}}));
  EXPECT_EQ(rank1->plan, std::nullopt);
  rank1->plan = std::vector<PlanJob>{{"main", 0}, {"main", 1}};
  // Rank 2 keeps no plan, which two micro-batches do not allow (a rule of the validator only).
  StatusOr<BundleRank> rank2 =
      WriteLegacyRankPrograms(dir_, 2, Parse(kStartupText), {{"main", Parse(kForwardText)}});
  ASSERT_TRUE(rank2.ok()) << rank2.status().ToString();
  bundle.world_size = 3;
  bundle.ranks = {*rank0, *rank1, *rank2};
  ASSERT_TRUE(WriteBundle(bundle, dir_).ok());

  StatusOr<Bundle> back = ReadBundle(dir_);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, bundle);
  EXPECT_EQ(ValidateBundle(*back, dir_).Render(),
            P("rank2") +
                ": error: the rank has no plan.json, but micro_batches is 2: a rank without a plan "
                "runs main once per step, on the whole batch\n" +
                P("bundle.json") +
                ": /feeds/1/name: warning: feed 'm' is not declared by any program\n");

  // The files: binary programs, text copies on request, the plan one job per line.
  EXPECT_TRUE(fs::exists(P("rank0/forward.prototxt")));
  EXPECT_FALSE(fs::exists(P("rank1/main.prototxt")));
  StatusOr<oldir::Program> forward = LoadProgram(P("rank0/forward.pdmodel"));
  ASSERT_TRUE(forward.ok());
  EXPECT_EQ(forward->num_ops(), 2);
  EXPECT_EQ(*ReadFile(P("rank0/plan.json")),
            "{\"jobs\": [\n"
            "  {\"type\": \"forward\", \"micro_batch\": 0},\n"
            "  {\"type\": \"forward\", \"micro_batch\": 1},\n"
            "  {\"type\": \"backward\", \"micro_batch\": 0},\n"
            "  {\"type\": \"backward\", \"micro_batch\": 1},\n"
            "  {\"type\": \"optimizer\", \"micro_batch\": 0}\n"
            "]}\n");
  EXPECT_FALSE(fs::exists(P("rank2/plan.json")));
}

TEST_F(BundleTest, WriteRemovesAStalePlan) {
  Write("rank0/plan.json", R"({"jobs": []})");
  Bundle bundle;
  bundle.ranks = {{0, "", {}, std::nullopt}};
  ASSERT_TRUE(WriteBundle(bundle, dir_).ok());
  EXPECT_FALSE(fs::exists(P("rank0/plan.json")));
  EXPECT_TRUE(fs::is_directory(P("rank0")));
}

TEST_F(BundleTest, WriteErrors) {
  StatusOr<BundleRank> reserved =
      WriteLegacyRankPrograms(dir_, 0, Parse(kStartupText), {{"startup", Parse(kForwardText)}});
  EXPECT_EQ(reserved.status().ToString(),
            P("rank0") +
                ": error: 'startup' cannot be a job type: use letters, digits and '_', "
                "not 'startup', 'plan' or 'shards'");
  StatusOr<BundleRank> odd =
      WriteLegacyRankPrograms(dir_, 0, Parse(kStartupText), {{"fwd.v2", Parse(kForwardText)}});
  EXPECT_EQ(odd.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(P("rank0")));

  Bundle bundle;
  bundle.strategy = nlohmann::json::array();
  EXPECT_EQ(WriteBundle(bundle, dir_).ToString(),
            P("bundle.json") + ": error: the strategy must be a JSON object");

  Write("file", "x");
  Status under_file = WriteBundle(Bundle(), P("file/sub"));
  EXPECT_EQ(under_file.code(), StatusCode::kIoError);
  EXPECT_EQ(under_file.location().file, P("file/sub"));
}

TEST(JobType, Names) {
  EXPECT_TRUE(IsValidJobType("forward"));
  EXPECT_TRUE(IsValidJobType("backward_w1"));
  EXPECT_TRUE(IsValidJobType("main"));
  EXPECT_FALSE(IsValidJobType(""));
  EXPECT_FALSE(IsValidJobType("startup"));
  EXPECT_FALSE(IsValidJobType("plan"));
  EXPECT_FALSE(IsValidJobType("shards"));
  EXPECT_FALSE(IsValidJobType("a.b"));
  EXPECT_FALSE(IsValidJobType("../x"));
}

// --- reading errors: the first one stops reading --------------------------------------------

TEST_F(BundleTest, NotABundle) {
  EXPECT_EQ(ReadError(), P("bundle.json") +
                             ": error: cannot open: No such file or directory\n"
                             "  note: a bundle is a directory holding bundle.json and rank<N>/ "
                             "folders (docs/bundle.md)");
  EXPECT_EQ(ReadBundle(P("none")).status().ToString(),
            P("none") + ": error: no such bundle directory");
  Write("file", "x");
  EXPECT_EQ(ReadBundle(P("file")).status().ToString(),
            P("file") + ": error: a bundle is a directory, this is not one");
}

}  // namespace
}  // namespace irm::oldir
