// Op tables of the `builtin` and `cf` dialects, with the verifier hooks of the ops whose types
// are related (combine, split, slice), and the dialect id table.
#include <fmt/format.h>

#include "newir/dialect.h"
#include "newir/operation.h"

namespace irm::newir {
namespace {

Status Invalid(const Operation& op, std::string message) {
  return Status(StatusCode::kInvalid, LocationOf(op), std::move(message));
}

// combine: the result is vec[operand types...].
Status VerifyCombine(const Operation& op) {
  if (op.num_results() != 1) return Invalid(op, "builtin.combine must have exactly 1 result");
  std::vector<Type> types;
  for (Value* v : op.operands()) {
    if (v == nullptr) return Invalid(op, "builtin.combine has an empty operand");
    types.push_back(v->type());
  }
  const Type expected = Type::Vector(std::move(types));
  if (op.result(0)->type() != expected) {
    return Invalid(op, fmt::format("builtin.combine result type is {} but its operands make {}",
                                   op.result(0)->type().ToString(), expected.ToString()));
  }
  return Status::Ok();
}

// The vector operand of split and slice.
StatusOr<const std::vector<Type>*> VectorOperand(const Operation& op) {
  if (op.num_operands() != 1 || op.operand(0) == nullptr) {
    return Invalid(op, fmt::format("{} needs exactly 1 operand", op.name()));
  }
  const Type& type = op.operand(0)->type();
  if (type.kind() != TypeKind::kVector) {
    return Invalid(op,
                   fmt::format("{} operand must be a vector, not {}", op.name(), type.ToString()));
  }
  return &type.elements();
}

// split: one result per vector element, of the element's type.
Status VerifySplit(const Operation& op) {
  IRM_ASSIGN_OR_RETURN(const std::vector<Type>* elements, VectorOperand(op));
  if (op.num_results() != elements->size()) {
    return Invalid(op, fmt::format("builtin.split has {} results but its operand has {} elements",
                                   op.num_results(), elements->size()));
  }
  for (size_t i = 0; i < elements->size(); ++i) {
    if (op.result(i)->type() != (*elements)[i]) {
      return Invalid(op,
                     fmt::format("builtin.split result {} is {} but element {} is {}", i,
                                 op.result(i)->type().ToString(), i, (*elements)[i].ToString()));
    }
  }
  return Status::Ok();
}

// slice: attr index picks one element; the result has its type.
Status VerifySlice(const Operation& op) {
  IRM_ASSIGN_OR_RETURN(const std::vector<Type>* elements, VectorOperand(op));
  const int32_t* index = op.attribute("index").AsInt32();
  if (index == nullptr) return Invalid(op, "builtin.slice needs an int32 attribute 'index'");
  if (*index < 0 || static_cast<size_t>(*index) >= elements->size()) {
    return Invalid(op, fmt::format("builtin.slice index {} is out of range for {} elements", *index,
                                   elements->size()));
  }
  if (op.num_results() != 1 || op.result(0)->type() != (*elements)[*index]) {
    return Invalid(op,
                   fmt::format("builtin.slice result must be {}", (*elements)[*index].ToString()));
  }
  return Status::Ok();
}

}  // namespace

std::optional<int> DialectJsonId(std::string_view dialect) {
  for (const DialectInfo& d : kDialects) {
    if (d.name == dialect) return d.json_id;
  }
  return std::nullopt;
}

std::optional<std::string_view> DialectFromJsonId(int id) {
  for (const DialectInfo& d : kDialects) {
    if (d.json_id == id) return d.name;
  }
  return std::nullopt;
}

Status RegisterBuiltinDialect(OpRegistry& registry) {
  const AttrSpec parameter_name{"parameter_name", AttrKind::kString, true, {}};
  std::vector<OpInfo> ops = {
      {.name = "builtin.module",
       .summary = "the top op of a program: one region with one block",
       .num_regions = 1},
      // Parameters count as side effects: a program's parameters survive dead-code elimination
      // even when no op reads them (they are part of what the program saves and loads).
      {.name = "builtin.parameter",
       .summary = "reads a named parameter",
       .results = {{"out"}},
       .attributes = {parameter_name},
       .side_effect = true},
      {.name = "builtin.set_parameter",
       .summary = "writes a named parameter",
       .operands = {{"parameter"}},
       .attributes = {parameter_name},
       .side_effect = true},
      {.name = "builtin.shadow_output",
       .summary = "exposes a value under an output name (the fetch of a saved program)",
       .operands = {{"x"}},
       .attributes = {{"output_name", AttrKind::kString, true, {}}},
       .side_effect = true},
      {.name = "builtin.combine",
       .summary = "packs values into a vector",
       .operands = {{"inputs", false, true, true}},
       .results = {{"out", false, true}},
       .verify = VerifyCombine},
      {.name = "builtin.split",
       .summary = "unpacks a vector into one value per element",
       .operands = {{"input", false, true}},
       .results = {{"outputs", false, true, true}},
       .verify = VerifySplit},
      {.name = "builtin.slice",
       .summary = "takes one element of a vector",
       .operands = {{"input", false, true}},
       .results = {{"out"}},
       .attributes = {{"index", AttrKind::kInt32, true, {}}},
       .verify = VerifySlice},
      {.name = "builtin.constant",
       .summary = "a constant value held in attribute 'value'",
       .results = {{"out"}},
       .attributes = {{"value", AttrKind::kNull, true, {}}}},
  };
  for (OpInfo& op : ops) IRM_RETURN_IF_ERROR(registry.Register(std::move(op)));
  return Status::Ok();
}

Status RegisterCfDialect(OpRegistry& registry) {
  return registry.Register({.name = "cf.yield",
                            .summary = "ends a region, passing values to the enclosing op",
                            .operands = {{"inputs", false, true, true}},
                            .terminator = true});
}

Status RegisterAllDialects(OpRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterBuiltinDialect(registry));
  IRM_RETURN_IF_ERROR(RegisterCfDialect(registry));
  IRM_RETURN_IF_ERROR(RegisterPdOpDialect(registry));
  return RegisterDistDialect(registry);
}

}  // namespace irm::newir
