// Tests of the shared JSON reader: kind names, lazy pointers (escaping, indices, rendered roots),
// and each check's exact diagnostic, on nlohmann::json and ordered_json alike.
#include "common/json_access.h"

#include <gtest/gtest.h>

#include <string>

namespace irm {
namespace {

using nlohmann::json;

TEST(JsonAccessTest, KindNames) {
  EXPECT_STREQ(JsonKindName(json(nullptr)), "null");
  EXPECT_STREQ(JsonKindName(json(true)), "a boolean");
  EXPECT_STREQ(JsonKindName(json(-3)), "an integer");
  EXPECT_STREQ(JsonKindName(json(3u)), "an integer");
  EXPECT_STREQ(JsonKindName(json(1.5)), "a float");
  EXPECT_STREQ(JsonKindName(json("x")), "a string");
  EXPECT_STREQ(JsonKindName(json::array()), "an array");
  EXPECT_STREQ(JsonKindName(json::object()), "an object");
  EXPECT_STREQ(JsonKindName(nlohmann::ordered_json::object()), "an object");
}

TEST(JsonAccessTest, PathsRenderWithEscapesAndIndices) {
  const JsonPath root;
  EXPECT_EQ(root.Render(), "");
  const JsonPath feeds = root / "feeds";
  const JsonPath feed = feeds / size_t{2};
  EXPECT_EQ((feed / "dtype").Render(), "/feeds/2/dtype");
  EXPECT_EQ((root / "a/b" / "c~d").Render(), "/a~1b/c~0d");
  EXPECT_EQ((root / "").Render(), "/");
  const JsonPath rendered = JsonPath::Rendered("/shards/a~1b");
  EXPECT_EQ(rendered.Render(), "/shards/a~1b");
  EXPECT_EQ((rendered / "offsets" / size_t{0}).Render(), "/shards/a~1b/offsets/0");
  EXPECT_EQ(JsonPointerChild("/x", "y/z"), "/x/y~1z");
  EXPECT_EQ(JsonPointerChild("/x", size_t{3}), "/x/3");
}

std::string Error(const Status& status) { return status.ToString(); }

TEST(JsonAccessTest, WrongKindsNameWhatWasFound) {
  const JsonAccess a("f.json");
  const JsonPath root;
  const json doc = json::parse(R"({"n": "3", "s": 4, "b": 1, "o": [], "f": 1.5, "a": {}})");
  EXPECT_EQ(Error(a.Int(doc["n"], root / "n").status()),
            "f.json: /n: error: expected an integer, found a string");
  EXPECT_EQ(Error(a.String(doc["s"], root / "s").status()),
            "f.json: /s: error: expected a string, found an integer");
  EXPECT_EQ(Error(a.Bool(doc["b"], root / "b").status()),
            "f.json: /b: error: expected a boolean, found an integer");
  EXPECT_EQ(Error(a.Object(doc["o"], root / "o", {"x"})),
            "f.json: /o: error: expected an object, found an array");
  EXPECT_EQ(Error(a.Int(doc["f"], root / "f").status()),
            "f.json: /f: error: expected an integer, found a float");
  EXPECT_EQ(Error(a.Number(doc["n"], root / "n").status()),
            "f.json: /n: error: expected a number, found a string");
  EXPECT_EQ(Error(a.Ints(doc["a"], root / "a").status()),
            "f.json: /a: error: expected an array, found an object");
  // The whole document is "/".
  EXPECT_EQ(Error(a.Expect(json::array(), root, json::value_t::object)),
            "f.json: /: error: expected an object, found an array");
}

TEST(JsonAccessTest, KeysMissingAtTheObjectUnknownAtTheMember) {
  const JsonAccess a("f.json");
  const JsonPath root;
  const json doc = json::parse(R"({"jobs": [{"type": "x", "chunk": 1}, {}]})");
  const JsonPath jobs = root / "jobs";
  EXPECT_EQ(Error(a.Object(doc["jobs"][0], jobs / size_t{0}, {"type", "micro_batch"})),
            "f.json: /jobs/0/chunk: error: unknown key 'chunk'");
  EXPECT_EQ(Error(a.Required(doc["jobs"][1], jobs / size_t{1}, "type").status()),
            "f.json: /jobs/1: error: missing key 'type'");
  EXPECT_EQ(Error(a.Member(doc, root, "jobs", json::value_t::object).status()),
            "f.json: /jobs: error: expected an object, found an array");
  EXPECT_TRUE(a.Object(doc, root, std::vector<std::string_view>{"jobs"}).ok());
  EXPECT_EQ(JsonAccess::Find(doc, "none"), nullptr);
  ASSERT_NE(JsonAccess::Find(doc, "jobs"), nullptr);
}

TEST(JsonAccessTest, IntegersOutOfRange) {
  const JsonAccess a("f.json");
  const JsonPath root;
  const json doc = json::parse(R"([18446744073709551615, 2147483648, -2147483649, -2147483648])");
  EXPECT_EQ(Error(a.Int(doc[0], root / size_t{0}).status()),
            "f.json: /0: error: integer 18446744073709551615 is out of range");
  EXPECT_EQ(Error(a.Int32(doc[1], root / size_t{1}).status()),
            "f.json: /1: error: integer 2147483648 is out of the int32 range");
  EXPECT_EQ(Error(a.Int32(doc[2], root / size_t{2}).status()),
            "f.json: /2: error: integer -2147483649 is out of the int32 range");
  StatusOr<int32_t> low = a.Int32(doc[3], root / size_t{3});
  ASSERT_TRUE(low.ok());
  EXPECT_EQ(*low, -2147483648);
  StatusOr<std::vector<int64_t>> ints = a.Ints(json::parse("[1, -2, \"3\"]"), root);
  EXPECT_EQ(Error(ints.status()), "f.json: /2: error: expected an integer, found a string");
}

TEST(JsonAccessTest, ArraysReadEachElementAtItsIndex) {
  const JsonAccess a("f.json");
  const JsonPath root;
  auto names = [&](const json& j) {
    return a.Array<std::string>(j, root,
                                [&](const JsonPath& p, const json& e) { return a.String(e, p); });
  };
  StatusOr<std::vector<std::string>> ok = names(json::parse(R"(["a", "b"])"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Error(names(json::parse(R"(["a", null])")).status()),
            "f.json: /1: error: expected a string, found null");
}

TEST(JsonAccessTest, OrderedDocumentsReadAlike) {
  const JsonAccess a("r.json");
  const JsonPath root;
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(R"({"b": 1, "z": true})");
  EXPECT_EQ(Error(a.Object(doc, root, {"b"})), "r.json: /z: error: unknown key 'z'");
  EXPECT_EQ(Error(a.String(doc["b"], root / "b").status()),
            "r.json: /b: error: expected a string, found an integer");
  StatusOr<int64_t> b = a.Int(doc["b"], root / "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 1);
}

TEST(JsonAccessTest, LocationsOfTextPointers) {
  EXPECT_EQ(JsonLocation("b.json", "").Render(), "b.json: /");
  EXPECT_EQ(JsonLocation("b.json", "/feeds/0").Render(), "b.json: /feeds/0");
}

}  // namespace
}  // namespace irm
