// Tests of AttrValue <-> OpDesc.Attr: the variant's alternatives line up with the AttrType
// numbers, reading reports attrs without a value, writing leaves no stray value field behind,
// stray fields are found, scalars are built right, and op roles read as Paddle names them.
#include "oldir/attribute.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "oldir/op_role.h"
#include "oldir/test_bytes.h"

namespace irm::oldir {
namespace {

using wire_test::B;
using wire_test::Hex;

// One value per AttrType, with the type's number and name and the name of its value field, all
// written out by hand from framework.proto.
struct TypeCase {
  AttrValue value;
  int number;
  const char* name;
  const char* field;
};

std::vector<TypeCase> TypeCases() {
  return {
      {int32_t{1}, 0, "INT", "i"},
      {1.0f, 1, "FLOAT", "f"},
      {std::string("s"), 2, "STRING", "s"},
      {std::vector<int32_t>{1}, 3, "INTS", "ints"},
      {std::vector<float>{1.0f}, 4, "FLOATS", "floats"},
      {std::vector<std::string>{"s"}, 5, "STRINGS", "strings"},
      {true, 6, "BOOLEAN", "b"},
      {std::vector<bool>{true}, 7, "BOOLEANS", "bools"},
      {BlockRef{1}, 8, "BLOCK", "block_idx"},
      {int64_t{1}, 9, "LONG", "l"},
      {BlockRefs{{1}}, 10, "BLOCKS", "blocks_idx"},
      {std::vector<int64_t>{1}, 11, "LONGS", "longs"},
      {std::vector<double>{1.0}, 12, "FLOAT64S", "float64s"},
      {VarRef{"v"}, 13, "VAR", "var_name"},
      {VarRefs{{"v"}}, 14, "VARS", "vars_name"},
      {1.0, 15, "FLOAT64", "float64"},
      {MakeScalar(int64_t{1}), 16, "SCALAR", "scalar"},
      {std::vector<proto::Scalar>{MakeScalar(true)}, 17, "SCALARS", "scalars"},
  };
}

TEST(AttrValueTest, AlternativeIndexIsTheAttrTypeNumber) {
  const std::vector<TypeCase> cases = TypeCases();
  ASSERT_EQ(cases.size(), 18u);
  ASSERT_EQ(std::variant_size_v<AttrValue>, 18u);
  for (const TypeCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(static_cast<int>(c.value.index()), c.number);
    EXPECT_EQ(static_cast<int>(AttrTypeOf(c.value)), c.number);
    EXPECT_STREQ(AttrTypeName(AttrTypeOf(c.value)), c.name);
  }
}

TEST(AttrValueTest, AttrTypeNameOfAnInvalidNumber) {
  EXPECT_STREQ(AttrTypeName(static_cast<proto::AttrType>(18)), "<invalid AttrType>");
  EXPECT_STREQ(AttrTypeName(static_cast<proto::AttrType>(-1)), "<invalid AttrType>");
}

TEST(AttrValueTest, WriteThenReadGivesTheValueBack) {
  for (const TypeCase& c : TypeCases()) {
    SCOPED_TRACE(c.name);
    proto::OpDesc::Attr attr;
    attr.set_name("a");
    WriteAttrValue(c.value, &attr);
    EXPECT_EQ(attr.name(), "a");
    EXPECT_EQ(static_cast<int>(attr.type()), c.number);
    EXPECT_TRUE(StrayValueFields(attr).empty());
    StatusOr<AttrValue> back = ReadAttrValue(attr);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->index(), c.value.index());
    // Compare through the wire form: proto::Scalar has no operator==.
    proto::OpDesc::Attr again;
    again.set_name("a");
    WriteAttrValue(*back, &again);
    EXPECT_EQ(Hex(again.SerializeAsString()), Hex(attr.SerializeAsString()));
  }
}

// ---- ReadAttrValue
// ---------------------------------------------------------------------------------

TEST(ReadAttrValueTest, MissingValueFieldOfScalarTypes) {
  struct Missing {
    proto::AttrType type;
    const char* message;
  };
  const Missing kCases[] = {
      {proto::INT, "attribute of type INT has no value: field 'i' is not set"},
      {proto::FLOAT, "attribute of type FLOAT has no value: field 'f' is not set"},
      {proto::STRING, "attribute of type STRING has no value: field 's' is not set"},
      {proto::BOOLEAN, "attribute of type BOOLEAN has no value: field 'b' is not set"},
      {proto::BLOCK, "attribute of type BLOCK has no value: field 'block_idx' is not set"},
      {proto::LONG, "attribute of type LONG has no value: field 'l' is not set"},
      {proto::VAR, "attribute of type VAR has no value: field 'var_name' is not set"},
      {proto::FLOAT64, "attribute of type FLOAT64 has no value: field 'float64' is not set"},
      {proto::SCALAR, "attribute of type SCALAR has no value: field 'scalar' is not set"},
  };
  for (const Missing& m : kCases) {
    SCOPED_TRACE(m.message);
    proto::OpDesc::Attr attr;
    attr.set_name("the_attr");
    attr.set_type(m.type);
    StatusOr<AttrValue> value = ReadAttrValue(attr);
    ASSERT_FALSE(value.ok());
    EXPECT_EQ(value.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(value.status().location().attr, "the_attr");
    EXPECT_EQ(value.status().ToString(), std::string("attr 'the_attr': error: ") + m.message);
  }
}

TEST(ReadAttrValueTest, ValueOfAnotherTypeDoesNotCount) {
  // An INT attr whose only value is in f: still missing i.
  proto::OpDesc::Attr attr;
  attr.set_name("x");
  attr.set_type(proto::INT);
  attr.set_f(1.0f);
  StatusOr<AttrValue> value = ReadAttrValue(attr);
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().message(), "attribute of type INT has no value: field 'i' is not set");
}

TEST(ReadAttrValueTest, RepeatedTypesWithoutValuesAreEmpty) {
  for (proto::AttrType type :
       {proto::INTS, proto::FLOATS, proto::STRINGS, proto::BOOLEANS, proto::BLOCKS, proto::LONGS,
        proto::FLOAT64S, proto::VARS, proto::SCALARS}) {
    SCOPED_TRACE(AttrTypeName(type));
    proto::OpDesc::Attr attr;
    attr.set_name("r");
    attr.set_type(type);
    StatusOr<AttrValue> value = ReadAttrValue(attr);
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    EXPECT_EQ(static_cast<int>(value->index()), static_cast<int>(type));
  }
}

TEST(ReadAttrValueTest, DefaultValuesThatAreSetAreRead) {
  // Zero, false and "" are values when the field is present.
  proto::OpDesc::Attr attr;
  attr.set_name("z");
  attr.set_type(proto::INT);
  attr.set_i(0);
  EXPECT_EQ(std::get<int32_t>(*ReadAttrValue(attr)), 0);
  attr.set_type(proto::STRING);
  attr.set_s("");
  EXPECT_EQ(std::get<std::string>(*ReadAttrValue(attr)), "");
  attr.set_type(proto::BOOLEAN);
  attr.set_b(false);
  EXPECT_FALSE(std::get<bool>(*ReadAttrValue(attr)));
}

TEST(ReadAttrValueTest, ParsedFromBytes) {
  // name "a", type LONGS (11 = 0b), longs (15, tag 78) 5 and -1.
  proto::OpDesc::Attr attr;
  ASSERT_TRUE(attr.ParseFromString(B({0x0a, 0x01, 'a', 0x10, 0x0b, 0x78, 0x05, 0x78, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})));
  StatusOr<AttrValue> value = ReadAttrValue(attr);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(std::get<std::vector<int64_t>>(*value), (std::vector<int64_t>{5, -1}));
}

// ---- WriteAttrValue
// ----------------------------------------------------------------------------------

TEST(WriteAttrValueTest, ClearsStrayFields) {
  proto::OpDesc::Attr attr;
  attr.set_name("a");
  attr.set_type(proto::INT);
  attr.set_i(3);
  attr.set_f(2.0f);
  attr.add_strings("x");
  attr.add_longs(4);
  *attr.mutable_scalar() = MakeScalar(true);
  attr.set_var_name("v");
  WriteAttrValue(1.5f, &attr);
  EXPECT_EQ(attr.name(), "a");
  EXPECT_EQ(attr.type(), proto::FLOAT);
  EXPECT_FALSE(attr.has_i());
  EXPECT_EQ(attr.strings_size(), 0);
  EXPECT_EQ(attr.longs_size(), 0);
  EXPECT_FALSE(attr.has_scalar());
  EXPECT_FALSE(attr.has_var_name());
  EXPECT_TRUE(StrayValueFields(attr).empty());
  // Exactly name, type FLOAT (1), f (4) = 1.5f (3fc00000).
  EXPECT_EQ(Hex(attr.SerializeAsString()),
            Hex(B({0x0a, 0x01, 'a', 0x10, 0x01, 0x25, 0x00, 0x00, 0xc0, 0x3f})));
}

TEST(WriteAttrValueTest, RepeatedValuesReplaceNotAppend) {
  proto::OpDesc::Attr attr;
  attr.set_name("a");
  WriteAttrValue(std::vector<int32_t>{1, 2, 3}, &attr);
  WriteAttrValue(std::vector<int32_t>{9}, &attr);
  EXPECT_EQ(std::get<std::vector<int32_t>>(*ReadAttrValue(attr)), std::vector<int32_t>{9});
  WriteAttrValue(std::vector<int32_t>{}, &attr);
  EXPECT_EQ(attr.ints_size(), 0);
  EXPECT_EQ(attr.type(), proto::INTS);
}

TEST(WriteAttrValueTest, BoolVectorKeepsEveryElement) {
  proto::OpDesc::Attr attr;
  attr.set_name("bs");
  WriteAttrValue(std::vector<bool>{true, false, false, true}, &attr);
  EXPECT_EQ(std::get<std::vector<bool>>(*ReadAttrValue(attr)),
            (std::vector<bool>{true, false, false, true}));
}

// ---- StrayValueFields
// --------------------------------------------------------------------------------

TEST(StrayValueFieldsTest, EachFieldOnAnotherType) {
  // Write a value of type t, then claim type t+1: the value field of t is now stray.
  for (const TypeCase& c : TypeCases()) {
    SCOPED_TRACE(c.name);
    proto::OpDesc::Attr attr;
    attr.set_name("a");
    WriteAttrValue(c.value, &attr);
    EXPECT_TRUE(StrayValueFields(attr).empty());
    attr.set_type(static_cast<proto::AttrType>((c.number + 1) % 18));
    EXPECT_EQ(StrayValueFields(attr), std::vector<std::string>{c.field});
  }
}

TEST(StrayValueFieldsTest, SeveralInFieldOrder) {
  proto::OpDesc::Attr attr;
  attr.set_name("a");
  attr.set_type(proto::INT);
  attr.set_i(1);
  *attr.mutable_scalar() = MakeScalar(0.5);
  attr.add_ints(2);
  attr.set_f(1.0f);
  EXPECT_EQ(StrayValueFields(attr), (std::vector<std::string>{"f", "ints", "scalar"}));
}

// ---- scalars
// -----------------------------------------------------------------------------------------

TEST(ScalarTest, MakeScalarBytes) {
  // type (1) BOOLEAN = 1, b (2) = true
  EXPECT_EQ(Hex(MakeScalar(true).SerializeAsString()), Hex(B({0x08, 0x01, 0x10, 0x01})));
  // type LONG = 2, i (3) = -1 as a 10-byte varint
  EXPECT_EQ(Hex(MakeScalar(int64_t{-1}).SerializeAsString()),
            Hex(B({0x08, 0x02, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})));
  // type FLOAT64 = 3, r (4, tag 21) = 0.5 = 0x3fe0000000000000
  EXPECT_EQ(Hex(MakeScalar(0.5).SerializeAsString()),
            Hex(B({0x08, 0x03, 0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f})));
  EXPECT_FALSE(MakeScalar(false).b());
  EXPECT_TRUE(MakeScalar(false).has_b());
}

// ---- op roles
// ----------------------------------------------------------------------------------------

TEST(OpRoleTest, Names) {
  EXPECT_EQ(OpRoleName(0), "Forward");
  EXPECT_EQ(OpRoleName(1), "Backward");
  EXPECT_EQ(OpRoleName(2), "Optimize");
  EXPECT_EQ(OpRoleName(4), "RPC");
  EXPECT_EQ(OpRoleName(8), "Dist");
  EXPECT_EQ(OpRoleName(16), "LRSched");
  EXPECT_EQ(OpRoleName(256), "Forward|Loss");
  EXPECT_EQ(OpRoleName(257), "Backward|Loss");
  EXPECT_EQ(OpRoleName(18), "Optimize|LRSched");
  EXPECT_EQ(OpRoleName(4096), "NotSpecified");
  EXPECT_EQ(OpRoleName(0x1100), "Forward|Loss|NotSpecified");
  EXPECT_EQ(OpRoleName(-1), "Backward|Optimize|RPC|Dist|LRSched|Loss|NotSpecified|0xffffeee0");
  EXPECT_EQ(OpRoleName(0x41), "Backward|0x40");
  EXPECT_EQ(OpRoleName(0x200), "0x200");
}

TEST(OpRoleTest, Values) {
  // Paddle's OpRole numbers (op_proto_maker.h).
  EXPECT_EQ(kForward, 0x0000);
  EXPECT_EQ(kBackward, 0x0001);
  EXPECT_EQ(kOptimize, 0x0002);
  EXPECT_EQ(kRPC, 0x0004);
  EXPECT_EQ(kDist, 0x0008);
  EXPECT_EQ(kLRSched, 0x0010);
  EXPECT_EQ(kLoss, 0x0100);
  EXPECT_EQ(kNotSpecified, 0x1000);
  EXPECT_STREQ(kOpRoleAttr, "op_role");
  EXPECT_STREQ(kOpRoleVarAttr, "op_role_var");
}

TEST(OpRoleTest, Predicates) {
  EXPECT_TRUE(IsForward(0));
  EXPECT_TRUE(IsForward(256));  // the loss op itself runs forward
  EXPECT_FALSE(IsForward(257));
  EXPECT_FALSE(IsForward(2));
  EXPECT_TRUE(IsBackward(257));
  EXPECT_FALSE(IsBackward(256));
  EXPECT_TRUE(IsOptimize(18));
  EXPECT_TRUE(IsLRSched(18));
  EXPECT_TRUE(IsLoss(257));
  EXPECT_FALSE(IsLoss(1));
}

}  // namespace
}  // namespace irm::oldir
