// Strict reading of ir-deadcode's JSON documents (reports, evidence manifests): members are
// checked against the keys a record may hold, types and ranges are checked, and every error names
// the document and the JSON pointer of the value at fault ("report /findings/3/kind: ...").
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace irm::deadcode {

// The documents keep their members in the order they are written (reports are canonical in the
// order of finding.h), hence ordered_json throughout.
using Json = nlohmann::ordered_json;

class JsonReader {
 public:
  // `what` starts every message: "report", "evidence".
  JsonReader(std::string file, std::string what) : file_(std::move(file)), what_(std::move(what)) {}

  const std::string& file() const { return file_; }

  // "<what> <pointer>: <message>" located in the file ("/" for the whole document).
  Status Error(const std::string& pointer, const std::string& message) const;

  // `value` is an object holding every key of `required`, and no key outside `required` and
  // `optional`.
  Status Object(const Json& value, const std::string& pointer,
                std::initializer_list<const char*> required,
                std::initializer_list<const char*> optional = {}) const;

  // Members of an object that Object() has checked; `pointer` is the object's.
  Status String(const Json& object, const std::string& pointer, const char* key,
                std::string* out) const;
  // A string that is not empty.
  Status Name(const Json& object, const std::string& pointer, const char* key,
              std::string* out) const;
  Status Int(const Json& object, const std::string& pointer, const char* key, int min,
             int* out) const;
  Status Bool(const Json& object, const std::string& pointer, const char* key, bool* out) const;
  // An array member; `*out` points into `object`.
  Status Array(const Json& object, const std::string& pointer, const char* key,
               const Json** out) const;

  static std::string Child(const std::string& pointer, std::string_view key);
  static std::string Child(const std::string& pointer, size_t index);

 private:
  std::string file_;
  std::string what_;
};

}  // namespace irm::deadcode
