// Strict member reading with JSON-pointer diagnostics, on common/json_access.h.
#include "tools/deadcode/json_read.h"

#include <fmt/format.h>

namespace irm::deadcode {

Status JsonReader::Error(const std::string& pointer, const std::string& message) const {
  return access_.Err(JsonPath::Rendered(pointer), message);
}

Status JsonReader::Object(const Json& value, const std::string& pointer,
                          std::initializer_list<std::string_view> required,
                          std::initializer_list<std::string_view> optional) const {
  const JsonPath at = JsonPath::Rendered(pointer);
  IRM_RETURN_IF_ERROR(access_.Expect(value, at, Json::value_t::object));
  for (std::string_view key : required)
    IRM_RETURN_IF_ERROR(access_.Required(value, at, key).status());
  std::vector<std::string_view> known(required);
  known.insert(known.end(), optional.begin(), optional.end());
  return access_.CheckKeys(value, at, known);
}

Status JsonReader::String(const Json& object, const std::string& pointer, const char* key,
                          std::string* out) const {
  const JsonPath at = JsonPath::Rendered(pointer);
  IRM_ASSIGN_OR_RETURN(*out, access_.String(object.at(key), at / key));
  return Status::Ok();
}

Status JsonReader::Name(const Json& object, const std::string& pointer, const char* key,
                        std::string* out) const {
  IRM_RETURN_IF_ERROR(String(object, pointer, key, out));
  if (out->empty()) return Error(Child(pointer, key), "expected a non-empty string");
  return Status::Ok();
}

Status JsonReader::Int(const Json& object, const std::string& pointer, const char* key, int min,
                       int* out) const {
  const JsonPath at = JsonPath::Rendered(pointer);
  IRM_ASSIGN_OR_RETURN(const int32_t n, access_.Int32(object.at(key), at / key));
  if (n < min) {
    return Error(Child(pointer, key),
                 fmt::format("expected an integer of at least {}, found {}", min, n));
  }
  *out = n;
  return Status::Ok();
}

Status JsonReader::Bool(const Json& object, const std::string& pointer, const char* key,
                        bool* out) const {
  const JsonPath at = JsonPath::Rendered(pointer);
  IRM_ASSIGN_OR_RETURN(*out, access_.Bool(object.at(key), at / key));
  return Status::Ok();
}

Status JsonReader::Array(const Json& object, const std::string& pointer, const char* key,
                         const Json** out) const {
  const JsonPath at = JsonPath::Rendered(pointer);
  const Json& value = object.at(key);
  IRM_RETURN_IF_ERROR(access_.Expect(value, at / key, Json::value_t::array));
  *out = &value;
  return Status::Ok();
}

}  // namespace irm::deadcode
