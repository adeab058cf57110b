// Opaque ops (opaque_op.h).
#include "translator/opaque_op.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "translator/legacy_types.h"
#include "translator/op_context.h"

namespace irm::translator {

Status TranslateOpaque(OpContext& ctx) {
  const oldir::Op& op = ctx.op();
  std::vector<newir::Value*> operands;
  std::vector<newir::Attribute> input_slots;
  for (const auto& in : op.desc().inputs()) {
    for (const std::string& name : ctx.InputNames(in.parameter())) {
      IRM_ASSIGN_OR_RETURN(newir::Value * value, ctx.ValueOf(name));
      operands.push_back(value);
      input_slots.push_back(newir::Attribute::String(in.parameter()));
    }
  }
  std::vector<newir::Type> types;
  std::vector<std::string> names;
  std::vector<newir::Attribute> output_slots;
  for (const auto& out : op.desc().outputs()) {
    for (const std::string& name : ctx.OutputNames(out.parameter())) {
      IRM_ASSIGN_OR_RETURN(newir::Type type, ctx.TypeOfName(name));
      types.push_back(std::move(type));
      names.push_back(name);
      output_slots.push_back(newir::Attribute::String(out.parameter()));
    }
  }
  newir::AttributeMap attrs;
  for (const auto& raw : op.desc().attrs()) {
    StatusOr<oldir::AttrValue> value = oldir::ReadAttrValue(raw);
    if (!value.ok()) return ctx.Error(value.status().message());
    attrs.insert_or_assign(raw.name(), MirrorAttr(*value));
  }
  attrs.insert_or_assign("legacy_input_slots", newir::Attribute::Array(std::move(input_slots)));
  attrs.insert_or_assign("legacy_output_slots", newir::Attribute::Array(std::move(output_slots)));
  newir::Operation* opaque =
      ctx.Emit(fmt::format("{}{}", kOpaquePrefix, op.type()), operands, types, std::move(attrs));
  for (size_t i = 0; i < names.size(); ++i) ctx.Bind(names[i], opaque->result(i));
  return Status::Ok();
}

}  // namespace irm::translator
