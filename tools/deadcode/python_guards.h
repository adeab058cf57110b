// Guarded branches in Python: which conditions are exactly a new-IR guard of the configured
// vocabulary (after parentheses and one `not`), guards stored in a variable first, and the
// legacy / new-IR parts of each shape (if/else, elif chains, negated guards, early returns,
// conditional expressions). Internal to the Python front end.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"
#include "tools/deadcode/python_syntax.h"

namespace irm::deadcode::python {

// A condition that matched the vocabulary.
struct GuardMatch {
  std::string name;  // the vocabulary entry
  bool negated = false;
  bool variable = false;  // through a guard variable
};

// A local variable assigned exactly once in a scope, from a guard expression.
struct GuardVariable {
  GuardMatch guard;
  int line = 0;  // the assignment's line
};
using GuardVariables = std::map<std::string, GuardVariable, std::less<>>;

class GuardFinder;

// The guard variables of one scope, collected on first use: most scopes never test a bare name.
class LazyGuardVariables {
 public:
  LazyGuardVariables(const GuardFinder* finder, const Node* body) : finder_(finder), body_(body) {}
  const GuardVariables& Get();

 private:
  const GuardFinder* finder_;
  const Node* body_;
  std::optional<GuardVariables> variables_;
};

class GuardFinder {
 public:
  GuardFinder(const Syntax& syntax, std::string_view source,
              const std::vector<GuardPattern>& guards, std::string file)
      : syntax_(syntax), source_(source), guards_(guards), file_(std::move(file)) {}

  // The guard variables of a scope whose statements are the named children of `body` (a block or
  // the module); nested functions, classes and lambdas are other scopes.
  GuardVariables CollectVariables(const Node* body) const;

  // The guard `condition` is, or nothing. `variables` may be null.
  std::optional<GuardMatch> Match(const Node* condition, LazyGuardVariables* variables) const;

  // The negated guard among the operands of an `and` chain (`isinstance(o, X) and not
  // use_pir_api()`): the body of such an `if` runs on the legacy path only. Nothing when no
  // operand is a negated guard.
  std::optional<GuardMatch> MatchLegacyConjunct(const Node* condition,
                                                LazyGuardVariables* variables) const;

  // The guarded branches of an if statement. `tail` holds the statements after it in its block
  // (for the early-return shapes).
  void IfStatement(const Node* node, std::span<const Node* const> tail,
                   LazyGuardVariables* variables, const std::string& enclosing,
                   std::vector<GuardedBranch>* out) const;
  // The guarded branch of a conditional expression `A if C else B`.
  void Conditional(const Node* node, LazyGuardVariables* variables, const std::string& enclosing,
                   std::vector<GuardedBranch>* out) const;

  // The statements of a block (comments left out).
  std::vector<const Node*> Statements(const Node* block) const;

 private:
  std::optional<std::string> MatchExpression(const Node* expression) const;
  bool IsFlagRead(const Node* subscript, const std::string& flag) const;
  std::optional<std::string> StringValue(const Node* node) const;
  const Node* StripParentheses(const Node* node) const;
  bool AlwaysExits(const Node* block) const;
  bool OnlyRaises(std::span<const Node* const> statements) const;
  void CountTargets(const Node* target, std::map<std::string, int, std::less<>>* counts) const;
  void ScanScope(const Node* node, std::map<std::string, int, std::less<>>* counts,
                 GuardVariables* candidates) const;
  GuardedBranch Make(const Node* condition, const GuardMatch& match, const std::string& enclosing,
                     const char* legacy_kind, const char* shape,
                     std::span<const Node* const> legacy) const;

  const Syntax& syntax_;
  std::string_view source_;
  const std::vector<GuardPattern>& guards_;
  std::string file_;
};

}  // namespace irm::deadcode::python
