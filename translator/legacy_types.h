// Legacy types and attribute values in new-IR terms: VarDesc -> Type, VarType dtype codes ->
// DataType, and a legacy attribute value -> the attribute kind the new op's signature asks for
// (int -> Int32 or Int64, dtype int -> DataType, ints -> IntArray, float -> Double, ...), which is
// how Paddle's AttributeTranslator decides too: by the target, not by the source.
#pragma once

#include <optional>

#include "common/status.h"
#include "newir/attributes.h"
#include "newir/op_info.h"
#include "newir/types.h"
#include "oldir/attribute.h"
#include "oldir/program.h"

namespace irm::translator {

// VarType dtype codes (BOOL ... FP8): nullopt for codes that are not element types.
std::optional<newir::DataType> DataTypeOfVarType(int code);
std::optional<newir::Type> ScalarTypeOfVarType(int code);
// The scalar element type of a DataType (Undefined for kUndefined and kPstring).
newir::Type ScalarTypeOfDataType(newir::DataType dtype);
// The new-IR type of a var: DenseTensor for DENSE_TENSOR (Paddle's NCHW, no lod, offset 0),
// DenseTensorArray, SelectedRows; kUnimplemented for other var types (readers, scopes, ...).
StatusOr<newir::Type> TypeOfVar(const oldir::Var& var);

// `value` as an attribute of the kind `target` declares; kInvalid (message without location)
// when the value cannot be read as that kind (a string for an Int32, an int64 out of range).
StatusOr<newir::Attribute> ConvertAttr(const oldir::AttrValue& value,
                                       const newir::AttrSpec& target);
// `value` in the kind that mirrors its AttrType (INT -> Int32, LONGS -> Array of Int64, BLOCK ->
// Int32 block index, ...): what opaque ops keep.
newir::Attribute MirrorAttr(const oldir::AttrValue& value);

}  // namespace irm::translator
