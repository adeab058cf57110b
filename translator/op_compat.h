// The op-compat table: for every legacy op the translator knows, the new op it becomes, how its
// slots and attributes are renamed, which new operands are mutable attributes (fed from a legacy
// tensor slot or materialized from a legacy attribute with pd_op.full / pd_op.full_int_array), the
// defaults for attributes the legacy op may lack, and the special handler for ops a table row
// cannot describe. The rows live in op_compat.cc, reviewed like code.
//
// Names not listed map by rule, as Paddle's OpNameNormalizer does: a legacy slot maps to its
// snake_case form (`ParamOut` -> `param_out`), an attribute keeps its name, and a grad op's
// `<slot>@GRAD` maps to `<new name of slot>_grad` through the forward op's renames
// (`Logits@GRAD` -> `input_grad` for softmax_with_cross_entropy_grad).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "newir/attributes.h"

namespace irm::translator {

class OpContext;
// Translates one legacy op; `ctx` gives its inputs, emits new ops and binds its outputs.
using OpHandler = Status (*)(OpContext& ctx);

struct Rename {
  std::string_view legacy;
  std::string_view name;  // in the new op
};

// A new operand that is a mutable attribute (ops.yaml Scalar / IntArray).
struct MutableOperand {
  std::string_view operand;           // the new op's operand: "scale", "shape", "beta1"
  std::string_view tensor_slot = {};  // a legacy slot holding it as one tensor ("ScaleTensor")
  std::string_view list_slot = {};    // a legacy slot holding it as scalar tensors ("ShapeTensor")
  std::string_view attr = {};         // the legacy attribute holding it otherwise
  newir::DataType dtype = newir::DataType::kFloat32;  // of the materialized constant
  bool int_array = false;               // pd_op.full_int_array (else pd_op.full of shape [1])
  std::optional<double> fallback = {};  // when the legacy attribute is absent too
};

struct OpCompat {
  std::string_view legacy_type = {};
  std::string_view new_op = {};                // without the `pd_op.` prefix or in-place `_`
  std::vector<Rename> slots = {};              // inputs and outputs
  std::vector<Rename> attrs = {};              // legacy attribute -> new attribute
  std::vector<MutableOperand> mutables = {};   // operands fed by attributes
  std::vector<std::string_view> dropped = {};  // legacy slots with no new twin (XShape)
  std::vector<std::pair<std::string_view, newir::Attribute>> defaults = {};  // when absent
  std::string_view forward = {};  // grad ops: the forward legacy op, whose renames apply too
  bool always_inplace = false;    // adam, adamw: pd_op.<name>_ whatever the var names
  OpHandler handler = nullptr;    // a special handler instead of the general one
  std::string_view note = {};     // for the coverage report (e.g. why an op is dropped)
};

// The row of a legacy op type; null when the translator does not know it.
const OpCompat* FindOpCompat(std::string_view legacy_type);
// Whether a row translates its op (a row without new op and handler is a refusal with a note).
inline bool IsTranslatable(const OpCompat* row) {
  return row != nullptr && (row->handler != nullptr || !row->new_op.empty());
}
// Every row, sorted by legacy type.
const std::vector<OpCompat>& AllOpCompats();

// The new name of a legacy slot under `row`'s renames and the rules of the file comment (an
// interned name: it lives as long as the process).
std::string_view NewSlotName(const OpCompat& row, std::string_view legacy_slot);
// The legacy attribute feeding new attribute `name`.
std::string_view LegacyAttrFor(const OpCompat& row, std::string_view name);
// "ParamOut" -> "param_out", "Moment1Out" -> "moment1_out", "X" -> "x".
std::string SnakeCase(std::string_view camel);

}  // namespace irm::translator
