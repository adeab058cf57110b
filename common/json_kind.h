// The name of a JSON value's kind, as the readers' "expected an integer, found a string"
// diagnostics spell it. Header-only: each reader already links nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

namespace irm {

inline const char* JsonKindName(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a floating-point number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "a value of another kind";
}

}  // namespace irm
