// Typed op attributes of the legacy IR. An OpDesc.Attr stores its value in the one field its
// AttrType names (i, f, s, ints, ..., scalars); AttrValue is that value as one C++ variant whose
// alternative index equals the AttrType number, so code can switch on types without proto details.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

namespace proto = ::paddle::framework::proto;

// Wrappers that keep alternatives with the same C++ representation apart.
struct BlockRef {  // AttrType BLOCK: index of a sub-block
  int32_t index = 0;
  bool operator==(const BlockRef&) const = default;
};
struct BlockRefs {  // AttrType BLOCKS
  std::vector<int32_t> indices;
  bool operator==(const BlockRefs&) const = default;
};
struct VarRef {  // AttrType VAR: a variable name
  std::string name;
  bool operator==(const VarRef&) const = default;
};
struct VarRefs {  // AttrType VARS
  std::vector<std::string> names;
  bool operator==(const VarRefs&) const = default;
};

// Alternative i holds the value of AttrType i (static_asserts in attribute.cc keep it so).
using AttrValue = std::variant<int32_t,                    // INT
                               float,                      // FLOAT
                               std::string,                // STRING
                               std::vector<int32_t>,       // INTS
                               std::vector<float>,         // FLOATS
                               std::vector<std::string>,   // STRINGS
                               bool,                       // BOOLEAN
                               std::vector<bool>,          // BOOLEANS
                               BlockRef,                   // BLOCK
                               int64_t,                    // LONG
                               BlockRefs,                  // BLOCKS
                               std::vector<int64_t>,       // LONGS
                               std::vector<double>,        // FLOAT64S
                               VarRef,                     // VAR
                               VarRefs,                    // VARS
                               double,                     // FLOAT64
                               proto::Scalar,              // SCALAR
                               std::vector<proto::Scalar>  // SCALARS
                               >;

inline proto::AttrType AttrTypeOf(const AttrValue& value) {
  return static_cast<proto::AttrType>(value.index());
}

// "INT", "FLOATS", ... as in framework.proto.
const char* AttrTypeName(proto::AttrType type);

// The value of `attr`, or kInvalid when the field its type names is missing (for scalar types) or
// its type is not a known AttrType. Repeated fields cannot be told missing from empty.
StatusOr<AttrValue> ReadAttrValue(const proto::OpDesc::Attr& attr);

// Sets attr's type and the one value field of `value`; clears every other value field.
void WriteAttrValue(const AttrValue& value, proto::OpDesc::Attr* attr);

// Value fields that are set but do not belong to attr's type (e.g. `f` on an INT attr), as
// "f", "ints", ...; empty when the attr is clean.
std::vector<std::string> StrayValueFields(const proto::OpDesc::Attr& attr);

// Scalar helpers (AttrType SCALAR is Paddle 3.x's typed scalar).
proto::Scalar MakeScalar(bool value);
proto::Scalar MakeScalar(int64_t value);
proto::Scalar MakeScalar(double value);

}  // namespace irm::oldir
