// The writer era read from a program's version fields (the rules of oldir/schema_era.h, from the
// history of Paddle's framework.proto and program_desc.cc).
#include "oldir/schema_era.h"

#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

namespace irm::oldir {
namespace {

namespace proto = ::paddle::framework::proto;

WriterEra EraOf(const std::string& text) {
  proto::ProgramDesc desc;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &desc)) << text;
  return DetermineWriterEra(desc);
}

TEST(SchemaEraTest, ReleaseVersionIsExact) {
  const WriterEra era = EraOf("version { version: 1008005 } op_version_map {}");
  EXPECT_EQ(era.at_least, PaddleVersion(1, 8, 5));
  EXPECT_TRUE(era.exact);
  EXPECT_EQ(era.Describe(), "Paddle 1.8.5 (ProgramDesc.version 1008005)");
  EXPECT_TRUE(era.MayPredate(PaddleVersion(1, 9)));
  EXPECT_FALSE(era.MayPredate(PaddleVersion(1, 8, 5)));
}

TEST(SchemaEraTest, DevelopmentBuildsGiveALowerBound) {
  EXPECT_EQ(EraOf("version { version: 0 } op_version_map { }").at_least, PaddleVersion(2, 0));
  EXPECT_EQ(EraOf("version { version: 0 } op_compatible_map { }").at_least, PaddleVersion(1, 6));
  EXPECT_EQ(EraOf("version { version: 0 }").at_least, PaddleVersion(1, 6));
  EXPECT_EQ(EraOf("op_version_map { }").at_least, PaddleVersion(2, 0));
  const WriterEra era = EraOf("version { version: 0 }");
  EXPECT_FALSE(era.exact);
  EXPECT_EQ(era.Describe(), "Paddle 1.6.0 or later (ProgramDesc.version 0, a development build)");
}

TEST(SchemaEraTest, FieldTwoMeansPaddle10To15) {
  const WriterEra era = EraOf("legacy_version { version: 0 }");
  EXPECT_EQ(era.at_least, PaddleVersion(1, 0));
  EXPECT_TRUE(era.MayPredate(PaddleVersion(1, 7)));
}

TEST(SchemaEraTest, NoVersionAtAllIsCheckedAsCurrent) {
  const WriterEra era = EraOf("blocks { idx: 0 parent_idx: -1 }");
  EXPECT_TRUE(era.IsCurrent());
  EXPECT_FALSE(era.MayPredate(PaddleVersion(3, 1)));
  EXPECT_EQ(era.Describe(), "a current program (it carries no version)");
}

TEST(SchemaEraTest, VersionNames) {
  EXPECT_EQ(PaddleVersionName(2006000), "2.6.0");
  EXPECT_EQ(PaddleVersionName(1008005), "1.8.5");
  EXPECT_EQ(PaddleVersionName(0), "0");
}

}  // namespace
}  // namespace irm::oldir
