// The names shared by the PIR JSON writer and reader (see pir_json_names.h).
#include "newir/pir_json_names.h"

#include <fmt/format.h>

#include "newir/dialect.h"

namespace irm::newir::pir_json {

std::optional<TypeKind> ScalarKindFromName(std::string_view local_name) {
  for (const ScalarName& s : kScalarNames) {
    if (local_name == s.name) return s.kind;
  }
  return std::nullopt;
}

const char* ScalarJsonNameOf(TypeKind kind) {
  for (const ScalarName& s : kScalarNames) {
    if (s.kind == kind) return s.json_name;
  }
  return nullptr;
}

std::string CompressOpName(std::string_view op_name) {
  const size_t dot = op_name.find('.');
  if (dot == std::string_view::npos) return std::string(op_name);
  // Like Paddle's GetCompressOpName, only a prefix that is a dialect's name is replaced: the
  // pd_dist dialect's ops ("dist_op.reshard") keep their names, and "pd_dist.x", which is no
  // dist op, must not become "4.x" (which reads back as "dist_op.x").
  const std::string_view prefix = op_name.substr(0, dot);
  const std::optional<int> id = DialectJsonId(prefix);
  if (!id || OpNamePrefixOfDialect(prefix) != prefix) return std::string(op_name);
  return fmt::format("{}.{}", *id, op_name.substr(dot + 1));
}

size_t DialectIdEnd(std::string_view name) {
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::string_view::npos;
  for (size_t i = 0; i < dot; ++i) {
    const bool digit = name[i] >= '0' && name[i] <= '9';
    const bool sign = i == 0 && name[i] == '-' && dot > 1;
    if (!digit && !sign) return std::string_view::npos;
  }
  return dot;
}

}  // namespace irm::newir::pir_json
