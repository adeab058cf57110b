// Checked reading of a parsed JSON document, shared by every JSON reader (bundle.json, plan.json,
// shards.json, strategies, PIR JSON, the dead-code reports): each expectation — an object with
// known keys, a required member, an integer in range, a string — holds or becomes one kParseError
// located by the file and the JSON pointer of the value, so that every reader's errors read alike:
//   plan.json: /jobs/0/micro_batch: error: expected an integer, found a string
// The one pointer type is JsonPath, built lazily; readers that keep pointers as text wrap them
// (JsonPath::Rendered). Works on nlohmann::json and nlohmann::ordered_json alike.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "common/status.h"

namespace irm {

// "null", "a boolean", "an integer", "a float", "a string", "an array", "an object": a JSON
// value's kind as the diagnostics name it.
const char* JsonKindName(nlohmann::json::value_t type);
template <typename BasicJson>
requires requires(const BasicJson& j) { j.is_discarded(); }
const char* JsonKindName(const BasicJson& j) { return JsonKindName(j.type()); }

// JSON pointers (RFC 6901) as text: appends "/" and `key`, escaping '~' as ~0 and '/' as ~1.
void AppendJsonPointerToken(std::string* pointer, std::string_view key);
// `pointer` with `key`, or element `index`, appended as one token.
std::string JsonPointerChild(const std::string& pointer, std::string_view key);
std::string JsonPointerChild(const std::string& pointer, size_t index);

// A JSON pointer built lazily: each step points at its parent (a caller's argument or local, which
// outlives it), and the text is only rendered for a diagnostic, so that reading a valid document
// builds no path strings.
class JsonPath {
 public:
  JsonPath() = default;  // the root
  JsonPath(const JsonPath* parent, std::string_view key) : parent_(parent), key_(key) {}
  JsonPath(const JsonPath* parent, size_t index)
      : parent_(parent), index_(index), kind_(Kind::kIndex) {}
  // A root whose text is already rendered ("/feeds/2"), for readers that keep pointers as text;
  // `pointer` must outlive the path.
  static JsonPath Rendered(std::string_view pointer) {
    JsonPath path;
    path.key_ = pointer;
    path.kind_ = Kind::kRendered;
    return path;
  }

  // Steps; the result refers to *this, which must outlive it (name each step you keep:
  // `const JsonPath a = root / "a"; const JsonPath b = a / "b";`, not `root / "a" / "b"`).
  JsonPath operator/(std::string_view key) const { return JsonPath(this, key); }
  JsonPath operator/(size_t index) const { return JsonPath(this, index); }

  // "" for the root, else "/a/0/b".
  std::string Render() const;

 private:
  enum class Kind { kKey, kIndex, kRendered };
  const JsonPath* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  Kind kind_ = Kind::kKey;
};

// `file` located at JSON pointer `pointer` ("/" for the whole document).
Location JsonLocation(const std::string& file, std::string_view pointer);

// The checks of one document. Every error is kParseError at the file and the value's pointer.
class JsonAccess {
 public:
  using value_t = nlohmann::json::value_t;

  explicit JsonAccess(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  Location At(const JsonPath& path) const { return JsonLocation(file_, path.Render()); }
  // A parse error at `path`.
  Status Err(const JsonPath& path, std::string message) const;
  // "expected <expected>, found <kind of the value>".
  Status WrongKind(const JsonPath& path, std::string_view expected, value_t found) const;

  // The member `key` of object `obj`, or null.
  template <typename J>
  static const J* Find(const J& obj, std::string_view key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  // Fails on the first member of `obj` whose key is not in `allowed` ("unknown key 'k'").
  template <typename J>
  Status CheckKeys(const J& obj, const JsonPath& path,
                   std::initializer_list<std::string_view> allowed) const {
    return CheckKeys(obj, path, allowed.begin(), allowed.size());
  }
  template <typename J>
  Status CheckKeys(const J& obj, const JsonPath& path,
                   const std::vector<std::string_view>& allowed) const {
    return CheckKeys(obj, path, allowed.data(), allowed.size());
  }
  // `j` is of `type`; number_integer means any integer, number_float any number.
  template <typename J>
  Status Expect(const J& j, const JsonPath& path, value_t type) const {
    const bool ok = type == value_t::number_integer
                        ? j.is_number_integer()
                        : (type == value_t::number_float ? j.is_number() : j.type() == type);
    return ok ? Status::Ok() : WrongKind(path, ExpectedName(type), j.type());
  }
  // An object with only keys of `allowed`.
  template <typename J>
  Status Object(const J& j, const JsonPath& path,
                std::initializer_list<std::string_view> allowed) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::object));
    return CheckKeys(j, path, allowed);
  }
  template <typename J>
  Status Object(const J& j, const JsonPath& path,
                const std::vector<std::string_view>& allowed) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::object));
    return CheckKeys(j, path, allowed);
  }
  // The member `key` of object `obj` at `path`, which must be there ("missing key 'k'").
  template <typename J>
  StatusOr<const J*> Required(const J& obj, const JsonPath& path, std::string_view key) const {
    const J* m = Find(obj, key);
    if (m == nullptr) return MissingKey(path, key);
    return m;
  }
  // The member `key` of `obj`, which must be there and be of `type`.
  template <typename J>
  StatusOr<const J*> Member(const J& obj, const JsonPath& path, std::string_view key,
                            value_t type) const {
    IRM_ASSIGN_OR_RETURN(const J* m, Required(obj, path, key));
    IRM_RETURN_IF_ERROR(Expect(*m, JsonPath(&path, key), type));
    return m;
  }

  template <typename J>
  StatusOr<int64_t> Int(const J& j, const JsonPath& path) const {
    if (j.is_number_unsigned() &&
        j.template get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return OutOfRange(path, j.dump(), "");
    }
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::number_integer));
    return j.template get<int64_t>();
  }
  template <typename J>
  StatusOr<int32_t> Int32(const J& j, const JsonPath& path) const {
    IRM_ASSIGN_OR_RETURN(int64_t v, Int(j, path));
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return OutOfRange(path, std::to_string(v), " the int32");
    }
    return static_cast<int32_t>(v);
  }
  template <typename J>
  StatusOr<std::vector<int64_t>> Ints(const J& j, const JsonPath& path) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::array));
    std::vector<int64_t> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      IRM_ASSIGN_OR_RETURN(int64_t v, Int(j[i], JsonPath(&path, i)));
      out.push_back(v);
    }
    return out;
  }
  template <typename J>
  StatusOr<double> Number(const J& j, const JsonPath& path) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::number_float));
    return j.template get<double>();
  }
  template <typename J>
  StatusOr<bool> Bool(const J& j, const JsonPath& path) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::boolean));
    return j.template get<bool>();
  }
  template <typename J>
  StatusOr<std::string> String(const J& j, const JsonPath& path) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::string));
    return j.template get<std::string>();
  }
  // An array whose elements `element(path, value)` reads into T.
  template <typename T, typename J, typename F>
  StatusOr<std::vector<T>> Array(const J& j, const JsonPath& path, F element) const {
    IRM_RETURN_IF_ERROR(Expect(j, path, value_t::array));
    std::vector<T> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      IRM_ASSIGN_OR_RETURN(T item, element(JsonPath(&path, i), j[i]));
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  // "an object", "an integer", "a number" (number_float: any number).
  static const char* ExpectedName(value_t type);
  Status MissingKey(const JsonPath& path, std::string_view key) const;
  Status UnknownKey(const JsonPath& path, std::string_view key) const;
  // "integer <text> is out of range", or "... out of<range> range" (" the int32").
  Status OutOfRange(const JsonPath& path, const std::string& text, const char* range) const;

  template <typename J>
  Status CheckKeys(const J& obj, const JsonPath& path, const std::string_view* allowed,
                   size_t num_allowed) const {
    IRM_RETURN_IF_ERROR(Expect(obj, path, value_t::object));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string& key = it.key();
      bool known = false;
      for (size_t i = 0; i < num_allowed && !known; ++i) known = key == allowed[i];
      if (!known) return UnknownKey(JsonPath(&path, key), key);
    }
    return Status::Ok();
  }

  std::string file_;
};

}  // namespace irm
