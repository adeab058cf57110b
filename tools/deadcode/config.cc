// The default vocabulary and the configuration file reader.
#include "tools/deadcode/config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/json_depth.h"

namespace irm::deadcode {

DeadcodeConfig DefaultConfig() {
  DeadcodeConfig config;
  config.python_guards = {
      {"in_pir_mode", "call", "in_pir_mode"},
      {"use_pir_api", "call", "use_pir_api"},
      {"in_dynamic_or_pir_mode", "call", "in_dynamic_or_pir_mode"},
      {"FLAGS_enable_pir_api", "flag", "FLAGS_enable_pir_api"},
      {"FLAGS_enable_pir_in_executor", "flag", "FLAGS_enable_pir_in_executor"},
      {"_in_pir_mode", "attribute", "_in_pir_mode"},
  };
  config.cpp_guards = {
      {"FLAGS_enable_pir_api", "flag", "FLAGS_enable_pir_api"},
      {"FLAGS_enable_pir_in_executor", "flag", "FLAGS_enable_pir_in_executor"},
  };
  config.twin_rules = {
      {"{}", "_pir_{}"},
      {"_{}", "_pir_{}"},
      {"{}_in_old_ir", "{}_in_pir"},
      {"{}", "{}_pir"},
      {"{}", "{}_in_pir"},
      {"_partial_programs", "_partial_pir_programs"},
      {"_apply_single_impl", "_apply_pir_single_impl"},
      {"init", "init_pir"},
  };
  config.registrations = {{"pass", {"REGISTER_PASS"}, {"REGISTER_IR_PASS"}}};
  config.legacy_types = {"ProgramDesc", "BlockDesc", "OpDesc", "VarDesc"};
  config.new_types = {"pir::Program", "pir::Block", "pir::Operation", "pir::Value"};
  config.legacy_markers = {"old_ir", "legacy", "deprecated"};
  // python/paddle/distributed/passes/pass_base.py: register_pass(name) files the class under
  // `name`; new_pass(name, attrs) is how callers get an instance.
  config.registry_decorators = {"register_pass"};
  return config;
}

namespace {

Status Bad(const std::string& path, const std::string& pointer, const std::string& what) {
  return Status(StatusCode::kInvalid, Location::File(path),
                fmt::format("config {}: {}", pointer.empty() ? "/" : pointer, what));
}

Status ReadStrings(const std::string& path, const nlohmann::json& value, const std::string& pointer,
                   std::vector<std::string>* out) {
  if (!value.is_array()) return Bad(path, pointer, "expected an array of strings");
  out->clear();
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return Bad(path, fmt::format("{}/{}", pointer, i), "expected a string");
    }
    out->push_back(value[i].get<std::string>());
  }
  return Status::Ok();
}

// Reads the string members `keys` of the object at `pointer` into `fields`, all required.
Status ReadObject(const std::string& path, const nlohmann::json& value, const std::string& pointer,
                  const std::vector<std::pair<const char*, std::string*>>& fields) {
  if (!value.is_object()) return Bad(path, pointer, "expected an object");
  for (const auto& [key, field] : fields) {
    auto it = value.find(key);
    if (it == value.end() || !it->is_string()) {
      return Bad(path, fmt::format("{}/{}", pointer, key), "expected a string member");
    }
    *field = it->get<std::string>();
  }
  for (const auto& [key, member] : value.items()) {
    bool known = false;
    for (const auto& field : fields) known |= key == field.first;
    if (!known) return Bad(path, fmt::format("{}/{}", pointer, key), "unknown key");
  }
  return Status::Ok();
}

Status ReadGuards(const std::string& path, const nlohmann::json& value, const std::string& pointer,
                  std::vector<GuardPattern>* out) {
  if (!value.is_array()) return Bad(path, pointer, "expected an array of guards");
  out->clear();
  for (size_t i = 0; i < value.size(); ++i) {
    GuardPattern guard;
    const std::string at = fmt::format("{}/{}", pointer, i);
    IRM_RETURN_IF_ERROR(ReadObject(
        path, value[i], at, {{"name", &guard.name}, {"kind", &guard.kind}, {"text", &guard.text}}));
    if (guard.kind != "call" && guard.kind != "name" && guard.kind != "attribute" &&
        guard.kind != "flag") {
      return Bad(path, at + "/kind",
                 fmt::format("'{}' is not a guard kind (call, name, attribute, flag)", guard.kind));
    }
    out->push_back(std::move(guard));
  }
  return Status::Ok();
}

bool ValidRuleSide(const std::string& side, bool has_stem) {
  const size_t at = side.find("{}");
  if (!has_stem) return at == std::string::npos && !side.empty();
  return at != std::string::npos && side.find("{}", at + 2) == std::string::npos;
}

}  // namespace

StatusOr<DeadcodeConfig> LoadConfig(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  IRM_RETURN_IF_ERROR(CheckJsonDepth(text, path, kMaxSmallJsonDepth));
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return Status(StatusCode::kParseError, Location::File(path), "config: not valid JSON");
  }
  if (!root.is_object()) return Bad(path, "", "expected an object");
  DeadcodeConfig config = DefaultConfig();
  for (const auto& [key, value] : root.items()) {
    const std::string pointer = "/" + key;
    if (key == "python_guards") {
      IRM_RETURN_IF_ERROR(ReadGuards(path, value, pointer, &config.python_guards));
    } else if (key == "cpp_guards") {
      IRM_RETURN_IF_ERROR(ReadGuards(path, value, pointer, &config.cpp_guards));
    } else if (key == "twin_rules") {
      if (!value.is_array()) return Bad(path, pointer, "expected an array of rules");
      config.twin_rules.clear();
      for (size_t i = 0; i < value.size(); ++i) {
        TwinRule rule;
        const std::string at = fmt::format("{}/{}", pointer, i);
        IRM_RETURN_IF_ERROR(
            ReadObject(path, value[i], at, {{"legacy", &rule.legacy}, {"twin", &rule.twin}}));
        const bool stem = rule.legacy.find("{}") != std::string::npos;
        if (!ValidRuleSide(rule.legacy, stem) || !ValidRuleSide(rule.twin, stem) ||
            rule.legacy == rule.twin) {
          return Bad(path, at,
                     "a rule's two sides differ and both hold '{}' once, or neither holds it");
        }
        config.twin_rules.push_back(std::move(rule));
      }
    } else if (key == "registrations") {
      if (!value.is_array()) return Bad(path, pointer, "expected an array of families");
      config.registrations.clear();
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string at = fmt::format("{}/{}", pointer, i);
        const nlohmann::json& family = value[i];
        if (!family.is_object() || !family.contains("registry") ||
            !family["registry"].is_string() || !family.contains("legacy_macros") ||
            !family.contains("new_macros") || family.size() != 3) {
          return Bad(path, at, "expected {\"registry\", \"legacy_macros\", \"new_macros\"}");
        }
        RegistrationFamily out;
        out.registry = family["registry"].get<std::string>();
        IRM_RETURN_IF_ERROR(
            ReadStrings(path, family["legacy_macros"], at + "/legacy_macros", &out.legacy_macros));
        IRM_RETURN_IF_ERROR(
            ReadStrings(path, family["new_macros"], at + "/new_macros", &out.new_macros));
        config.registrations.push_back(std::move(out));
      }
    } else if (key == "legacy_types") {
      IRM_RETURN_IF_ERROR(ReadStrings(path, value, pointer, &config.legacy_types));
    } else if (key == "new_types") {
      IRM_RETURN_IF_ERROR(ReadStrings(path, value, pointer, &config.new_types));
    } else if (key == "legacy_markers") {
      IRM_RETURN_IF_ERROR(ReadStrings(path, value, pointer, &config.legacy_markers));
    } else if (key == "registry_decorators") {
      IRM_RETURN_IF_ERROR(ReadStrings(path, value, pointer, &config.registry_decorators));
    } else {
      return Bad(path, pointer, "unknown key");
    }
  }
  return config;
}

}  // namespace irm::deadcode
