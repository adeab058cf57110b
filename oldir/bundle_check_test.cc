// Tests of the bundle's checks (docs/bundle.md): every rule of the validator — layout, plans,
// programs, feeds against the programs' declarations — with its exact, located finding, and a
// long plan read and checked.
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

// --- validation: layout (the bundle cannot be used) ----------------------------------------

TEST_F(BundleTest, ValidSingleRank) {
  WriteBundleJson(1, kFeedX + R"(, "fetches": ["loss"])");
  WriteMainRank(0);
  bool usable = false;
  EXPECT_EQ(Check(&usable), "");
  EXPECT_TRUE(usable);
}

TEST_F(BundleTest, MissingAndExtraRankFolders) {
  WriteBundleJson(2, kFeedX);
  WriteMainRank(0);
  WriteMainRank(3);
  bool usable = true;
  EXPECT_EQ(Check(&usable),
            P("rank1") + ": error: missing rank folder for rank 1 (world_size is 2)\n" +
                P("rank3") + ": error: rank folder for rank 3, but world_size is 2\n");
  EXPECT_FALSE(usable);
}

TEST_F(BundleTest, BundleJsonRules) {
  WriteBundleJson(2, R"("steps": 0, "micro_batches": 4,
    "process_groups": [{"ring_id": 0, "ranks": [0, 2, 1, 0]}, {"ring_id": 0, "ranks": []},
                       {"ring_id": -1, "ranks": [1]}],
    "feeds": [{"name": "x", "shape": [-1, 4], "dtype": "float32"},
              {"name": "x", "shape": [6, -2], "dtype": "float33"},
              {"name": "", "shape": [], "dtype": "int64"},
              {"name": "s", "shape": [], "dtype": "int64", "split": "replicate"}],
    "fetches": ["loss", "", "loss"])");
  WriteMainRank(0);
  WriteMainRank(1);
  Write("rank0/plan.json", R"({"jobs": [{"type": "main"}]})");
  Write("rank1/plan.json", R"({"jobs": [{"type": "main"}]})");
  const std::string j = P("bundle.json");
  bool usable = true;
  EXPECT_EQ(Check(&usable),
            j + ": /steps: error: steps must be at least 1, got 0\n" + j +
                ": /process_groups/0/ranks/1: error: rank 2 is out of range [0, 2)\n" + j +
                ": /process_groups/0/ranks/3: error: rank 0 appears twice in the group\n" + j +
                ": /process_groups/1/ring_id: error: ring_id 0 is declared twice (also "
                "/process_groups/0)\n" +
                j + ": /process_groups/1/ranks: error: a process group needs at least one rank\n" +
                j + ": /process_groups/2/ring_id: error: ring_id -1 is negative\n" + j +
                ": /feeds/1/name: error: feed 'x' is declared twice (also /feeds/0)\n" + j +
                ": /feeds/1/dtype: error: unknown dtype 'float33'\n"
                "  note: known dtypes: bool, int8, uint8, int16, int32, int64, float16, "
                "bfloat16, float32, float64, complex64, complex128\n" +
                j + ": /feeds/1/shape/1: error: dim -2 is invalid (a dim is -1 or at least 0)\n" +
                j +
                ": /feeds/1/shape/0: error: batch dim 6 cannot be split into 4 "
                "micro-batches\n" +
                j + ": /feeds/2/name: error: a feed needs a name\n" + j +
                ": /feeds/2/shape: error: a feed split by batch needs at least one dim\n" + j +
                ": /fetches/1: error: a fetch needs a name\n" + j +
                ": /fetches/2: error: fetch 'loss' is listed twice (also /fetches/0)\n" +
                // The programs declare x and loss; feeds and fetches without names are errors.
                j + ": /feeds/3/name: warning: feed 's' is not declared by any program\n");
  EXPECT_FALSE(usable);
}

TEST_F(BundleTest, WorldSizeAndMicroBatchesAtLeastOne) {
  WriteBundleJson(0, R"("micro_batches": 0)");
  const std::string j = P("bundle.json");
  EXPECT_EQ(Check(), j + ": /world_size: error: world_size must be at least 1, got 0\n" + j +
                         ": /micro_batches: error: micro_batches must be at least 1, got 0\n");
}

TEST_F(BundleTest, RankFolderRules) {
  WriteBundleJson(2);
  fs::create_directories(P("rank0"));  // empty: no startup, no plan, no main
  fs::create_directories(P("rank1"));
  WriteProgram("rank1/startup.pdmodel", kStartupText);
  WriteProgram("rank1/main.pdmodel", kForwardText);
  WriteProgram("rank1/forward.pdmodel", kForwardText);
  bool usable = true;
  EXPECT_EQ(Check(&usable),
            P("rank0/startup.pdmodel") + ": error: missing startup program\n" +
                P("rank0/main.pdmodel") +
                ": error: missing main program (the rank has no plan.json)\n" +
                P("rank1/forward.pdmodel") +
                ": warning: program 'forward' is never run: the rank has no plan.json, so it "
                "runs main only\n" +
                // x is only fed by the bundle's feeds, and there are none.
                P("rank1/forward.pdmodel") +
                ": block 0, op 0 (matmul_v2), var 'x': error: input 'x' of slot 'X' is not "
                "defined before use\n" +
                P("rank1/main.pdmodel") +
                ": block 0, op 0 (matmul_v2), var 'x': error: input 'x' of slot 'X' is not "
                "defined before use\n");
  EXPECT_FALSE(usable);
}

TEST_F(BundleTest, PlanLessRankNeedsOneMicroBatch) {
  WriteBundleJson(1, kFeedX + R"(, "micro_batches": 2)");
  WriteMainRank(0);
  bool usable = true;
  EXPECT_EQ(Check(&usable),
            P("rank0") +
                ": error: the rank has no plan.json, but micro_batches is 2: a "
                "rank without a plan runs main once per step, on the whole batch\n");
  EXPECT_FALSE(usable);
}

TEST_F(BundleTest, PlanRules) {
  WriteBundleJson(1, kFeedX + R"(, "micro_batches": 2)");
  WritePipelineRank(0, R"({"jobs": [{"type": "forward", "micro_batch": 0},
    {"type": "forward", "micro_batch": 2}, {"type": "backward_b", "micro_batch": -1},
    {"type": "startup"}, {"type": "backward", "micro_batch": 1}]})");
  const std::string plan = P("rank0/plan.json");
  bool usable = true;
  EXPECT_EQ(Check(&usable),
            plan + ": /jobs/1/micro_batch: error: micro_batch 2 is out of range [0, 2)\n" + plan +
                ": /jobs/2/type: error: job type 'backward_b' has no program file "
                "'backward_b.pdmodel' in rank0\n" +
                plan + ": /jobs/2/micro_batch: error: micro_batch -1 is out of range [0, 2)\n" +
                plan + ": /jobs/3/type: error: job type 'startup' is reserved\n" +
                P("rank0/optimizer.pdmodel") +
                ": warning: program 'optimizer' is never run: no job of plan.json has type "
                "'optimizer'\n");
  EXPECT_FALSE(usable);

  Write("rank0/plan.json", R"({"jobs": []})");
  EXPECT_EQ(Check(), plan + ": /jobs: error: the plan has no jobs\n" + P("rank0/backward.pdmodel") +
                         ": warning: program 'backward' is never run: no job of plan.json has "
                         "type 'backward'\n" +
                         P("rank0/forward.pdmodel") +
                         ": warning: program 'forward' is never run: no job of plan.json has "
                         "type 'forward'\n" +
                         P("rank0/optimizer.pdmodel") +
                         ": warning: program 'optimizer' is never run: no job of plan.json has "
                         "type 'optimizer'\n");
}

TEST_F(BundleTest, UnreadableProgramMakesTheBundleUnusable) {
  WriteBundleJson(1, kFeedX);
  WriteMainRank(0);
  // Field 1 (blocks) sent as a varint: the wire check names byte 0.
  Write("rank0/main.pdmodel", "\x08\x01");
  bool usable = true;
  EXPECT_EQ(Check(&usable), P("rank0/main.pdmodel") +
                                ": byte 0: error: field 'blocks' (1) has wire type 0 (varint), "
                                "expected 2 (length-delimited)\n");
  EXPECT_FALSE(usable);
}

// --- validation: programs (read fine, but wrong) ------------------------------------------

TEST_F(BundleTest, InvalidProgramKeepsTheBundleUsable) {
  WriteBundleJson(1, kFeedX);
  WriteMainRank(0);
  WriteProgram(
      "rank0/main.pdmodel",
      ProgramText(Var("x", "dims: -1 dims: 4", "need_check_feed: true") + Var("z", "dims: 2"),
                  R"(ops { type: "relu" inputs { parameter: "X" arguments: "x" }
                              outputs { parameter: "Out" arguments: "ghost" } })"));
  bool usable = false;
  EXPECT_EQ(Check(&usable), P("rank0/main.pdmodel") +
                                ": block 0, op 0 (relu), var 'ghost': error: output 'ghost' of "
                                "slot 'Out' is not declared\n");
  EXPECT_TRUE(usable);
}

TEST_F(BundleTest, ProgramsMayReadWhatEarlierJobsWrote) {
  WriteBundleJson(1, kFeedX + R"(, "micro_batches": 2)");
  WritePipelineRank(0, kPlan2);
  EXPECT_EQ(Check(), "");

  // backward reads y, which forward writes: running backward first leaves y undefined.
  Write("rank0/plan.json", R"({"jobs": [{"type": "backward"}, {"type": "forward"},
                                         {"type": "optimizer"}]})");
  bool usable = false;
  EXPECT_EQ(Check(&usable), P("rank0/backward.pdmodel") +
                                ": block 0, op 0 (relu), var 'y': error: input 'y' of slot 'X' "
                                "is not defined before use\n");
  EXPECT_TRUE(usable);
}

TEST_F(BundleTest, RingIdsNameProcessGroupsOfTheRank) {
  WriteBundleJson(2, R"("process_groups": [{"ring_id": 0, "ranks": [1]}])");
  for (int r = 0; r < 2; ++r) {
    fs::create_directories(P("rank" + std::to_string(r)));
    WriteProgram("rank" + std::to_string(r) + "/startup.pdmodel", kStartupText);
    WriteProgram("rank" + std::to_string(r) + "/main.pdmodel", kAllreduceText);
  }
  EXPECT_EQ(Check(), P("rank0/main.pdmodel") +
                         ": block 0, op 0 (c_allreduce_sum), attr 'ring_id': error: rank 0 is not "
                         "in process group 0 (ranks [1])\n");

  WriteBundleJson(2, R"("process_groups": [{"ring_id": 1, "ranks": [0, 1]}])");
  EXPECT_EQ(Check(), P("rank0/main.pdmodel") +
                         ": block 0, op 0 (c_allreduce_sum), attr 'ring_id': error: ring_id 0 "
                         "names no process group of bundle.json\n" +
                         P("rank1/main.pdmodel") +
                         ": block 0, op 0 (c_allreduce_sum), attr 'ring_id': error: ring_id 0 "
                         "names no process group of bundle.json\n");
}

TEST_F(BundleTest, FeedsAndFetchesNoProgramDeclares) {
  WriteBundleJson(1, R"("feeds": [{"name": "x", "shape": [-1, 4], "dtype": "float32"},
                                  {"name": "t", "shape": [2], "dtype": "int64"}],
                      "fetches": ["loss", "acc"])");
  WriteMainRank(0);
  bool usable = false;
  EXPECT_EQ(Check(&usable),
            P("bundle.json") +
                ": /feeds/1/name: warning: feed 't' is not declared by any program\n" +
                P("bundle.json") +
                ": /fetches/1: warning: fetch 'acc' is not declared by any "
                "program\n");
  EXPECT_TRUE(usable);
}

TEST_F(BundleTest, ExtraFeedsCountAsDefined) {
  WriteBundleJson(1);
  WriteMainRank(0);
  StatusOr<Bundle> bundle = ReadBundle(dir_);
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ(ValidateBundle(*bundle, dir_).size(), 1u);
  EXPECT_TRUE(ValidateBundle(*bundle, dir_, {.extra_feeds = {"x"}}).empty());
}

// --- feeds against the programs' declarations -------------------------------------------------

// kForwardText declares x as float32 [-1, 4] in its root block.
TEST_F(BundleTest, FeedsAgreeingWithTheDeclarationsPass) {
  for (const char* shape : {"[-1, 4]", "[8, 4]", "[8, -1]"}) {
    WriteBundleJson(1, std::string(R"("feeds": [{"name": "x", "shape": )") + shape +
                           R"(, "dtype": "float32"}])");
    WriteMainRank(0);
    EXPECT_EQ(Check(), "") << shape;
  }
}

TEST_F(BundleTest, FeedDtypeAndShapeMustMatchTheDeclaration) {
  WriteBundleJson(2, R"("feeds": [{"name": "x", "shape": [-1, 3], "dtype": "int64"}])");
  WriteMainRank(0);
  WriteMainRank(1);
  bool usable = false;
  // Reported once, at the first program that disagrees, though both ranks do.
  EXPECT_EQ(Check(&usable),
            P("bundle.json") + ": /feeds/0/dtype: error: feed 'x' has dtype int64, but " +
                P("rank0/main.pdmodel") + " declares it as float32 [-1, 4] (block 0, var 'x')\n" +
                P("bundle.json") + ": /feeds/0/shape: error: feed 'x' has shape [-1, 3], but " +
                P("rank0/main.pdmodel") + " declares it as float32 [-1, 4] (block 0, var 'x')\n");
  // Readable, but wrong: `validate` exits 1.
  EXPECT_TRUE(usable);
}

TEST_F(BundleTest, FeedRankMustMatchTheDeclaration) {
  WriteBundleJson(1, R"("feeds": [{"name": "x", "shape": [4], "dtype": "float32",
                                   "split": "replicate"}])");
  WriteMainRank(0);
  EXPECT_EQ(Check(), P("bundle.json") + ": /feeds/0/shape: error: feed 'x' has shape [4], but " +
                         P("rank0/main.pdmodel") +
                         " declares it as float32 [-1, 4] (block 0, var 'x')\n");
}

// The batch dim of a feed split by batch is the whole batch; a program sees a micro-batch of it.
TEST_F(BundleTest, BatchDimMayBeAMicroBatchOfTheFeed) {
  const std::string micro =
      ProgramText(Var("x", "dims: 2 dims: 4") + Var("y", ""),
                  R"(ops { type: "relu" inputs { parameter: "X" arguments: "x" }
                     outputs { parameter: "Out" arguments: "y" } })");
  for (const auto& [split, shape, findings] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"batch", "[8, 4]", false}, {"batch", "[7, 4]", true}, {"replicate", "[8, 4]", true}}) {
    WriteBundleJson(1, R"("feeds": [{"name": "x", "shape": )" + shape +
                           R"(, "dtype": "float32", "split": ")" + split + R"("}])");
    fs::create_directories(P("rank0"));
    WriteProgram("rank0/startup.pdmodel", kStartupText);
    WriteProgram("rank0/main.pdmodel", micro);
    EXPECT_EQ(Check().find("/feeds/0/shape: error") != std::string::npos, findings)
        << split << " " << shape;
  }
}

// --- hostile sizes ------------------------------------------------------------------------------

// A plan of 100,000 jobs reads and checks (in linear time: bench/oldir_bench.cc measures it).
TEST_F(BundleTest, LongPlanReadsAndChecks) {
  std::vector<PlanJob> jobs;
  for (int i = 0; i < 100000; ++i) jobs.push_back({"main", i});
  StatusOr<std::vector<PlanJob>> read = ParsePlanJson(PlanJsonText(jobs), "plan.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, jobs);
  // A duplicate key deep in the list is still found, at its pointer.
  std::string text = PlanJsonText(jobs);
  const std::string last = "{\"type\": \"main\", \"micro_batch\": 99999}";
  text.replace(text.find(last), last.size(), "{\"type\": \"main\", \"type\": \"x\"}");
  EXPECT_EQ(ParsePlanJson(text, "plan.json").status().ToString(),
            "plan.json: /jobs/99999/type: error: key 'type' appears twice");
}

}  // namespace
}  // namespace irm::oldir
