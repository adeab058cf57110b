// The schema of the legacy ops ir-migrate supports: for each op type, its input and output slots
// (required or dispensable, single or duplicable) and its attributes (AttrType, required or with a
// default). The validator checks programs against it; the builder and translator read it. One
// table, in op_schema.cc, reviewed like code.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

struct SlotSchema {
  std::string_view name;
  bool required = true;     // false: dispensable (may be absent or empty)
  bool duplicable = false;  // may hold more than one argument
};

struct AttrSchema {
  std::string_view name;
  ::paddle::framework::proto::AttrType type;
  bool required = false;  // true: a program without it is invalid
};

struct OpSchema {
  std::string_view type;
  std::vector<SlotSchema> inputs;
  std::vector<SlotSchema> outputs;
  std::vector<AttrSchema> attrs;

  const SlotSchema* FindInput(std::string_view slot) const;
  const SlotSchema* FindOutput(std::string_view slot) const;
  const AttrSchema* FindAttr(std::string_view name) const;
};

// The schema of `type`, or null when ir-migrate does not model it.
const OpSchema* FindOpSchema(std::string_view type);
// Every modelled op, sorted by type.
const std::vector<OpSchema>& AllOpSchemas();

// Attributes every op may carry (op_role, op_role_var, op_namescope, op_callstack, op_device,
// with_quant_attr, ...) with their AttrTypes; checked on every op, modelled or not.
const std::vector<AttrSchema>& CommonAttrSchemas();

}  // namespace irm::oldir
