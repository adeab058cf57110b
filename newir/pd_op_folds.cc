// The fold hooks of the pd_op dialect.
#include "newir/pd_op_folds.h"

#include <optional>
#include <variant>

#include "newir/attributes.h"
#include "newir/types.h"
#include "newir/value.h"

namespace irm::newir {
namespace {

// The element type a cast's dtype attribute names; nullopt for dtypes with no scalar type here.
std::optional<TypeKind> ScalarKindOf(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return TypeKind::kBool;
    case DataType::kUInt8:
      return TypeKind::kU8;
    case DataType::kInt8:
      return TypeKind::kI8;
    case DataType::kInt16:
      return TypeKind::kI16;
    case DataType::kInt32:
      return TypeKind::kI32;
    case DataType::kInt64:
      return TypeKind::kI64;
    case DataType::kFloat32:
      return TypeKind::kF32;
    case DataType::kFloat64:
      return TypeKind::kF64;
    case DataType::kComplex64:
      return TypeKind::kC64;
    case DataType::kComplex128:
      return TypeKind::kC128;
    case DataType::kFloat16:
      return TypeKind::kF16;
    case DataType::kBFloat16:
      return TypeKind::kBF16;
    case DataType::kFloat8E4M3FN:
      return TypeKind::kF8E4M3FN;
    case DataType::kFloat8E5M2:
      return TypeKind::kF8E5M2;
    default:
      return std::nullopt;
  }
}

// A numeric attribute (int, float or Scalar) as a double; nullopt for anything else.
std::optional<double> NumericValue(const Attribute& attr) {
  if (const float* f = attr.AsFloat()) return *f;
  if (const double* d = attr.AsDouble()) return *d;
  if (const int32_t* i = attr.AsInt32()) return *i;
  if (const int64_t* i = attr.AsInt64()) return static_cast<double>(*i);
  if (const ScalarValue* s = attr.AsScalar()) {
    if (const double* d = std::get_if<double>(&s->value)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&s->value)) return static_cast<double>(*i);
  }
  return std::nullopt;
}

bool IsNumber(const Attribute& attr, double expected) {
  std::optional<double> value = NumericValue(attr);
  return value.has_value() && *value == expected;
}

// scale's factor: the value of the pd_op.full feeding operand 1, else the attribute `scale`.
bool ScalesByOne(const Operation& op) {
  if (op.num_operands() >= 2 && op.operand(1) != nullptr) {
    const Operation* full = op.operand(1)->defining_op();
    return full != nullptr && full->name() == "pd_op.full" && IsNumber(full->attribute("value"), 1);
  }
  return IsNumber(op.attribute("scale"), 1);
}

bool HasStaticDims(const Type& type) {
  for (int64_t dim : type.dims()) {
    if (dim < 0) return false;
  }
  return true;
}

// Operand 0, the value every fold here passes through; null when the op has none.
Value* Input(const Operation& op) { return op.num_operands() == 0 ? nullptr : op.operand(0); }

OpFoldResult ResultIs(Value* value) {
  return {.result = value, .operand_index = 0, .operand_value = nullptr};
}

}  // namespace

OpFoldResult FoldScaleOp(const Operation& op) {
  const Attribute bias = op.attribute("bias");
  if (op.num_results() != 1 || !ScalesByOne(op) || (bias && !IsNumber(bias, 0))) return {};
  return ResultIs(Input(op));
}

OpFoldResult FoldCastOp(const Operation& op) {
  Value* x = Input(op);
  const DataType* dtype = op.attribute("dtype").AsDataType();
  if (x == nullptr || op.num_results() != 1 || dtype == nullptr) return {};
  std::optional<TypeKind> kind = ScalarKindOf(*dtype);
  if (!kind.has_value() || x->type().dtype().kind() != *kind) return {};
  return ResultIs(x);
}

OpFoldResult FoldReshapeOp(const Operation& op) {
  Value* x = Input(op);
  const bool xshape_unused =
      op.num_results() == 1 || (op.num_results() == 2 && op.result(1)->use_empty());
  if (x == nullptr || !xshape_unused || !HasStaticDims(x->type())) return {};
  return ResultIs(x);
}

OpFoldResult FoldAssignOp(const Operation& op) {
  OpFoldResult fold;
  Value* middle = Input(op);
  if (op.num_results() == 1) fold.result = middle;
  // assign(assign(x)): this op may read x.
  const Operation* inner = middle == nullptr ? nullptr : middle->defining_op();
  if (op.num_operands() == 1 && inner != nullptr && inner->name() == "pd_op.assign" &&
      inner->info() != nullptr && inner->num_operands() == 1) {
    Value* x = inner->operand(0);
    if (x != nullptr && x->type() == middle->type()) fold.operand_value = x;
  }
  return fold;
}

}  // namespace irm::newir
