// Guarded branches in Python: which conditions are exactly a new-IR guard of the configured
// vocabulary (after parentheses and one `not`), guards stored in a variable first, and the
// legacy / new-IR parts of each shape (if/else, elif chains, negated guards, early returns,
// conditional expressions). Internal to the Python front end.
#pragma once

#include <map>
#include <optional>
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
  LazyGuardVariables(const GuardFinder* finder, TSNode body) : finder_(finder), body_(body) {}
  const GuardVariables& Get();

 private:
  const GuardFinder* finder_;
  TSNode body_;
  std::optional<GuardVariables> variables_;
};

class GuardFinder {
 public:
  GuardFinder(const Syntax& syntax, std::string_view source,
              const std::vector<GuardPattern>& guards, std::string file)
      : syntax_(syntax), source_(source), guards_(guards), file_(std::move(file)) {}

  // The guard variables of a scope whose statements are the named children of `body` (a block or
  // the module); nested functions, classes and lambdas are other scopes.
  GuardVariables CollectVariables(TSNode body) const;

  // The guard `condition` is, or nothing. `variables` may be null.
  std::optional<GuardMatch> Match(TSNode condition, LazyGuardVariables* variables) const;

  // The guarded branches of an if statement. `tail` holds the statements after it in its block
  // (for the early-return shapes).
  void IfStatement(TSNode node, const std::vector<TSNode>& tail, LazyGuardVariables* variables,
                   const std::string& enclosing, std::vector<GuardedBranch>* out) const;
  // The guarded branch of a conditional expression `A if C else B`.
  void Conditional(TSNode node, LazyGuardVariables* variables, const std::string& enclosing,
                   std::vector<GuardedBranch>* out) const;

  // The statements of a block (comments left out).
  std::vector<TSNode> Statements(TSNode block) const;

 private:
  std::optional<std::string> MatchExpression(TSNode expression) const;
  bool IsFlagRead(TSNode subscript, const std::string& flag) const;
  std::optional<std::string> StringValue(TSNode node) const;
  TSNode StripParentheses(TSNode node) const;
  bool AlwaysExits(TSNode block) const;
  bool OnlyRaises(const std::vector<TSNode>& statements) const;
  void CountTargets(TSNode target, std::map<std::string, int, std::less<>>* counts) const;
  void ScanScope(TSNode node, std::map<std::string, int, std::less<>>* counts,
                 GuardVariables* candidates) const;
  GuardedBranch Make(TSNode condition, const GuardMatch& match, const std::string& enclosing,
                     const char* legacy_kind, const char* shape,
                     const std::vector<TSNode>& legacy) const;

  const Syntax& syntax_;
  std::string_view source_;
  const std::vector<GuardPattern>& guards_;
  std::string file_;
};

}  // namespace irm::deadcode::python
