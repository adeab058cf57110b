// Lenient member access and path encoding for the report renderers.
#include "tools/deadcode/report_render.h"

#include <fmt/format.h>

#include <cstdint>

namespace irm::deadcode::render {

const Json& Member(const Json& object, const char* key) {
  static const Json kNull = nullptr;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string String(const Json& object, const char* key) {
  const Json& value = Member(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

int Int(const Json& object, const char* key) {
  const Json& value = Member(object, key);
  if (value.is_number_unsigned()) {
    const auto n = value.get<uint64_t>();
    return n > static_cast<uint64_t>(INT32_MAX) ? INT32_MAX : static_cast<int>(n);
  }
  if (value.is_number_integer()) {
    const auto n = value.get<int64_t>();
    return n < 0 ? 0 : n > INT32_MAX ? INT32_MAX : static_cast<int>(n);
  }
  return 0;
}

bool Bool(const Json& object, const char* key) {
  const Json& value = Member(object, key);
  return value.is_boolean() && value.get<bool>();
}

const Json& Elements(const Json& object, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& value = Member(object, key);
  return value.is_array() ? value : kEmpty;
}

std::string UriPath(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace irm::deadcode::render
