// Tests of JSON text parsing: syntax errors at file:line:col with nlohmann's message (shortened
// when it quotes a long token), keys given twice refused at their second occurrence, depth refused
// before parsing.
#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace irm {
namespace {

std::string Error(std::string_view text) {
  StatusOr<nlohmann::json> doc = ParseStrictJson(text, "f.json", 8);
  return doc.ok() ? "OK" : doc.status().ToString();
}

TEST(JsonParseTest, ValidDocumentsParse) {
  StatusOr<nlohmann::json> doc =
      ParseStrictJson(R"({"a": [1, {"b": null}], "c": "x"})", "f.json", 8);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ((*doc)["a"][1], nlohmann::json::parse(R"({"b": null})"));
  EXPECT_EQ((*doc)["c"], "x");
}

TEST(JsonParseTest, SyntaxErrorsHaveLineAndColumn) {
  // Line 2 is `  {"t": 1,}`: the '}' in column 11 comes where a key was due.
  EXPECT_EQ(Error("[\n  {\"t\": 1,}\n]"),
            "f.json:2:11: error: syntax error while parsing object key - unexpected '}'; "
            "expected string literal");
  EXPECT_EQ(Error(""),
            "f.json:1:1: error: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal");
}

TEST(JsonParseTest, ALongTokenGivesAShortMessage) {
  const std::string text = "[\"" + std::string(100000, 'a');
  const std::string error = Error(text);
  EXPECT_LT(error.size(), 500u);
  EXPECT_EQ(error.substr(0, 11), "f.json:1:10");
  EXPECT_EQ(error.substr(error.size() - 3), "...");
}

TEST(JsonParseTest, AKeyGivenTwiceIsRefusedAtItsSecondOccurrence) {
  EXPECT_EQ(Error(R"({"a": 1, "a": 2})"), "f.json: /a: error: key 'a' appears twice");
  EXPECT_EQ(Error(R"({"x/y": [{}, {"k": 1, "k": 2}]})"),
            "f.json: /x~1y/1/k: error: key 'k' appears twice");
  // The same key in two objects is fine.
  EXPECT_EQ(Error(R"([{"k": 1}, {"k": 2}])"), "OK");
}

TEST(JsonParseTest, DeepDocumentsAreRefusedBeforeParsing) {
  EXPECT_EQ(Error(std::string(9, '[') + std::string(9, ']')),
            "f.json:1:9: error: JSON nested deeper than 8 levels");
  EXPECT_EQ(Error(std::string(8, '[') + std::string(8, ']')), "OK");
}

}  // namespace
}  // namespace irm
