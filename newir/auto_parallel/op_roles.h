// The op_role attribute the translator and the passes put on ops (Paddle's OpRole bits:
// python/paddle/base/framework.py, OpRole: Forward 0, Backward 1, Optimize 2, ...), as the
// auto-parallel passes read it.
#pragma once

#include <cstdint>
#include <optional>

#include "newir/operation.h"

namespace irm::newir {

inline constexpr int32_t kBackwardRole = 1;
inline constexpr int32_t kOptimizeRole = 2;

// The op's op_role, or none when it carries no int32 one.
inline std::optional<int32_t> OpRoleOf(const Operation& op) {
  if (const int32_t* role = op.attribute("op_role").AsInt32()) return *role;
  return std::nullopt;
}

}  // namespace irm::newir
