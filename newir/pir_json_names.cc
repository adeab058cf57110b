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

const char* ScalarNameOf(TypeKind kind) {
  for (const ScalarName& s : kScalarNames) {
    if (s.kind == kind) return s.name;
  }
  return nullptr;
}

std::string CompressOpName(std::string_view op_name) {
  const size_t dot = op_name.find('.');
  if (dot == std::string_view::npos) return std::string(op_name);
  const std::string_view dialect = DialectOfOpName(op_name);
  const std::optional<int> id = DialectJsonId(dialect);
  // "pd_dist.x" is no dist op ("dist_op.x" is): compressed, it would read back as one.
  if (!id || OpNamePrefixOfDialect(dialect) != op_name.substr(0, dot)) {
    return std::string(op_name);
  }
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
