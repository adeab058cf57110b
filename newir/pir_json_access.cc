// The `D` arrays of PIR JSON's types and attributes (pir_json_access.h).
#include "newir/pir_json_access.h"

#include <fmt/format.h>

namespace irm::newir::pir_json {

StatusOr<const json*> JsonAccess::Data(const json& j, const Ptr& ptr, std::string_view name,
                                       size_t arity, const char* what) const {
  IRM_ASSIGN_OR_RETURN(const json* d, Member(j, ptr, "D", json::value_t::array));
  if (d->size() != arity) {
    return Err(Sub(ptr, "D"), fmt::format("'{}' data must have {} elements ({}), found {}", name,
                                          arity, what, d->size()));
  }
  return d;
}

}  // namespace irm::newir::pir_json
