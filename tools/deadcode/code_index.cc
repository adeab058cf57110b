// Merging file models and resolving references (see code_index.h).
#include "tools/deadcode/code_index.h"

#include <algorithm>
#include <set>

namespace irm::deadcode {
namespace {

std::vector<std::string> SplitDots(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

std::string JoinFrom(const std::vector<std::string>& parts, size_t first) {
  std::string out;
  for (size_t i = first; i < parts.size(); ++i) out += (i == first ? "" : ".") + parts[i];
  return out;
}

int RangeSize(const SourceRange& r) { return (r.end_line - r.start_line) * 100000 + r.end_column; }

}  // namespace

std::string OuterFunctionKey(const std::string& key) {
  const size_t at = key.rfind(kLocals);
  return at == std::string::npos ? "" : key.substr(0, at);
}

CodeIndex::CodeIndex(const std::vector<FileModel>& files) : files_(files) {
  for (const FileModel& file : files_) {
    for (const FunctionUnit& function : file.functions) {
      if (!functions_.emplace(function.key, &function).second) continue;
      function_lookup_.emplace(function.key, &function);
      by_scope_.emplace(std::make_pair(function.scope, function.name), &function);
      by_file_[function.file].push_back(&function);
      if (file.language == Language::kPython) {
        methods_by_name_[function.name].push_back(function.key);
      }
    }
    for (const ClassUnit& klass : file.classes) classes_.emplace(klass.key, &klass);
  }
  for (const FileModel& file : files_) {
    if (file.language != Language::kPython) continue;
    for (const ClassUnit& klass : file.classes) {
      for (const std::string& base : klass.bases) {
        const std::string resolved = ResolveClass(file, base);
        if (resolved.empty() || resolved == klass.key) continue;
        bases_[klass.key].push_back(resolved);
        derived_[resolved].push_back(klass.key);
      }
    }
  }
  for (const FileModel& file : files_) {
    if (file.language != Language::kPython) continue;
    for (const Reference& reference : file.references) {
      if (!reference.target.starts_with("super().")) continue;
      std::string method = reference.from;
      while (!OuterFunctionKey(method).empty()) method = OuterFunctionKey(method);
      const FunctionUnit* function = Function(method);
      if (function != nullptr && reference.target == "super()." + function->name) {
        extends_super_.insert(method);
      }
    }
  }
  for (const FileModel& file : files_) {
    for (const Reference& reference : file.references) {
      references_.push_back({&file, &reference, Resolve(file, reference)});
    }
  }
}

const FunctionUnit* CodeIndex::Function(const std::string& key) const {
  auto it = function_lookup_.find(key);
  return it == function_lookup_.end() ? nullptr : it->second;
}

const FunctionUnit* CodeIndex::InScope(const std::string& scope, const std::string& name) const {
  auto it = by_scope_.find({scope, name});
  return it == by_scope_.end() ? nullptr : it->second;
}

const FunctionUnit* CodeIndex::Enclosing(const std::string& file, int line, int column) const {
  auto it = by_file_.find(file);
  if (it == by_file_.end()) return nullptr;
  const FunctionUnit* best = nullptr;
  for (const FunctionUnit* function : it->second) {
    if (!function->range.Contains(line, column)) continue;
    if (best == nullptr || RangeSize(function->range) < RangeSize(best->range)) best = function;
  }
  return best;
}

std::vector<std::string> CodeIndex::Resolve(const FileModel& file,
                                            const Reference& reference) const {
  if (file.language == Language::kPython) return ResolvePython(file, reference);
  if (Function(reference.target) == nullptr) return {};
  return {reference.target};
}

void CodeIndex::AddQualname(const std::string& qualname, std::set<std::string>* out) const {
  if (Function(qualname) != nullptr) out->insert(qualname);
  if (classes_.contains(qualname) && Function(qualname + ".__init__") != nullptr) {
    out->insert(qualname + ".__init__");
  }
}

std::vector<std::string> CodeIndex::Ancestors(const std::string& class_key) const {
  std::vector<std::string> queue = {class_key};
  std::set<std::string> seen = {class_key};
  for (size_t i = 0; i < queue.size(); ++i) {
    auto it = bases_.find(queue[i]);
    if (it == bases_.end()) continue;
    for (const std::string& base : it->second) {
      if (seen.insert(base).second) queue.push_back(base);
    }
  }
  return {queue.begin() + 1, queue.end()};
}

void CodeIndex::AddMethodInHierarchy(const std::string& class_key, const std::string& name,
                                     const std::string& calling_method,
                                     std::set<std::string>* out) const {
  // Ancestors and descendants: `self.f()` in a base class may run a subclass's override.
  std::set<std::string> related = {class_key};
  for (const auto* links : {&bases_, &derived_}) {
    std::vector<std::string> work = {class_key};
    while (!work.empty()) {
      const std::string current = work.back();
      work.pop_back();
      auto it = links->find(current);
      if (it == links->end()) continue;
      for (const std::string& next : it->second) {
        if (links == &derived_ && !calling_method.empty()) {
          // A subclass with its own calling method that does not extend the base's never runs
          // the base's body (Paddle's PipelinePassBase replaces PassBase._apply_impl).
          const std::string own = next + "." + calling_method;
          if (Function(own) != nullptr && !extends_super_.contains(own)) continue;
        }
        if (related.insert(next).second) work.push_back(next);
      }
    }
  }
  for (const std::string& klass : related) {
    if (Function(klass + "." + name) != nullptr) out->insert(klass + "." + name);
  }
}

std::string CodeIndex::ResolveClass(const FileModel& file, const std::string& base) const {
  const std::vector<std::string> parts = SplitDots(base);
  for (const auto& [alias, target] : file.imports) {
    if (alias != parts[0]) continue;
    const std::string candidate = parts.size() == 1 ? target : target + "." + JoinFrom(parts, 1);
    if (classes_.contains(candidate)) return candidate;
  }
  if (classes_.contains(file.module + "." + base)) return file.module + "." + base;
  if (classes_.contains(base)) return base;
  return "";
}

std::vector<std::string> CodeIndex::ResolvePython(const FileModel& file,
                                                  const Reference& reference) const {
  std::set<std::string> out;
  const std::string& target = reference.target;
  // The class whose method (or a function nested in it) holds the reference.
  std::string klass;
  std::string method;  // the method of `klass` that holds the reference
  for (std::string key = reference.from; !key.empty(); key = OuterFunctionKey(key)) {
    const FunctionUnit* function = Function(key);
    if (function != nullptr && !function->class_name.empty()) {
      klass = function->class_name;
      method = function->name;
      break;
    }
  }
  constexpr std::string_view kSuper = "super().";
  if (target.starts_with(kSuper)) {
    if (!klass.empty()) AddMethodInHierarchy(klass, target.substr(kSuper.size()), "", &out);
    return {out.begin(), out.end()};
  }
  const std::vector<std::string> parts = SplitDots(target);
  if ((parts[0] == "self" || parts[0] == "cls") && parts.size() == 2 && !klass.empty()) {
    AddMethodInHierarchy(klass, parts[1], method, &out);
    return {out.begin(), out.end()};
  }
  if (parts.size() == 1) {
    // Innermost first: a function nested in the referencing one (or in one of its outers).
    for (std::string key = reference.from; !key.empty(); key = OuterFunctionKey(key)) {
      AddQualname(key + std::string(kLocals) + target, &out);
      if (!out.empty()) return {out.begin(), out.end()};
    }
  }
  AddQualname(file.module + "." + target, &out);
  for (const auto& [alias, qualified] : file.imports) {
    if (alias != parts[0]) continue;
    AddQualname(parts.size() == 1 ? qualified : qualified + "." + JoinFrom(parts, 1), &out);
  }
  AddQualname(target, &out);  // written fully qualified
  if (out.empty() && parts.size() > 1) {
    // An attribute of an object this analysis cannot type: any function of that name may be it.
    auto it = methods_by_name_.find(parts.back());
    if (it != methods_by_name_.end()) out.insert(it->second.begin(), it->second.end());
  }
  return {out.begin(), out.end()};
}

}  // namespace irm::deadcode
