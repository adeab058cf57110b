// Checking a parity report against docs/parity-report.schema.json in tests: the subset of JSON
// Schema the schema uses ($ref into $defs, oneOf, type, const, enum, required, properties, items),
// so a report missing a required field or holding a value of the wrong kind fails its test.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/file_io.h"

namespace irm::diff::testing {

inline bool HasType(const nlohmann::json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

// The subset of JSON Schema the report's schema uses: $ref into $defs, oneOf, type, const, enum,
// required, properties, items. Appends "path: problem" lines to `errors`.
inline void Check(const nlohmann::json& v, const nlohmann::json& schema, const nlohmann::json& root,
                  const std::string& path, std::vector<std::string>& errors) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    Check(v, root["$defs"][ref.substr(std::string("#/$defs/").size())], root, path, errors);
    return;
  }
  if (schema.contains("oneOf")) {
    int matching = 0;
    for (const nlohmann::json& alternative : schema["oneOf"]) {
      std::vector<std::string> e;
      Check(v, alternative, root, path, e);
      matching += e.empty() ? 1 : 0;
    }
    if (matching != 1)
      errors.push_back(path + ": matches " + std::to_string(matching) + " of oneOf");
    return;
  }
  if (schema.contains("type")) {
    bool ok = false;
    if (schema["type"].is_array()) {
      for (const nlohmann::json& t : schema["type"]) ok = ok || HasType(v, t);
    } else {
      ok = HasType(v, schema["type"]);
    }
    if (!ok) errors.push_back(path + ": wrong type " + v.type_name());
  }
  if (schema.contains("const") && v != schema["const"]) errors.push_back(path + ": not the const");
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end()) {
    errors.push_back(path + ": not in the enum: " + v.dump());
  }
  if (!v.is_object() && !v.is_array()) return;
  if (v.is_object()) {
    for (const nlohmann::json& key : schema.value("required", nlohmann::json::array())) {
      if (!v.contains(key.get<std::string>())) {
        errors.push_back(path + ": missing '" + key.get<std::string>() + "'");
      }
    }
    if (schema.contains("properties")) {
      for (const auto& [key, sub] : schema["properties"].items()) {
        if (v.contains(key)) Check(v[key], sub, root, path + "/" + key, errors);
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < v.size(); ++i) {
      Check(v[i], schema["items"], root, path + "/" + std::to_string(i), errors);
    }
  }
}

// "path: problem" for every violation of the schema (IRM_PARITY_SCHEMA) by `report_json`.
inline std::vector<std::string> SchemaErrors(const std::string& report_json) {
  StatusOr<std::string> text = ReadFile(IRM_PARITY_SCHEMA);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  const nlohmann::json schema = nlohmann::json::parse(text.ok() ? *text : "{}");
  std::vector<std::string> errors;
  Check(nlohmann::json::parse(report_json), schema, schema, "", errors);
  return errors;
}

}  // namespace irm::diff::testing
