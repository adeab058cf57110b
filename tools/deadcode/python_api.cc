// Python API (see python_api.h for the rules).
#include "tools/deadcode/python_api.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace irm::deadcode {
namespace {

// "register_pass(\"x\")" → "register_pass"; "passes.register_pass(\"x\")" → "register_pass".
std::string_view DecoratorName(std::string_view decorator) {
  decorator = decorator.substr(0, decorator.find('('));
  while (!decorator.empty() && decorator.back() == ' ') decorator.remove_suffix(1);
  const size_t dot = decorator.rfind('.');
  return dot == std::string_view::npos ? decorator : decorator.substr(dot + 1);
}

class RegistryClasses {
 public:
  RegistryClasses(const CodeIndex& index, const DeadcodeConfig& config)
      : index_(index), config_(config) {}

  // Whether users reach `function` only through a registry (see python_api.h).
  bool ReachedOnlyThroughRegistry(const FunctionUnit& function) {
    if (function.class_name.empty() || !OnlyThroughRegistry(function.class_name)) return false;
    for (const std::string& decorator : function.decorators) {
      if (decorator == "staticmethod" || decorator == "classmethod") return false;
    }
    for (const std::string& ancestor : index_.Ancestors(function.class_name)) {
      if (index_.Function(ancestor + "." + function.name) != nullptr) return false;
    }
    return true;
  }

 private:
  bool Registered(const std::string& class_key) const {
    const ClassUnit* klass = index_.Class(class_key);
    if (klass == nullptr) return false;
    return std::any_of(
        klass->decorators.begin(), klass->decorators.end(), [&](const std::string& decorator) {
          const std::string_view name = DecoratorName(decorator);
          return std::find(config_.registry_decorators.begin(), config_.registry_decorators.end(),
                           name) != config_.registry_decorators.end();
        });
  }

  // The class is registered, and so is every class below it; its protocol is all in the tree.
  bool OnlyThroughRegistry(const std::string& class_key) {
    auto known = only_through_registry_.find(class_key);
    if (known != only_through_registry_.end()) return known->second;
    bool only = Registered(class_key) && !index_.HasUnknownBase(class_key);
    if (only) {
      for (const std::string& derived : index_.Descendants(class_key)) only &= Registered(derived);
    }
    only_through_registry_.emplace(class_key, only);
    return only;
  }

  const CodeIndex& index_;
  const DeadcodeConfig& config_;
  std::map<std::string, bool> only_through_registry_;
};

}  // namespace

std::set<std::string> CollectPythonApi(const std::vector<FileModel>& files, const CodeIndex& index,
                                       const DeadcodeConfig& config) {
  std::set<std::string> exported;
  std::map<std::string, std::string> module_of;  // file → module
  for (const FileModel& file : files) {
    if (file.language != Language::kPython) continue;
    module_of[file.file] = file.module;
    if (!file.file.ends_with("__init__.py")) continue;
    exported.insert(file.module);
    for (const auto& [alias, target] : file.imports) exported.insert(target);
  }
  RegistryClasses registry(index, config);
  std::set<std::string> api;
  for (const auto& [key, function] : index.functions()) {
    auto module = module_of.find(function->file);
    if (module == module_of.end() || function->name.starts_with('_') ||
        key.find(kLocals) != std::string::npos) {
      continue;
    }
    if (exported.contains(module->second) || exported.contains(function->class_name) ||
        exported.contains(function->qualname)) {
      if (!registry.ReachedOnlyThroughRegistry(*function)) api.insert(key);
    }
  }
  return api;
}

}  // namespace irm::deadcode
