// Wire compatibility of our framework.proto with Paddle's, proven byte by byte. Every expected
// byte string below is written by hand from the protobuf encoding rules (tag = number << 3 |
// wire type; varints little-endian base 128, negative int32/int64 as 10-byte two's complement;
// float/double little-endian IEEE) and Paddle's field numbers — never produced by our code. The
// enum numbers are copied from Paddle's framework.proto (paddle/phi/core/framework/; before PR
// #70534 paddle/fluid/framework/).
// protoc itself (a second, independent reader of the schema) decodes what we write and encodes
// what we read.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "oldir/attribute.h"
#include "oldir/editor.h"
#include "oldir/program.h"
#include "oldir/program_io.h"
#include "oldir/test_bytes.h"

namespace irm::oldir {
namespace {

namespace fs = std::filesystem;

using wire_test::B;
using wire_test::Hex;

template <typename M>
std::string Wire(const M& message) {
  std::string out;
  EXPECT_TRUE(message.SerializePartialToString(&out));
  return out;
}

// AttrValue equality; proto::Scalar has no operator==, so scalars compare by their bytes.
bool SameValue(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, proto::Scalar>) {
          return x.SerializeAsString() == y.SerializeAsString();
        } else if constexpr (std::is_same_v<T, std::vector<proto::Scalar>>) {
          if (x.size() != y.size()) return false;
          for (size_t i = 0; i < x.size(); ++i) {
            if (x[i].SerializeAsString() != y[i].SerializeAsString()) return false;
          }
          return true;
        } else {
          return x == y;
        }
      },
      a);
}

#define EXPECT_BYTES(actual, expected) EXPECT_EQ(Hex(actual), Hex(expected))

// The deprecated ProgramDesc field 3 (Paddle 1.x's op_compatible_map), reached by reflection so
// that the deprecated accessors' warnings stay out of -Werror.
const google::protobuf::Message& LegacyCompatMap(const proto::ProgramDesc& desc) {
  const auto* field = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
  return desc.GetReflection()->GetMessage(desc, field);
}
proto::OpCompatibleMap* MutableLegacyCompatMap(proto::ProgramDesc* desc) {
  const auto* field = proto::ProgramDesc::descriptor()->FindFieldByNumber(3);
  return static_cast<proto::OpCompatibleMap*>(desc->GetReflection()->MutableMessage(desc, field));
}

// ---- OpDesc ----------------------------------------------------------------------------------

TEST(WireCompatTest, OpTypeIsField3) {
  proto::OpDesc op;
  op.set_type("relu");
  EXPECT_BYTES(Wire(op), B({0x1a, 0x04, 'r', 'e', 'l', 'u'}));

  proto::OpDesc back;
  ASSERT_TRUE(back.ParseFromString(B({0x1a, 0x04, 'r', 'e', 'l', 'u'})));
  EXPECT_EQ(back.type(), "relu");
}

// inputs {X: [x]}, outputs {Out: [y]}, type relu, attr op_role INT 0.
const std::string kReluOp = B({
    0x0a, 0x06,                                     // inputs (1), 6 bytes
    0x0a, 0x01, 'X',                                //   parameter (1) "X"
    0x12, 0x01, 'x',                                //   arguments (2) "x"
    0x12, 0x08,                                     // outputs (2), 8 bytes
    0x0a, 0x03, 'O', 'u', 't',                      //   parameter "Out"
    0x12, 0x01, 'y',                                //   arguments "y"
    0x1a, 0x04, 'r', 'e', 'l', 'u',                 // type (3) "relu"
    0x22, 0x0d,                                     // attrs (4), 13 bytes
    0x0a, 0x07, 'o', 'p', '_', 'r', 'o', 'l', 'e',  //   name (1) "op_role"
    0x10, 0x00,                                     //   type (2) INT = 0
    0x18, 0x00,                                     //   i (3) = 0
});

TEST(WireCompatTest, OpFieldOrderInputsOutputsTypeAttrs) {
  // Set in the "wrong" order on purpose: the wire order is by field number, as Paddle writes it.
  proto::OpDesc op;
  OpEditor edit(&op);
  edit.SetAttr("op_role", int32_t{0});
  edit.SetType("relu");
  edit.SetOutput("Out", {"y"});
  edit.SetInput("X", {"x"});
  EXPECT_BYTES(Wire(op), kReluOp);
}

TEST(WireCompatTest, OpParsesFromHandWrittenBytes) {
  proto::OpDesc op;
  ASSERT_TRUE(op.ParseFromString(kReluOp));
  Op view(&op);
  EXPECT_EQ(view.type(), "relu");
  EXPECT_EQ(view.SingleInput("X"), "x");
  EXPECT_EQ(view.SingleOutput("Out"), "y");
  StatusOr<int32_t> role = view.Attr<int32_t>("op_role");
  ASSERT_TRUE(role.ok());
  EXPECT_EQ(*role, 0);
  EXPECT_EQ(view.role(), 0);  // set explicitly to Forward, not defaulted to NotSpecified
  EXPECT_TRUE(op.unknown_fields().empty());
}

TEST(WireCompatTest, OpIsTargetIsField5) {
  proto::OpDesc op;
  op.set_type("a");
  op.set_is_target(true);
  EXPECT_BYTES(Wire(op), B({0x1a, 0x01, 'a', 0x28, 0x01}));
}

TEST(WireCompatTest, EmptyArgumentListIsJustTheParameter) {
  proto::OpDesc op;
  OpEditor(&op).SetType("a").SetInput("X", {});
  EXPECT_BYTES(Wire(op), B({0x0a, 0x03, 0x0a, 0x01, 'X', 0x1a, 0x01, 'a'}));
}

// ---- OpDesc.Attr: one case per AttrType -------------------------------------------------------

struct AttrCase {
  const char* label;
  AttrValue value;
  std::string value_bytes;  // the bytes after name "a" (0a 01 61) and type (10 NN)
  int type_number;
};

std::vector<AttrCase> AttrCases() {
  proto::Scalar complex_scalar;
  complex_scalar.set_type(proto::Scalar::COMPLEX128);
  complex_scalar.mutable_c()->set_r(1.0);
  complex_scalar.mutable_c()->set_i(2.0);
  return {
      {"INT", int32_t{7}, B({0x18, 0x07}), 0},
      {"INT negative (10-byte varint)", int32_t{-1},
       B({0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 0},
      {"INT 300", int32_t{300}, B({0x18, 0xac, 0x02}), 0},
      // f = 4, fixed32: 1.5f = 0x3fc00000
      {"FLOAT", 1.5f, B({0x25, 0x00, 0x00, 0xc0, 0x3f}), 1},
      {"STRING", std::string("hi"), B({0x2a, 0x02, 'h', 'i'}), 2},
      // ints = 6, unpacked (proto2 default): one tag per element
      {"INTS", std::vector<int32_t>{1, -2},
       B({0x30, 0x01, 0x30, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 3},
      // floats = 7, fixed32 each: 1.0f = 0x3f800000, -2.0f = 0xc0000000
      {"FLOATS", std::vector<float>{1.0f, -2.0f},
       B({0x3d, 0x00, 0x00, 0x80, 0x3f, 0x3d, 0x00, 0x00, 0x00, 0xc0}), 4},
      {"STRINGS", std::vector<std::string>{"a", "bc"}, B({0x42, 0x01, 'a', 0x42, 0x02, 'b', 'c'}),
       5},
      {"BOOLEAN", true, B({0x50, 0x01}), 6},
      {"BOOLEAN false", false, B({0x50, 0x00}), 6},
      {"BOOLEANS", std::vector<bool>{true, false}, B({0x58, 0x01, 0x58, 0x00}), 7},
      {"BLOCK", BlockRef{1}, B({0x60, 0x01}), 8},
      // l = 13: 2^40 = 7-bit groups 0,0,0,0,0,32
      {"LONG", int64_t{1} << 40, B({0x68, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}), 9},
      {"LONG negative", int64_t{-2},
       B({0x68, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 9},
      {"BLOCKS", BlockRefs{{1, 2}}, B({0x70, 0x01, 0x70, 0x02}), 10},
      {"LONGS", std::vector<int64_t>{300, -1},
       B({0x78, 0xac, 0x02, 0x78, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 11},
      // float64s = 16: tag 16<<3|1 = 129 = varint 81 01; 1.0 = 0x3ff0..., -0.5 = 0xbfe0...
      {"FLOAT64S", std::vector<double>{1.0, -0.5},
       B({0x81, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  //
          0x81, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xbf}),
       12},
      // var_name = 17: tag 17<<3|2 = 138 = 8a 01
      {"VAR", VarRef{"v"}, B({0x8a, 0x01, 0x01, 'v'}), 13},
      // vars_name = 18: tag 146 = 92 01
      {"VARS", VarRefs{{"v", "w"}}, B({0x92, 0x01, 0x01, 'v', 0x92, 0x01, 0x01, 'w'}), 14},
      // float64 = 19: tag 153 = 99 01; 2.5 = 0x4004000000000000
      {"FLOAT64", 2.5, B({0x99, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x40}), 15},
      // scalar = 20: tag 162 = a2 01; Scalar{type (1) LONG = 2, i (3) = 5}
      {"SCALAR", MakeScalar(int64_t{5}), B({0xa2, 0x01, 0x04, 0x08, 0x02, 0x18, 0x05}), 16},
      // Scalar{type COMPLEX128 = 4, c (5) = Complex{r (1) = 1.0, i (2) = 2.0}}
      {"SCALAR complex", complex_scalar,
       B({0xa2, 0x01, 0x16, 0x08, 0x04, 0x2a, 0x12,              //
          0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  //
          0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40}),
       16},
      // scalars = 21: tag 170 = aa 01; Scalar{BOOLEAN = 1, b (2) = true}, Scalar{FLOAT64 = 3,
      // r (4) = 1.0}
      {"SCALARS", std::vector<proto::Scalar>{MakeScalar(true), MakeScalar(1.0)},
       B({0xaa, 0x01, 0x04, 0x08, 0x01, 0x10, 0x01,  //
          0xaa, 0x01, 0x0b, 0x08, 0x03, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f}),
       17},
  };
}

TEST(WireCompatTest, EveryAttrTypeSerializesAsPaddleDoes) {
  for (const AttrCase& c : AttrCases()) {
    SCOPED_TRACE(c.label);
    proto::OpDesc::Attr attr;
    attr.set_name("a");
    WriteAttrValue(c.value, &attr);
    const std::string expected = B({0x0a, 0x01, 'a', 0x10, c.type_number}) + c.value_bytes;
    EXPECT_BYTES(Wire(attr), expected);
  }
}

TEST(WireCompatTest, EveryAttrTypeParsesFromHandWrittenBytes) {
  for (const AttrCase& c : AttrCases()) {
    SCOPED_TRACE(c.label);
    proto::OpDesc::Attr attr;
    ASSERT_TRUE(attr.ParseFromString(B({0x0a, 0x01, 'a', 0x10, c.type_number}) + c.value_bytes));
    EXPECT_EQ(attr.name(), "a");
    EXPECT_EQ(static_cast<int>(attr.type()), c.type_number);
    EXPECT_TRUE(attr.unknown_fields().empty());
    StatusOr<AttrValue> value = ReadAttrValue(attr);
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    EXPECT_TRUE(SameValue(*value, c.value));
  }
}

TEST(WireCompatTest, PackedRepeatedFieldsFromOtherWritersParse) {
  // Paddle writes repeated scalars unpacked, but a reader must accept the packed form too.
  // ints (6) packed: tag 6<<3|2 = 0x32, 3 bytes: 1, 2, 3.
  proto::OpDesc::Attr attr;
  ASSERT_TRUE(attr.ParseFromString(B({0x0a, 0x01, 'a', 0x10, 0x03, 0x32, 0x03, 0x01, 0x02, 0x03})));
  StatusOr<AttrValue> value = ReadAttrValue(attr);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(std::get<std::vector<int32_t>>(*value), (std::vector<int32_t>{1, 2, 3}));
  // floats (7) packed: tag 0x3a, 8 bytes.
  proto::OpDesc::Attr floats;
  ASSERT_TRUE(floats.ParseFromString(B(
      {0x0a, 0x01, 'a', 0x10, 0x04, 0x3a, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40})));
  EXPECT_EQ(std::get<std::vector<float>>(*ReadAttrValue(floats)), (std::vector<float>{1.0f, 2.0f}));
}

TEST(WireCompatTest, VarDescAttrUsesItsOwnNumbering) {
  // VarDesc.Attr is not OpDesc.Attr: s is field 4 and ints field 5 there.
  proto::VarDesc::Attr attr;
  attr.set_name("a");
  attr.set_type(proto::STRING);
  attr.set_s("v");
  EXPECT_BYTES(Wire(attr), B({0x0a, 0x01, 'a', 0x10, 0x02, 0x22, 0x01, 'v'}));
  proto::VarDesc::Attr ints;
  ints.set_name("b");
  ints.set_type(proto::INTS);
  ints.add_ints(4);
  ints.add_ints(5);
  EXPECT_BYTES(Wire(ints), B({0x0a, 0x01, 'b', 0x10, 0x03, 0x28, 0x04, 0x28, 0x05}));
  proto::VarDesc::Attr i;
  i.set_name("c");
  i.set_type(proto::INT);
  i.set_i(-1);
  EXPECT_BYTES(Wire(i), B({0x0a, 0x01, 'c', 0x10, 0x00, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                           0xff, 0xff, 0xff, 0x01}));
}

// ---- VarDesc, BlockDesc, ProgramDesc -----------------------------------------------------------

// VarDesc "x": DENSE_TENSOR of FP32 [-1, 3], persistable.
const std::string kDenseVar = B({
    0x0a, 0x01, 'x',  // name (1)
    0x12, 0x15,       // type (2): VarType, 21 bytes
    0x08, 0x07,       //   type (1) DENSE_TENSOR = 7
    0x1a, 0x11,       //   dense_tensor (3), 17 bytes
    0x0a, 0x0f,       //     tensor (1), 15 bytes
    0x08, 0x05,       //       data_type (1) FP32 = 5
    0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // dims (2) -1: 10 bytes
    0x10, 0x03,                                                        // dims (2) 3
    0x18, 0x01,                                                        // persistable (3)
});

TEST(WireCompatTest, DenseTensorVar) {
  proto::VarDesc var;
  var.set_name("x");
  VarEditor(&var).SetDenseTensor(proto::VarType::FP32, {-1, 3}).SetPersistable(true);
  EXPECT_BYTES(Wire(var), kDenseVar);

  proto::VarDesc back;
  ASSERT_TRUE(back.ParseFromString(kDenseVar));
  Var view(&back);
  EXPECT_EQ(view.name(), "x");
  EXPECT_EQ(view.type(), proto::VarType::DENSE_TENSOR);
  EXPECT_EQ(view.dtype(), proto::VarType::FP32);
  EXPECT_EQ(view.dims(), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(view.lod_level(), 0);
  EXPECT_TRUE(view.persistable());
}

TEST(WireCompatTest, VarFlagsAndLodLevel) {
  proto::VarDesc var;
  var.set_name("y");
  VarEditor(&var)
      .SetDenseTensor(proto::VarType::INT64, {2}, 1)
      .SetNeedCheckFeed(true)
      .SetIsParameter(true)
      .SetStopGradient(true);
  EXPECT_BYTES(Wire(var), B({
                              0x0a, 0x01, 'y',  // name (1)
                              0x12, 0x0c,       // type (2), 12 bytes
                              0x08, 0x07,       //   type DENSE_TENSOR = 7
                              0x1a, 0x08,       //   dense_tensor (3), 8 bytes
                              0x0a, 0x04,       //     tensor (1), 4 bytes
                              0x08, 0x03,       //       data_type INT64 = 3
                              0x10, 0x02,       //       dims 2
                              0x10, 0x01,       //     legacy_lod_level (2) = 1
                              0x20, 0x01,       // need_check_feed (4)
                              0x28, 0x01,       // is_parameter (5)
                              0x30, 0x01,       // stop_gradient (6)
                          }));
}

TEST(WireCompatTest, NonTensorVarTypes) {
  proto::VarDesc feed;
  feed.set_name("feed");
  VarEditor(&feed).SetType(proto::VarType::FEED_MINIBATCH).SetPersistable(true);
  EXPECT_BYTES(Wire(feed), B({0x0a, 0x04, 'f', 'e', 'e', 'd', 0x12, 0x02, 0x08, 0x09, 0x18, 0x01}));
  proto::VarDesc fetch;
  fetch.set_name("f");
  VarEditor(&fetch).SetType(proto::VarType::FETCH_LIST);
  EXPECT_BYTES(Wire(fetch), B({0x0a, 0x01, 'f', 0x12, 0x02, 0x08, 0x0a}));
}

TEST(WireCompatTest, RootBlockParentIsTenByteMinusOne) {
  proto::BlockDesc block;
  block.set_idx(0);
  block.set_parent_idx(-1);
  EXPECT_BYTES(Wire(block),
               B({0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  // forward_block_idx defaults to -1 and is not written unless set.
  EXPECT_EQ(block.forward_block_idx(), -1);
}

TEST(WireCompatTest, BlockWithVarsOpsAndForwardBlock) {
  proto::BlockDesc block;
  block.set_idx(1);
  block.set_parent_idx(0);
  block.set_forward_block_idx(2);
  OpEditor(block.add_ops()).SetType("relu");
  proto::VarDesc* var = block.add_vars();
  var->set_name("x");
  VarEditor(var).SetDenseTensor(proto::VarType::FP32, {-1, 3}).SetPersistable(true);
  EXPECT_BYTES(Wire(block), B({0x08, 0x01,     // idx (1)
                               0x10, 0x00,     // parent_idx (2)
                               0x1a, 0x1c}) +  // vars (3), 28 bytes
                                kDenseVar +
                                B({0x22, 0x06, 0x1a, 0x04, 'r', 'e', 'l', 'u',  // ops (4)
                                   0x28, 0x02}));                               // forward (5)
}

// A whole program: root block, op_compatible_map (3), version (4), op_version_map (5).
const std::string kProgram = B({
    0x0a, 0x0d,  // blocks (1), 13 bytes
    0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0x01, 0x1a, 0x1a,  // op_compatible_map (3), 26 bytes
    0x0a, 0x11,                                //   pair (1), 17 bytes
    0x0a, 0x04, 'r',  'e',  'l',  'u',         //     op_name (1)
    0x12, 0x09,                                //     compatible_info (2), 9 bytes
    0x0a, 0x05, '1',  '.',  '6',  '.',  '0',   // version (1)
    0x10, 0x02,                                // type (2) POSSIBLE = 2
    0x12, 0x05, '1',  '.',  '5',  '.',  '0',   //   default_required_version (2)
    0x22, 0x04,                                // version (4), 4 bytes
    0x08, 0xd2, 0x98, 0x7a,                    //   version (1) = 2002002
    0x2a, 0x0c,                                // op_version_map (5), 12 bytes
    0x0a, 0x0a,                                //   pair (1), 10 bytes
    0x0a, 0x04, 'r',  'e',  'l',  'u',         //     op_name (1)
    0x12, 0x02, 0x08, 0x02,                    //     op_version (2) {version (1) = 2}
});

TEST(WireCompatTest, ProgramSerializesAsPaddleDoes) {
  proto::ProgramDesc desc;
  // Set in reverse field order: serialization orders by number.
  auto* pair = desc.mutable_op_version_map()->add_pair();
  pair->set_op_name("relu");
  pair->mutable_op_version()->set_version(2);
  desc.mutable_version()->set_version(2002002);
  proto::OpCompatibleMap* compat = MutableLegacyCompatMap(&desc);
  compat->set_default_required_version("1.5.0");
  auto* cpair = compat->add_pair();
  cpair->set_op_name("relu");
  cpair->mutable_compatible_info()->set_version("1.6.0");
  cpair->mutable_compatible_info()->set_type(proto::OpCompatibleMap::CompatibleInfo::POSSIBLE);
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);

  Program program(desc);
  StatusOr<std::string> bytes = SerializeProgram(program, ProgramFormat::kBinary);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_BYTES(*bytes, kProgram);
}

TEST(WireCompatTest, ProgramParsesFromHandWrittenBytes) {
  StatusOr<Program> program = ParseProgram(kProgram, "p.pdmodel");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const proto::ProgramDesc& desc = program->desc();
  EXPECT_TRUE(FindUnknownFields(desc).empty());
  ASSERT_EQ(program->num_blocks(), 1);
  EXPECT_EQ(program->root().index(), 0);
  EXPECT_EQ(program->root().parent_index(), -1);
  EXPECT_EQ(program->version(), 2002002);
  ASSERT_EQ(desc.op_version_map().pair_size(), 1);
  EXPECT_EQ(desc.op_version_map().pair(0).op_name(), "relu");
  EXPECT_EQ(desc.op_version_map().pair(0).op_version().version(), 2);
  const auto& compat = static_cast<const proto::OpCompatibleMap&>(LegacyCompatMap(desc));
  EXPECT_EQ(compat.default_required_version(), "1.5.0");
  ASSERT_EQ(compat.pair_size(), 1);
  EXPECT_EQ(compat.pair(0).op_name(), "relu");
  EXPECT_EQ(compat.pair(0).compatible_info().version(), "1.6.0");
  EXPECT_EQ(compat.pair(0).compatible_info().type(),
            proto::OpCompatibleMap::CompatibleInfo::POSSIBLE);
  // And back, unchanged.
  StatusOr<std::string> again = SerializeProgram(*program, ProgramFormat::kBinary);
  ASSERT_TRUE(again.ok());
  EXPECT_BYTES(*again, kProgram);
}

TEST(WireCompatTest, Field2IsThePaddle10To15Version) {
  // Paddle 1.0 to 1.5 wrote Version{version: 0} in field 2 (12 02 08 00; framework.proto from
  // commit 926e1077): read as legacy_version, written back where it was.
  const std::string bytes = B({0x12, 0x02, 0x08, 0x00});
  StatusOr<Program> program = ParseProgram(bytes, "old.pdmodel", ProgramFormat::kBinary);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_TRUE(FindUnknownFields(program->desc()).empty());
  ASSERT_TRUE(program->desc().has_legacy_version());
  EXPECT_EQ(program->desc().legacy_version().version(), 0);
  EXPECT_BYTES(*SerializeProgram(*program, ProgramFormat::kBinary), bytes);
  StatusOr<std::string> text = SerializeProgram(*program, ProgramFormat::kText);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("legacy_version {\n  version: 0\n}"), std::string::npos) << *text;
}

// ---- enum numbers and field numbers -------------------------------------------------------------

TEST(WireCompatTest, AttrTypeNumbers) {
  // framework.proto's AttrType.
  EXPECT_EQ(proto::INT, 0);
  EXPECT_EQ(proto::FLOAT, 1);
  EXPECT_EQ(proto::STRING, 2);
  EXPECT_EQ(proto::INTS, 3);
  EXPECT_EQ(proto::FLOATS, 4);
  EXPECT_EQ(proto::STRINGS, 5);
  EXPECT_EQ(proto::BOOLEAN, 6);
  EXPECT_EQ(proto::BOOLEANS, 7);
  EXPECT_EQ(proto::BLOCK, 8);
  EXPECT_EQ(proto::LONG, 9);
  EXPECT_EQ(proto::BLOCKS, 10);
  EXPECT_EQ(proto::LONGS, 11);
  EXPECT_EQ(proto::FLOAT64S, 12);
  EXPECT_EQ(proto::VAR, 13);
  EXPECT_EQ(proto::VARS, 14);
  EXPECT_EQ(proto::FLOAT64, 15);
  EXPECT_EQ(proto::SCALAR, 16);
  EXPECT_EQ(proto::SCALARS, 17);
  EXPECT_EQ(proto::AttrType_descriptor()->value_count(), 18);  // no others
}

TEST(WireCompatTest, VarTypeNumbers) {
  using T = proto::VarType;
  // framework.proto's VarType.Type, POD codes (also the dtype ints of op attributes).
  EXPECT_EQ(T::BOOL, 0);
  EXPECT_EQ(T::INT16, 1);
  EXPECT_EQ(T::INT32, 2);
  EXPECT_EQ(T::INT64, 3);
  EXPECT_EQ(T::FP16, 4);
  EXPECT_EQ(T::FP32, 5);
  EXPECT_EQ(T::FP64, 6);
  EXPECT_EQ(T::SIZE_T, 19);
  EXPECT_EQ(T::UINT8, 20);
  EXPECT_EQ(T::INT8, 21);
  EXPECT_EQ(T::BF16, 22);
  EXPECT_EQ(T::COMPLEX64, 23);
  EXPECT_EQ(T::COMPLEX128, 24);
  EXPECT_EQ(T::FP8_E4M3FN, 32);
  EXPECT_EQ(T::FP8_E5M2, 33);
  // Beyond the codes above, as Paddle's framework.proto has them (commit 10c815fa).
  EXPECT_EQ(T::UINT32, 37);
  EXPECT_EQ(T::UINT64, 38);
  // Containers.
  EXPECT_EQ(T::DENSE_TENSOR, 7);
  EXPECT_EQ(T::SELECTED_ROWS, 8);
  EXPECT_EQ(T::FEED_MINIBATCH, 9);
  EXPECT_EQ(T::FETCH_LIST, 10);
  EXPECT_EQ(T::STEP_SCOPES, 11);
  EXPECT_EQ(T::LOD_RANK_TABLE, 12);
  EXPECT_EQ(T::DENSE_TENSOR_ARRAY, 13);
  EXPECT_EQ(T::PLACE_LIST, 14);
  EXPECT_EQ(T::READER, 15);
  EXPECT_EQ(T::FETCH_VAR_LIST, 16);
  EXPECT_EQ(T::RAW, 17);
  EXPECT_EQ(T::TUPLE, 18);
  EXPECT_EQ(T::STRING, 25);
  EXPECT_EQ(T::STRINGS, 26);
  EXPECT_EQ(T::VOCAB, 27);
  EXPECT_EQ(T::FEED_LIST, 28);
  EXPECT_EQ(T::PSTRING, 29);
  EXPECT_EQ(T::SPARSE_COO, 30);
  EXPECT_EQ(T::SPARSE_CSR, 31);
  EXPECT_EQ(T::Type_descriptor()->value_count(), 36);  // 17 POD + 19 containers, no others
}

TEST(WireCompatTest, OtherEnumNumbers) {
  EXPECT_EQ(proto::Scalar::BOOLEAN, 1);
  EXPECT_EQ(proto::Scalar::LONG, 2);
  EXPECT_EQ(proto::Scalar::FLOAT64, 3);
  EXPECT_EQ(proto::Scalar::COMPLEX128, 4);
  using C = proto::OpCompatibleMap::CompatibleInfo;
  EXPECT_EQ(C::COMPATIBLE, 0);
  EXPECT_EQ(C::DEFINITELY_NOT, 1);
  EXPECT_EQ(C::POSSIBLE, 2);
  EXPECT_EQ(C::BUG_FIX, 3);
  EXPECT_EQ(C::PRECISION_CHANGE, 4);
}

struct FieldNumber {
  const google::protobuf::Descriptor* message;
  const char* field;
  int number;
};

TEST(WireCompatTest, FieldNumbersMatchPaddle) {
  // framework.proto's messages, every field of every message a model holds.
  const FieldNumber kFields[] = {
      {proto::Version::descriptor(), "version", 1},
      {proto::ProgramDesc::descriptor(), "blocks", 1},
      {proto::ProgramDesc::descriptor(), "op_compatible_map", 3},
      {proto::ProgramDesc::descriptor(), "version", 4},
      {proto::ProgramDesc::descriptor(), "op_version_map", 5},
      {proto::BlockDesc::descriptor(), "idx", 1},
      {proto::BlockDesc::descriptor(), "parent_idx", 2},
      {proto::BlockDesc::descriptor(), "vars", 3},
      {proto::BlockDesc::descriptor(), "ops", 4},
      {proto::BlockDesc::descriptor(), "forward_block_idx", 5},
      {proto::VarDesc::descriptor(), "name", 1},
      {proto::VarDesc::descriptor(), "type", 2},
      {proto::VarDesc::descriptor(), "persistable", 3},
      {proto::VarDesc::descriptor(), "need_check_feed", 4},
      {proto::VarDesc::descriptor(), "is_parameter", 5},
      {proto::VarDesc::descriptor(), "stop_gradient", 6},
      {proto::VarDesc::descriptor(), "attrs", 7},
      {proto::VarDesc::Attr::descriptor(), "name", 1},
      {proto::VarDesc::Attr::descriptor(), "type", 2},
      {proto::VarDesc::Attr::descriptor(), "i", 3},
      {proto::VarDesc::Attr::descriptor(), "s", 4},
      {proto::VarDesc::Attr::descriptor(), "ints", 5},
      {proto::OpDesc::descriptor(), "inputs", 1},
      {proto::OpDesc::descriptor(), "outputs", 2},
      {proto::OpDesc::descriptor(), "type", 3},
      {proto::OpDesc::descriptor(), "attrs", 4},
      {proto::OpDesc::descriptor(), "is_target", 5},
      {proto::OpDesc::Var::descriptor(), "parameter", 1},
      {proto::OpDesc::Var::descriptor(), "arguments", 2},
      {proto::OpDesc::Attr::descriptor(), "name", 1},
      {proto::OpDesc::Attr::descriptor(), "type", 2},
      {proto::OpDesc::Attr::descriptor(), "i", 3},
      {proto::OpDesc::Attr::descriptor(), "f", 4},
      {proto::OpDesc::Attr::descriptor(), "s", 5},
      {proto::OpDesc::Attr::descriptor(), "ints", 6},
      {proto::OpDesc::Attr::descriptor(), "floats", 7},
      {proto::OpDesc::Attr::descriptor(), "strings", 8},
      {proto::OpDesc::Attr::descriptor(), "b", 10},
      {proto::OpDesc::Attr::descriptor(), "bools", 11},
      {proto::OpDesc::Attr::descriptor(), "block_idx", 12},
      {proto::OpDesc::Attr::descriptor(), "l", 13},
      {proto::OpDesc::Attr::descriptor(), "blocks_idx", 14},
      {proto::OpDesc::Attr::descriptor(), "longs", 15},
      {proto::OpDesc::Attr::descriptor(), "float64s", 16},
      {proto::OpDesc::Attr::descriptor(), "var_name", 17},
      {proto::OpDesc::Attr::descriptor(), "vars_name", 18},
      {proto::OpDesc::Attr::descriptor(), "float64", 19},
      {proto::OpDesc::Attr::descriptor(), "scalar", 20},
      {proto::OpDesc::Attr::descriptor(), "scalars", 21},
      {proto::Scalar::descriptor(), "type", 1},
      {proto::Scalar::descriptor(), "b", 2},
      {proto::Scalar::descriptor(), "i", 3},
      {proto::Scalar::descriptor(), "r", 4},
      {proto::Scalar::descriptor(), "c", 5},
      {proto::Complex::descriptor(), "r", 1},
      {proto::Complex::descriptor(), "i", 2},
      {proto::VarType::descriptor(), "type", 1},
      {proto::VarType::descriptor(), "selected_rows", 2},
      {proto::VarType::descriptor(), "dense_tensor", 3},
      {proto::VarType::descriptor(), "tensor_array", 4},
      {proto::VarType::descriptor(), "reader", 5},
      {proto::VarType::descriptor(), "tuple", 7},
      {proto::VarType::descriptor(), "string", 8},
      {proto::VarType::descriptor(), "strings", 9},
      {proto::VarType::descriptor(), "vocab", 10},
      {proto::VarType::descriptor(), "sparse_coo", 11},
      {proto::VarType::descriptor(), "sparse_csr", 12},
      {proto::VarType::TensorDesc::descriptor(), "data_type", 1},
      {proto::VarType::TensorDesc::descriptor(), "dims", 2},
      {proto::VarType::DenseTensorDesc::descriptor(), "tensor", 1},
      {proto::VarType::DenseTensorDesc::descriptor(), "legacy_lod_level", 2},
      {proto::VarType::DenseTensorArrayDesc::descriptor(), "tensor", 1},
      {proto::VarType::DenseTensorArrayDesc::descriptor(), "legacy_lod_level", 2},
      {proto::VarType::ReaderDesc::descriptor(), "dense_tensor", 1},
      {proto::VarType::Tuple::descriptor(), "element_type", 1},
      {proto::OpVersion::descriptor(), "version", 1},
      {proto::OpVersionMap::descriptor(), "pair", 1},
      {proto::OpVersionMap::OpVersionPair::descriptor(), "op_name", 1},
      {proto::OpVersionMap::OpVersionPair::descriptor(), "op_version", 2},
      {proto::OpCompatibleMap::descriptor(), "pair", 1},
      {proto::OpCompatibleMap::descriptor(), "default_required_version", 2},
      {proto::OpCompatibleMap::OpCompatiblePair::descriptor(), "op_name", 1},
      {proto::OpCompatibleMap::OpCompatiblePair::descriptor(), "compatible_info", 2},
      {proto::OpCompatibleMap::CompatibleInfo::descriptor(), "version", 1},
      {proto::OpCompatibleMap::CompatibleInfo::descriptor(), "type", 2},
  };
  for (const FieldNumber& f : kFields) {
    SCOPED_TRACE(f.message->full_name() + "." + f.field);
    const auto* field = f.message->FindFieldByName(f.field);
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->number(), f.number);
  }
  // ProgramDesc field 2 holds the Paddle 1.0-1.5 version, under its historical schema.
  EXPECT_EQ(proto::ProgramDesc::descriptor()->FindFieldByNumber(2)->name(), "legacy_version");
  // OpDesc.Attr field 9 was never used.
  EXPECT_EQ(proto::OpDesc::Attr::descriptor()->FindFieldByNumber(9), nullptr);
}

// ---- protoc as an independent reader and writer -------------------------------------------------

std::string SourceDir() {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  return dir && *dir ? dir : fs::current_path().string();
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs a shell command; its stdout, and whether it exited 0.
bool RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  char buf[4096];
  size_t n;
  output->clear();
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  return ::pclose(pipe) == 0;
}

class ProtocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string version;
    if (!RunCommand("protoc --version 2>/dev/null", &version)) {
      GTEST_SKIP() << "protoc is not on PATH";
    }
    proto_file_ = SourceDir() + "/oldir/proto/framework.proto";
    ASSERT_TRUE(fs::exists(proto_file_))
        << proto_file_ << " not found: run from the repository root or set IRM_SOURCE_DIR";
    std::string tmpl = ::testing::TempDir() + "irm_wire_compat_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  std::string Protoc(const std::string& mode) const {
    return "protoc " + mode + "=paddle.framework.proto.ProgramDesc -I " + ShellQuote(SourceDir()) +
           " " + ShellQuote(proto_file_);
  }

  std::string proto_file_;
  fs::path dir_;
};

TEST_F(ProtocTest, ProtocDecodesWhatWeWrite) {
  proto::ProgramDesc desc;
  proto::BlockDesc* block = desc.add_blocks();
  block->set_idx(0);
  block->set_parent_idx(-1);
  proto::VarDesc* var = block->add_vars();
  var->set_name("x");
  VarEditor(var).SetDenseTensor(proto::VarType::FP32, {-1, 3}).SetPersistable(true);
  proto::OpDesc* op = block->add_ops();
  OpEditor(op)
      .SetType("relu")
      .SetInput("X", {"x"})
      .SetOutput("Out", {"y"})
      .SetAttr("op_role", int32_t{256})
      .SetAttr("alpha", 0.5f)
      .SetAttr("shape", std::vector<int64_t>{-1, 7})
      .SetAttr("s", MakeScalar(int64_t{9}));
  desc.mutable_version()->set_version(2002002);
  Program program(desc);
  const std::string path = (dir_ / "w.pdmodel").string();
  ASSERT_TRUE(SaveProgram(program, path, ProgramFormat::kBinary).ok());

  std::string text;
  ASSERT_TRUE(RunCommand(Protoc("--decode") + " < " + ShellQuote(path) + " 2>&1", &text)) << text;
  const char* kExpected[] = {
      "blocks {\n  idx: 0\n  parent_idx: -1\n",
      ("    name: \"x\"\n    type {\n      type: DENSE_TENSOR\n      dense_tensor {\n"
       "        tensor {\n          data_type: FP32\n          dims: -1\n          dims: 3\n"),
      "    persistable: true\n",
      "    inputs {\n      parameter: \"X\"\n      arguments: \"x\"\n    }\n",
      "    outputs {\n      parameter: \"Out\"\n      arguments: \"y\"\n    }\n",
      "    type: \"relu\"\n",
      "      name: \"op_role\"\n      type: INT\n      i: 256\n",
      "      name: \"alpha\"\n      type: FLOAT\n      f: 0.5\n",
      "      name: \"shape\"\n      type: LONGS\n      longs: -1\n      longs: 7\n",
      "      name: \"s\"\n      type: SCALAR\n      scalar {\n        type: LONG\n        i: 9\n",
      "version {\n  version: 2002002\n}\n",
  };
  for (const char* want : kExpected) EXPECT_NE(text.find(want), std::string::npos) << want;
  // protoc saw no field it did not know (it would print them as bare numbers: "5: ...").
  EXPECT_EQ(text.find("\n5:"), std::string::npos) << text;
}

TEST_F(ProtocTest, WeReadWhatProtocEncodes) {
  const std::string text_path = (dir_ / "in.txt").string();
  {
    std::ofstream out(text_path);
    out << "blocks { idx: 0 parent_idx: -1\n"
           "  ops { type: \"relu\" inputs { parameter: \"X\" arguments: \"x\" }\n"
           "        outputs { parameter: \"Out\" arguments: \"y\" }\n"
           "        attrs { name: \"op_role\" type: INT i: 0 } } }\n";
  }
  const std::string bin_path = (dir_ / "out.pdmodel").string();
  std::string log;
  ASSERT_TRUE(RunCommand(
      Protoc("--encode") + " < " + ShellQuote(text_path) + " > " + ShellQuote(bin_path) + " 2>&1",
      &log))
      << log;
  StatusOr<std::string> bytes = ReadFile(bin_path);
  ASSERT_TRUE(bytes.ok());
  // protoc wrote exactly the hand-computed bytes: root block + kReluOp.
  const std::string kExpected =
      B({0x0a, 0x36,  // blocks, 54 bytes = 13 (idx, parent) + 2 + 39 (op)
         0x08, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  //
         0x22, 0x27}) +  // ops (4), 39 bytes
      kReluOp;
  EXPECT_BYTES(*bytes, kExpected);

  StatusOr<Program> program = LoadProgram(bin_path);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(program->num_blocks(), 1);
  ASSERT_EQ(program->root().num_ops(), 1);
  Op op = program->root().op(0);
  EXPECT_EQ(op.type(), "relu");
  EXPECT_EQ(op.SingleInput("X"), "x");
  EXPECT_EQ(op.SingleOutput("Out"), "y");
  EXPECT_EQ(op.role(), 0);
  // And our writer reproduces protoc's bytes.
  EXPECT_BYTES(*SerializeProgram(*program, ProgramFormat::kBinary), *bytes);
}

}  // namespace
}  // namespace irm::oldir
