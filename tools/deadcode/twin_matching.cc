// Twin matching (see twin_matching.h).
#include "tools/deadcode/twin_matching.h"

#include <map>
#include <set>

namespace irm::deadcode {

std::string LegacyNameFor(const TwinRule& rule, const std::string& twin_name) {
  const size_t stem_at = rule.twin.find("{}");
  if (stem_at == std::string::npos) return twin_name == rule.twin ? rule.legacy : "";
  const std::string prefix = rule.twin.substr(0, stem_at);
  const std::string suffix = rule.twin.substr(stem_at + 2);
  if (twin_name.size() <= prefix.size() + suffix.size()) return "";
  if (!twin_name.starts_with(prefix) || !twin_name.ends_with(suffix)) return "";
  const std::string stem =
      twin_name.substr(prefix.size(), twin_name.size() - prefix.size() - suffix.size());
  std::string legacy = rule.legacy;
  legacy.replace(legacy.find("{}"), 2, stem);
  return legacy;
}

std::vector<FunctionTwin> MatchNamedTwins(const CodeIndex& index, const DeadcodeConfig& config) {
  std::vector<FunctionTwin> pairs;
  std::set<std::string> paired;  // legacy keys
  for (const TwinRule& rule : config.twin_rules) {
    for (const auto& [key, twin] : index.functions()) {
      const std::string legacy_name = LegacyNameFor(rule, twin->name);
      if (legacy_name.empty() || legacy_name == twin->name) continue;
      const FunctionUnit* legacy = index.InScope(twin->scope, legacy_name);
      if (legacy == nullptr || legacy->key == twin->key) continue;
      if (!paired.insert(legacy->key).second) continue;
      pairs.push_back({legacy, twin, rule.twin});
    }
  }
  return pairs;
}

bool TypeMatches(const std::string& parameter_type, const std::vector<std::string>& types) {
  // Strip cv-qualifiers, references, pointers and spaces: "const pir::Program &" → "pir::Program".
  std::string bare;
  for (size_t i = 0; i < parameter_type.size();) {
    bool skipped = false;
    for (std::string_view word : {"const ", "volatile ", "struct ", "class "}) {
      if (parameter_type.compare(i, word.size(), word) == 0) {
        i += word.size();
        skipped = true;
        break;
      }
    }
    if (skipped) continue;
    const char c = parameter_type[i++];
    if (c != '&' && c != '*' && c != ' ') bare.push_back(c);
  }
  if (bare.ends_with("const")) bare.resize(bare.size() - 5);
  for (const std::string& type : types) {
    if (bare == type || bare == "::" + type) return true;
    if (bare.size() > type.size() + 2 && bare.ends_with("::" + type)) return true;
  }
  return false;
}

namespace {

bool TakesAny(const FunctionUnit& function, const std::vector<std::string>& types) {
  for (const std::string& type : function.parameter_types) {
    if (TypeMatches(type, types)) return true;
  }
  return false;
}

}  // namespace

std::vector<FunctionTwin> MatchOverloadTwins(const CodeIndex& index, const DeadcodeConfig& config) {
  std::map<std::string, std::vector<const FunctionUnit*>> by_qualname;
  for (const auto& [key, function] : index.functions()) {
    if (!function->parameter_types.empty()) by_qualname[function->qualname].push_back(function);
  }
  std::vector<FunctionTwin> pairs;
  for (const auto& [qualname, overloads] : by_qualname) {
    for (const FunctionUnit* legacy : overloads) {
      if (!TakesAny(*legacy, config.legacy_types) || TakesAny(*legacy, config.new_types)) continue;
      for (const FunctionUnit* twin : overloads) {
        if (twin == legacy || !TakesAny(*twin, config.new_types)) continue;
        pairs.push_back({legacy, twin, "overload"});
        break;
      }
    }
  }
  return pairs;
}

std::vector<RegistrationTwin> MatchRegistrationTwins(const std::vector<FileModel>& files) {
  std::map<std::pair<std::string, std::string>, const Registration*> new_ones;
  for (const FileModel& file : files) {
    for (const Registration& registration : file.registrations) {
      if (!registration.legacy)
        new_ones.emplace(std::make_pair(registration.registry, registration.key), &registration);
    }
  }
  std::vector<RegistrationTwin> pairs;
  for (const FileModel& file : files) {
    for (const Registration& registration : file.registrations) {
      if (!registration.legacy) continue;
      auto it = new_ones.find({registration.registry, registration.key});
      if (it != new_ones.end()) pairs.push_back({&registration, it->second});
    }
  }
  return pairs;
}

}  // namespace irm::deadcode
