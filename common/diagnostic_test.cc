// Tests of Location / Diagnostic / Diagnostics rendering: the exact text every tool prints, so the
// expected strings here are written out literally.
#include "common/diagnostic.h"

#include <gtest/gtest.h>

namespace irm {
namespace {

TEST(LocationTest, EmptyRendersNothing) {
  Location loc;
  EXPECT_TRUE(loc.empty());
  EXPECT_EQ(loc.Render(), "");
}

TEST(LocationTest, FileOnly) {
  Location loc = Location::File("f.pdmodel");
  EXPECT_FALSE(loc.empty());
  EXPECT_EQ(loc.Render(), "f.pdmodel");
}

TEST(LocationTest, TextPosition) {
  EXPECT_EQ(Location::Text("f.prototxt", 3, 7).Render(), "f.prototxt:3:7");
  // A line without a column prints the line only.
  EXPECT_EQ(Location::Text("f.prototxt", 3, 0).Render(), "f.prototxt:3");
  // Line 0 means "not a text position": the column is not printed either.
  EXPECT_EQ(Location::Text("f.prototxt", 0, 7).Render(), "f.prototxt");
}

TEST(LocationTest, BlockAndOp) {
  Location loc = Location::File("f.pdmodel");
  loc.InBlock(0).AtOp(12, "matmul_v2");
  EXPECT_EQ(loc.Render(), "f.pdmodel: block 0, op 12 (matmul_v2)");
}

TEST(LocationTest, OpWithoutType) {
  Location loc = Location::File("f.pdmodel");
  loc.InBlock(2).AtOp(5, "");
  EXPECT_EQ(loc.Render(), "f.pdmodel: block 2, op 5");
}

TEST(LocationTest, EveryPartInOrder) {
  Location loc = Location::File("f.pdmodel");
  loc.InBlock(1).AtOp(3, "relu").AtVar("x").AtAttr("axis").With("byte 17");
  EXPECT_EQ(loc.Render(), "f.pdmodel: block 1, op 3 (relu), var 'x', attr 'axis', byte 17");
}

TEST(LocationTest, PartsWithoutFile) {
  Location loc;
  loc.AtVar("fc_0.w_0");
  EXPECT_FALSE(loc.empty());
  EXPECT_EQ(loc.Render(), "var 'fc_0.w_0'");
  Location attr;
  attr.AtAttr("op_role");
  EXPECT_EQ(attr.Render(), "attr 'op_role'");
}

TEST(LocationTest, TextPositionAndProgramParts) {
  Location loc = Location::Text("f.prototxt", 4, 2);
  loc.InBlock(0);
  EXPECT_EQ(loc.Render(), "f.prototxt:4:2: block 0");
}

TEST(LocationTest, BlockZeroAndOpZeroAreSet) {
  // Index 0 is a real index (the root block, the first op); only negative means unset.
  Location loc;
  loc.InBlock(0).AtOp(0, "feed");
  EXPECT_FALSE(loc.empty());
  EXPECT_EQ(loc.Render(), "block 0, op 0 (feed)");
}

TEST(LocationTest, EmptyIsFalseForEachPart) {
  Location a;
  a.line = 1;
  EXPECT_FALSE(a.empty());
  Location b;
  b.block = 0;
  EXPECT_FALSE(b.empty());
  Location c;
  c.op = 0;
  EXPECT_FALSE(c.empty());
  Location d;
  d.detail = "x";
  EXPECT_FALSE(d.empty());
  Location e;
  e.attr = "x";
  EXPECT_FALSE(e.empty());
}

TEST(DiagnosticTest, ErrorWithProgramLocation) {
  Location loc = Location::File("f.pdmodel");
  loc.InBlock(0).AtOp(12, "matmul_v2");
  Diagnostic d = Error(loc, "msg");
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.Render(), "f.pdmodel: block 0, op 12 (matmul_v2): error: msg\n");
}

TEST(DiagnosticTest, ErrorWithTextLocation) {
  EXPECT_EQ(Error(Location::Text("f.prototxt", 3, 7), "msg").Render(),
            "f.prototxt:3:7: error: msg\n");
}

TEST(DiagnosticTest, WarningAndNoteSeverities) {
  EXPECT_EQ(Warning(Location::File("a.txt"), "careful").Render(), "a.txt: warning: careful\n");
  Diagnostic note{Severity::kNote, Location::File("a.txt"), "fyi", {}};
  EXPECT_EQ(note.Render(), "a.txt: note: fyi\n");
  EXPECT_STREQ(SeverityName(Severity::kNote), "note");
  EXPECT_STREQ(SeverityName(Severity::kWarning), "warning");
  EXPECT_STREQ(SeverityName(Severity::kError), "error");
}

TEST(DiagnosticTest, NoLocation) {
  EXPECT_EQ(Error(Location{}, "something broke").Render(), "error: something broke\n");
}

TEST(DiagnosticTest, NotesFollowIndented) {
  Diagnostic d = Error(Location::Text("f.prototxt", 3, 7), "msg");
  d.notes = {"first note", "second note"};
  EXPECT_EQ(d.Render(),
            "f.prototxt:3:7: error: msg\n"
            "  note: first note\n"
            "  note: second note\n");
}

TEST(DiagnosticsTest, CollectsCountsAndRenders) {
  Diagnostics all;
  EXPECT_TRUE(all.empty());
  EXPECT_FALSE(all.HasErrors());
  EXPECT_EQ(all.Render(), "");
  all.Add(Warning(Location::File("a"), "w1"));
  EXPECT_FALSE(all.HasErrors());
  all.Add(Error(Location::File("b"), "e1"));
  Diagnostics more;
  more.Add(Error(Location{}, "e2"));
  all.Append(more);
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(all.CountOf(Severity::kWarning), 1);
  EXPECT_EQ(all.CountOf(Severity::kError), 2);
  EXPECT_EQ(all.CountOf(Severity::kNote), 0);
  EXPECT_TRUE(all.HasErrors());
  EXPECT_EQ(all.Render(), "a: warning: w1\nb: error: e1\nerror: e2\n");
  // Append copies: the source is unchanged.
  EXPECT_EQ(more.size(), 1u);
}

}  // namespace
}  // namespace irm
