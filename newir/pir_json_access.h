// The PIR JSON reader's checked access to a parsed document: common/json_access.h (the one JSON
// reader of the project: kind names, lazy JSON pointers, located errors such as
// "f.json: /program/regions/0/blocks/0/ops/3/I/0: error: ...") under the reader's short names, plus
// the `D` arrays of PIR JSON's types and attributes. Internal to the reader.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/json_access.h"

namespace irm::newir::pir_json {

using json = nlohmann::json;
using Ptr = JsonPath;

inline Ptr Sub(const Ptr& ptr, std::string_view key) { return Ptr(&ptr, key); }
inline Ptr Sub(const Ptr& ptr, size_t index) { return Ptr(&ptr, index); }

class JsonAccess : public irm::JsonAccess {
 public:
  using irm::JsonAccess::JsonAccess;

  // The `D` array of `j`, which must have `arity` elements (described by `what`); `name` is the
  // type or attribute name for the diagnostic.
  StatusOr<const json*> Data(const json& j, const Ptr& ptr, std::string_view name, size_t arity,
                             const char* what) const;
};

}  // namespace irm::newir::pir_json
