// Tests of the bundle (docs/bundle.md): bundle.json and plan.json written by hand here read into
// the structs spelled out by hand, write -> read round trips, the exact text bundle.json is
// written as, and every rule of the validator and every reading error with its exact, located
// diagnostic.
#include "oldir/bundle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "common/file_io.h"
#include "oldir/program_io.h"

namespace irm::oldir {
namespace {

namespace fs = std::filesystem;

// --- programs, in protobuf text -------------------------------------------------------------

std::string Var(const std::string& name, const std::string& dims, const std::string& flags = "") {
  return "vars { name: \"" + name +
         "\" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 " + dims +
         " } } } " + flags + " }\n";
}
std::string ProgramText(const std::string& vars, const std::string& ops) {
  return "blocks { idx: 0 parent_idx: -1\n" + vars + ops + "}\n";
}

const std::string kStartup = ProgramText("", "");
// x is not need_check_feed: only the bundle's feeds make it defined.
const std::string kForward =
    ProgramText(Var("x", "dims: -1 dims: 4") + Var("w", "dims: 4 dims: 2", "persistable: true") +
                    Var("y", "dims: -1 dims: 2") + Var("loss", ""),
                R"(ops { type: "matmul_v2" inputs { parameter: "X" arguments: "x" }
           inputs { parameter: "Y" arguments: "w" } outputs { parameter: "Out" arguments: "y" } }
       ops { type: "mean" inputs { parameter: "X" arguments: "y" }
           outputs { parameter: "Out" arguments: "loss" } }
    )");
// Reads y, which only the forward program writes.
const std::string kBackward = ProgramText(
    Var("y", "dims: -1 dims: 2") + Var("w@GRAD", "dims: 4 dims: 2", "persistable: true"),
    R"(ops { type: "relu" inputs { parameter: "X" arguments: "y" }
                   outputs { parameter: "Out" arguments: "w@GRAD" } })");
const std::string kOptimizer =
    ProgramText(Var("w", "dims: 4 dims: 2", "persistable: true") +
                    Var("w@GRAD", "dims: 4 dims: 2", "persistable: true") +
                    Var("lr", "dims: 1", "persistable: true"),
                R"(ops { type: "sgd" inputs { parameter: "Param" arguments: "w" }
           inputs { parameter: "Grad" arguments: "w@GRAD" }
           inputs { parameter: "LearningRate" arguments: "lr" }
           outputs { parameter: "ParamOut" arguments: "w" } })");
// An allreduce on ring 0, for the process-group checks.
const std::string kAllreduce =
    ProgramText(Var("g", "dims: 2", "persistable: true"),
                R"(ops { type: "c_allreduce_sum" inputs { parameter: "X" arguments: "g" }
                   outputs { parameter: "Out" arguments: "g" }
                   attrs { name: "ring_id" type: INT i: 0 } })");

oldir::Program Parse(const std::string& text) {
  StatusOr<oldir::Program> program = ParseProgram(text, "test.prototxt");
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : oldir::Program();
}

// --- files ------------------------------------------------------------------------------------

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::path(::testing::TempDir()) /
            ("irm_bundle_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::path path = fs::path(dir_) / relative;
    fs::create_directories(path.parent_path());
    ASSERT_TRUE(WriteFileAtomically(path.string(), text).ok());
  }
  void WriteProgram(const std::string& relative, const std::string& text) {
    ASSERT_TRUE(
        SaveProgram(Parse(text), (fs::path(dir_) / relative).string(), ProgramFormat::kBinary)
            .ok());
  }
  std::string P(const std::string& relative) const { return (fs::path(dir_) / relative).string(); }

  // bundle.json of `world_size` ranks with the given extra fields (",\n"-separated JSON members).
  void WriteBundleJson(int world_size, const std::string& extra = "") {
    Write("bundle.json",
          "{\"format\": \"ir-migrate.bundle\", \"version\": 1, \"ir\": \"legacy\", "
          "\"world_size\": " +
              std::to_string(world_size) + (extra.empty() ? "" : ", " + extra) + "}\n");
  }
  // A plan-less rank running the forward program as main.
  void WriteMainRank(int rank) {
    const std::string folder = "rank" + std::to_string(rank) + "/";
    fs::create_directories(P(folder));
    WriteProgram(folder + "startup.pdmodel", kStartup);
    WriteProgram(folder + "main.pdmodel", kForward);
  }
  void WritePipelineRank(int rank, const std::string& plan) {
    const std::string folder = "rank" + std::to_string(rank) + "/";
    fs::create_directories(P(folder));
    WriteProgram(folder + "startup.pdmodel", kStartup);
    WriteProgram(folder + "forward.pdmodel", kForward);
    WriteProgram(folder + "backward.pdmodel", kBackward);
    WriteProgram(folder + "optimizer.pdmodel", kOptimizer);
    Write(folder + "plan.json", plan);
  }

  // ReadBundle + CheckBundle; the rendered findings.
  std::string Check(bool* usable = nullptr) {
    StatusOr<Bundle> bundle = ReadBundle(dir_);
    if (!bundle.ok()) return "read failed: " + bundle.status().ToString();
    BundleCheck check = CheckBundle(*bundle, dir_);
    if (usable) *usable = check.usable;
    return check.findings.Render();
  }
  // ReadBundle's error.
  std::string ReadError() {
    StatusOr<Bundle> bundle = ReadBundle(dir_);
    return bundle.ok() ? "read fine" : bundle.status().ToString();
  }

  std::string dir_;
};

const std::string kFeedX = R"("feeds": [{"name": "x", "shape": [-1, 4], "dtype": "float32"}])";
const std::string kPlan2 = R"({"jobs": [{"type": "forward", "micro_batch": 0},
  {"type": "forward", "micro_batch": 1}, {"type": "backward", "micro_batch": 0},
  {"type": "backward", "micro_batch": 1}, {"type": "optimizer"}]})";

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

  StatusOr<BundleRank> rank0 = WriteLegacyRankPrograms(dir_, 0, Parse(kStartup),
                                                       {{"forward", Parse(kForward)},
                                                        {"backward", Parse(kBackward)},
                                                        {"optimizer", Parse(kOptimizer)}},
                                                       {.text_copies = true});
  ASSERT_TRUE(rank0.ok()) << rank0.status().ToString();
  rank0->plan = std::vector<PlanJob>{
      {"forward", 0}, {"forward", 1}, {"backward", 0}, {"backward", 1}, {"optimizer", 0}};
  StatusOr<BundleRank> rank1 =
      WriteLegacyRankPrograms(dir_, 1, Parse(kStartup), {{"main", Parse(kForward)}});
  ASSERT_TRUE(rank1.ok()) << rank1.status().ToString();
  EXPECT_EQ(rank1->startup, "startup.pdmodel");
  EXPECT_EQ(rank1->programs, (std::map<std::string, std::string>{{"main", "main.pdmodel"}}));
  EXPECT_EQ(rank1->plan, std::nullopt);
  rank1->plan = std::vector<PlanJob>{{"main", 0}, {"main", 1}};
  // Rank 2 keeps no plan, which two micro-batches do not allow (a rule of the validator only).
  StatusOr<BundleRank> rank2 =
      WriteLegacyRankPrograms(dir_, 2, Parse(kStartup), {{"main", Parse(kForward)}});
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

TEST_F(BundleTest, BundleJsonText) {
  Bundle bundle;
  bundle.ir = BundleIr::kPir;
  bundle.process_groups = {{0, {0}}};
  bundle.strategy = {{"kind", "single"}};
  bundle.feeds = {{"x", {-1}, "int64", FeedSplit::kReplicate}};
  bundle.fetches = {"loss"};
  bundle.seed = 5;
  ASSERT_TRUE(WriteBundle(bundle, dir_).ok());
  EXPECT_EQ(*ReadFile(P("bundle.json")), R"({
  "format": "ir-migrate.bundle",
  "version": 1,
  "ir": "pir",
  "world_size": 1,
  "process_groups": [
    {
      "ring_id": 0,
      "ranks": [
        0
      ]
    }
  ],
  "strategy": {
    "kind": "single"
  },
  "feeds": [
    {
      "name": "x",
      "shape": [
        -1
      ],
      "dtype": "int64",
      "split": "replicate"
    }
  ],
  "fetches": [
    "loss"
  ],
  "steps": 1,
  "seed": 5,
  "micro_batches": 1
}
)");
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
      WriteLegacyRankPrograms(dir_, 0, Parse(kStartup), {{"startup", Parse(kForward)}});
  EXPECT_EQ(reserved.status().ToString(),
            P("rank0") +
                ": error: 'startup' cannot be a job type: use letters, digits and '_', "
                "not 'startup', 'plan' or 'shards'");
  StatusOr<BundleRank> odd =
      WriteLegacyRankPrograms(dir_, 0, Parse(kStartup), {{"fwd.v2", Parse(kForward)}});
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

TEST_F(BundleTest, JsonSyntaxErrorHasLineAndColumn) {
  // Line 4 is `  "ir": "legacy"`: the string "ir" ends in column 6, where a ',' was due.
  Write("bundle.json",
        "{\n  \"format\": \"ir-migrate.bundle\",\n  \"version\": 1\n"
        "  \"ir\": \"legacy\"\n}\n");
  EXPECT_EQ(ReadError(), P("bundle.json") +
                             ":4:6: error: syntax error while parsing object - unexpected string "
                             "literal; expected '}'");
  EXPECT_EQ(ReadBundle(dir_).status().code(), StatusCode::kParseError);
  Write("bundle.json", "");
  EXPECT_EQ(ReadError(), P("bundle.json") +
                             ":1:1: error: syntax error while parsing value - unexpected end of "
                             "input; expected '[', '{', or a literal");
}

TEST_F(BundleTest, StructureErrorsHaveJsonPointers) {
  struct Case {
    std::string json;
    std::string want;  // after "<dir>/bundle.json"
  };
  const std::string head = R"("format": "ir-migrate.bundle", "version": 1, "ir": "legacy", )";
  const std::vector<Case> cases = {
      {"[]", ": error: expected an object, found an array"},
      {R"({"version": 1})", ": error: missing required field 'format'"},
      {R"({"format": "paddle", "version": 1})",
       ": /format: error: expected \"ir-migrate.bundle\", found \"paddle\""},
      {R"({"format": 1})", ": /format: error: expected a string, found an integer"},
      {R"({"format": "ir-migrate.bundle", "version": 2})",
       ": /version: error: bundle format version 2 is not supported (this reader knows "
       "version 1)"},
      {R"({"format": "ir-migrate.bundle", "version": 1, "ir": "mlir"})",
       ": /ir: error: expected \"legacy\" or \"pir\", found \"mlir\""},
      {"{" + head + R"("world_size": "2"})",
       ": /world_size: error: expected an integer, found a string"},
      {"{" + head + R"("world_size": 4294967296})",
       ": /world_size: error: integer 4294967296 is out of range"},
      {"{" + head + R"("world_size": 1, "seed": 18446744073709551615})",
       ": /seed: error: integer 18446744073709551615 is out of range"},
      {"{" + head + R"("world_size": 1, "micro_batch": 2})",
       ": /micro_batch: error: unknown field 'micro_batch'\n"
       "  note: the fields here are: format, version, ir, world_size, process_groups, strategy, "
       "feeds, fetches, steps, seed, micro_batches, p2p"},
      {"{" + head + R"("world_size": 1, "p2p": "buffered=0"})",
       ": /p2p: error: p2p model 'buffered=0' is not 'rendezvous', 'buffered' or "
       "'buffered=K' (K >= 1 unreceived messages per channel)"},
      {"{" + head + R"("world_size": 1, "p2p": 2})",
       ": /p2p: error: expected a string, found an integer"},
      {"{" + head + R"("world_size": 1, "strategy": "1F1B"})",
       ": /strategy: error: expected an object, found a string"},
      {"{" + head + R"("world_size": 1, "process_groups": [{"ring_id": 0}]})",
       ": /process_groups/0: error: missing required field 'ranks'"},
      {"{" + head + R"("world_size": 1, "process_groups": [{"ring_id": 0, "ranks": [0, null]}]})",
       ": /process_groups/0/ranks/1: error: expected an integer, found null"},
      {"{" + head + R"("world_size": 1, "feeds": {"x": 1}})",
       ": /feeds: error: expected an array, found an object"},
      {"{" + head +
           R"("world_size": 1, "feeds": [{"name": "x", "shape": [2.0], "dtype": "float32"}]})",
       ": /feeds/0/shape/0: error: expected an integer, found a floating-point number"},
      {"{" + head +
           R"("world_size": 1, "feeds": [{"name": "x", "shape": [2], "dtype": "float32",
              "split": "shard"}]})",
       ": /feeds/0/split: error: expected \"batch\" or \"replicate\", found \"shard\""},
      {"{" + head + R"("world_size": 1, "fetches": ["a", true]})",
       ": /fetches/1: error: expected a string, found a boolean"},
      {"{" + head + R"("world_size": 1, "feeds": [{"name": "x", "shape": [2], "name": "y"}]})",
       ": /feeds/0/name: error: field 'name' appears twice"},
      {"{" + head + R"("world_size": 1, "strategy": {"a/b": [{}, {"k": 1, "k": 2}]}})",
       ": /strategy/a~1b/1/k: error: field 'k' appears twice"},
  };
  for (const Case& c : cases) {
    Write("bundle.json", c.json);
    EXPECT_EQ(ReadError(), P("bundle.json") + c.want) << c.json;
  }
}

TEST_F(BundleTest, PlanJsonErrors) {
  WriteBundleJson(1);
  WriteMainRank(0);
  const std::string plan = P("rank0/plan.json");
  // Line 2 is `  {"type": "main",}`: the '}' in column 19 comes where a key was due.
  Write("rank0/plan.json", "{\"jobs\": [\n  {\"type\": \"main\",}\n]}");
  EXPECT_EQ(ReadError(), plan +
                             ":2:19: error: syntax error while parsing object key - unexpected "
                             "'}'; expected string literal");
  Write("rank0/plan.json", R"({"jobs": [{"micro_batch": 0}]})");
  EXPECT_EQ(ReadError(), plan + ": /jobs/0: error: missing required field 'type'");
  Write("rank0/plan.json", R"({"jobs": [{"type": "main", "micro_batch": "0"}]})");
  EXPECT_EQ(ReadError(),
            plan + ": /jobs/0/micro_batch: error: expected an integer, found a string");
  Write("rank0/plan.json", R"({"jobs": [{"type": "main", "chunk": 0}]})");
  EXPECT_EQ(ReadError(), plan +
                             ": /jobs/0/chunk: error: unknown field 'chunk'\n"
                             "  note: the fields here are: type, micro_batch");
  Write("rank0/plan.json", R"({"schedule": "1F1B"})");
  EXPECT_EQ(ReadError(), plan +
                             ": /schedule: error: unknown field 'schedule'\n"
                             "  note: the fields here are: jobs");
  Write("rank0/plan.json", "{}");
  EXPECT_EQ(ReadError(), plan + ": error: missing required field 'jobs'");
}

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
  WriteProgram("rank1/startup.pdmodel", kStartup);
  WriteProgram("rank1/main.pdmodel", kForward);
  WriteProgram("rank1/forward.pdmodel", kForward);
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
    WriteProgram("rank" + std::to_string(r) + "/startup.pdmodel", kStartup);
    WriteProgram("rank" + std::to_string(r) + "/main.pdmodel", kAllreduce);
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

// kForward declares x as float32 [-1, 4] in its root block.
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
    WriteProgram("rank0/startup.pdmodel", kStartup);
    WriteProgram("rank0/main.pdmodel", micro);
    EXPECT_EQ(Check().find("/feeds/0/shape: error") != std::string::npos, findings)
        << split << " " << shape;
  }
}

// --- hostile sizes ------------------------------------------------------------------------------

TEST_F(BundleTest, DeeplyNestedStrategyIsRefusedBeforeParsing) {
  // 50,000 levels: nlohmann would parse it, but copying or writing it recurses once per level.
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  WriteBundleJson(1, "\"strategy\": {\"a\": " + deep + "}");
  // The bracket past level 64: the document's own brace is level 1, the strategy's level 2.
  const size_t column = std::string(R"({"format": "ir-migrate.bundle", "version": 1, )"
                                    R"("ir": "legacy", "world_size": 1, "strategy": {"a": )")
                            .size() +
                        63;
  EXPECT_EQ(ReadError(), P("bundle.json") + ":1:" + std::to_string(column) +
                             ": error: JSON nested deeper than 64 levels");
  // At the bound it reads.
  const std::string ok = std::string(62, '[') + std::string(62, ']');
  WriteBundleJson(1, "\"strategy\": {\"a\": " + ok + "}");
  EXPECT_EQ(ReadError(), "read fine");
}

TEST_F(BundleTest, DeepPlanJsonIsRefused) {
  const std::string plan = P("p.json");
  StatusOr<std::vector<PlanJob>> jobs =
      ParsePlanJson("{\"jobs\": " + std::string(100, '[') + std::string(100, ']') + "}", plan);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().ToString(), plan + ":1:73: error: JSON nested deeper than 64 levels");
}

// A syntax error quoting a long token keeps its message short (and is found without regex
// recursion over the token).
TEST_F(BundleTest, SyntaxErrorInALongTokenIsShort) {
  // An unterminated string: nlohmann's message quotes all of it.
  const std::string text = "{\"jobs\": [\"" + std::string(1 << 20, 'e');
  StatusOr<std::vector<PlanJob>> jobs = ParsePlanJson(text, "p.json");
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().location().line, 1);
  EXPECT_LT(jobs.status().message().size(), 500u);
  EXPECT_EQ(jobs.status().message().rfind("syntax error while parsing value", 0), 0u)
      << jobs.status().message();
}

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
            "plan.json: /jobs/99999/type: error: field 'type' appears twice");
}

}  // namespace
}  // namespace irm::oldir
