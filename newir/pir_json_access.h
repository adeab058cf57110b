// Checked access to the elements of a parsed JSON document for the PIR JSON reader: every
// expectation (an object, an integer in range, a known key, a `D` array of some arity) either
// holds or becomes a parse-error Status located by the file and the JSON pointer of the element
// ("f.json: /program/regions/0/blocks/0/ops/3/I/0"). Internal to the reader.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace irm::newir::pir_json {

using json = nlohmann::json;

// "null", "an object", "an integer", ...: a JSON value's kind for a diagnostic.
std::string KindOf(const json& j);

// A JSON pointer built lazily: each step points at its parent (which outlives it, being a caller's
// argument or local), and the text is only rendered for a diagnostic, so reading a valid
// document builds no path strings.
class Ptr {
 public:
  Ptr() = default;
  Ptr(const Ptr* parent, std::string_view key) : parent_(parent), key_(key) {}
  Ptr(const Ptr* parent, size_t index) : parent_(parent), index_(index), is_index_(true) {}

  // "" for the root, else "/a/0/b" with '~' and '/' escaped.
  std::string Render() const;

 private:
  const Ptr* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

inline Ptr Sub(const Ptr& ptr, std::string_view key) { return Ptr(&ptr, key); }
inline Ptr Sub(const Ptr& ptr, size_t index) { return Ptr(&ptr, index); }

class JsonAccess {
 public:
  explicit JsonAccess(std::string file) : file_(std::move(file)) {}

  // A parse error at `ptr` ("/" for the root).
  Status Err(const Ptr& ptr, std::string message) const;

  // The member `key` of object `obj`, or null.
  static const json* Find(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  // Fails on the first member of `obj` whose key is not in `allowed`.
  Status CheckKeys(const json& obj, const Ptr& ptr,
                   std::initializer_list<std::string_view> allowed) const;
  // `type` number_integer means any integer; number_float means any number.
  Status Expect(const json& j, const Ptr& ptr, json::value_t type) const;
  // The member `key` of `obj`, which must be there and be of `type`.
  StatusOr<const json*> Member(const json& obj, const Ptr& ptr, const char* key,
                               json::value_t type) const;
  StatusOr<int64_t> Int(const json& j, const Ptr& ptr) const;
  StatusOr<int32_t> Int32(const json& j, const Ptr& ptr) const;
  StatusOr<std::vector<int64_t>> Ints(const json& j, const Ptr& ptr) const;
  StatusOr<std::string> String(const json& j, const Ptr& ptr) const;
  // The `D` array of `j`, which must have `arity` elements (described by `what`); `name` is the
  // type or attribute name for the diagnostic.
  StatusOr<const json*> Data(const json& j, const Ptr& ptr, std::string_view name, size_t arity,
                             const char* what) const;

 private:
  std::string file_;
};

}  // namespace irm::newir::pir_json
