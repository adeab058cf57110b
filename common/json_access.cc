// Checked reading of a parsed JSON document with JSON-pointer diagnostics (json_access.h).
#include "common/json_access.h"

#include <fmt/format.h>

namespace irm {

const char* JsonKindName(nlohmann::json::value_t type) {
  using value_t = nlohmann::json::value_t;
  switch (type) {
    case value_t::null:
      return "null";
    case value_t::object:
      return "an object";
    case value_t::array:
      return "an array";
    case value_t::string:
      return "a string";
    case value_t::boolean:
      return "a boolean";
    case value_t::number_integer:
    case value_t::number_unsigned:
      return "an integer";
    case value_t::number_float:
      return "a float";
    default:
      return "a binary value";
  }
}

void AppendJsonPointerToken(std::string* pointer, std::string_view key) {
  pointer->push_back('/');
  for (char c : key) {
    if (c == '~') {
      pointer->append("~0");
    } else if (c == '/') {
      pointer->append("~1");
    } else {
      pointer->push_back(c);
    }
  }
}

std::string JsonPointerChild(const std::string& pointer, std::string_view key) {
  std::string out = pointer;
  AppendJsonPointerToken(&out, key);
  return out;
}

std::string JsonPointerChild(const std::string& pointer, size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string JsonPath::Render() const {
  std::string out = parent_ == nullptr ? std::string() : parent_->Render();
  switch (kind_) {
    case Kind::kRendered:
      out.append(key_);
      break;
    case Kind::kIndex:
      out += "/" + std::to_string(index_);
      break;
    case Kind::kKey:
      if (parent_ != nullptr) AppendJsonPointerToken(&out, key_);
      break;
  }
  return out;
}

Location JsonLocation(const std::string& file, std::string_view pointer) {
  return Location::File(file).With(pointer.empty() ? std::string("/") : std::string(pointer));
}

Status JsonAccess::Err(const JsonPath& path, std::string message) const {
  return Status(StatusCode::kParseError, At(path), std::move(message));
}

Status JsonAccess::WrongKind(const JsonPath& path, std::string_view expected, value_t found) const {
  return Err(path, fmt::format("expected {}, found {}", expected, JsonKindName(found)));
}

const char* JsonAccess::ExpectedName(value_t type) {
  return type == value_t::number_float ? "a number" : JsonKindName(type);
}

Status JsonAccess::MissingKey(const JsonPath& path, std::string_view key) const {
  return Err(path, fmt::format("missing key '{}'", key));
}

Status JsonAccess::UnknownKey(const JsonPath& path, std::string_view key) const {
  return Err(path, fmt::format("unknown key '{}'", key));
}

Status JsonAccess::OutOfRange(const JsonPath& path, const std::string& text,
                              const char* range) const {
  return Err(path, fmt::format("integer {} is out of{} range", text, range));
}

}  // namespace irm
