// Conversion between OpDesc.Attr messages and AttrValue.
#include "oldir/attribute.h"

#include <fmt/format.h>

namespace irm::oldir {
namespace {

template <proto::AttrType kType, typename T>
constexpr bool kHolds = std::is_same_v<std::variant_alternative_t<kType, AttrValue>, T>;
static_assert(kHolds<proto::INT, int32_t> && kHolds<proto::FLOAT, float> &&
              kHolds<proto::STRING, std::string> && kHolds<proto::INTS, std::vector<int32_t>> &&
              kHolds<proto::FLOATS, std::vector<float>> &&
              kHolds<proto::STRINGS, std::vector<std::string>> && kHolds<proto::BOOLEAN, bool> &&
              kHolds<proto::BOOLEANS, std::vector<bool>> && kHolds<proto::BLOCK, BlockRef> &&
              kHolds<proto::LONG, int64_t> && kHolds<proto::BLOCKS, BlockRefs> &&
              kHolds<proto::LONGS, std::vector<int64_t>> &&
              kHolds<proto::FLOAT64S, std::vector<double>> && kHolds<proto::VAR, VarRef> &&
              kHolds<proto::VARS, VarRefs> && kHolds<proto::FLOAT64, double> &&
              kHolds<proto::SCALAR, proto::Scalar> &&
              kHolds<proto::SCALARS, std::vector<proto::Scalar>>);
static_assert(std::variant_size_v<AttrValue> == proto::AttrType_ARRAYSIZE);

template <typename T, typename Repeated>
std::vector<T> ToVector(const Repeated& field) {
  return std::vector<T>(field.begin(), field.end());
}

template <typename Repeated, typename Range>
void FromRange(const Range& values, Repeated* field) {
  field->Clear();
  field->Reserve(static_cast<int>(values.size()));
  for (const auto& v : values) *field->Add() = v;
}

Status MissingField(const proto::OpDesc::Attr& attr, const char* field) {
  return Status(StatusCode::kInvalid, Location{}.AtAttr(attr.name()),
                fmt::format("attribute of type {} has no value: field '{}' is not set",
                            AttrTypeName(attr.type()), field));
}

}  // namespace

const char* AttrTypeName(proto::AttrType type) {
  if (!proto::AttrType_IsValid(type)) return "<invalid AttrType>";
  return proto::AttrType_Name(type).c_str();
}

StatusOr<AttrValue> ReadAttrValue(const proto::OpDesc::Attr& attr) {
  switch (attr.type()) {
    case proto::INT:
      if (!attr.has_i()) return MissingField(attr, "i");
      return AttrValue(attr.i());
    case proto::FLOAT:
      if (!attr.has_f()) return MissingField(attr, "f");
      return AttrValue(attr.f());
    case proto::STRING:
      if (!attr.has_s()) return MissingField(attr, "s");
      return AttrValue(attr.s());
    case proto::INTS:
      return AttrValue(ToVector<int32_t>(attr.ints()));
    case proto::FLOATS:
      return AttrValue(ToVector<float>(attr.floats()));
    case proto::STRINGS:
      return AttrValue(ToVector<std::string>(attr.strings()));
    case proto::BOOLEAN:
      if (!attr.has_b()) return MissingField(attr, "b");
      return AttrValue(attr.b());
    case proto::BOOLEANS:
      return AttrValue(ToVector<bool>(attr.bools()));
    case proto::BLOCK:
      if (!attr.has_block_idx()) return MissingField(attr, "block_idx");
      return AttrValue(BlockRef{attr.block_idx()});
    case proto::LONG:
      if (!attr.has_l()) return MissingField(attr, "l");
      return AttrValue(attr.l());
    case proto::BLOCKS:
      return AttrValue(BlockRefs{ToVector<int32_t>(attr.blocks_idx())});
    case proto::LONGS:
      return AttrValue(ToVector<int64_t>(attr.longs()));
    case proto::FLOAT64S:
      return AttrValue(ToVector<double>(attr.float64s()));
    case proto::VAR:
      if (!attr.has_var_name()) return MissingField(attr, "var_name");
      return AttrValue(VarRef{attr.var_name()});
    case proto::VARS:
      return AttrValue(VarRefs{ToVector<std::string>(attr.vars_name())});
    case proto::FLOAT64:
      if (!attr.has_float64()) return MissingField(attr, "float64");
      return AttrValue(attr.float64());
    case proto::SCALAR:
      if (!attr.has_scalar()) return MissingField(attr, "scalar");
      return AttrValue(attr.scalar());
    case proto::SCALARS:
      return AttrValue(ToVector<proto::Scalar>(attr.scalars()));
  }
  return Status(StatusCode::kInvalid, Location{}.AtAttr(attr.name()),
                fmt::format("unknown AttrType {}", static_cast<int>(attr.type())));
}

void WriteAttrValue(const AttrValue& value, proto::OpDesc::Attr* attr) {
  std::string name = attr->name();
  attr->Clear();
  attr->set_name(name);
  attr->set_type(AttrTypeOf(value));
  std::visit(
      [attr](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int32_t>)
          attr->set_i(v);
        else if constexpr (std::is_same_v<T, float>)
          attr->set_f(v);
        else if constexpr (std::is_same_v<T, std::string>)
          attr->set_s(v);
        else if constexpr (std::is_same_v<T, std::vector<int32_t>>)
          FromRange(v, attr->mutable_ints());
        else if constexpr (std::is_same_v<T, std::vector<float>>)
          FromRange(v, attr->mutable_floats());
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          FromRange(v, attr->mutable_strings());
        else if constexpr (std::is_same_v<T, bool>)
          attr->set_b(v);
        else if constexpr (std::is_same_v<T, std::vector<bool>>)
          FromRange(v, attr->mutable_bools());
        else if constexpr (std::is_same_v<T, BlockRef>)
          attr->set_block_idx(v.index);
        else if constexpr (std::is_same_v<T, int64_t>)
          attr->set_l(v);
        else if constexpr (std::is_same_v<T, BlockRefs>)
          FromRange(v.indices, attr->mutable_blocks_idx());
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          FromRange(v, attr->mutable_longs());
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          FromRange(v, attr->mutable_float64s());
        else if constexpr (std::is_same_v<T, VarRef>)
          attr->set_var_name(v.name);
        else if constexpr (std::is_same_v<T, VarRefs>)
          FromRange(v.names, attr->mutable_vars_name());
        else if constexpr (std::is_same_v<T, double>)
          attr->set_float64(v);
        else if constexpr (std::is_same_v<T, proto::Scalar>)
          *attr->mutable_scalar() = v;
        else if constexpr (std::is_same_v<T, std::vector<proto::Scalar>>)
          FromRange(v, attr->mutable_scalars());
      },
      value);
}

std::vector<std::string> StrayValueFields(const proto::OpDesc::Attr& attr) {
  const proto::AttrType t = attr.type();
  std::vector<std::string> stray;
  auto check = [&](bool present, proto::AttrType owner, const char* field) {
    if (present && t != owner) stray.emplace_back(field);
  };
  check(attr.has_i(), proto::INT, "i");
  check(attr.has_f(), proto::FLOAT, "f");
  check(attr.has_s(), proto::STRING, "s");
  check(attr.ints_size() > 0, proto::INTS, "ints");
  check(attr.floats_size() > 0, proto::FLOATS, "floats");
  check(attr.strings_size() > 0, proto::STRINGS, "strings");
  check(attr.has_b(), proto::BOOLEAN, "b");
  check(attr.bools_size() > 0, proto::BOOLEANS, "bools");
  check(attr.has_block_idx(), proto::BLOCK, "block_idx");
  check(attr.has_l(), proto::LONG, "l");
  check(attr.blocks_idx_size() > 0, proto::BLOCKS, "blocks_idx");
  check(attr.longs_size() > 0, proto::LONGS, "longs");
  check(attr.float64s_size() > 0, proto::FLOAT64S, "float64s");
  check(attr.has_var_name(), proto::VAR, "var_name");
  check(attr.vars_name_size() > 0, proto::VARS, "vars_name");
  check(attr.has_float64(), proto::FLOAT64, "float64");
  check(attr.has_scalar(), proto::SCALAR, "scalar");
  check(attr.scalars_size() > 0, proto::SCALARS, "scalars");
  return stray;
}

proto::Scalar MakeScalar(bool value) {
  proto::Scalar s;
  s.set_type(proto::Scalar::BOOLEAN);
  s.set_b(value);
  return s;
}

proto::Scalar MakeScalar(int64_t value) {
  proto::Scalar s;
  s.set_type(proto::Scalar::LONG);
  s.set_i(value);
  return s;
}

proto::Scalar MakeScalar(double value) {
  proto::Scalar s;
  s.set_type(proto::Scalar::FLOAT64);
  s.set_r(value);
  return s;
}

}  // namespace irm::oldir
