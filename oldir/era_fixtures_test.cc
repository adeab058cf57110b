// Programs in the layout of each Paddle era (oldir/testdata/eras, see its README): each validates
// with no error and no warning, says in notes what it is (its writer era, its program inputs,
// its parameter-server ops), and round-trips text -> binary -> text byte for byte. Then, per rule
// the validator relaxes for older writers, the same omission in a current program is still an
// error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

std::string FixturePath(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  return root + "/oldir/testdata/eras/" + name;
}

std::vector<std::string> Messages(const Diagnostics& d, Severity severity) {
  std::vector<std::string> out;
  for (const Diagnostic& item : d.items()) {
    if (item.severity == severity) out.push_back(item.message);
  }
  return out;
}

bool AnyContains(const std::vector<std::string>& messages, const std::string& part) {
  for (const std::string& m : messages) {
    if (m.find(part) != std::string::npos) return true;
  }
  return false;
}

struct EraFixture {
  const char* file;
  std::vector<const char*> notes;  // a part of each note the program must get
};

class EraFixtureTest : public testing::TestWithParam<EraFixture> {};

TEST_P(EraFixtureTest, ValidatesWithoutErrorsOrWarnings) {
  const EraFixture& fixture = GetParam();
  StatusOr<Program> program = LoadProgram(FixturePath(fixture.file));
  ASSERT_TRUE(program.ok()) << program.status().ToString()
                            << " (run from the repository root or set IRM_SOURCE_DIR)";
  ValidateOptions options;
  options.file = fixture.file;
  options.infer_program_inputs = true;  // as `ir-migrate validate` checks one program
  const Diagnostics d = ValidateProgram(*program, options);
  EXPECT_EQ(d.CountOf(Severity::kError), 0) << d.Render();
  EXPECT_EQ(d.CountOf(Severity::kWarning), 0) << d.Render();
  const std::vector<std::string> notes = Messages(d, Severity::kNote);
  EXPECT_EQ(notes.size(), fixture.notes.size()) << d.Render();
  for (const char* part : fixture.notes) {
    EXPECT_TRUE(AnyContains(notes, part)) << "no note says: " << part << "\n" << d.Render();
  }
}

TEST_P(EraFixtureTest, RoundTripsTextAndBinaryByteForByte) {
  StatusOr<Program> program = LoadProgram(FixturePath(GetParam().file));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  StatusOr<std::string> binary = SerializeProgram(*program, ProgramFormat::kBinary);
  ASSERT_TRUE(binary.ok()) << binary.status().ToString();
  StatusOr<Program> from_binary = ParseProgram(*binary, "b.pdmodel", ProgramFormat::kBinary);
  ASSERT_TRUE(from_binary.ok()) << from_binary.status().ToString();
  StatusOr<std::string> text = SerializeProgram(*from_binary, ProgramFormat::kText);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  // The writer spells today's names only.
  EXPECT_EQ(text->find("LOD_TENSOR"), std::string::npos);
  EXPECT_EQ(text->find("lod_tensor"), std::string::npos);
  StatusOr<Program> from_text = ParseProgram(*text, "t.prototxt", ProgramFormat::kText);
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  StatusOr<std::string> binary_again = SerializeProgram(*from_text, ProgramFormat::kBinary);
  ASSERT_TRUE(binary_again.ok());
  EXPECT_TRUE(*binary_again == *binary) << "text -> binary changed the bytes";
  StatusOr<std::string> text_again = SerializeProgram(*from_text, ProgramFormat::kText);
  ASSERT_TRUE(text_again.ok());
  EXPECT_EQ(*text_again, *text);
}

INSTANTIATE_TEST_SUITE_P(
    Eras, EraFixtureTest,
    testing::Values(
        EraFixture{"paddle1_5_ctr_dataset.prototxt",
                   {"input 'C1' of slot 'Ids' is never written: a program input",
                    "input 'C2' of slot 'Ids' is never written: a program input",
                    "checked as written by Paddle 1.0.0 or later (legacy_version, field 2, "
                    "written by Paddle 1.0 to 1.5): 2 finding(s)"}},
        EraFixture{"paddle1_8_feed.prototxt", {}},
        EraFixture{"paddle1_8_ps_trainer.prototxt",
                   {"input 'x' of slot 'X' is never written: a program input",
                    "parameter-server ops (send, send_barrier, recv, fetch_barrier)"}},
        EraFixture{"paddle1_8_ps_server.prototxt",
                   {"input 'w@GRAD' of slot 'X' is never written: a program input",
                    "parameter-server ops (listen_and_serv)"}},
        EraFixture{"paddle2_1_ps_send.prototxt", {"parameter-server ops (send)"}},
        EraFixture{"paddle2_1_feed.prototxt", {}}, EraFixture{"paddle2_6_training.prototxt", {}}),
    [](const testing::TestParamInfo<EraFixture>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      return name;
    });

// The Paddle 1.5 binary keeps ProgramDesc field 2 where Paddle wrote it: 0x12 (field 2, length
// delimited), 2 bytes, 0x08 0x00 (version = 0), right after the blocks.
TEST(EraFixtureBytesTest, FieldTwoIsWrittenAsPaddle15WroteIt) {
  StatusOr<Program> program = LoadProgram(FixturePath("paddle1_5_ctr_dataset.prototxt"));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  StatusOr<std::string> binary = SerializeProgram(*program, ProgramFormat::kBinary);
  ASSERT_TRUE(binary.ok());
  ASSERT_GE(binary->size(), 4u);
  EXPECT_EQ(binary->substr(binary->size() - 4), std::string("\x12\x02\x08\x00", 4));
  EXPECT_TRUE(FindUnknownFields(program->desc()).empty());
}

// ---- each relaxation, and the same omission where it is still an error -----------------------

Diagnostics ValidateText(const std::string& text, ValidateOptions options = {}) {
  StatusOr<Program> program = ParseProgram(text, "t.prototxt", ProgramFormat::kText);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return {};
  options.file = "t.prototxt";
  return ValidateProgram(*program, options);
}

Diagnostics ValidateAlone(const std::string& text) {
  ValidateOptions options;
  options.infer_program_inputs = true;
  return ValidateText(text, options);
}

constexpr const char* kAddGradWithoutX = R"(
blocks {
  idx: 0 parent_idx: -1
  vars { name: "y" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 } } } persistable: true }
  vars { name: "g" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 } } } persistable: true }
  vars { name: "dx" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 } } } }
  ops {
    type: "elementwise_add_grad"
    inputs { parameter: "Y" arguments: "y" }
    inputs { parameter: "Out@GRAD" arguments: "g" }
    outputs { parameter: "X@GRAD" arguments: "dx" }
  }
}
)";

constexpr const char* kMissingX = "required input slot 'X' of 'elementwise_add_grad' is missing";

TEST(EraRelaxationTest, GradWithoutXIsAnErrorOnlyBeforePaddle17) {
  const std::string program = kAddGradWithoutX;
  // Paddle 1.5 (field 2), 1.6 (field 4 version 1006000) and a 1.6-1.8 development build.
  for (const char* era : {"legacy_version { version: 0 }", "version { version: 1006000 }",
                          "version { version: 0 }"}) {
    const Diagnostics d = ValidateText(program + era);
    EXPECT_EQ(d.CountOf(Severity::kError), 0) << era << "\n" << d.Render();
    ASSERT_EQ(d.CountOf(Severity::kNote), 1) << d.Render();
    EXPECT_NE(d.items().back().notes.at(0).find(kMissingX), std::string::npos) << d.Render();
    EXPECT_NE(d.items().back().notes.at(0).find("Paddle writes it since 1.7.0"), std::string::npos);
  }
  // Paddle 1.7 and later, and a program that carries no version, are checked as written now.
  for (const char* era : {"version { version: 1007000 }", "version { version: 3000000 }", ""}) {
    const Diagnostics d = ValidateText(program + era);
    ASSERT_EQ(d.CountOf(Severity::kError), 1) << era << "\n" << d.Render();
    EXPECT_EQ(d.items()[0].message, kMissingX);
  }
}

constexpr const char* kIntForBoolean = R"(
blocks {
  idx: 0 parent_idx: -1
  vars { name: "x" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 dims: 2 } } } persistable: true }
  vars { name: "y" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 dims: 2 } } } }
  vars { name: "z" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 2 } } } }
  ops {
    type: "matmul_v2"
    inputs { parameter: "X" arguments: "x" }
    inputs { parameter: "Y" arguments: "x" }
    outputs { parameter: "Out" arguments: "y" }
    attrs { name: "trans_x" type: INT i: 0 }
  }
  ops {
    type: "fill_constant"
    outputs { parameter: "Out" arguments: "z" }
    attrs { name: "shape" type: INTS ints: 2 }
  }
}
)";

TEST(EraRelaxationTest, ConvertibleAttributeTypesAreErrorsFromPaddle24) {
  const std::string program = kIntForBoolean;
  Diagnostics d = ValidateText(program + "version { version: 2003000 }");
  EXPECT_EQ(d.CountOf(Severity::kError), 0) << d.Render();
  ASSERT_EQ(d.CountOf(Severity::kNote), 1) << d.Render();
  EXPECT_NE(d.items()[0].message.find("Paddle 2.3.0 (ProgramDesc.version 2003000): 2 finding"),
            std::string::npos)
      << d.Render();

  d = ValidateText(program + "version { version: 2004000 }");
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"attribute 'trans_x' has type INT, expected BOOLEAN",
                                      "attribute 'shape' has type INTS, expected LONGS"}));
  // A conversion Paddle does not make stays an error in every era.
  std::string strings = program;
  strings.replace(strings.find("type: INT i: 0"), 14, "type: STRING s: \"0\"");
  d = ValidateText(strings + "legacy_version { version: 0 }");
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"attribute 'trans_x' has type STRING, expected BOOLEAN"}));
}

constexpr const char* kReadsData = R"(
blocks {
  idx: 0 parent_idx: -1
  vars { name: "feed" type { type: FEED_MINIBATCH } persistable: true }
  vars { name: "slot" type { type: LOD_TENSOR lod_tensor { tensor { data_type: INT64 dims: -1 dims: 1 } lod_level: 1 } } }
  vars { name: "out" type { type: LOD_TENSOR lod_tensor { tensor { data_type: INT64 dims: -1 dims: 1 } } } }
  FEED_OP
  ops {
    type: "scale"
    inputs { parameter: "X" arguments: "slot" }
    outputs { parameter: "Out" arguments: "out" }
  }
}
)";

std::string WithFeedOp(const std::string& feed_op) {
  std::string text = kReadsData;
  text.replace(text.find("FEED_OP"), 7, feed_op);
  return text;
}

TEST(EraRelaxationTest, NeverWrittenDataVarsAreProgramInputsOnlyWithoutFeedOps) {
  Diagnostics d = ValidateAlone(WithFeedOp(""));
  EXPECT_EQ(d.CountOf(Severity::kError), 0) << d.Render();
  EXPECT_EQ(Messages(d, Severity::kNote),
            (std::vector<std::string>{
                "input 'slot' of slot 'X' is never written: a program input (a data var fed by a "
                "dataset reader or at run time; the program has no feed ops)"}));

  // A program with feed ops says what is fed: an input no feed op writes is an error.
  d = ValidateAlone(WithFeedOp(R"(ops { type: "feed" inputs { parameter: "X" arguments: "feed" }
      outputs { parameter: "Out" arguments: "out" } attrs { name: "col" type: INT i: 0 } })"));
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"input 'slot' of slot 'X' is not defined before use"}));

  // So does a caller naming the feeds.
  ValidateOptions named;
  named.extra_feeds = {"other"};
  named.infer_program_inputs = true;
  d = ValidateText(WithFeedOp(""), named);
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"input 'slot' of slot 'X' is not defined before use"}));

  // Read before an op writes it: an error, fed or not.
  std::string late = WithFeedOp("");
  late.replace(late.rfind('}'), 1,
               R"(ops { type: "scale" inputs { parameter: "X" arguments: "out" }
                      outputs { parameter: "Out" arguments: "slot" } } })");
  d = ValidateAlone(late);
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"input 'slot' of slot 'X' is not defined before use"}));

  // Turned off (the default, for bundles): the old rule.
  d = ValidateText(WithFeedOp(""));
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"input 'slot' of slot 'X' is not defined before use"}));
}

TEST(EraRelaxationTest, OnlyControlVarsMayLackATensorDescription) {
  const std::string program = R"(
blocks {
  idx: 0 parent_idx: -1
  vars { name: "__control_var@0.25" type { type: LOD_TENSOR } }
  vars { name: "plain" type { type: LOD_TENSOR } }
})";
  const Diagnostics d = ValidateText(program);
  EXPECT_EQ(
      Messages(d, Severity::kError),
      (std::vector<std::string>{"var 'plain' of type DENSE_TENSOR has no tensor description"}));
}

TEST(EraRelaxationTest, ParameterServerOpsKeepTheirSchema) {
  // send needs the vars it sends; the note still names the op.
  const Diagnostics d = ValidateText(R"(
blocks {
  idx: 0 parent_idx: -1
  ops { type: "send" attrs { name: "trainer_id" type: STRING s: "0" } }
})");
  EXPECT_EQ(Messages(d, Severity::kError),
            (std::vector<std::string>{"required input slot 'X' of 'send' is missing",
                                      "attribute 'trainer_id' has type STRING, expected INT"}));
  EXPECT_TRUE(AnyContains(Messages(d, Severity::kNote), "parameter-server ops (send)"));
}

}  // namespace
}  // namespace irm::oldir
