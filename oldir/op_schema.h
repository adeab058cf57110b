// The schema of the legacy ops ir-migrate supports: for each op type, its input and output slots
// (required or dispensable, single or duplicable) and its attributes (AttrType, required or with a
// default), with the Paddle release from which writers always emit a required slot (older grad
// makers did not keep some: see oldir/schema_era.h). The validator checks programs against it;
// the builder and translator read it. One table, in op_schema.cc, reviewed like code.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "oldir/proto/framework.pb.h"

namespace irm::oldir {

struct SlotSchema {
  std::string_view name;
  bool required = true;     // false: dispensable (may be absent or empty)
  bool duplicable = false;  // may hold more than one argument
  // A required slot Paddle's writers emit only from this release on (PaddleVersion(); 0: always):
  // a program an older Paddle wrote may lack it.
  int64_t required_since = 0;
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

// Whether Paddle reads an attribute stored as `stored` where its op maker declares `declared`:
// the attribute checker converts INT and FLOAT to BOOLEAN and LONG, INT and LONG to FLOAT,
// INT, LONG and FLOAT to FLOAT64, INTS and FLOATS to LONGS and FLOAT64S (ExtractAttribute in
// paddle/fluid/framework/attribute.h). Python wrote attributes by the type of
// the Python value until Paddle 2.4 (commit 307801d5, 2022-08-16, made it write the declared
// type), so programs of earlier releases hold such attributes.
bool PaddleConvertsAttr(::paddle::framework::proto::AttrType declared,
                        ::paddle::framework::proto::AttrType stored);
// The first release whose Python writes every attribute with its declared type.
int64_t DeclaredAttrTypesSince();

// The parameter-server (RPC) ops of Paddle 1.x and 2.x: the trainer's send/recv and barriers,
// the server's listen_and_serv and its variants, the distributed lookup table ops. ir-migrate
// reads and validates them; running them is out of scope.
bool IsParameterServerOp(std::string_view type);
// The dummy vars those ops use only to order one another: Paddle names them
// "__control_var@<random>" (framework.py generate_control_dev_var_name; the prefix is
// kControlDepVarName in paddle/fluid/framework/ir/node.h) and gives them no shape or dtype.
bool IsControlDependencyVar(std::string_view name);

// Attributes every op may carry (op_role, op_role_var, op_namescope, op_callstack, op_device,
// with_quant_attr, ...) with their AttrTypes; checked on every op, modelled or not.
const std::vector<AttrSchema>& CommonAttrSchemas();

}  // namespace irm::oldir
