// Tests of the bundle's JSON forms (docs/bundle.md): the exact text bundle.json is written as, and
// every reading error of bundle.json and plan.json with its exact, located diagnostic (syntax by
// line:col, structure by JSON pointer), hostile nesting and long tokens included.
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

// --- writing ----------------------------------------------------------------------------------

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

// --- reading errors: the first one stops reading --------------------------------------------

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
      {"[]", ": /: error: expected an object, found an array"},
      {R"({"version": 1})", ": /: error: missing key 'format'"},
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
       ": /world_size: error: integer 4294967296 is out of the int32 range"},
      {"{" + head + R"("world_size": 1, "seed": 18446744073709551615})",
       ": /seed: error: integer 18446744073709551615 is out of range"},
      {"{" + head + R"("world_size": 1, "micro_batch": 2})",
       ": /micro_batch: error: unknown key 'micro_batch'"},
      {"{" + head + R"("world_size": 1, "p2p": "buffered=0"})",
       ": /p2p: error: p2p model 'buffered=0' is not 'rendezvous', 'buffered' or "
       "'buffered=K' (K >= 1 unreceived messages per channel)"},
      {"{" + head + R"("world_size": 1, "p2p": 2})",
       ": /p2p: error: expected a string, found an integer"},
      {"{" + head + R"("world_size": 1, "strategy": "1F1B"})",
       ": /strategy: error: expected an object, found a string"},
      {"{" + head + R"("world_size": 1, "process_groups": [{"ring_id": 0}]})",
       ": /process_groups/0: error: missing key 'ranks'"},
      {"{" + head + R"("world_size": 1, "process_groups": [{"ring_id": 0, "ranks": [0, null]}]})",
       ": /process_groups/0/ranks/1: error: expected an integer, found null"},
      {"{" + head + R"("world_size": 1, "feeds": {"x": 1}})",
       ": /feeds: error: expected an array, found an object"},
      {"{" + head +
           R"("world_size": 1, "feeds": [{"name": "x", "shape": [2.0], "dtype": "float32"}]})",
       ": /feeds/0/shape/0: error: expected an integer, found a float"},
      {"{" + head +
           R"("world_size": 1, "feeds": [{"name": "x", "shape": [2], "dtype": "float32",
              "split": "shard"}]})",
       ": /feeds/0/split: error: expected \"batch\" or \"replicate\", found \"shard\""},
      {"{" + head + R"("world_size": 1, "fetches": ["a", true]})",
       ": /fetches/1: error: expected a string, found a boolean"},
      {"{" + head + R"("world_size": 1, "feeds": [{"name": "x", "shape": [2], "name": "y"}]})",
       ": /feeds/0/name: error: key 'name' appears twice"},
      {"{" + head + R"("world_size": 1, "strategy": {"a/b": [{}, {"k": 1, "k": 2}]}})",
       ": /strategy/a~1b/1/k: error: key 'k' appears twice"},
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
  EXPECT_EQ(ReadError(), plan + ": /jobs/0: error: missing key 'type'");
  Write("rank0/plan.json", R"({"jobs": [{"type": "main", "micro_batch": "0"}]})");
  EXPECT_EQ(ReadError(),
            plan + ": /jobs/0/micro_batch: error: expected an integer, found a string");
  Write("rank0/plan.json", R"({"jobs": [{"type": "main", "chunk": 0}]})");
  EXPECT_EQ(ReadError(), plan + ": /jobs/0/chunk: error: unknown key 'chunk'");
  Write("rank0/plan.json", R"({"schedule": "1F1B"})");
  EXPECT_EQ(ReadError(), plan + ": /schedule: error: unknown key 'schedule'");
  Write("rank0/plan.json", "{}");
  EXPECT_EQ(ReadError(), plan + ": /: error: missing key 'jobs'");
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

}  // namespace
}  // namespace irm::oldir
