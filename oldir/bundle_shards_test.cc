// Tests of a bundle rank's shards.json (docs/bundle.md, "shards.json"): the exact text WriteBundle
// writes, write -> read round trips in legacy and pir bundles, the removal of a stale file, every
// reading error with its located diagnostic, and the validator's rules on the shards on their own
// and against the startup program's declarations.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/scratch_dir_test_support.h"
#include "oldir/bundle.h"
#include "oldir/program_io.h"

namespace irm::oldir {
namespace {

namespace fs = std::filesystem;

using Shards = std::map<std::string, ShardSlice>;

// A startup program declaring w [4, 3] and b [3] (persistable), in protobuf text.
const char* kStartupText = R"(blocks { idx: 0 parent_idx: -1
  vars { name: "w" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 4 dims: 3 } } } persistable: true }
  vars { name: "b" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 3 } } } persistable: true }
})";
// main reads nothing it does not declare.
const char* kMainText = R"(blocks { idx: 0 parent_idx: -1
  vars { name: "y" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 3 } } } }
  ops { type: "fill_constant" outputs { parameter: "Out" arguments: "y" }
        attrs { name: "shape" type: LONGS longs: 3 } attrs { name: "value" type: FLOAT f: 1 }
        attrs { name: "dtype" type: INT i: 5 } }
})";

class BundleShardsTest : public ScratchDirTest {
 protected:
  std::string Dir() const { return dir_.string(); }
  void Write(const std::string& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    ASSERT_TRUE(WriteFileAtomically(path.string(), text).ok());
  }
  // A legacy bundle of `world_size` ranks, each running main once per step, written through
  // WriteBundle with the given shards per rank.
  void WriteLegacyBundle(const std::vector<Shards>& shards) {
    StatusOr<Program> startup = ParseProgram(kStartupText, "startup.prototxt");
    ASSERT_TRUE(startup.ok()) << startup.status().ToString();
    StatusOr<Program> main = ParseProgram(kMainText, "main.prototxt");
    ASSERT_TRUE(main.ok()) << main.status().ToString();
    Bundle bundle;
    bundle.world_size = static_cast<int>(shards.size());
    for (size_t r = 0; r < shards.size(); ++r) {
      StatusOr<BundleRank> rank =
          WriteLegacyRankPrograms(Dir(), static_cast<int>(r), *startup, {{"main", *main}});
      ASSERT_TRUE(rank.ok()) << rank.status().ToString();
      rank->shards = shards[r];
      bundle.ranks.push_back(*rank);
    }
    ASSERT_TRUE(WriteBundle(bundle, Dir()).ok());
  }
  // ReadBundle + CheckBundle: the rendered findings, or the reading error.
  std::string Check(bool* usable = nullptr) {
    StatusOr<Bundle> bundle = ReadBundle(Dir());
    if (!bundle.ok()) return "read failed: " + bundle.status().ToString();
    BundleCheck check = CheckBundle(*bundle, Dir());
    if (usable != nullptr) *usable = check.usable;
    return check.findings.Render();
  }
  std::string ReadError() {
    StatusOr<Bundle> bundle = ReadBundle(Dir());
    return bundle.ok() ? "read fine" : bundle.status().ToString();
  }
};

// --- the text -----------------------------------------------------------------------------------

TEST(ShardsJsonTest, TextIsOneVarPerLineSortedByName) {
  const Shards shards = {
      {"linear_0.w_0", {{8, 8}, {0, 4}}}, {"emb \"q\"", {{12, 4}, {6, 0}}}, {"scalar", {{}, {}}}};
  EXPECT_EQ(ShardsJsonText(shards),
            "{\"shards\": {\n"
            "  \"emb \\\"q\\\"\": {\"global_shape\": [12, 4], \"offsets\": [6, 0]},\n"
            "  \"linear_0.w_0\": {\"global_shape\": [8, 8], \"offsets\": [0, 4]},\n"
            "  \"scalar\": {\"global_shape\": [], \"offsets\": []}\n"
            "}}\n");
  EXPECT_EQ(ShardsJsonText({}), "{\"shards\": {}}\n");
}

TEST(ShardsJsonTest, ParsesWhatIsWrittenAndHandWrittenText) {
  const Shards shards = {{"w", {{4, 6}, {0, 3}}}, {"a/b~c", {{2, 3, 5}, {1, 0, 4}}}};
  StatusOr<Shards> back = ParseShardsJson(ShardsJsonText(shards), "shards.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, shards);
  StatusOr<Shards> hand = ParseShardsJson(
      R"({"shards": {"w": {"offsets": [2, 0], "global_shape": [4, 6]}}})", "shards.json");
  ASSERT_TRUE(hand.ok()) << hand.status().ToString();
  EXPECT_EQ(*hand, (Shards{{"w", {{4, 6}, {2, 0}}}}));
  StatusOr<Shards> none = ParseShardsJson(R"({"shards": {}})", "shards.json");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST(ShardsJsonTest, ErrorsAreLocatedByJsonPointer) {
  struct Case {
    std::string text;
    std::string want;  // after "shards.json"
  };
  const std::vector<Case> cases = {
      {"[]", ": /: error: expected an object, found an array"},
      {"{}", ": /: error: missing key 'shards'"},
      {R"({"shards": [], "plan": 1})", ": /plan: error: unknown key 'plan'"},
      {R"({"shards": []})", ": /shards: error: expected an object, found an array"},
      {R"({"shards": {"w": [4, 6]}})", ": /shards/w: error: expected an object, found an array"},
      {R"({"shards": {"w": {"offsets": [0, 3]}}})",
       ": /shards/w: error: missing key 'global_shape'"},
      {R"({"shards": {"w": {"global_shape": [4, 6]}}})",
       ": /shards/w: error: missing key 'offsets'"},
      {R"({"shards": {"w": {"global_shape": [4, 6], "offsets": [0, 3], "offset": [0]}}})",
       ": /shards/w/offset: error: unknown key 'offset'"},
      {R"({"shards": {"a/b": {"global_shape": [4, "6"], "offsets": [0, 3]}}})",
       ": /shards/a~1b/global_shape/1: error: expected an integer, found a string"},
      {R"({"shards": {"w": {"global_shape": [4, 6], "offsets": [0, 3.5]}}})",
       ": /shards/w/offsets/1: error: expected an integer, found a float"},
      {R"({"shards": {"w": {"global_shape": [18446744073709551615], "offsets": [0]}}})",
       ": /shards/w/global_shape/0: error: integer 18446744073709551615 is out of range"},
      {R"({"shards": {"w": {"global_shape": [4], "offsets": [0]}, "w": {}}})",
       ": /shards/w: error: key 'w' appears twice"},
      {"{\"shards\": {\n  \"w\": {\"global_shape\": [4] \"offsets\": [0]}}}",
       ":2:37: error: syntax error while parsing object - unexpected string literal; expected "
       "'}'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseShardsJson(c.text, "shards.json").status().ToString(), "shards.json" + c.want)
        << c.text;
    EXPECT_EQ(ParseShardsJson(c.text, "shards.json").status().code(), StatusCode::kParseError);
  }
}

// --- files --------------------------------------------------------------------------------------

TEST_F(BundleShardsTest, WriteThenReadIsEqualAndOnlyShardedRanksHaveTheFile) {
  const std::vector<Shards> shards = {{{"w", {{4, 6}, {0, 0}}}, {"b", {{6}, {0}}}},
                                      {{"w", {{4, 6}, {0, 3}}}, {"b", {{6}, {3}}}},
                                      {}};
  WriteLegacyBundle(shards);
  StatusOr<Bundle> back = ReadBundle(Dir());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->ranks.size(), 3u);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(back->ranks[r].shards, shards[r]) << r;
  EXPECT_EQ(*ReadFile((dir_ / "rank1/shards.json").string()),
            "{\"shards\": {\n"
            "  \"b\": {\"global_shape\": [6], \"offsets\": [3]},\n"
            "  \"w\": {\"global_shape\": [4, 6], \"offsets\": [0, 3]}\n"
            "}}\n");
  EXPECT_FALSE(fs::exists(dir_ / "rank2/shards.json"));
  EXPECT_EQ(Check(), "");
}

TEST_F(BundleShardsTest, WriteRemovesAStaleShardsFile) {
  Write("rank0/shards.json", R"({"shards": {"w": {"global_shape": [4], "offsets": [0]}}})");
  Write("rank0/plan.json", R"({"jobs": []})");
  Bundle bundle;
  bundle.ranks.resize(1);
  ASSERT_TRUE(WriteBundle(bundle, Dir()).ok());
  EXPECT_FALSE(fs::exists(dir_ / "rank0/shards.json"));
  EXPECT_FALSE(fs::exists(dir_ / "rank0/plan.json"));
  EXPECT_TRUE(fs::is_directory(dir_ / "rank0"));
}

// shards.json ends in .json like a pir bundle's programs; it is never a job's program.
TEST_F(BundleShardsTest, PirBundleReadsShardsJsonAsShardsNotAsAProgram) {
  Write("bundle.json",
        R"({"format": "ir-migrate.bundle", "version": 1, "ir": "pir", "world_size": 1})");
  Write("rank0/startup.json", "{}");
  Write("rank0/main.json", "{}");
  Write("rank0/shards.json", R"({"shards": {"w": {"global_shape": [4, 6], "offsets": [2, 0]}}})");
  StatusOr<Bundle> bundle = ReadBundle(Dir());
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  ASSERT_EQ(bundle->ranks.size(), 1u);
  EXPECT_EQ(bundle->ranks[0].programs, (std::map<std::string, std::string>{{"main", "main.json"}}));
  EXPECT_EQ(bundle->ranks[0].shards, (Shards{{"w", {{4, 6}, {2, 0}}}}));
  EXPECT_EQ(Check(), "");
  EXPECT_FALSE(IsValidJobType("shards"));
}

TEST(ShardsJsonTest, DeepJsonIsRefusedBeforeParsing) {
  const Status deep = ParseShardsJson(R"({"shards": {"w": {"global_shape": )" +
                                          std::string(100, '[') + std::string(100, ']') + "}}}",
                                      "shards.json")
                          .status();
  EXPECT_EQ(deep.ToString(), "shards.json:1:96: error: JSON nested deeper than 64 levels");
}

TEST_F(BundleShardsTest, ReadingStopsAtABadShardsFileNamingIt) {
  WriteLegacyBundle({{}});
  Write("rank0/shards.json", R"({"shards": {"w": {"global_shape": [4], "offsets": 0}}})");
  EXPECT_EQ(ReadError(), (dir_ / "rank0/shards.json").string() +
                             ": /shards/w/offsets: error: expected an array, found an integer");
}

// --- validation ---------------------------------------------------------------------------------

// Rules on the shards alone hold for either IR and make the bundle unusable (exit 2).
TEST_F(BundleShardsTest, OffsetsAndGlobalShapeMustDescribeABox) {
  Write("bundle.json",
        R"({"format": "ir-migrate.bundle", "version": 1, "ir": "pir", "world_size": 1})");
  Write("rank0/startup.json", "{}");
  Write("rank0/main.json", "{}");
  Write("rank0/shards.json", R"({"shards": {
    "": {"global_shape": [4], "offsets": [0]},
    "a": {"global_shape": [4, 6], "offsets": [0]},
    "b": {"global_shape": [0, 6], "offsets": [0, 6]},
    "c": {"global_shape": [4, 6], "offsets": [-1, 3]},
    "d": {"global_shape": [], "offsets": []}}})");
  const std::string file = (dir_ / "rank0/shards.json").string();
  bool usable = true;
  EXPECT_EQ(
      Check(&usable),
      file + ": /shards/: error: a shard needs a var name\n" +  //
          file +
          ": /shards/a/offsets: error: var 'a' has 1 offsets for a global_shape of 2 dims\n" +
          file + ": /shards/b/global_shape/0: error: var 'b': global dim 0 is 0, not positive\n" +
          file + ": /shards/b/offsets/1: error: var 'b': offset 6 of dim 1 is outside [0, 6)\n" +
          file + ": /shards/c/offsets/0: error: var 'c': offset -1 of dim 0 is outside [0, 4)\n");
  EXPECT_FALSE(usable);
}

// Legacy bundles: the startup program must declare each sharded var as a tensor that fits the box.
TEST_F(BundleShardsTest, LegacyShardsMustFitTheStartupDeclarations) {
  WriteLegacyBundle(
      {{{"w", {{4, 6}, {0, 3}}}, {"b", {{6}, {4}}}, {"v", {{4, 6}, {0, 0}}}, {"y", {{3}, {0}}}},
       {{"w", {{8, 6}, {4, 3}}}, {"b", {{6, 1}, {3, 0}}}}});
  const std::string startup0 = (dir_ / "rank0/startup.pdmodel").string();
  const std::string startup1 = (dir_ / "rank1/startup.pdmodel").string();
  const std::string file0 = (dir_ / "rank0/shards.json").string();
  const std::string file1 = (dir_ / "rank1/shards.json").string();
  bool usable = false;
  EXPECT_EQ(
      Check(&usable),
      // b [3] at offset 4 reaches 7 > 6.
      file0 +
          ": /shards/b/offsets/0: error: var 'b': dim 0 reaches 4 + 3 = 7, past the global dim "
          "6; " +
          startup0 + " declares it as float32 [3] (block 0, var 'b')\n" +
          // v is declared by no program; y only by main, which does not initialise parameters.
          file0 + ": /shards/v: error: var 'v' is sharded, but the startup program " + startup0 +
          " does not declare it as a dense tensor in block 0\n" +  //
          file0 + ": /shards/y: error: var 'y' is sharded, but the startup program " + startup0 +
          " does not declare it as a dense tensor in block 0\n" +
          // b has one dim, not two.
          file1 + ": /shards/b/global_shape: error: var 'b' has 2 global dims, but " + startup1 +
          " declares it as float32 [3] (block 0, var 'b')\n");
  // The programs are readable but disagree with the shards: `validate` exits 1.
  EXPECT_TRUE(usable);
}

}  // namespace
}  // namespace irm::oldir
