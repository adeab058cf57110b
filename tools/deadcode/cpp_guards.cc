// Guard matching and "only raises" for the C++ front end (see cpp_guards.h).
#include "tools/deadcode/cpp_guards.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace irm::deadcode {
namespace {

const clang::Expr* StripImplicit(const clang::Expr* expr) {
  while (expr != nullptr) {
    const clang::Expr* next = expr->IgnoreParenImpCasts();
    // `if (flag)` where flag has an `operator bool`: the implicit conversion call.
    if (const auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(next)) {
      if (llvm::isa_and_nonnull<clang::CXXConversionDecl>(call->getMethodDecl())) {
        next = call->getImplicitObjectArgument()->IgnoreParenImpCasts();
      }
    }
    if (next == expr) break;
    expr = next;
  }
  return expr;
}

// The string literal an argument is, through std::string's implicit construction.
const clang::StringLiteral* AsStringLiteral(const clang::Expr* expr) {
  for (int depth = 0; expr != nullptr && depth < 8; ++depth) {
    expr = expr->IgnoreImplicit()->IgnoreParens();
    if (const auto* literal = llvm::dyn_cast<clang::StringLiteral>(expr)) return literal;
    const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(expr);
    if (construct == nullptr || construct->getNumArgs() == 0) return nullptr;
    expr = construct->getArg(0);
  }
  return nullptr;
}

std::string CalleeName(const clang::CallExpr* call) {
  if (const clang::FunctionDecl* callee = call->getDirectCallee()) {
    if (callee->getIdentifier() != nullptr) return callee->getName().str();
    return "";
  }
  // Inside a template: a call not resolved until instantiation.
  const clang::Expr* callee = call->getCallee()->IgnoreParenImpCasts();
  if (const auto* lookup = llvm::dyn_cast<clang::OverloadExpr>(callee)) {
    return lookup->getName().getAsString();
  }
  if (const auto* member = llvm::dyn_cast<clang::CXXDependentScopeMemberExpr>(callee)) {
    return member->getMember().getAsString();
  }
  return "";
}

bool NamedDecl(const clang::ValueDecl* decl, const std::string& name) {
  return decl != nullptr && decl->getIdentifier() != nullptr && decl->getName() == name;
}

bool Matches(const clang::Expr* expr, const GuardPattern& guard) {
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(expr);
  const auto* call = llvm::dyn_cast<clang::CallExpr>(expr);
  if (guard.kind == "flag") {
    if (ref != nullptr)
      return llvm::isa<clang::VarDecl>(ref->getDecl()) && NamedDecl(ref->getDecl(), guard.text);
    if (call != nullptr) {
      for (const clang::Expr* arg : call->arguments()) {
        const clang::StringLiteral* literal = AsStringLiteral(arg);
        if (literal != nullptr && literal->getCharByteWidth() == 1 &&
            literal->getString() == guard.text) {
          return true;
        }
      }
    }
    return false;
  }
  if (guard.kind == "call") return call != nullptr && CalleeName(call) == guard.text;
  if (guard.kind == "name") return ref != nullptr && NamedDecl(ref->getDecl(), guard.text);
  if (guard.kind == "attribute") {
    const auto* member = llvm::dyn_cast<clang::MemberExpr>(expr);
    return member != nullptr && NamedDecl(member->getMemberDecl(), guard.text);
  }
  return false;
}

// A statement that throws on every path through it, for macro expansions such as PADDLE_THROW.
// Conditional statements are not entered: PADDLE_ENFORCE's `if (!cond) throw` does not count.
bool ThrowsUnconditionally(const clang::Stmt* stmt) {
  if (stmt == nullptr) return false;
  if (const auto* expr = llvm::dyn_cast<clang::Expr>(stmt)) {
    const clang::Expr* bare = expr->IgnoreImplicit()->IgnoreParens();
    if (llvm::isa<clang::CXXThrowExpr>(bare)) return true;
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(bare)) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      if (callee != nullptr && callee->isNoReturn()) return true;
    }
  }
  if (llvm::isa<clang::IfStmt, clang::ConditionalOperator, clang::BinaryConditionalOperator,
                clang::ForStmt, clang::WhileStmt, clang::CXXForRangeStmt, clang::SwitchStmt,
                clang::CXXTryStmt>(stmt)) {
    return false;
  }
  if (const auto* binary = llvm::dyn_cast<clang::BinaryOperator>(stmt)) {
    if (binary->isLogicalOp()) return ThrowsUnconditionally(binary->getLHS());
  }
  for (const clang::Stmt* child : stmt->children()) {
    if (ThrowsUnconditionally(child)) return true;
  }
  return false;
}

}  // namespace

const clang::Expr* StripCondition(const clang::Expr* expr, bool* negated) {
  *negated = false;
  expr = StripImplicit(expr);
  if (const auto* unary = llvm::dyn_cast_or_null<clang::UnaryOperator>(expr)) {
    if (unary->getOpcode() == clang::UO_LNot) {
      *negated = true;
      expr = StripImplicit(unary->getSubExpr());
    }
  }
  return expr;
}

std::optional<GuardMatch> MatchGuard(const clang::Expr* expr,
                                     const std::vector<GuardPattern>& guards) {
  if (expr == nullptr) return std::nullopt;
  bool negated = false;
  const clang::Expr* bare = StripCondition(expr, &negated);
  if (bare == nullptr) return std::nullopt;
  for (const GuardPattern& guard : guards) {
    if (Matches(bare, guard)) return GuardMatch{guard.name, negated};
  }
  return std::nullopt;
}

bool OnlyRaises(const clang::Stmt* stmt) {
  if (stmt == nullptr) return false;
  if (const auto* compound = llvm::dyn_cast<clang::CompoundStmt>(stmt)) {
    if (compound->body_empty()) return false;
    for (const clang::Stmt* child : compound->body()) {
      if (!OnlyRaises(child)) return false;
    }
    return true;
  }
  if (stmt->getBeginLoc().isMacroID()) return ThrowsUnconditionally(stmt);
  if (const auto* expr = llvm::dyn_cast<clang::Expr>(stmt)) {
    const clang::Expr* bare = expr->IgnoreImplicit()->IgnoreParens();
    if (llvm::isa<clang::CXXThrowExpr>(bare)) return true;
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(bare)) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      return callee != nullptr && callee->isNoReturn();
    }
  }
  return false;
}

bool EndsWithReturn(const clang::Stmt* stmt) {
  if (llvm::isa_and_nonnull<clang::ReturnStmt>(stmt)) return true;
  const auto* compound = llvm::dyn_cast_or_null<clang::CompoundStmt>(stmt);
  return compound != nullptr && !compound->body_empty() &&
         llvm::isa<clang::ReturnStmt>(compound->body_back());
}

}  // namespace irm::deadcode
