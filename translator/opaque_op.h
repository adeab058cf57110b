// Opaque ops (--allow-unregistered): an op the translator does not know becomes
// `pd_op.legacy.<type>` with every input var as an operand and every output var as a result, in
// slot order, `legacy_input_slots` / `legacy_output_slots` naming each one's slot, and every
// legacy attribute in the kind that mirrors its AttrType — enough to read the legacy op back and
// to round-trip through the new IR's text and JSON forms.
#pragma once

#include "common/status.h"

namespace irm::translator {

class OpContext;

inline constexpr const char* kOpaquePrefix = "pd_op.legacy.";

Status TranslateOpaque(OpContext& ctx);

}  // namespace irm::translator
