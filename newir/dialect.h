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
// Every dialect above (pd_op and pd_dist arrive in a later step).
Status RegisterAllDialects(OpRegistry& registry);

}  // namespace irm::newir
