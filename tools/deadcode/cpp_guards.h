// The C++ front end's reading of conditions and branch bodies: which expressions are guards from
// the configured vocabulary (config.h's cpp_guards), and which statements only throw (an
// "unsupported on the legacy path" branch, never a finding). Internal to the front end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

struct GuardMatch {
  std::string name;  // the vocabulary entry
  bool negated = false;
};

// Strips parentheses, implicit casts, implicit conversion-operator calls and at most one `!`
// (setting *negated when there was one).
const clang::Expr* StripCondition(const clang::Expr* expr, bool* negated);

// The vocabulary entry `expr` is exactly (after StripCondition), if any: "flag" a variable named
// the flag or a call with the flag's name as a string argument, "call" a call of a function so
// named, "name" an identifier so named, "attribute" a member so named.
std::optional<GuardMatch> MatchGuard(const clang::Expr* expr,
                                     const std::vector<GuardPattern>& guards);

// True when every statement of `stmt` throws: a throw expression, a call of a [[noreturn]]
// function, or a macro expansion that throws unconditionally (PADDLE_THROW's `do { ... throw ...; }
// while (0)`); a compound statement when all its statements do and it has some.
bool OnlyRaises(const clang::Stmt* stmt);

// True when `stmt` is a return statement or a compound statement whose last statement is one.
bool EndsWithReturn(const clang::Stmt* stmt);

}  // namespace irm::deadcode
