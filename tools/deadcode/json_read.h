// Strict reading of ir-deadcode's JSON documents (reports, evidence manifests) on the project's
// one JSON reader (common/json_access.h): members are checked against the keys a record may hold,
// types and ranges are checked, and every error is located by the document and the JSON pointer
// of the value at fault, as every JSON reader of the project words it
// ("r.json: /findings/3/kind: error: expected a string, found an integer").
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/json_access.h"
#include "common/status.h"

namespace irm::deadcode {

// The documents keep their members in the order they are written (reports are canonical in the
// order of finding.h), hence ordered_json throughout.
using Json = nlohmann::ordered_json;

// The deadcode documents keep their JSON pointers as text: each method takes the pointer of the
// value (or of the object holding the member) it checks.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : access_(std::move(file)) {}

  const std::string& file() const { return access_.file(); }

  // A parse error at `pointer` ("" or "/" for the whole document).
  Status Error(const std::string& pointer, const std::string& message) const;

  // `value` is an object holding every key of `required`, and no key outside `required` and
  // `optional`.
  Status Object(const Json& value, const std::string& pointer,
                std::initializer_list<std::string_view> required,
                std::initializer_list<std::string_view> optional = {}) const;

  // Members of an object that Object() has checked; `pointer` is the object's.
  Status String(const Json& object, const std::string& pointer, const char* key,
                std::string* out) const;
  // A string that is not empty.
  Status Name(const Json& object, const std::string& pointer, const char* key,
              std::string* out) const;
  // An int of at least `min`.
  Status Int(const Json& object, const std::string& pointer, const char* key, int min,
             int* out) const;
  Status Bool(const Json& object, const std::string& pointer, const char* key, bool* out) const;
  // An array member; `*out` points into `object`.
  Status Array(const Json& object, const std::string& pointer, const char* key,
               const Json** out) const;

  static std::string Child(const std::string& pointer, std::string_view key) {
    return JsonPointerChild(pointer, key);
  }
  static std::string Child(const std::string& pointer, size_t index) {
    return JsonPointerChild(pointer, index);
  }

 private:
  JsonAccess access_;
};

}  // namespace irm::deadcode
