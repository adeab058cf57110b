// Tests of the one region-nesting bound (nesting.h): what the readers accept, the writers write
// and read back; one level more, the writers refuse with the readers' bound named, and the text
// and JSON readers refuse it too. Before the bound was shared, the text reader refused programs
// the printer had written (62 nested pd_op.if).
#include "newir/nesting.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "newir/operation.h"
#include "newir/parser.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "newir/program_io.h"

namespace irm::newir {
namespace {

// `levels` ops "t.r", each in the first region of the one before; the first in the top block.
// Each op has `regions` regions of one block each (2: as pd_op.if's then and else).
Program NestedProgram(int levels, int regions = 1) {
  Program program;
  Block* block = &program.block();
  for (int i = 0; i < levels; ++i) {
    Operation* op = block->PushBack(Operation::Create("t.r", {}, {}, {}, regions));
    for (int r = regions - 1; r >= 0; --r) block = &op->region(r).AddBlock();
  }
  return program;
}

ParseOptions Unregistered() {
  ParseOptions options;
  options.allow_unregistered = true;
  return options;
}

TEST(RegionNestingTest, CountsLevels) {
  EXPECT_EQ(RegionNesting(NestedProgram(0)), 0);
  EXPECT_EQ(RegionNesting(NestedProgram(1)), 1);  // the op's block is one level down
  EXPECT_EQ(RegionNesting(NestedProgram(5)), 5);
  EXPECT_EQ(RegionNesting(NestedProgram(10000)), 10000);  // no recursion: no stack overflow
}

// Sibling regions are one level, not one each: 48 nested ifs (a then and an else region each)
// are 48 levels, as the readers count them.
TEST(RegionNestingTest, SiblingRegionsShareALevel) {
  EXPECT_EQ(RegionNesting(NestedProgram(10, /*regions=*/2)), 10);
  EXPECT_TRUE(CheckRegionNesting(NestedProgram(kMaxRegionNesting, 2), "p.pir").ok());
  EXPECT_FALSE(CheckRegionNesting(NestedProgram(kMaxRegionNesting + 1, 2), "p.pir").ok());
  const std::string text = PrintProgram(NestedProgram(kMaxRegionNesting, 2));
  EXPECT_TRUE(ParseProgram(text, "p.pir", Unregistered()).ok());
}

TEST(RegionNestingTest, AtTheBoundEverythingReadsBack) {
  // The innermost block at level kMaxRegionNesting.
  const Program program = NestedProgram(kMaxRegionNesting);
  EXPECT_TRUE(CheckRegionNesting(program, "p.pir").ok());
  const std::string text = PrintProgram(program);
  StatusOr<Program> from_text = ParseProgram(text, "p.pir", Unregistered());
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  EXPECT_EQ(RegionNesting(*from_text), kMaxRegionNesting);
  StatusOr<Program> from_json = ReadPirJson(WritePirJson(program), "p.json");
  ASSERT_TRUE(from_json.ok()) << from_json.status().ToString();
  EXPECT_EQ(RegionNesting(*from_json), kMaxRegionNesting);
}

TEST(RegionNestingTest, PastTheBoundNothingIsWrittenAndNothingIsRead) {
  const Program program = NestedProgram(kMaxRegionNesting + 1);
  const Status status = CheckRegionNesting(program, "p.pir");
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.diagnostic().Render(),
            "p.pir: op 't.r': error: op 't.r' opens regions 49 levels deep; programs may nest at "
            "most 48 levels of regions (deeper ones cannot be read back)\n");

  // The writer refuses and leaves no file.
  const std::string path =
      (std::filesystem::temp_directory_path() / "irm_nesting_test_refused.pir").string();
  std::filesystem::remove(path);
  EXPECT_EQ(SaveProgramFile(program, path, FileFormat::kText).code(), StatusCode::kInvalid);
  EXPECT_FALSE(std::filesystem::exists(path));

  // Both readers refuse the same program, printed anyway.
  StatusOr<Program> from_text = ParseProgram(PrintProgram(program), "p.pir", Unregistered());
  ASSERT_FALSE(from_text.ok());
  EXPECT_EQ(from_text.status().message(), "regions nested deeper than 48 levels");
  StatusOr<Program> from_json = ReadPirJson(WritePirJson(program), "p.json");
  ASSERT_FALSE(from_json.ok());
  EXPECT_EQ(from_json.status().message(), "regions nested deeper than 48 levels");
}

}  // namespace
}  // namespace irm::newir
