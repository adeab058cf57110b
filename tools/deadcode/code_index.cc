// Merging file models and resolving references (see code_index.h).
#include "tools/deadcode/code_index.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <thread>

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

std::string_view OuterFunctionKeyView(std::string_view key) {
  // The last ".<locals>.", found from its '<' (memrchr) rather than with string_view::rfind,
  // which compares at every position: resolution asks this for every reference.
  static_assert(kLocals[1] == '<');
  size_t end = key.size();
  while (end > 0) {
    const void* found = memrchr(key.data(), '<', end);
    if (found == nullptr) break;
    const size_t at = static_cast<size_t>(static_cast<const char*>(found) - key.data());
    if (at >= 1 && key.substr(at - 1).starts_with(kLocals)) return key.substr(0, at - 1);
    end = at;
  }
  return {};
}

std::string OuterFunctionKey(const std::string& key) {
  return std::string(OuterFunctionKeyView(key));
}

// Resolution runs over a hundred thousand references on a large tree: it works on views and one
// scratch buffer, and remembers per thread what repeats — the class around the current caller,
// the classes a `self.` call may dispatch to, the current file's imports by alias.
class CodeIndex::Resolver {
 public:
  explicit Resolver(const CodeIndex& index) : index_(index) {}

  void StartFile(const FileModel& file) {
    file_ = &file;
    imports_.clear();
    for (const auto& [alias, target] : file.imports) imports_[alias].push_back(target);
    by_name_.clear();
    context_valid_ = false;
  }

  std::vector<std::string> Resolve(const Reference& reference) {
    out_.clear();
    if (file_->language == Language::kPython) {
      ResolvePython(reference);
    } else if (index_.Function(reference.target) != nullptr) {
      out_.push_back(reference.target);
    }
    std::sort(out_.begin(), out_.end());
    out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
    return out_;
  }

 private:
  // The class whose method (or a function nested in it) holds references made from `from`, and
  // that method's name.
  void EnterCaller(const std::string& from) {
    if (context_valid_ && from == context_from_) return;
    context_valid_ = true;
    context_from_ = from;
    klass_.clear();
    method_.clear();
    for (std::string_view key = from; !key.empty(); key = OuterFunctionKeyView(key)) {
      const FunctionUnit* function = index_.Function(key);
      if (function != nullptr && !function->class_name.empty()) {
        klass_ = function->class_name;
        method_ = function->name;
        return;
      }
    }
  }

  // Functions named `qualname`, or the constructor of a class named so (__init__).
  void AddQualname(std::string_view qualname) {
    auto it = index_.names_.find(qualname);
    if (it == index_.names_.end()) return;
    if (it->second.function != nullptr) out_.emplace_back(qualname);
    if (!it->second.is_class) return;
    scratch_.assign(qualname);
    scratch_ += ".__init__";
    if (index_.Function(scratch_) != nullptr) out_.push_back(scratch_);
  }
  // `prefix` + `separator` + `rest`, as AddQualname's argument.
  void AddQualname(std::string_view prefix, std::string_view separator, std::string_view rest) {
    joined_.assign(prefix);
    joined_.append(separator);
    joined_.append(rest);
    AddQualname(joined_);
  }

  // `name` as a method of the classes DispatchClasses gives.
  void AddMethodInHierarchy(const std::string& class_key, std::string_view name,
                            const std::string& calling_method) {
    auto key = std::make_pair(class_key, calling_method);
    auto cached = dispatch_.find(key);
    if (cached == dispatch_.end()) {
      cached = dispatch_.emplace(key, index_.DispatchClasses(class_key, calling_method)).first;
    }
    for (const std::string& klass : cached->second) {
      joined_.assign(klass);
      joined_.push_back('.');
      joined_.append(name);
      if (index_.Function(joined_) != nullptr) out_.push_back(joined_);
    }
  }

  void ResolvePython(const Reference& reference) {
    const std::string_view target = reference.target;
    EnterCaller(reference.from);
    constexpr std::string_view kSuper = "super().";
    if (target.starts_with(kSuper)) {
      if (!klass_.empty()) AddMethodInHierarchy(klass_, target.substr(kSuper.size()), "");
      return;
    }
    const size_t first_dot = target.find('.');
    const std::string_view head = target.substr(0, first_dot);
    // Everything after the first part ("b.c" of "a.b.c"), and the last part.
    const std::string_view rest =
        first_dot == std::string_view::npos ? std::string_view() : target.substr(first_dot + 1);
    const std::string_view last = target.substr(target.rfind('.') + 1);
    const bool single = first_dot == std::string_view::npos;
    if ((head == "self" || head == "cls") && !single && rest.find('.') == std::string_view::npos &&
        !klass_.empty()) {
      AddMethodInHierarchy(klass_, rest, method_);
      return;
    }
    if (single) {
      // Innermost first: a function nested in the referencing one (or in one of its outers).
      for (std::string_view key = reference.from; !key.empty(); key = OuterFunctionKeyView(key)) {
        AddQualname(key, kLocals, target);
        if (!out_.empty()) return;
      }
    }
    // What follows depends on the file and the text alone: a name used again resolves as before.
    auto [known, fresh] = by_name_.try_emplace(target);
    if (!fresh) {
      out_ = known->second;
      return;
    }
    ByName(target, head, rest, last, single);
    known->second = out_;
  }

  // A name not found among the caller's nested functions: as a name of the module, through the
  // file's imports, written fully qualified, or (an attribute of an untyped object) any method.
  void ByName(std::string_view target, std::string_view head, std::string_view rest,
              std::string_view last, bool single) {
    AddQualname(file_->module, ".", target);
    auto imported = imports_.find(head);
    if (imported != imports_.end()) {
      for (std::string_view qualified : imported->second) {
        if (single) {
          AddQualname(qualified);
        } else {
          AddQualname(qualified, ".", rest);
        }
      }
    }
    AddQualname(target);  // written fully qualified
    if (out_.empty() && !single) {
      // An attribute of an object this analysis cannot type: any function of that name may be it.
      auto it = index_.methods_by_name_.find(last);
      if (it != index_.methods_by_name_.end()) {
        out_.insert(out_.end(), it->second.begin(), it->second.end());
      }
    }
  }

  const CodeIndex& index_;
  const FileModel* file_ = nullptr;
  std::unordered_map<std::string_view, std::vector<std::string_view>> imports_;
  std::unordered_map<std::string_view, std::vector<std::string>> by_name_;  // this file's ByName
  bool context_valid_ = false;
  std::string context_from_;
  std::string klass_;
  std::string method_;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> dispatch_;
  std::vector<std::string> out_;
  std::string scratch_;
  std::string joined_;
};

CodeIndex::CodeIndex(const std::vector<FileModel>& files, int threads) : files_(files) {
  for (const FileModel& file : files_) {
    for (const FunctionUnit& function : file.functions) {
      if (!functions_.emplace(function.key, &function).second) continue;
      names_[function.key].function = &function;
      by_scope_.emplace(std::make_pair(function.scope, function.name), &function);
      by_file_[function.file].push_back(&function);
      if (file.language == Language::kPython) {
        methods_by_name_[function.name].push_back(function.key);
      }
    }
    for (const ClassUnit& klass : file.classes) {
      if (classes_.emplace(klass.key, &klass).second) names_[klass.key].is_class = true;
    }
  }
  for (const FileModel& file : files_) {
    if (file.language != Language::kPython) continue;
    for (const ClassUnit& klass : file.classes) {
      for (const std::string& base : klass.bases) {
        const std::string resolved = ResolveClass(file, base);
        // A class named after its base (`class Foo(Foo)`, Foo imported) derives from elsewhere.
        if (resolved.empty() || resolved == klass.key) {
          if (!MethodlessBase(file, base)) unknown_bases_.insert(klass.key);
          continue;
        }
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

  // Each file's references in order; files are shared out between the threads.
  std::vector<size_t> first_reference(files_.size() + 1, 0);
  for (size_t i = 0; i < files_.size(); ++i) {
    first_reference[i + 1] = first_reference[i] + files_[i].references.size();
  }
  references_.resize(first_reference.back());
  std::atomic<size_t> next_file{0};
  auto work = [&] {
    Resolver resolver(*this);
    for (size_t i = next_file++; i < files_.size(); i = next_file++) {
      const FileModel& file = files_[i];
      resolver.StartFile(file);
      for (size_t r = 0; r < file.references.size(); ++r) {
        const Reference& reference = file.references[r];
        references_[first_reference[i] + r] = {&file, &reference, resolver.Resolve(reference)};
      }
    }
  };
  const int workers = std::clamp(threads, 1, std::max(1, static_cast<int>(files_.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
}

const FunctionUnit* CodeIndex::Function(std::string_view key) const {
  auto it = names_.find(key);
  return it == names_.end() ? nullptr : it->second.function;
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

std::vector<std::string> CodeIndex::DispatchClasses(const std::string& class_key,
                                                    const std::string& calling_method) const {
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
  return {related.begin(), related.end()};
}

const ClassUnit* CodeIndex::Class(const std::string& key) const {
  auto it = classes_.find(key);
  return it == classes_.end() ? nullptr : it->second;
}

std::vector<std::string> CodeIndex::Descendants(const std::string& class_key) const {
  std::vector<std::string> queue = {class_key};
  std::set<std::string> seen = {class_key};
  for (size_t i = 0; i < queue.size(); ++i) {
    auto it = derived_.find(queue[i]);
    if (it == derived_.end()) continue;
    for (const std::string& derived : it->second) {
      if (seen.insert(derived).second) queue.push_back(derived);
    }
  }
  return {queue.begin() + 1, queue.end()};
}

bool CodeIndex::HasUnknownBase(const std::string& class_key) const {
  if (unknown_bases_.contains(class_key)) return true;
  for (const std::string& ancestor : Ancestors(class_key)) {
    if (unknown_bases_.contains(ancestor)) return true;
  }
  return false;
}

// `object` and `abc.ABC` (bare or through the file's imports) give a subclass no method.
bool CodeIndex::MethodlessBase(const FileModel& file, const std::string& base) {
  if (base == "object") return true;
  const std::vector<std::string> parts = SplitDots(base);
  for (const auto& [alias, target] : file.imports) {
    if (alias != parts[0]) continue;
    const std::string full = parts.size() == 1 ? target : target + "." + JoinFrom(parts, 1);
    return full == "abc.ABC";
  }
  return false;
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

}  // namespace irm::deadcode
