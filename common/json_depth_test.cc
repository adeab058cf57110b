// Tests of the JSON depth check: brackets count outside strings only (escaped quotes included),
// the bound is inclusive, and the finding is located at the first bracket too deep.
#include "common/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace irm {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonDepthTest, DepthAtTheBoundIsAccepted) {
  EXPECT_FALSE(FindJsonTooDeep(Nested(64), 64));
  EXPECT_TRUE(CheckJsonDepth(Nested(64), "a.json", 64).ok());
  EXPECT_FALSE(FindJsonTooDeep("{\"a\": 1}", 1));
  EXPECT_FALSE(FindJsonTooDeep("", 0));
}

TEST(JsonDepthTest, OneLevelMoreIsFoundAtItsBracket) {
  EXPECT_EQ(FindJsonTooDeep(Nested(65), 64), 64u);
  EXPECT_EQ(FindJsonTooDeep("{\"a\": [1, {\"b\": 2}]}", 2), 10u);
}

TEST(JsonDepthTest, SiblingsDoNotAddUp) {
  std::string text = "[";
  for (int i = 0; i < 1000; ++i) text += "[[]],";
  text += "0]";
  EXPECT_FALSE(FindJsonTooDeep(text, 3));
  EXPECT_TRUE(FindJsonTooDeep(text, 2));
}

TEST(JsonDepthTest, BracketsInStringsDoNotCount) {
  EXPECT_FALSE(FindJsonTooDeep(R"({"k": "[[[[{{{{"})", 1));
  // An escaped quote does not end the string; an escaped backslash before a quote does.
  EXPECT_FALSE(FindJsonTooDeep(R"({"k": "\"[[[["})", 1));
  EXPECT_EQ(FindJsonTooDeep(R"({"k": "\\", "l": [[]]})", 2), 18u);
}

TEST(JsonDepthTest, DiagnosticIsLocatedAtLineAndColumn) {
  const Status status = CheckJsonDepth("{\n  \"s\": [[[1]]]\n}", "bundle.json", 3);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kParseError);
  EXPECT_EQ(status.ToString(), "bundle.json:2:10: error: JSON nested deeper than 3 levels");
}

TEST(JsonDepthTest, LineColumnOfOffsets) {
  EXPECT_EQ(TextLineColumn("ab\ncd", 0), std::make_pair(1, 1));
  EXPECT_EQ(TextLineColumn("ab\ncd", 4), std::make_pair(2, 2));
  EXPECT_EQ(TextLineColumn("ab", 99), std::make_pair(1, 3));
}

// 100,000 levels, as a hostile bundle.json strategy holds, are refused without recursion.
TEST(JsonDepthTest, VeryDeepDocumentIsRefusedQuickly) {
  const std::string text = "{\"strategy\": " + Nested(100000) + "}";
  EXPECT_EQ(FindJsonTooDeep(text, kMaxSmallJsonDepth), 13u + kMaxSmallJsonDepth - 1);
}

}  // namespace
}  // namespace irm
