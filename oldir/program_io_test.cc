// Tests of program I/O: binary <-> text round trips that keep every byte, unknown fields kept in
// binary and refused (or dropped on request) in text, format detection by content, and bad input —
// truncated, random and corrupt bytes, wrong wire types, bad enum values, missing required fields,
// text syntax errors — each with its exact diagnostic and location. Byte offsets and expected
// diagnostics are computed by hand from the hand-written inputs.
#include "oldir/program_io.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "oldir/editor.h"
#include "oldir/test_bytes.h"
#include "oldir/validator.h"
#include "oldir/wire_check.h"

namespace irm::oldir {
namespace {

namespace fs = std::filesystem;

using wire_test::B;
using wire_test::Hex;

#define EXPECT_BYTES(actual, expected) EXPECT_EQ(Hex(actual), Hex(expected))

// The rendered diagnostic of a failed parse, or "OK".
std::string ParseError(const std::string& bytes, const std::string& file,
                       std::optional<ProgramFormat> format = std::nullopt) {
  StatusOr<Program> p = ParseProgram(bytes, file, format);
  return p.ok() ? "OK" : p.status().ToString();
}

proto::OpCompatibleMap* MutableLegacyCompatMap(proto::ProgramDesc* desc) {
  const auto* field = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
  return static_cast<proto::OpCompatibleMap*>(desc->GetReflection()->MutableMessage(desc, field));
}

std::string Bin(const Program& p) {
  StatusOr<std::string> bytes = SerializeProgram(p, ProgramFormat::kBinary);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : "";
}

// ---- a program that uses everything
// --------------------------------------------------------------

void AddDense(proto::BlockDesc* block, const std::string& name, proto::VarType::Type dtype,
              const std::vector<int64_t>& dims, int lod = 0) {
  proto::VarDesc* var = block->add_vars();
  var->set_name(name);
  VarEditor(var).SetDenseTensor(dtype, dims, lod);
}

// Every AttrType (several values per type, the awkward ones included), nested blocks
// (conditional_block -> block 1 -> while -> block 2, and a backward block 3 with a forward
// block), var attrs, every var kind, version, op_version_map and the legacy op_compatible_map.
proto::ProgramDesc RichProgram() {
  proto::ProgramDesc desc;
  proto::BlockDesc* b0 = desc.add_blocks();
  b0->set_idx(0);
  b0->set_parent_idx(-1);
  proto::BlockDesc* b1 = desc.add_blocks();
  b1->set_idx(1);
  b1->set_parent_idx(0);
  proto::BlockDesc* b2 = desc.add_blocks();
  b2->set_idx(2);
  b2->set_parent_idx(1);
  b2->set_forward_block_idx(-1);  // the default, but set: must survive as written
  proto::BlockDesc* b3 = desc.add_blocks();
  b3->set_idx(3);
  b3->set_parent_idx(0);
  b3->set_forward_block_idx(1);

  // Block 0 vars: every var kind.
  proto::VarDesc* feed = b0->add_vars();
  feed->set_name("feed");
  VarEditor(feed).SetType(proto::VarType::FEED_MINIBATCH).SetPersistable(true);
  proto::VarDesc* fetch = b0->add_vars();
  fetch->set_name("fetch");
  VarEditor(fetch).SetType(proto::VarType::FETCH_LIST).SetPersistable(true);
  AddDense(b0, "x", proto::VarType::FP32, {-1, 3}, 1);
  b0->mutable_vars(2)->set_need_check_feed(true);
  AddDense(b0, "cond", proto::VarType::BOOL, {1});
  AddDense(b0, "w", proto::VarType::BF16, {3, 4});
  proto::VarDesc* w = b0->mutable_vars(4);
  VarEditor(w).SetPersistable(true).SetIsParameter(true).SetStopGradient(false);
  proto::VarDesc::Attr* va = w->add_attrs();
  va->set_name("is_distributed");
  va->set_type(proto::INT);
  va->set_i(1);
  va = w->add_attrs();
  va->set_name("tag");
  va->set_type(proto::STRING);
  va->set_s("weight");
  va = w->add_attrs();
  va->set_name("mesh");
  va->set_type(proto::INTS);
  va->add_ints(2);
  va->add_ints(-4);
  proto::VarDesc* arr = b0->add_vars();
  arr->set_name("arr");
  arr->mutable_type()->set_type(proto::VarType::DENSE_TENSOR_ARRAY);
  arr->mutable_type()->mutable_tensor_array()->mutable_tensor()->set_data_type(
      proto::VarType::INT64);
  arr->mutable_type()->mutable_tensor_array()->set_legacy_lod_level(2);
  proto::VarDesc* rows = b0->add_vars();
  rows->set_name("rows");
  rows->mutable_type()->set_type(proto::VarType::SELECTED_ROWS);
  rows->mutable_type()->mutable_selected_rows()->set_data_type(proto::VarType::FP16);
  rows->mutable_type()->mutable_selected_rows()->add_dims(100);
  proto::VarDesc* reader = b0->add_vars();
  reader->set_name("reader");
  reader->mutable_type()->set_type(proto::VarType::READER);
  auto* rd = reader->mutable_type()->mutable_reader()->add_dense_tensor();
  rd->mutable_tensor()->set_data_type(proto::VarType::UINT8);
  rd->mutable_tensor()->add_dims(-1);
  proto::VarDesc* tuple = b0->add_vars();
  tuple->set_name("tuple");
  tuple->mutable_type()->set_type(proto::VarType::TUPLE);
  tuple->mutable_type()->mutable_tuple()->add_element_type(proto::VarType::FP32);
  tuple->mutable_type()->mutable_tuple()->add_element_type(proto::VarType::COMPLEX128);
  proto::VarDesc* str = b0->add_vars();
  str->set_name("str");
  str->mutable_type()->set_type(proto::VarType::STRINGS);
  str->mutable_type()->mutable_strings()->set_data_type(proto::VarType::PSTRING);

  // Block 0 ops.
  OpEditor(b0->add_ops())
      .SetType("feed")
      .SetInput("X", {"feed"})
      .SetOutput("Out", {"x"})
      .SetAttr("col", int32_t{0});
  proto::OpDesc* all = b0->add_ops();
  const float kFloatNan = std::numeric_limits<float>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  OpEditor(all)
      .SetType("every_attr")
      .SetInput("X", {"x", "w"})
      .SetInput("Empty", {})
      .SetOutput("Out", {"y"})
      .SetAttr("int", int32_t{-7})
      .SetAttr("int_min", std::numeric_limits<int32_t>::min())
      .SetAttr("float", 0.1f)
      .SetAttr("float_neg_zero", -0.0f)
      .SetAttr("float_denorm", std::numeric_limits<float>::denorm_min())
      .SetAttr("float_max", FLT_MAX)
      .SetAttr("float_inf", std::numeric_limits<float>::infinity())
      .SetAttr("float_nan", kFloatNan)
      .SetAttr("string", std::string("q\"uote\\back\nnl\ttab\x01\x7f\xff\xc3\xa9 end", 27))
      .SetAttr("string_nul", std::string("a\0b", 3))
      .SetAttr("string_empty", std::string())
      .SetAttr("ints", std::vector<int32_t>{0, -1, std::numeric_limits<int32_t>::max()})
      .SetAttr("ints_empty", std::vector<int32_t>{})
      .SetAttr("floats", std::vector<float>{1.0f / 3.0f, -1e-30f, 16777217.0f})
      .SetAttr("strings", std::vector<std::string>{"", "a b", "\xe4\xb8\xad"})
      .SetAttr("bool", true)
      .SetAttr("bool_false", false)
      .SetAttr("bools", std::vector<bool>{false, true, true})
      .SetAttr("block", BlockRef{1})
      .SetAttr("long", std::numeric_limits<int64_t>::min())
      .SetAttr("long_max", std::numeric_limits<int64_t>::max())
      .SetAttr("blocks", BlockRefs{{1, 2}})
      .SetAttr("longs", std::vector<int64_t>{-1, int64_t{1} << 53, 0})
      .SetAttr("float64s", std::vector<double>{0.1, 1.0 / 3.0, DBL_MIN, -kInf, -0.0,
                                               std::numeric_limits<double>::denorm_min()})
      .SetAttr("var", VarRef{"x"})
      .SetAttr("vars", VarRefs{{"x", "w"}})
      .SetAttr("float64", 2.718281828459045)
      .SetAttr("float64_nan", std::numeric_limits<double>::quiet_NaN())
      .SetAttr("scalar", MakeScalar(int64_t{-3}))
      .SetAttr("scalars", std::vector<proto::Scalar>{MakeScalar(true), MakeScalar(0.5)})
      .SetAttr("op_role", int32_t{0});
  proto::Scalar complex_scalar;
  complex_scalar.set_type(proto::Scalar::COMPLEX128);
  complex_scalar.mutable_c()->set_r(1.5);
  complex_scalar.mutable_c()->set_i(-2.25);
  OpEditor(all).SetAttr("scalar_complex", complex_scalar);
  all->set_is_target(true);
  OpEditor(b0->add_ops())
      .SetType("conditional_block")
      .SetInput("Cond", {"cond"})
      .SetInput("Input", {"x"})
      .SetOutput("Out", {"arr"})
      .SetOutput("Scope", {"scope"})
      .SetAttr("sub_block", BlockRef{1})
      .SetAttr("is_scalar_condition", true);

  // Block 1: a while whose body is block 2.
  AddDense(b1, "i", proto::VarType::INT64, {1});
  OpEditor(b1->add_ops())
      .SetType("while")
      .SetInput("X", {"x", "i"})
      .SetInput("Condition", {"cond"})
      .SetOutput("Out", {"x"})
      .SetOutput("StepScopes", {"scopes"})
      .SetAttr("sub_block", BlockRef{2})
      .SetAttr("is_test", false);
  // Block 2: the loop body.
  OpEditor(b2->add_ops())
      .SetType("increment")
      .SetInput("X", {"i"})
      .SetOutput("Out", {"i"})
      .SetAttr("step", 1.0f);
  // Block 3: a grad block.
  OpEditor(b3->add_ops()).SetType("while_grad").SetAttr("op_role", int32_t{1});

  desc.mutable_version()->set_version(2006000);
  auto* pair = desc.mutable_op_version_map()->add_pair();
  pair->set_op_name("while");
  pair->mutable_op_version()->set_version(1);
  pair = desc.mutable_op_version_map()->add_pair();
  pair->set_op_name("conditional_block");
  pair->mutable_op_version()->set_version(2);
  proto::OpCompatibleMap* compat = MutableLegacyCompatMap(&desc);
  auto* cpair = compat->add_pair();
  cpair->set_op_name("while");
  cpair->mutable_compatible_info()->set_version("1.6.0");
  cpair->mutable_compatible_info()->set_type(
      proto::OpCompatibleMap::CompatibleInfo::DEFINITELY_NOT);
  compat->set_default_required_version("1.5.0");
  return desc;
}

class ProgramIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "irm_program_io_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// ---- round trips -------------------------------------------------------------------------------

TEST(RoundTripTest, BinaryTextBinaryIsByteIdentical) {
  Program program(RichProgram());
  ASSERT_TRUE(program.desc().IsInitialized());
  const std::string binary = Bin(program);
  ASSERT_FALSE(binary.empty());

  // Read back from bytes first: the binary reader keeps everything.
  StatusOr<Program> from_binary = ParseProgram(binary, "rich.pdmodel");
  ASSERT_TRUE(from_binary.ok()) << from_binary.status().ToString();
  EXPECT_TRUE(FindUnknownFields(from_binary->desc()).empty());
  EXPECT_BYTES(Bin(*from_binary), binary);

  StatusOr<std::string> text = SerializeProgram(*from_binary, ProgramFormat::kText);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(DetectProgramFormat(*text), ProgramFormat::kText);
  StatusOr<Program> from_text = ParseProgram(*text, "rich.prototxt");
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  EXPECT_BYTES(Bin(*from_text), binary);

  // And text -> binary -> text is stable too.
  StatusOr<std::string> text2 = SerializeProgram(*from_text, ProgramFormat::kText);
  ASSERT_TRUE(text2.ok());
  EXPECT_EQ(*text2, *text);
}

TEST(RoundTripTest, TextFormHasHeaderAndNamedFields) {
  StatusOr<std::string> text = SerializeProgram(Program(RichProgram()), ProgramFormat::kText);
  ASSERT_TRUE(text.ok());
  // The header tells editors which schema the file follows.
  EXPECT_EQ(text->rfind("# proto-file: oldir/proto/framework.proto\n"
                        "# proto-message: paddle.framework.proto.ProgramDesc\n"
                        "blocks {\n",
                        0),
            0u);
  // The legacy field 3 is a declared field, so it survives text by name.
  EXPECT_NE(text->find("op_compatible_map {\n"), std::string::npos);
  EXPECT_NE(text->find("      type: DEFINITELY_NOT\n"), std::string::npos);
  EXPECT_NE(text->find("version {\n  version: 2006000\n}\n"), std::string::npos);
  EXPECT_NE(text->find("op_version_map {\n  pair {\n    op_name: \"while\"\n"), std::string::npos);
  EXPECT_NE(text->find("f: nan\n"), std::string::npos);
  EXPECT_NE(text->find("f: inf\n"), std::string::npos);
  EXPECT_NE(text->find("float64s: -inf\n"), std::string::npos);
}

TEST(RoundTripTest, SpecialFloatsSurviveTextBitForBit) {
  StatusOr<std::string> text = SerializeProgram(Program(RichProgram()), ProgramFormat::kText);
  ASSERT_TRUE(text.ok());
  StatusOr<Program> back = ParseProgram(*text, "t");
  ASSERT_TRUE(back.ok());
  Op op = back->root().op(1);
  ASSERT_EQ(op.type(), "every_attr");
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  EXPECT_EQ(bits(*op.Attr<float>("float_neg_zero")), 0x80000000u);
  EXPECT_EQ(bits(*op.Attr<float>("float_denorm")), 0x00000001u);
  EXPECT_EQ(bits(*op.Attr<float>("float_max")), 0x7f7fffffu);
  EXPECT_EQ(bits(*op.Attr<float>("float")), 0x3dcccccdu);  // 0.1f
  EXPECT_EQ(bits(*op.Attr<float>("float_nan")), 0x7fc00000u);
  EXPECT_EQ(*op.Attr<std::string>("string"),
            std::string("q\"uote\\back\nnl\ttab\x01\x7f\xff\xc3\xa9 end", 27));
  EXPECT_EQ(*op.Attr<std::string>("string_nul"), std::string("a\0b", 3));
  EXPECT_EQ(*op.Attr<int64_t>("long"), std::numeric_limits<int64_t>::min());
}

// The hand-written program of wire_compat_test (root block, legacy op_compatible_map, version,
// op_version_map) round-trips through text unchanged.
const std::string kHandProgram = B({
    0x0a, 0x0d, 0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    0x1a, 0x1a, 0x0a, 0x11, 0x0a, 0x04, 'r',  'e',  'l',  'u',  0x12, 0x09, 0x0a, 0x05, '1',
    '.',  '6',  '.',  '0',  0x10, 0x02, 0x12, 0x05, '1',  '.',  '5',  '.',  '0',  //
    0x22, 0x04, 0x08, 0xd2, 0x98, 0x7a,                                           //
    0x2a, 0x0c, 0x0a, 0x0a, 0x0a, 0x04, 'r',  'e',  'l',  'u',  0x12, 0x02, 0x08, 0x02,
});

TEST(RoundTripTest, HandWrittenBinaryThroughText) {
  StatusOr<Program> p = ParseProgram(kHandProgram, "h.pdmodel");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  StatusOr<std::string> text = SerializeProgram(*p, ProgramFormat::kText);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "# proto-file: oldir/proto/framework.proto\n"
            "# proto-message: paddle.framework.proto.ProgramDesc\n"
            "blocks {\n"
            "  idx: 0\n"
            "  parent_idx: -1\n"
            "}\n"
            "op_compatible_map {\n"
            "  pair {\n"
            "    op_name: \"relu\"\n"
            "    compatible_info {\n"
            "      version: \"1.6.0\"\n"
            "      type: POSSIBLE\n"
            "    }\n"
            "  }\n"
            "  default_required_version: \"1.5.0\"\n"
            "}\n"
            "version {\n"
            "  version: 2002002\n"
            "}\n"
            "op_version_map {\n"
            "  pair {\n"
            "    op_name: \"relu\"\n"
            "    op_version {\n"
            "      version: 2\n"
            "    }\n"
            "  }\n"
            "}\n");
  StatusOr<Program> back = ParseProgram(*text, "h.prototxt");
  ASSERT_TRUE(back.ok());
  EXPECT_BYTES(Bin(*back), kHandProgram);
}

TEST_F(ProgramIoTest, SaveAndLoadBothFormats) {
  Program program(RichProgram());
  const std::string binary = Bin(program);
  ASSERT_TRUE(SaveProgram(program, Path("m.pdmodel"), ProgramFormat::kBinary).ok());
  ASSERT_TRUE(SaveProgram(program, Path("m.prototxt"), ProgramFormat::kText).ok());
  StatusOr<std::string> on_disk = ReadFile(Path("m.pdmodel"));
  ASSERT_TRUE(on_disk.ok());
  EXPECT_BYTES(*on_disk, binary);  // a .pdmodel is the raw message, no header

  // LoadProgram detects the format from the content, not the name: swap the names.
  fs::rename(Path("m.pdmodel"), Path("binary.prototxt"));
  fs::rename(Path("m.prototxt"), Path("text.pdmodel"));
  StatusOr<Program> a = LoadProgram(Path("binary.prototxt"));
  StatusOr<Program> b = LoadProgram(Path("text.pdmodel"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_BYTES(Bin(*a), binary);
  EXPECT_BYTES(Bin(*b), binary);
}

TEST_F(ProgramIoTest, LoadMissingFile) {
  StatusOr<Program> p = LoadProgram(Path("nope.pdmodel"));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
}

TEST_F(ProgramIoTest, LoadErrorNamesTheFile) {
  const std::string path = Path("bad.prototxt");
  ASSERT_TRUE(WriteFileAtomically(path, "blocks {\n  idx: 0\n  parent_idx: x\n}\n").ok());
  StatusOr<Program> p = LoadProgram(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kParseError);
  EXPECT_EQ(p.status().ToString(), path + ":3:15: error: Expected integer, got: x");
}

// ---- unknown fields ----------------------------------------------------------------------------

// Root block with a relu op; unknown fields appended by hand at the end of the op (field 99
// varint 42), the block (field 98 length-delimited "hi") and the program (field 99 fixed32).
const std::string kWithUnknown = B({
    0x0a, 0x1d,                                                                    // blocks, 29
    0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // idx, parent
    0x22, 0x09,                                                                    //   ops, 9
    0x1a, 0x04, 'r',  'e',  'l',  'u',                                             //     type
    0x98, 0x06, 0x2a,                    //     field 99 (99<<3|0 = 792 = 98 06), varint 42
    0x92, 0x06, 0x02, 'h',  'i',         //   field 98 (98<<3|2 = 786 = 92 06), "hi"
    0x9d, 0x06, 0x01, 0x02, 0x03, 0x04,  // field 99 (99<<3|5 = 797 = 9d 06), fixed32
});
// The same program without the unknown fields.
const std::string kWithoutUnknown = B({
    0x0a, 0x15,                                                                    // blocks, 21
    0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  //
    0x22, 0x06, 0x1a, 0x04, 'r',  'e',  'l',  'u',
});

TEST(UnknownFieldTest, BinaryKeepsThemByteForByte) {
  StatusOr<Program> p = ParseProgram(kWithUnknown, "u.pdmodel");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->root().num_ops(), 1);
  EXPECT_EQ(p->root().op(0).type(), "relu");
  EXPECT_BYTES(Bin(*p), kWithUnknown);
  // A copy keeps them too.
  Program copy = *p;
  EXPECT_BYTES(Bin(copy), kWithUnknown);
}

// Junk inputs: a program of nothing but unknown fields, three bytes each (field 100, varint 0),
// keeps them all, but finding them is bounded on request and the validator warns about the first
// hundred and counts the rest (it once made a warning, and ~600 bytes of memory, per field).
TEST(UnknownFieldTest, ManyUnknownFieldsAreFoundUpToALimit) {
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes += std::string("\xa0\x06\x00", 3);
  StatusOr<Program> p = ParseProgram(bytes, "junk.pdmodel", ProgramFormat::kBinary);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  size_t total = 0;
  const std::vector<UnknownField> first = FindUnknownFields(p->desc(), 10, &total);
  EXPECT_EQ(first.size(), 10u);
  EXPECT_EQ(total, 5000u);
  EXPECT_EQ(FindUnknownFields(p->desc()).size(), 5000u);
  ValidateOptions options;
  options.file = "junk.pdmodel";
  const Diagnostics findings = ValidateProgram(*p, options);
  EXPECT_EQ(findings.CountOf(Severity::kWarning), 101);
  EXPECT_EQ(findings.items()[1].Render(),
            "junk.pdmodel: warning: 5000 unknown fields kept from the input; the first 100 "
            "follow\n");
}

// 2 MB of spaces read as a binary program: byte 0x20 is field 4 (version, a message) as a varint.
// protobuf would keep a million unknown fields before the wire check; the top level is checked
// first and the input refused at its first byte.
TEST(WireErrorTest, SpacesAreRefusedAtTheFirstByte) {
  StatusOr<Program> p = ParseProgram(std::string(2 << 20, ' '), "s.pdmodel");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().ToString(),
            "s.pdmodel: byte 0: error: field 'version' (4) has wire type 0 (varint), expected 2 "
            "(length-delimited)");
}

TEST(UnknownFieldTest, FindUnknownFieldsReportsPathAndNumber) {
  StatusOr<Program> p = ParseProgram(kWithUnknown, "u.pdmodel");
  ASSERT_TRUE(p.ok());
  std::vector<UnknownField> unknown = FindUnknownFields(p->desc());
  ASSERT_EQ(unknown.size(), 3u);
  EXPECT_EQ(unknown[0].path, "");
  EXPECT_EQ(unknown[0].number, 99);
  EXPECT_EQ(unknown[0].location.Render(), "");
  EXPECT_EQ(unknown[1].path, "blocks[0]");
  EXPECT_EQ(unknown[1].number, 98);
  EXPECT_EQ(unknown[1].location.Render(), "block 0");
  EXPECT_EQ(unknown[2].path, "blocks[0].ops[0]");
  EXPECT_EQ(unknown[2].number, 99);
  EXPECT_EQ(unknown[2].location.Render(), "block 0, op 0");
}

TEST(UnknownFieldTest, TextRefusesThemWithADiagnostic) {
  StatusOr<Program> p = ParseProgram(kWithUnknown, "u.pdmodel");
  ASSERT_TRUE(p.ok());
  StatusOr<std::string> text = SerializeProgram(*p, ProgramFormat::kText);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(text.status().ToString(),
            "error: the text form cannot carry unknown field 99 (at ProgramDesc); 3 unknown "
            "field(s) in all\n"
            "  note: write the binary form to keep them, or drop them explicitly");
}

TEST(UnknownFieldTest, TextDiagnosticNamesTheFirstNestedField) {
  // Only the op carries one: the diagnostic points at it.
  proto::ProgramDesc desc;
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);
  block->add_ops()->set_type("relu");
  block->add_ops()->set_type("scale");
  block->mutable_ops(1)->mutable_unknown_fields()->AddVarint(42, 1);
  StatusOr<std::string> text = SerializeProgram(Program(desc), ProgramFormat::kText);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().ToString(),
            "block 0, op 1: error: the text form cannot carry unknown field 42 (at "
            "blocks[0].ops[1]); 1 unknown field(s) in all\n"
            "  note: write the binary form to keep them, or drop them explicitly");
}

TEST(UnknownFieldTest, DroppedInTextOnRequest) {
  StatusOr<Program> p = ParseProgram(kWithUnknown, "u.pdmodel");
  ASSERT_TRUE(p.ok());
  SerializeOptions options;
  options.drop_unknown_fields_in_text = true;
  StatusOr<std::string> text = SerializeProgram(*p, ProgramFormat::kText, options);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  // The program itself is not changed by serializing it.
  EXPECT_EQ(FindUnknownFields(p->desc()).size(), 3u);
  StatusOr<Program> back = ParseProgram(*text, "u.prototxt");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(FindUnknownFields(back->desc()).empty());
  EXPECT_BYTES(Bin(*back), kWithoutUnknown);
}

TEST_F(ProgramIoTest, SavingUnknownFieldsAsTextWritesNothing) {
  StatusOr<Program> p = ParseProgram(kWithUnknown, "u.pdmodel");
  ASSERT_TRUE(p.ok());
  Status s = SaveProgram(*p, Path("u.prototxt"), ProgramFormat::kText);
  EXPECT_EQ(s.code(), StatusCode::kInvalid);
  EXPECT_FALSE(fs::exists(Path("u.prototxt")));
}

TEST(UnknownFieldTest, FoundInEveryKindOfMessage) {
  proto::ProgramDesc desc = RichProgram();
  proto::BlockDesc* b0 = desc.mutable_blocks(0);
  int next = 100;
  auto mark = [&next](google::protobuf::Message* m) {
    m->GetReflection()->MutableUnknownFields(m)->AddVarint(next++, 1);
  };
  mark(&desc);                                                                          // 100
  mark(b0);                                                                             // 101
  mark(b0->mutable_vars(2));                                                            // 102 x
  mark(b0->mutable_vars(2)->mutable_type());                                            // 103
  mark(b0->mutable_vars(2)->mutable_type()->mutable_dense_tensor());                    // 104
  mark(b0->mutable_vars(2)->mutable_type()->mutable_dense_tensor()->mutable_tensor());  // 105
  mark(b0->mutable_vars(4)->mutable_attrs(1));                 // 106 w.attrs[1]
  mark(b0->mutable_vars(8)->mutable_type()->mutable_tuple());  // 107 tuple
  proto::OpDesc* all = b0->mutable_ops(1);
  mark(all);                      // 108
  mark(all->mutable_inputs(1));   // 109 Empty
  mark(all->mutable_outputs(0));  // 110
  int scalar_attr = -1, scalars_attr = -1, complex_attr = -1;
  for (int i = 0; i < all->attrs_size(); ++i) {
    if (all->attrs(i).name() == "scalar") scalar_attr = i;
    if (all->attrs(i).name() == "scalars") scalars_attr = i;
    if (all->attrs(i).name() == "scalar_complex") complex_attr = i;
  }
  ASSERT_EQ(scalar_attr, 28);
  ASSERT_EQ(scalars_attr, 29);
  ASSERT_EQ(complex_attr, 31);
  mark(all->mutable_attrs(0));                                                      // 111
  mark(all->mutable_attrs(scalar_attr)->mutable_scalar());                          // 112
  mark(all->mutable_attrs(scalars_attr)->mutable_scalars(1));                       // 113
  mark(all->mutable_attrs(complex_attr)->mutable_scalar()->mutable_c());            // 114
  mark(desc.mutable_blocks(2)->mutable_ops(0));                                     // 115
  mark(desc.mutable_version());                                                     // 116
  mark(desc.mutable_op_version_map());                                              // 117
  mark(desc.mutable_op_version_map()->mutable_pair(1));                             // 118
  mark(desc.mutable_op_version_map()->mutable_pair(1)->mutable_op_version());       // 119
  mark(MutableLegacyCompatMap(&desc)->mutable_pair(0)->mutable_compatible_info());  // 120

  struct Want {
    const char* path;
    int number;
    const char* location;
  };
  const Want kWant[] = {
      {"", 100, ""},
      {"blocks[0]", 101, "block 0"},
      {"blocks[0].vars[2]", 102, "block 0, var #2"},
      {"blocks[0].vars[2].type", 103, "block 0, var #2"},
      {"blocks[0].vars[2].type.dense_tensor", 104, "block 0, var #2"},
      {"blocks[0].vars[2].type.dense_tensor.tensor", 105, "block 0, var #2"},
      {"blocks[0].vars[4].attrs[1]", 106, "block 0, var #4"},
      {"blocks[0].vars[8].type.tuple", 107, "block 0, var #8"},
      {"blocks[0].ops[1]", 108, "block 0, op 1"},
      {"blocks[0].ops[1].inputs[1]", 109, "block 0, op 1"},
      {"blocks[0].ops[1].outputs[0]", 110, "block 0, op 1"},
      {"blocks[0].ops[1].attrs[0]", 111, "block 0, op 1"},
      {"blocks[0].ops[1].attrs[28].scalar", 112, "block 0, op 1"},
      {"blocks[0].ops[1].attrs[29].scalars[1]", 113, "block 0, op 1"},
      {"blocks[0].ops[1].attrs[31].scalar.c", 114, "block 0, op 1"},
      {"blocks[2].ops[0]", 115, "block 2, op 0"},
      {"version", 116, ""},
      {"op_version_map", 117, ""},
      {"op_version_map.pair[1]", 118, ""},
      {"op_version_map.pair[1].op_version", 119, ""},
      {"op_compatible_map.pair[0].compatible_info", 120, ""},
  };
  std::vector<UnknownField> unknown = FindUnknownFields(desc);
  ASSERT_EQ(unknown.size(), std::size(kWant));
  for (size_t i = 0; i < unknown.size(); ++i) {
    SCOPED_TRACE(kWant[i].path);
    EXPECT_EQ(unknown[i].path, kWant[i].path);
    EXPECT_EQ(unknown[i].number, kWant[i].number);
    EXPECT_EQ(unknown[i].location.Render(), kWant[i].location);
  }

  // All of them survive binary, and each one's bytes are where protobuf puts unknown fields.
  Program program(desc);
  StatusOr<Program> back = ParseProgram(Bin(program), "all.pdmodel");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FindUnknownFields(back->desc()).size(), std::size(kWant));
  EXPECT_BYTES(Bin(*back), Bin(program));
}

TEST(UnknownFieldTest, ClosedGroupIsKept) {
  // An unknown group (field 99, start 9b 06 ... end 9c 06) holding a varint is legal proto2.
  const std::string bytes = kWithoutUnknown + B({0x9b, 0x06, 0x08, 0x01, 0x9c, 0x06});
  StatusOr<Program> p = ParseProgram(bytes, "g.pdmodel");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<UnknownField> unknown = FindUnknownFields(p->desc());
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].number, 99);
  EXPECT_BYTES(Bin(*p), bytes);
}

TEST(UnknownFieldTest, GroupNestingLimitMatchesProtobuf) {
  // protobuf accepts unknown groups nested 100 deep and refuses 101; the explanation says so.
  auto nested = [](int depth) {
    std::string bytes;
    for (int i = 0; i < depth; ++i) bytes += B({0x9b, 0x06});
    for (int i = 0; i < depth; ++i) bytes += B({0x9c, 0x06});
    return bytes;
  };
  StatusOr<Program> ok = ParseProgram(nested(100), "g", ProgramFormat::kBinary);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_BYTES(Bin(*ok), nested(100));
  // The 101st start tag ends at byte 202.
  EXPECT_EQ(ParseError(nested(101), "g", ProgramFormat::kBinary),
            "g: byte 202: error: groups nested too deeply");
}

// ---- format detection --------------------------------------------------------------------------

TEST(FormatTest, DetectsTextWithLeadingComments) {
  const std::string text =
      "# a comment\n"
      "   # an indented comment\n"
      "\n"
      "blocks { idx: 0 parent_idx: -1 }\n";
  EXPECT_EQ(DetectProgramFormat(text), ProgramFormat::kText);
  StatusOr<Program> p = ParseProgram(text, "c.txt");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->num_blocks(), 1);
  EXPECT_EQ(p->root().parent_index(), -1);
}

TEST(FormatTest, DetectsTextVariants) {
  EXPECT_EQ(DetectProgramFormat("\t\r\nblocks {}"), ProgramFormat::kText);
  EXPECT_EQ(DetectProgramFormat("version { version: 1 }"), ProgramFormat::kText);
  EXPECT_EQ(DetectProgramFormat("_x: 1"), ProgramFormat::kText);
  EXPECT_EQ(DetectProgramFormat("[ext] { }"), ProgramFormat::kText);
  // UTF-8 in a string is still text.
  EXPECT_EQ(DetectProgramFormat("blocks { vars { name: \"\xce\xb1\" } }"), ProgramFormat::kText);
}

TEST(FormatTest, DetectsBinary) {
  EXPECT_EQ(DetectProgramFormat(kHandProgram), ProgramFormat::kBinary);  // starts with 0x0a
  EXPECT_EQ(DetectProgramFormat(B({0x0a})), ProgramFormat::kBinary);
  EXPECT_EQ(DetectProgramFormat(B({0x22, 0x02, 0x08, 0x00})), ProgramFormat::kBinary);
  EXPECT_EQ(DetectProgramFormat(std::string("blocks\0", 7)), ProgramFormat::kBinary);
  EXPECT_EQ(DetectProgramFormat("blocks \x7f"), ProgramFormat::kBinary);
  // Blanks alone: a binary program cut right after its first tag (0a) or length (0d, 20).
  EXPECT_EQ(DetectProgramFormat("\n"), ProgramFormat::kBinary);
  EXPECT_EQ(DetectProgramFormat(B({0x0a, 0x0d})), ProgramFormat::kBinary);
  EXPECT_EQ(ParseError(B({0x0a, 0x20}), "cut.pdmodel"),
            "cut.pdmodel: byte 1: error: field 'blocks' claims 32 bytes but only 0 remain");
  // Printable but not starting like a field name.
  EXPECT_EQ(DetectProgramFormat("123"), ProgramFormat::kBinary);
  EXPECT_EQ(DetectProgramFormat("\"abc\""), ProgramFormat::kBinary);
}

TEST(FormatTest, EmptyInputIsAnEmptyProgram) {
  EXPECT_EQ(DetectProgramFormat(""), ProgramFormat::kText);
  EXPECT_EQ(DetectProgramFormat("  \n# only a comment\n"), ProgramFormat::kText);
  for (std::optional<ProgramFormat> format :
       {std::optional<ProgramFormat>(), std::optional(ProgramFormat::kBinary),
        std::optional(ProgramFormat::kText)}) {
    StatusOr<Program> p = ParseProgram("", "empty", format);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->num_blocks(), 0);
    EXPECT_EQ(p->num_ops(), 0);
    EXPECT_EQ(p->version(), std::nullopt);
  }
  StatusOr<Program> comments = ParseProgram("  \n# only a comment\n", "c");
  ASSERT_TRUE(comments.ok());
  EXPECT_EQ(comments->num_blocks(), 0);
}

TEST(FormatTest, ExplicitFormatOverridesDetection) {
  // Binary bytes read as text: a text syntax error at line 1.
  StatusOr<Program> as_text = ParseProgram(kHandProgram, "h", ProgramFormat::kText);
  ASSERT_FALSE(as_text.ok());
  EXPECT_EQ(as_text.status().code(), StatusCode::kParseError);
  EXPECT_GE(as_text.status().location().line, 1);
  // Text read as binary: 'b' = 0x62 is field 12, wire type 2; 'l' = 0x6c says 108 bytes follow.
  EXPECT_EQ(ParseError("blocks { }", "t", ProgramFormat::kBinary),
            "t: byte 1: error: field '12' claims 108 bytes but only 8 remain");
}

TEST(FormatTest, PrintableGarbageIsReadAsBinary) {
  // '1' = 0x31: field 6, wire type 1 (fixed64), and only 2 bytes follow.
  EXPECT_EQ(ParseError("123", "g"), "g: byte 1: error: truncated 8-byte value in field '6'");
}

TEST(FormatTest, Names) {
  EXPECT_STREQ(ProgramFormatName(ProgramFormat::kBinary), "binary");
  EXPECT_STREQ(ProgramFormatName(ProgramFormat::kText), "text");
  EXPECT_EQ(ProgramFormatFromName("text"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromName("prototxt"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromName("binary"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromName("pdmodel"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromName("json"), std::nullopt);
  EXPECT_EQ(ProgramFormatFromName(""), std::nullopt);
}

TEST(FormatTest, FromPath) {
  EXPECT_EQ(ProgramFormatFromPath("a.prototxt"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromPath("a.pbtxt"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromPath("a.txtpb"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromPath("a.txt"), ProgramFormat::kText);
  EXPECT_EQ(ProgramFormatFromPath("dir/a.pdmodel"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromPath("a.pb"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromPath("model/__model__"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromPath("__model__"), ProgramFormat::kBinary);
  EXPECT_EQ(ProgramFormatFromPath("a.json"), std::nullopt);
  EXPECT_EQ(ProgramFormatFromPath("pdmodel"), std::nullopt);
  EXPECT_EQ(ProgramFormatFromPath(""), std::nullopt);
  EXPECT_EQ(ProgramFormatFromPath("-"), std::nullopt);
}

// ---- truncated, random and corrupt bytes -------------------------------------------------------

// Root block with a relu op, then version 1234 (d2 09): 28 bytes.
const std::string kSmall = B({
    0x0a, 0x15,                                                        // 0: blocks
    0x08, 0x00,                                                        // 2: idx
    0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // 4: parent
    0x22, 0x06, 0x1a, 0x04, 'r',  'e',  'l',  'u',                     // 15: ops
    0x22, 0x03, 0x08, 0xd2, 0x09,                                      // 23: version
});

TEST(BadInputTest, SmallProgramParses) {
  ASSERT_EQ(kSmall.size(), 28u);
  StatusOr<Program> p = ParseProgram(kSmall, "s.pdmodel");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->version(), 1234);
}

TEST(BadInputTest, TruncatedAtEveryOffset) {
  for (size_t cut = 0; cut < kSmall.size(); ++cut) {
    SCOPED_TRACE(cut);
    StatusOr<Program> p = ParseProgram(kSmall.substr(0, cut), "s.pdmodel", ProgramFormat::kBinary);
    // Cutting between top-level fields leaves a shorter valid program; anything else is a
    // parse error that says where.
    if (cut == 0 || cut == 23) {
      EXPECT_TRUE(p.ok()) << p.status().ToString();
    } else {
      ASSERT_FALSE(p.ok());
      EXPECT_EQ(p.status().code(), StatusCode::kParseError);
      EXPECT_EQ(p.status().location().file, "s.pdmodel");
      EXPECT_NE(p.status().location().detail.find("byte "), std::string::npos)
          << p.status().ToString();
    }
  }
  EXPECT_EQ(ParseError(kSmall.substr(0, 1), "s.pdmodel"),
            "s.pdmodel: byte 1: error: truncated length of field 'blocks'");
  EXPECT_EQ(ParseError(kSmall.substr(0, 10), "s.pdmodel"),
            "s.pdmodel: block 0, byte 5, in blocks[0]: error: truncated varint in field "
            "'parent_idx' (input cut short: 'blocks' claims 21 bytes, 8 remain)");
  EXPECT_EQ(ParseError(kSmall.substr(0, 24), "s.pdmodel"),
            "s.pdmodel: byte 24: error: truncated length of field 'version'");
  EXPECT_EQ(ParseError(kSmall.substr(0, 26), "s.pdmodel"),
            "s.pdmodel: byte 26, in version: error: truncated varint in field 'version' (input cut "
            "short: 'version' claims 3 bytes, 1 remain)");
}

TEST(BadInputTest, TruncatedRichProgramNeverCrashes) {
  const std::string binary = Bin(Program(RichProgram()));
  ASSERT_GT(binary.size(), 500u);
  int failures = 0;
  for (size_t cut = 0; cut < binary.size(); ++cut) {
    StatusOr<Program> p = ParseProgram(binary.substr(0, cut), "r.pdmodel", ProgramFormat::kBinary);
    if (p.ok()) continue;
    ++failures;
    ASSERT_EQ(p.status().code(), StatusCode::kParseError) << cut;
    // Every rejection is explained with a byte offset, never protobuf's bare "failed".
    ASSERT_NE(p.status().location().detail.find("byte "), std::string::npos)
        << cut << ": " << p.status().ToString();
  }
  EXPECT_GT(failures, static_cast<int>(binary.size()) / 2);
}

TEST(BadInputTest, CorruptLengthInsideABlock) {
  std::string bytes = kSmall;
  bytes[16] = 0x07;  // the op claims 7 bytes; the block has 6 left
  EXPECT_EQ(ParseError(bytes, "f.pdmodel"),
            "f.pdmodel: block 0, byte 16, in blocks[0]: error: field 'ops' claims 7 bytes but "
            "only 6 remain");
}

TEST(BadInputTest, RandomBytesNeverCrash) {
  std::mt19937 rng(20240611);
  int accepted = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string bytes(rng() % 80, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    StatusOr<Program> p = ParseProgram(bytes, "rand", ProgramFormat::kBinary);
    if (p.ok()) {
      ++accepted;
      // Whatever was accepted can be written back.
      EXPECT_TRUE(SerializeProgram(*p, ProgramFormat::kBinary).ok());
      continue;
    }
    ASSERT_EQ(p.status().code(), StatusCode::kParseError) << Hex(bytes);
    ASSERT_EQ(p.status().location().file, "rand");
    // Explained: a byte offset for malformed wire data, or the required field that is missing.
    const bool explained = p.status().location().detail.find("byte ") != std::string::npos ||
                           p.status().message().rfind("required field '", 0) == 0;
    ASSERT_TRUE(explained) << Hex(bytes) << ": " << p.status().ToString();
  }
  EXPECT_LT(accepted, 4000);
}

TEST(BadInputTest, RandomTextNeverCrashes) {
  std::mt19937 rng(7);
  const std::vector<std::string> tokens = {
      "blocks", "{",     "}",        "idx:", "parent_idx:", "-1",      "0",
      "ops",    "type:", "\"relu\"", "vars", "name:",       "attrs",   "FP32",
      ":",      "\n",    " ",        "#",    "\"",          "version", "[",
      "]",      "<",     ">",        "1e9",  "nan",         "\\",      "99999999999999999999"};
  for (int i = 0; i < 1500; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 30);
    for (int t = 0; t < n; ++t) text += tokens[rng() % tokens.size()] + " ";
    StatusOr<Program> p = ParseProgram(text, "r.prototxt", ProgramFormat::kText);
    if (p.ok()) continue;
    ASSERT_EQ(p.status().code(), StatusCode::kParseError) << text;
    // Explained: a line:column for a syntax error, or the required field that is missing.
    const bool explained =
        p.status().location().line > 0 || p.status().message().rfind("required field '", 0) == 0;
    ASSERT_TRUE(explained) << text << ": " << p.status().ToString();
  }
}

TEST(BadInputTest, MutatedProgramsNeverCrashAndAcceptedOnesAreConsistent) {
  const std::string binary = Bin(Program(RichProgram()));
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes = binary;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    }
    StatusOr<Program> p = ParseProgram(bytes, "m.pdmodel", ProgramFormat::kBinary);
    if (!p.ok()) {
      ASSERT_EQ(p.status().code(), StatusCode::kParseError);
      // Either malformed wire data (explained with a byte offset) or a required field lost.
      const bool explained = p.status().location().detail.find("byte ") != std::string::npos ||
                             p.status().message().rfind("required field '", 0) == 0;
      ASSERT_TRUE(explained) << p.status().ToString();
      continue;
    }
    // Accepted: what protobuf kept as unknown is genuinely unknown, never a corrupt known field.
    if (!FindUnknownFields(p->desc()).empty()) {
      std::optional<WireProblem> problem = FindWireProblem(bytes, proto::ProgramDesc::descriptor());
      ASSERT_FALSE(problem.has_value()) << problem->message;
    }
    StatusOr<std::string> again = SerializeProgram(*p, ProgramFormat::kBinary);
    ASSERT_TRUE(again.ok());
    StatusOr<Program> reread = ParseProgram(*again, "m2", ProgramFormat::kBinary);
    ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  }
}

TEST(BadInputTest, KnownFieldWithWrongWireType) {
  // OpDesc.type (field 3) sent as a varint: 18 05.
  const std::string bytes = B({
      0x0a, 0x11,                                                        // 0: blocks, 17
      0x08, 0x00,                                                        // 2
      0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // 4
      0x22, 0x02,                                                        // 15: ops, 2
      0x18, 0x05,                                                        // 17: field 3, varint
  });
  StatusOr<Program> p = ParseProgram(bytes, "f.pdmodel");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kParseError);
  EXPECT_EQ(p.status().ToString(),
            "f.pdmodel: block 0, op 0, byte 17, in blocks[0].ops[0]: error: field 'type' (3) has "
            "wire type 0 (varint), expected 2 (length-delimited)");
  EXPECT_EQ(p.status().location().block, 0);
  EXPECT_EQ(p.status().location().op, 0);
}

TEST(BadInputTest, TopLevelFieldWithWrongWireType) {
  EXPECT_EQ(ParseError(B({0x08, 0x01}), "f.pdmodel"),
            "f.pdmodel: byte 0: error: field 'blocks' (1) has wire type 0 (varint), expected 2 "
            "(length-delimited)");
  // A float attr value (f, field 4) sent as fixed64: 21 + 8 bytes.
  const std::string attr = B({0x0a, 0x01, 'a', 0x10, 0x01, 0x21, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
  const std::string op = B({0x1a, 0x01, 'o', 0x22, 0x0e}) + attr;  // 5 + 14 = 19
  const std::string block =
      B({0x08, 0x00, 0x10, 0x00, 0x22, 0x13}) + op;  // 6 + 19 = 25 (parent 0: not checked)
  const std::string program = B({0x0a, 0x19}) + block;
  // attr body starts at 2 + 6 + 5 = 13; the f tag is 5 bytes in: byte 18.
  EXPECT_EQ(ParseError(program, "f.pdmodel"),
            "f.pdmodel: block 0, op 0, byte 18, in blocks[0].ops[0].attrs[0]: error: field 'f' "
            "(4) has wire type 1 (fixed64), expected 5 (fixed32)");
}

TEST(BadInputTest, EnumValueOutOfRange) {
  // Attr "a" with type 18 (AttrType has 0..17).
  const std::string bytes = B({
      0x0a, 0x1e,                                                        // 0: blocks, 30
      0x08, 0x00,                                                        // 2
      0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // 4
      0x22, 0x0f,                                                        // 15: ops, 15
      0x1a, 0x04, 'r',  'e',  'l',  'u',                                 // 17: type
      0x22, 0x07,                                                        // 23: attrs, 7
      0x0a, 0x01, 'a',                                                   // 25: name
      0x10, 0x12,                                                        // 28: type = 18 @ 29
      0x18, 0x00,                                                        // 30: i
  });
  EXPECT_EQ(ParseError(bytes, "f.pdmodel"),
            "f.pdmodel: block 0, op 0, byte 29, in blocks[0].ops[0].attrs[0]: error: field "
            "'type': 18 is not a value of enum paddle.framework.proto.AttrType");
}

TEST(BadInputTest, NegativeEnumValue) {
  // A var whose VarType.type is -1 (10-byte varint).
  const std::string bytes = B({
      0x0a, 0x18,                                                        // 0: blocks, 24
      0x08, 0x00, 0x10, 0x00,                                            // 2: idx 0, parent 0
      0x1a, 0x12,                                                        // 6: vars, 18
      0x0a, 0x01, 'v',                                                   // 8: name
      0x12, 0x0b,                                                        // 11: type, 11
      0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // 13: type -1 @ 14
      0x18, 0x01,                                                        // 24: persistable
  });
  EXPECT_EQ(ParseError(bytes, "f.pdmodel"),
            "f.pdmodel: block 0, byte 14, in blocks[0].vars[0].type: error: field 'type': -1 is "
            "not a value of enum paddle.framework.proto.VarType.Type");
}

TEST(BadInputTest, PackedEnumValueOutOfRange) {
  // A TUPLE var whose element types are sent packed (1 length-delimited: 05 63): 99 is no type.
  const std::string bytes = B({
      0x0a, 0x12,              // 0: blocks, 18
      0x08, 0x00, 0x10, 0x00,  // 2
      0x1a, 0x0c,              // 6: vars, 12
      0x0a, 0x01, 't',         // 8: name
      0x12, 0x07,              // 11: type, 7
      0x08, 0x12,              // 13: TUPLE = 18
      0x3a, 0x03,              // 15: tuple (7), 3
      0x0a, 0x01, 0x63,        // 17: element_type packed, 1 byte: 99 @ 19
  });
  EXPECT_EQ(ParseError(bytes, "f.pdmodel"),
            "f.pdmodel: block 0, byte 19, in blocks[0].vars[0].type.tuple: error: field "
            "'element_type': 99 is not a value of enum paddle.framework.proto.VarType.Type");
}

TEST(BadInputTest, MissingRequiredField) {
  // An op without its type: 22 00.
  const std::string bytes = B({
      0x0a,
      0x0f,
      0x08,
      0x00,
      0x10,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0x01,
      0x22,
      0x00,
  });
  StatusOr<Program> p = ParseProgram(bytes, "f.pdmodel");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kParseError);
  EXPECT_EQ(p.status().ToString(),
            "f.pdmodel: block 0, op 0: error: required field 'blocks[0].ops[0].type' is missing");
}

TEST(BadInputTest, SeveralMissingRequiredFields) {
  // An empty block: idx and parent_idx both missing.
  EXPECT_EQ(ParseError(B({0x0a, 0x00}), "f.pdmodel"),
            "f.pdmodel: block 0: error: required field 'blocks[0].idx' is missing\n"
            "  note: required field 'blocks[0].parent_idx' is also missing");
  // A var without a type.
  EXPECT_EQ(
      ParseError(B({0x0a, 0x09, 0x08, 0x00, 0x10, 0x00, 0x1a, 0x03, 0x0a, 0x01, 'v'}), "f.pdmodel"),
      "f.pdmodel: block 0, var #0: error: required field 'blocks[0].vars[0].type' is "
      "missing");
}

TEST(BadInputTest, ManyMissingFieldsAreCapped) {
  proto::ProgramDesc desc;
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);
  for (int i = 0; i < 25; ++i) block->add_ops();  // 25 ops without a type
  StatusOr<Program> p = ParseProgram(desc.SerializePartialAsString(), "f.pdmodel");
  ASSERT_FALSE(p.ok());
  const std::vector<std::string>& notes = p.status().diagnostic().notes;
  ASSERT_EQ(notes.size(), 20u);
  EXPECT_EQ(p.status().message(), "required field 'blocks[0].ops[0].type' is missing");
  EXPECT_EQ(notes[0], "required field 'blocks[0].ops[1].type' is also missing");
  EXPECT_EQ(notes[18], "required field 'blocks[0].ops[19].type' is also missing");
  EXPECT_EQ(notes[19], "... and 5 more");
}

TEST(BadInputTest, MissingRequiredFieldInText) {
  EXPECT_EQ(ParseError("blocks { idx: 0 }", "f.prototxt"),
            "f.prototxt: block 0: error: required field 'blocks[0].parent_idx' is missing");
}

TEST(BadInputTest, OtherMalformedWireData) {
  // Field number 0 inside the block (tag 00).
  EXPECT_EQ(ParseError(B({0x0a, 0x02, 0x00, 0x01}), "f"),
            "f: block 0, byte 2, in blocks[0]: error: invalid field number 0");
  // Wire type 6 does not exist.
  EXPECT_EQ(ParseError(B({0x0e, 0x00}), "f"), "f: byte 0: error: invalid wire type 6");
  // An end-group tag (field 99, 9c 06) with no group open.
  EXPECT_EQ(ParseError(B({0x9c, 0x06}), "f"),
            "f: byte 0: error: end-group tag without a matching start-group");
  // A group (field 99) never closed.
  EXPECT_EQ(ParseError(B({0x9b, 0x06, 0x08, 0x01}), "f"),
            "f: byte 4: error: group 99 is not closed");
  // A varint of 11 bytes in an unknown field 99.
  EXPECT_EQ(
      ParseError(B({0x98, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
                 "f"),
      "f: byte 2: error: varint longer than 10 bytes in field '99'");
  // A truncated varint value.
  EXPECT_EQ(ParseError(B({0x22, 0x02, 0x08, 0xff}), "f"),
            "f: byte 3, in version: error: truncated varint in field 'version'");
  // Field number 0 inside an unknown group (33 = field 6 start-group; 08 = field 1; 02 = field 0).
  EXPECT_EQ(ParseError(B({0x33, 0x08, 0x01, 0x02, 0x00, 0x34}), "f"),
            "f: byte 3: error: invalid field number 0 inside a group");
  // A truncated tag.
  EXPECT_EQ(ParseError(B({0x98}), "f"), "f: byte 0: error: truncated or malformed field tag");
}

// ---- text errors -------------------------------------------------------------------------------

TEST(TextErrorTest, SyntaxErrorWithLineAndColumn) {
  EXPECT_EQ(ParseError("blocks {\n  idx: 0\n  parent_idx: x\n}\n", "f.prototxt"),
            "f.prototxt:3:15: error: Expected integer, got: x");
  StatusOr<Program> p = ParseProgram("blocks {\n  idx: 0\n  parent_idx: x\n}\n", "f.prototxt");
  EXPECT_EQ(p.status().code(), StatusCode::kParseError);
  EXPECT_EQ(p.status().location().line, 3);
  EXPECT_EQ(p.status().location().column, 15);
}

TEST(TextErrorTest, UnknownFieldName) {
  // protobuf reports the position after the name, where it found out.
  EXPECT_EQ(ParseError("blocks {\n  idx: 0\n  bogus: 1\n}\n", "f.prototxt"),
            "f.prototxt:3:8: error: Message type \"paddle.framework.proto.BlockDesc\" has no "
            "field named \"bogus\".");
}

TEST(TextErrorTest, UnknownEnumName) {
  // FP99 starts at column 33; protobuf reports the token after it (the '}' at 38).
  EXPECT_EQ(ParseError("blocks { idx: 0 parent_idx: -1\n"
                       "  vars { name: \"x\" type { type: FP99 } } }",
                       "f.prototxt"),
            "f.prototxt:2:38: error: Unknown enumeration value of \"FP99\" for field \"type\".");
}

TEST(TextErrorTest, UnexpectedEndOfInput) {
  EXPECT_EQ(ParseError("blocks {\n  idx: 0\n  parent_idx: -1\n", "f.prototxt"),
            "f.prototxt:4:1: error: Expected identifier, got: end of input");
}

TEST(TextErrorTest, RepeatedScalarField) {
  EXPECT_EQ(ParseError("blocks { idx: 0 idx: 1 parent_idx: -1 }", "f.prototxt"),
            "f.prototxt:1:20: error: Non-repeated field \"idx\" is specified multiple times.");
}

}  // namespace
}  // namespace irm::oldir
