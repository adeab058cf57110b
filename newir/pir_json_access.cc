// Checked access to a parsed JSON document with JSON-pointer diagnostics (see pir_json_access.h).
#include "newir/pir_json_access.h"

#include <fmt/format.h>

#include <limits>

#include "common/json_pointer.h"

namespace irm::newir::pir_json {

std::string KindOf(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a float";
    default:
      return "a binary value";
  }
}

std::string Ptr::Render() const {
  if (parent_ == nullptr) return "";
  std::string out = parent_->Render();
  if (is_index_) return out + "/" + std::to_string(index_);
  AppendJsonPointerToken(&out, key_);
  return out;
}

Status JsonAccess::Err(const Ptr& ptr, std::string message) const {
  const std::string where = ptr.Render();
  return Status(StatusCode::kParseError, Location::File(file_).With(where.empty() ? "/" : where),
                std::move(message));
}

Status JsonAccess::CheckKeys(const json& obj, const Ptr& ptr,
                             std::initializer_list<std::string_view> allowed) const {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || it.key() == a;
    if (!ok) return Err(Sub(ptr, it.key()), fmt::format("unknown key '{}'", it.key()));
  }
  return Status::Ok();
}

Status JsonAccess::Expect(const json& j, const Ptr& ptr, json::value_t type) const {
  const bool ok = type == json::value_t::number_integer
                      ? j.is_number_integer()
                      : (type == json::value_t::number_float ? j.is_number() : j.type() == type);
  if (ok) return Status::Ok();
  const std::string want = type == json::value_t::number_float ? "a number" : KindOf(json(type));
  return Err(ptr, fmt::format("expected {}, found {}", want, KindOf(j)));
}

StatusOr<const json*> JsonAccess::Member(const json& obj, const Ptr& ptr, const char* key,
                                         json::value_t type) const {
  const json* m = Find(obj, key);
  if (m == nullptr) return Err(ptr, fmt::format("missing key '{}'", key));
  IRM_RETURN_IF_ERROR(Expect(*m, Sub(ptr, key), type));
  return m;
}

StatusOr<int64_t> JsonAccess::Int(const json& j, const Ptr& ptr) const {
  if (j.is_number_unsigned() &&
      j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Err(ptr, fmt::format("integer {} is out of range", j.dump()));
  }
  IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::number_integer));
  return j.get<int64_t>();
}

StatusOr<int32_t> JsonAccess::Int32(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(int64_t v, Int(j, ptr));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return Err(ptr, fmt::format("integer {} is out of the int32 range", v));
  }
  return static_cast<int32_t>(v);
}

StatusOr<std::vector<int64_t>> JsonAccess::Ints(const json& j, const Ptr& ptr) const {
  IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::array));
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(int64_t v, Int(j[i], Sub(ptr, i)));
    out.push_back(v);
  }
  return out;
}

StatusOr<std::string> JsonAccess::String(const json& j, const Ptr& ptr) const {
  IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::string));
  return j.get<std::string>();
}

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
