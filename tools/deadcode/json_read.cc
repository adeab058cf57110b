// Strict member reading with JSON-pointer diagnostics.
#include "tools/deadcode/json_read.h"

#include <fmt/format.h>

#include <limits>

#include "common/json_pointer.h"

namespace irm::deadcode {

Status JsonReader::Error(const std::string& pointer, const std::string& message) const {
  return Status(StatusCode::kInvalid, Location::File(file_),
                fmt::format("{} {}: {}", what_, pointer.empty() ? "/" : pointer, message));
}

std::string JsonReader::Child(const std::string& pointer, std::string_view key) {
  std::string child = pointer;
  AppendJsonPointerToken(&child, key);
  return child;
}

std::string JsonReader::Child(const std::string& pointer, size_t index) {
  return fmt::format("{}/{}", pointer, index);
}

Status JsonReader::Object(const Json& value, const std::string& pointer,
                          std::initializer_list<const char*> required,
                          std::initializer_list<const char*> optional) const {
  if (!value.is_object()) return Error(pointer, "expected an object");
  for (const char* key : required) {
    if (!value.contains(key)) return Error(pointer, fmt::format("missing member '{}'", key));
  }
  for (const auto& [key, member] : value.items()) {
    bool known = false;
    for (const char* k : required) known |= key == k;
    for (const char* k : optional) known |= key == k;
    if (!known) return Error(Child(pointer, key), "unknown member");
  }
  return Status::Ok();
}

Status JsonReader::String(const Json& object, const std::string& pointer, const char* key,
                          std::string* out) const {
  const Json& value = object.at(key);
  if (!value.is_string()) return Error(Child(pointer, key), "expected a string");
  *out = value.get<std::string>();
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
  const Json& value = object.at(key);
  const std::string at = Child(pointer, key);
  const std::string expected = fmt::format("expected an integer >= {}", min);
  if (value.is_number_unsigned()) {
    const auto n = value.get<uint64_t>();
    if (n > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
        static_cast<int64_t>(n) < min) {
      return Error(at, expected);
    }
    *out = static_cast<int>(n);
    return Status::Ok();
  }
  if (value.is_number_integer()) {
    const auto n = value.get<int64_t>();
    if (n < min || n > std::numeric_limits<int>::max()) return Error(at, expected);
    *out = static_cast<int>(n);
    return Status::Ok();
  }
  return Error(at, expected);
}

Status JsonReader::Bool(const Json& object, const std::string& pointer, const char* key,
                        bool* out) const {
  const Json& value = object.at(key);
  if (!value.is_boolean()) return Error(Child(pointer, key), "expected a boolean");
  *out = value.get<bool>();
  return Status::Ok();
}

Status JsonReader::Array(const Json& object, const std::string& pointer, const char* key,
                         const Json** out) const {
  const Json& value = object.at(key);
  if (!value.is_array()) return Error(Child(pointer, key), "expected an array");
  *out = &value;
  return Status::Ok();
}

}  // namespace irm::deadcode
