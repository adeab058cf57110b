// The protobuf text reader accepts the enum and field names older Paddle wrote (LOD_TENSOR,
// lod_tensor, lod_level, ...) and the writer prints today's; strings and comments are untouched,
// and a syntax error is reported where it is in the text as written.
#include "oldir/legacy_text_names.h"

#include <gtest/gtest.h>

#include <string>

#include "oldir/program_io.h"

namespace irm::oldir {
namespace {

TEST(LegacyTextNamesTest, OldNamesReadAsTheCurrentOnes) {
  // A var as Paddle 2.6 printed it (paddle/fluid/framework/framework.proto of 2.6).
  const std::string text = R"(blocks { idx: 0 parent_idx: -1
  vars { name: "a" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 } lod_level: 1 } } }
  vars { name: "b" type { type: LOD_TENSOR_ARRAY tensor_array { tensor { data_type: INT64 } lod_level: 2 } } }
  vars { name: "r" type { type: READER reader { lod_tensor { tensor { data_type: FP32 } lod_level: 3 } } } }
  vars { name: "n" type { type: NCCL_COM } }
})";
  StatusOr<Program> program = ParseProgram(text, "old.prototxt", ProgramFormat::kText);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const proto::BlockDesc& block = program->desc().blocks(0);
  EXPECT_EQ(block.vars(0).type().type(), proto::VarType::DENSE_TENSOR);
  EXPECT_EQ(block.vars(0).type().dense_tensor().legacy_lod_level(), 1);
  EXPECT_EQ(block.vars(1).type().type(), proto::VarType::DENSE_TENSOR_ARRAY);
  EXPECT_EQ(block.vars(1).type().tensor_array().legacy_lod_level(), 2);
  EXPECT_EQ(block.vars(2).type().reader().dense_tensor(0).legacy_lod_level(), 3);
  EXPECT_EQ(block.vars(3).type().type(), proto::VarType::RAW);

  StatusOr<std::string> written = SerializeProgram(*program, ProgramFormat::kText);
  ASSERT_TRUE(written.ok());
  EXPECT_NE(written->find("type: DENSE_TENSOR\n"), std::string::npos) << *written;
  EXPECT_NE(written->find("legacy_lod_level: 1"), std::string::npos) << *written;
  EXPECT_EQ(written->find("LOD_TENSOR"), std::string::npos) << *written;
}

TEST(LegacyTextNamesTest, StringsAndCommentsKeepTheirText) {
  const std::string text =
      "# LOD_TENSOR in a comment\n"
      "blocks { idx: 0 parent_idx: -1 vars { name: \"lod_tensor\" type { "
      "type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 } } } "
      "attrs { name: 'lod_level' type: STRING s: \"LOD_TENSOR \\\" lod_level\" } } }";
  StatusOr<Program> program = ParseProgram(text, "old.prototxt", ProgramFormat::kText);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const proto::VarDesc& var = program->desc().blocks(0).vars(0);
  EXPECT_EQ(var.name(), "lod_tensor");
  EXPECT_EQ(var.attrs(0).name(), "lod_level");
  EXPECT_EQ(var.attrs(0).s(), "LOD_TENSOR \" lod_level");
}

TEST(LegacyTextNamesTest, ErrorsPointIntoTheTextAsWritten) {
  // "lod_tensor" (10 bytes) becomes "dense_tensor" (12) before protobuf parses; the error after
  // it must still be at column 49 of line 2 as written.
  const std::string text =
      "blocks { idx: 0 parent_idx: -1\n"
      "vars { name: \"a\" type { type: LOD_TENSOR lod_tensor { bogus: 1 } } } }";
  StatusOr<Program> program = ParseProgram(text, "old.prototxt", ProgramFormat::kText);
  ASSERT_FALSE(program.ok());
  const Location& loc = program.status().diagnostic().location;
  EXPECT_EQ(loc.line, 2);
  // protobuf reports an unknown field just past its name ("bogus", 5 bytes).
  EXPECT_EQ(loc.column,
            5 +
                static_cast<int>(std::string("vars { name: \"a\" type { type: LOD_TENSOR "
                                             "lod_tensor { ")
                                     .size()) +
                1);
  EXPECT_NE(program.status().ToString().find("bogus"), std::string::npos)
      << program.status().ToString();
}

TEST(LegacyTextNamesTest, TextWithoutOldNamesIsNotCopied) {
  const LegacyNameRewrite none("blocks { idx: 0 parent_idx: -1 }");
  EXPECT_FALSE(none.changed());
  EXPECT_TRUE(none.text().empty());
  // An identifier that only starts like an old name is not one.
  const LegacyNameRewrite longer("type: LOD_TENSORS");
  EXPECT_FALSE(longer.changed());
}

TEST(LegacyTextNamesTest, EveryOldNameHasAHistory) {
  for (const LegacyTextName& name : LegacyTextNames()) {
    EXPECT_FALSE(name.history.empty()) << name.old_name;
    EXPECT_NE(name.old_name, name.current_name);
  }
}

}  // namespace
}  // namespace irm::oldir
