// The row builders of the `pd_op` op table (pd_op_dialect.cc and the sections in files of their
// own, pd_op_dialect_conv.cc): operand, result and attribute specs with their defaults, op
// variants (in place, side effect, verified, folded) and the table the sections add rows to.
// Internal to the dialect's sources.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "newir/dialect.h"
#include "newir/op_info.h"

namespace irm::newir::pd_op_table {

inline OperandSpec In(std::string name) { return {.name = std::move(name)}; }
inline OperandSpec Opt(std::string name) { return {.name = std::move(name), .optional = true}; }
// One vector value (Tensor[]).
inline OperandSpec Vec(std::string name) { return {.name = std::move(name), .variadic = true}; }
// Any number of separate values (control flow).
inline OperandSpec Many(std::string name) {
  return {.name = std::move(name), .variadic = true, .any_count = true};
}
// A mutable IntArray: a tensor, or a vector of scalar tensors.
inline OperandSpec IntArrayIn(std::string name) {
  return {.name = std::move(name), .int_array = true};
}
inline ResultSpec Out(std::string name) { return {.name = std::move(name)}; }
inline ResultSpec OptOut(std::string name) { return {.name = std::move(name), .optional = true}; }
inline ResultSpec VecOut(std::string name) { return {.name = std::move(name), .variadic = true}; }
inline ResultSpec ManyOut(std::string name) {
  return {.name = std::move(name), .variadic = true, .any_count = true};
}

inline AttrSpec Req(std::string name, AttrKind kind) { return {std::move(name), kind, true, {}}; }
// An attribute with a default; its kind is the default's.
inline AttrSpec Def(std::string name, Attribute value) {
  const AttrKind kind = value.kind();
  return {std::move(name), kind, false, std::move(value)};
}
inline AttrSpec Bool(std::string name, bool v) { return Def(std::move(name), Attribute::Bool(v)); }
inline AttrSpec I32(std::string name, int32_t v) {
  return Def(std::move(name), Attribute::Int32(v));
}
inline AttrSpec I64(std::string name, int64_t v) {
  return Def(std::move(name), Attribute::Int64(v));
}
inline AttrSpec F32(std::string name, float v) { return Def(std::move(name), Attribute::Float(v)); }
inline AttrSpec Str(std::string name, std::string v) {
  return Def(std::move(name), Attribute::String(std::move(v)));
}
inline AttrSpec Dtype(std::string name, DataType v) {
  return Def(std::move(name), Attribute::DataTypeAttr(v));
}
inline AttrSpec Ints(std::string name, std::vector<int32_t> v) {
  std::vector<Attribute> items;
  for (int32_t i : v) items.push_back(Attribute::Int32(i));
  AttrSpec spec = Def(std::move(name), Attribute::Array(std::move(items)));
  spec.element_kind = AttrKind::kInt32;
  return spec;
}
inline AttrSpec Int64s(std::string name, std::vector<int64_t> v) {
  std::vector<Attribute> items;
  for (int64_t i : v) items.push_back(Attribute::Int64(i));
  AttrSpec spec = Def(std::move(name), Attribute::Array(std::move(items)));
  spec.element_kind = AttrKind::kInt64;
  return spec;
}
// An int64 array the yaml gives no default (set_value's index lists).
inline AttrSpec Int64sReq(std::string name) {
  AttrSpec spec = Req(std::move(name), AttrKind::kArray);
  spec.element_kind = AttrKind::kInt64;
  return spec;
}
inline AttrSpec IntArr(std::string name, std::vector<int64_t> v) {
  return Def(std::move(name), Attribute::IntArrayAttr(std::move(v)));
}
// Place defaults to undefined: the translator's "blank place"
// (paddle/fluid/ir_adaptor/translator/).
inline AttrSpec PlaceAttr(std::string name = "place") {
  return Def(std::move(name), Attribute::PlaceAttr(Place{}));
}

inline OpInfo Op(std::string name, std::string summary, std::vector<OperandSpec> operands,
                 std::vector<ResultSpec> results, std::vector<AttrSpec> attributes = {}) {
  return {.name = "pd_op." + std::move(name),
          .summary = std::move(summary),
          .operands = std::move(operands),
          .results = std::move(results),
          .attributes = std::move(attributes)};
}
// The trailing-underscore variant that writes its first input (PIR's in-place op). It does not
// fold: its result is its input, written.
inline OpInfo Inplace(OpInfo op) {
  op.name += "_";
  op.summary += " (in place)";
  op.inplace = true;
  op.fold = nullptr;
  return op;
}
inline OpInfo SideEffect(OpInfo op) {
  op.side_effect = true;
  return op;
}
inline OpInfo Verified(OpInfo op, OpVerifyFn verify) {
  op.verify = verify;
  return op;
}
inline OpInfo Folded(OpInfo op, OpFoldFn fold) {
  op.fold = fold;
  return op;
}

class Table {
 public:
  void Add(OpInfo op) { ops_.push_back(std::move(op)); }
  // Adds the op and its in-place variant.
  void AddWithInplace(OpInfo op) {
    ops_.push_back(Inplace(op));
    ops_.push_back(std::move(op));
  }
  // The names of the rows added so far (`pd_op.x`).
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    names.reserve(ops_.size());
    for (const OpInfo& op : ops_) names.push_back(op.name);
    return names;
  }
  Status RegisterInto(OpRegistry& registry) {
    for (OpInfo& op : ops_) IRM_RETURN_IF_ERROR(registry.Register(std::move(op)));
    return Status::Ok();
  }

 private:
  std::vector<OpInfo> ops_;
};

}  // namespace irm::newir::pd_op_table
