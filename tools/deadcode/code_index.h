// The whole input as one index: every file model merged, functions and classes by key, and the
// resolution of each reference to the functions it may reach. C++ references arrive resolved (a
// USR); Python ones are dotted text resolved here by name, with module and class awareness —
// conservatively: when the receiver of `x.f` is unknown, every method named `f` may be meant, so
// that nothing is called dead that an unresolved call might still reach.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/deadcode/code_model.h"

namespace irm::deadcode {

// Python names a function nested in `f` "f.<locals>.g" (as __qualname__ does).
inline constexpr std::string_view kLocals = ".<locals>.";

// "m.C.f.<locals>.g" → "m.C.f"; "" when the key is not a nested function's.
std::string OuterFunctionKey(const std::string& key);
// The same as a view into `key`.
std::string_view OuterFunctionKeyView(std::string_view key);

// A reference with the functions it resolves to (keys, sorted, possibly none).
struct ResolvedReference {
  const FileModel* file = nullptr;
  const Reference* reference = nullptr;
  std::vector<std::string> targets;
};

class CodeIndex {
 public:
  // References are resolved on `threads` threads (files split between them); the index is the
  // same at any count.
  explicit CodeIndex(const std::vector<FileModel>& files, int threads = 1);

  const std::vector<FileModel>& files() const { return files_; }
  // The function with this key, or nullptr.
  const FunctionUnit* Function(std::string_view key) const;
  // Every function, in key order (one entry per key: duplicates across TUs merged).
  const std::map<std::string, const FunctionUnit*>& functions() const { return functions_; }
  // Functions by (scope, name): the candidates of a twin rule.
  const FunctionUnit* InScope(const std::string& scope, const std::string& name) const;
  // Every reference of every file, resolved; in file order then as the front end listed them.
  const std::vector<ResolvedReference>& references() const { return references_; }
  // The innermost function of `file` whose range holds the position, or nullptr.
  const FunctionUnit* Enclosing(const std::string& file, int line, int column) const;
  // Python: the classes `class_key` derives from, nearest first (breadth first, each once).
  std::vector<std::string> Ancestors(const std::string& class_key) const;
  // The class with this key, or nullptr.
  const ClassUnit* Class(const std::string& key) const;
  // Python: the classes in the tree that derive from `class_key`, directly or not (each once).
  std::vector<std::string> Descendants(const std::string& class_key) const;
  // Python: whether the class or one of its ancestors derives from a class the tree does not
  // define (other than `object` and `abc.ABC`): its inherited methods are then not all known.
  bool HasUnknownBase(const std::string& class_key) const;

 private:
  class Resolver;  // one thread's resolution of references (code_index.cc)

  // The classes whose method `name` a `self.name()` in `calling_method` of `class_key` may run:
  // the class, its ancestors and its descendants (dispatch) — except that a descendant that
  // overrides the calling method without calling `super().<calling_method>` never runs it, so
  // neither it nor the classes below it are reached from there. Sorted.
  std::vector<std::string> DispatchClasses(const std::string& class_key,
                                           const std::string& calling_method) const;
  std::string ResolveClass(const FileModel& file, const std::string& base) const;
  static bool MethodlessBase(const FileModel& file, const std::string& base);

  const std::vector<FileModel>& files_;
  std::map<std::string, const FunctionUnit*> functions_;
  // Function and class keys, hashed: resolution looks names up millions of times on a large tree.
  struct NameEntry {
    const FunctionUnit* function = nullptr;
    bool is_class = false;
  };
  std::unordered_map<std::string_view, NameEntry> names_;
  std::map<std::pair<std::string, std::string>, const FunctionUnit*> by_scope_;
  // Python: name → keys.
  std::map<std::string, std::vector<std::string>, std::less<>> methods_by_name_;
  std::map<std::string, const ClassUnit*> classes_;          // key → class
  std::map<std::string, std::vector<std::string>> bases_;    // class → resolved bases
  std::map<std::string, std::vector<std::string>> derived_;  // class → direct subclasses
  std::set<std::string> unknown_bases_;  // classes with a base the tree does not define
  std::map<std::string, std::vector<const FunctionUnit*>> by_file_;
  // Python methods whose body (or a function nested in it) calls `super().<own name>`.
  std::set<std::string> extends_super_;
  std::vector<ResolvedReference> references_;
};

}  // namespace irm::deadcode
