// The names of Paddle PIR's JSON form that writer and reader must agree on: builtin scalar type
// names ("t_f32"), the flags of the compressed parameter op `p` in the order of its lists, which
// op attributes are result attributes (`OA`), and how op names carry dialect ids ("1.matmul").
// Internal to the JSON writer and reader (pir_json.h is the public interface).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "newir/types.h"

namespace irm::newir::pir_json {

struct ScalarName {
  TypeKind kind;
  const char* name;       // without the dialect id: "t_f32"
  const char* json_name;  // with it: "0.t_f32"
};
inline constexpr ScalarName kScalarNames[] = {
    {TypeKind::kBF16, "t_bf16", "0.t_bf16"},
    {TypeKind::kF16, "t_f16", "0.t_f16"},
    {TypeKind::kF32, "t_f32", "0.t_f32"},
    {TypeKind::kF64, "t_f64", "0.t_f64"},
    {TypeKind::kBool, "t_bool", "0.t_bool"},
    {TypeKind::kI8, "t_i8", "0.t_i8"},
    {TypeKind::kU8, "t_ui8", "0.t_ui8"},
    {TypeKind::kI16, "t_i16", "0.t_i16"},
    {TypeKind::kI32, "t_i32", "0.t_i32"},
    {TypeKind::kI64, "t_i64", "0.t_i64"},
    {TypeKind::kIndex, "t_index", "0.t_index"},
    {TypeKind::kC64, "t_c64", "0.t_c64"},
    {TypeKind::kC128, "t_c128", "0.t_c128"},
    {TypeKind::kF8E4M3FN, "t_f8e4m3fn", "0.t_f8e4m3fn"},
    {TypeKind::kF8E5M2, "t_f8e5m2", "0.t_f8e5m2"},
    {TypeKind::kUndefined, "t_undefined", "0.t_undefined"},
};

// "t_f32" -> kF32; nullopt for a name that is no builtin scalar.
std::optional<TypeKind> ScalarKindFromName(std::string_view local_name);
// kF32 -> "0.t_f32"; null for a kind that is no scalar.
const char* ScalarJsonNameOf(TypeKind kind);

// Parameter flags of the compressed `p` op, in the order of its `A` and `OA` lists.
inline constexpr const char* kParamAFlags[] = {"is_distributed", "is_parameter", "need_clip"};
inline constexpr const char* kParamOAFlags[] = {"persistable", "stop_gradient", "trainable"};
// The attributes Paddle's writer puts in a `p` op's `DA` and `QA` lists (schema.cc's
// GetOpDistAttr and GetOpQuantAttr), as {"N": name, "AT": attr} entries.
inline constexpr const char* kDistAttrNames[] = {"op_dist_attr", "op_role"};
inline constexpr const char* kQuantAttrNames[] = {"struct_name"};

// stop_gradient and persistable go to an op's `OA` list, every other attribute to `A`.
inline bool IsResultAttr(std::string_view name) {
  return name == "stop_gradient" || name == "persistable";
}

// "pd_op.matmul" -> "1.matmul", "cf.yield" -> "2.yield". As in Paddle's writer, an op whose
// name's prefix is not a dialect name keeps its name: "dist_op.reshard" (of dialect pd_dist) and
// names of unknown dialects. The reader takes both "4.reshard" and "dist_op.reshard".
std::string CompressOpName(std::string_view op_name);

// The position of the dot that ends a decimal dialect id at the start of `name` ("1.x", "-1.x"),
// or npos when the name does not start with one. The id's length and value are not checked.
size_t DialectIdEnd(std::string_view name);

}  // namespace irm::newir::pir_json
