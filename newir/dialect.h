// The dialects of the new IR: their names, the numeric ids Paddle's JSON writes in front of op,
// type and attribute names ("1.matmul"), and the functions that fill an OpRegistry with each
// dialect's op table.
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"
#include "newir/op_info.h"

namespace irm::newir {

struct DialectInfo {
  std::string_view name;
  int json_id;  // schema.cc's DialectIdMap
};

inline constexpr DialectInfo kDialects[] = {
    {"builtin", 0}, {"pd_op", 1}, {"cf", 2}, {"custom_op", 3}, {"pd_dist", 4},
};

std::optional<int> DialectJsonId(std::string_view dialect);
std::optional<std::string_view> DialectFromJsonId(int id);

// builtin: module, parameter, set_parameter, shadow_output, combine, split, slice, constant.
Status RegisterBuiltinDialect(OpRegistry& registry);
// cf: yield.
Status RegisterCfDialect(OpRegistry& registry);
// pd_op: the operator dialect (forward, grad, optimizer, control-flow and communication ops).
Status RegisterPdOpDialect(OpRegistry& registry);
// pd_dist: shard_tensor, reshard, dtensor_from_local, dtensor_to_local, named "dist_op.<op>".
Status RegisterDistDialect(OpRegistry& registry);

// Paddle's pd_dist dialect names its ops "dist_op.<op>" (dist_op.h); every other dialect prefixes
// its ops with its own name. These map between an op-name prefix and its dialect, so that JSON's
// "4.reshard" reads as dist_op.reshard and dist_op.reshard writes with id 4.
inline constexpr std::string_view kDistOpPrefix = "dist_op";
// "dist_op.reshard" -> "pd_dist", "pd_op.matmul" -> "pd_op"; "" when the name has no dot.
std::string_view DialectOfOpName(std::string_view op_name);
// "pd_dist" -> "dist_op"; any other dialect -> itself.
std::string_view OpNamePrefixOfDialect(std::string_view dialect);

// Every dialect: builtin, cf, pd_op and pd_dist (dist_op.*); OpRegistry::Global() holds them.
Status RegisterAllDialects(OpRegistry& registry);

}  // namespace irm::newir
