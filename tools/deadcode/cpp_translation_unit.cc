// The per-TU half of the C++ front end: runs Clang on one compile command (syntax only) and walks
// the AST for function and record definitions, references, guarded branches, and the preprocessor
// for registration macros. Template instantiations are walked for their references, which are
// credited to the pattern; units and branches come from the patterns only.
#include "tools/deadcode/cpp_translation_unit.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Index/USRGeneration.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroArgs.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "tools/deadcode/cpp_guards.h"

namespace irm::deadcode {

std::optional<std::string> RelativeTo(const std::string& path, const std::string& root) {
  if (path.size() <= root.size() + 1 || path.compare(0, root.size(), root) != 0 ||
      path[root.size()] != '/') {
    return std::nullopt;
  }
  return path.substr(root.size() + 1);
}

namespace {

// Positions in files under the root: which file a location is in (relative to the root, cached
// per file) and line / column ranges. A location inside a macro counts where the macro is used,
// or where its argument is written.
class Locator {
 public:
  Locator(const clang::SourceManager& sm, const clang::LangOptions& lang, std::string root)
      : sm_(sm), lang_(lang), root_(std::move(root)) {}

  const std::string* Relative(clang::SourceLocation loc) {
    if (loc.isInvalid()) return nullptr;
    const clang::FileID id = sm_.getFileID(sm_.getFileLoc(loc));
    auto [it, inserted] = cache_.try_emplace(id.getHashValue());
    if (inserted) it->second = Compute(id);
    return it->second ? &*it->second : nullptr;
  }

  std::pair<int, int> Position(clang::SourceLocation loc) const {
    loc = sm_.getFileLoc(loc);
    return {static_cast<int>(sm_.getSpellingLineNumber(loc)),
            static_cast<int>(sm_.getSpellingColumnNumber(loc))};
  }

  SourceRange Range(clang::SourceRange range) const {
    clang::SourceLocation begin = sm_.getFileLoc(range.getBegin());
    clang::SourceLocation end = range.getEnd();
    bool token_end = true;
    if (end.isMacroID() && !sm_.isMacroArgExpansion(end)) {
      // The end of a macro's body: the end of the macro's use.
      const clang::CharSourceRange expansion = sm_.getExpansionRange(end);
      end = expansion.getEnd();
      token_end = expansion.isTokenRange();
    } else {
      end = sm_.getFileLoc(end);
    }
    if (sm_.getFileID(begin) != sm_.getFileID(end) || sm_.isBeforeInTranslationUnit(end, begin)) {
      begin = sm_.getExpansionLoc(range.getBegin());
      const clang::CharSourceRange expansion = sm_.getExpansionRange(range.getEnd());
      end = expansion.getEnd();
      token_end = expansion.isTokenRange();
    }
    if (token_end) {
      const clang::SourceLocation after = clang::Lexer::getLocForEndOfToken(end, 0, sm_, lang_);
      if (after.isValid()) end = after;
    }
    SourceRange out;
    std::tie(out.start_line, out.start_column) = Position(begin);
    std::tie(out.end_line, out.end_column) = Position(end);
    return out;
  }

  // The source as written, for a guard's text.
  std::string Text(clang::SourceRange range) const {
    const clang::CharSourceRange chars = clang::CharSourceRange::getTokenRange(
        sm_.getFileLoc(range.getBegin()), sm_.getFileLoc(range.getEnd()));
    return clang::Lexer::getSourceText(chars, sm_, lang_).str();
  }

  const clang::SourceManager& sm() const { return sm_; }

 private:
  std::optional<std::string> Compute(clang::FileID id) const {
    const clang::FileEntry* entry = sm_.getFileEntryForID(id);
    if (entry == nullptr) return std::nullopt;
    std::string path = entry->tryGetRealPathName().str();
    if (path.empty()) {
      llvm::SmallString<256> real;
      if (sm_.getFileManager().getVirtualFileSystem().getRealPath(entry->getName(), real)) {
        return std::nullopt;
      }
      path = real.str().str();
    }
    return RelativeTo(path, root_);
  }

  const clang::SourceManager& sm_;
  const clang::LangOptions& lang_;
  std::string root_;
  std::map<unsigned, std::optional<std::string>> cache_;
};

std::string Usr(const clang::Decl* decl) {
  llvm::SmallString<128> usr;
  if (clang::index::generateUSRForDecl(decl, usr)) return "";
  return usr.str().str();
}

// The declaration a template instantiation was instantiated from (explicit specializations are
// their own units).
const clang::FunctionDecl* PatternOf(const clang::FunctionDecl* function) {
  if (function->getTemplateSpecializationKind() == clang::TSK_ExplicitSpecialization) {
    return function;
  }
  if (const clang::FunctionDecl* pattern =
          function->getTemplateInstantiationPattern(/*ForDefinition=*/false)) {
    return pattern;
  }
  return function;
}

bool IsInstantiation(const clang::FunctionDecl* function) {
  return function->getTemplateInstantiationPattern() != nullptr;
}

bool IsLambdaCallOperator(const clang::FunctionDecl* function) {
  const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(function);
  return method != nullptr && method->getParent()->isLambda();
}

// What one TU found, per file under the root, and the registrations waiting for their target.
struct TuState {
  TuState(const std::string& root, const DeadcodeConfig& config) : root(root), config(config) {}

  FileModel& Model(const std::string& file) {
    FileModel& model = models[file];
    if (model.file.empty()) {
      model.file = file;
      model.language = Language::kCpp;
    }
    return model;
  }

  const std::string& root;
  const DeadcodeConfig& config;
  std::unique_ptr<Locator> locator;
  std::map<std::string, FileModel> models;
  std::vector<Registration> registrations;  // target as spelled until resolved
};

class RegistrationCallbacks : public clang::PPCallbacks {
 public:
  RegistrationCallbacks(TuState& state, const clang::Preprocessor& pp) : state_(state), pp_(pp) {}

  void MacroExpands(const clang::Token& name, const clang::MacroDefinition&,
                    clang::SourceRange range, const clang::MacroArgs* args) override {
    const clang::IdentifierInfo* id = name.getIdentifierInfo();
    if (args == nullptr || id == nullptr) return;
    const std::string macro = id->getName().str();
    for (const RegistrationFamily& family : state_.config.registrations) {
      const bool legacy = Contains(family.legacy_macros, macro);
      if (!legacy && !Contains(family.new_macros, macro)) continue;
      const std::string* file = state_.locator->Relative(range.getBegin());
      if (file == nullptr) return;
      Registration registration;
      registration.registry = family.registry;
      registration.key = Argument(args, 0, /*unquote=*/true);
      registration.legacy = legacy;
      registration.macro = macro;
      registration.file = *file;
      registration.range = state_.locator->Range(range);
      registration.target = Argument(args, 1, /*unquote=*/false);
      state_.registrations.push_back(std::move(registration));
      return;
    }
  }

 private:
  static bool Contains(const std::vector<std::string>& names, const std::string& name) {
    for (const std::string& n : names) {
      if (n == name) return true;
    }
    return false;
  }

  // An argument's tokens as written; a lone string literal without its quotes.
  std::string Argument(const clang::MacroArgs* args, unsigned index, bool unquote) const {
    if (index >= args->getNumMacroArguments()) return "";
    std::string text;
    int count = 0;
    bool literal = false;
    for (const clang::Token* token = args->getUnexpArgument(index); token->isNot(clang::tok::eof);
         ++token, ++count) {
      if (count > 0 && token->hasLeadingSpace()) text += ' ';
      text += pp_.getSpelling(*token);
      literal = token->is(clang::tok::string_literal);
    }
    if (unquote && count == 1 && literal && text.size() >= 2)
      text = text.substr(1, text.size() - 2);
    return text;
  }

  TuState& state_;
  const clang::Preprocessor& pp_;
};

class UnitVisitor : public clang::RecursiveASTVisitor<UnitVisitor> {
  using Base = clang::RecursiveASTVisitor<UnitVisitor>;

 public:
  UnitVisitor(TuState& state, clang::ASTContext& context)
      : state_(state), locator_(*state.locator), context_(context), policy_(context.getLangOpts()) {
    policy_.SuppressTagKeyword = true;
  }

  bool shouldVisitTemplateInstantiations() const { return true; }

  // Keeps the stack of enclosing functions: references and branches belong to the innermost.
  // Declarations written outside the root (system and third-party headers, the instantiations of
  // their templates) hold nothing to report and are not entered.
  bool TraverseDecl(clang::Decl* decl) {
    if (decl != nullptr && !llvm::isa<clang::TranslationUnitDecl>(decl)) {
      const clang::SourceLocation loc = decl->getLocation();
      if (loc.isValid() && loc.isFileID() && locator_.Relative(loc) == nullptr) return true;
    }
    const auto* function = llvm::dyn_cast_or_null<clang::FunctionDecl>(decl);
    if (function == nullptr || !function->doesThisDeclarationHaveABody() ||
        IsLambdaCallOperator(function)) {
      return Base::TraverseDecl(decl);
    }
    frames_.push_back({Usr(PatternOf(function)), IsInstantiation(function)});
    const bool result = Base::TraverseDecl(decl);
    frames_.pop_back();
    return result;
  }

  bool VisitFunctionDecl(clang::FunctionDecl* function) {
    if (!function->doesThisDeclarationHaveABody() || function->isImplicit() ||
        function->isDefaulted() || function->isDeleted() || IsLambdaCallOperator(function) ||
        IsInstantiation(function)) {
      return true;
    }
    const std::string* file = locator_.Relative(function->getLocation());
    if (file == nullptr) return true;
    FunctionUnit unit;
    unit.key = Usr(function);
    if (unit.key.empty()) return true;
    unit.qualname = function->getQualifiedNameAsString();
    unit.name = function->getNameAsString();
    const clang::DeclContext* context = function->getDeclContext();
    if (const auto* record = llvm::dyn_cast<clang::CXXRecordDecl>(context)) {
      unit.class_name = record->getQualifiedNameAsString();
      unit.scope = unit.class_name;
    } else {
      while (context != nullptr && !context->isNamespace() && !context->isTranslationUnit()) {
        context = context->getParent();
      }
      if (const auto* ns = llvm::dyn_cast_or_null<clang::NamespaceDecl>(context)) {
        unit.scope = ns->getQualifiedNameAsString();
      }
    }
    unit.file = *file;
    clang::SourceLocation begin = function->getOuterLocStart();
    if (const clang::FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate()) {
      begin = templ->getBeginLoc();
    }
    unit.range = locator_.Range(clang::SourceRange(begin, function->getEndLoc()));
    for (const clang::ParmVarDecl* param : function->parameters()) {
      unit.parameter_types.push_back(TypeText(param->getType()));
    }
    if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(function)) {
      unit.is_virtual = method->isVirtual();
      unit.overrides = method->size_overridden_methods() > 0;
    }
    unit.from_template = function->isTemplated() ||
                         function->getTemplatedKind() != clang::FunctionDecl::TK_NonTemplate;
    unit.from_macro = function->getLocation().isMacroID() || function->getBeginLoc().isMacroID();
    unit.is_main = function->isMain();
    state_.Model(*file).functions.push_back(std::move(unit));
    return true;
  }

  bool VisitCXXRecordDecl(clang::CXXRecordDecl* record) {
    if (!record->isThisDeclarationADefinition() || record->isImplicit() || record->isLambda() ||
        record->getIdentifier() == nullptr ||
        record->getTemplateInstantiationPattern() != nullptr || InInstantiation()) {
      return true;
    }
    if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record)) {
      if (spec->getSpecializationKind() != clang::TSK_ExplicitSpecialization) return true;
    }
    const std::string* file = locator_.Relative(record->getLocation());
    if (file == nullptr) return true;
    ClassUnit unit;
    unit.key = Usr(record);
    if (unit.key.empty()) return true;
    unit.qualname = record->getQualifiedNameAsString();
    unit.file = *file;
    clang::SourceRange range = record->getSourceRange();
    if (const clang::ClassTemplateDecl* templ = record->getDescribedClassTemplate()) {
      range = templ->getSourceRange();
    }
    unit.range = locator_.Range(range);
    for (const clang::CXXBaseSpecifier& base : record->bases()) {
      unit.bases.push_back(TypeText(base.getType()));
    }
    state_.Model(*file).classes.push_back(std::move(unit));
    return true;
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* expr) {
    if (const auto* function = llvm::dyn_cast<clang::FunctionDecl>(expr->getDecl())) {
      AddReference(function, expr->getLocation());
    }
    return true;
  }

  bool VisitMemberExpr(clang::MemberExpr* expr) {
    if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(expr->getMemberDecl())) {
      AddReference(method, expr->getMemberLoc());
    }
    return true;
  }

  bool VisitCXXConstructExpr(clang::CXXConstructExpr* expr) {
    const clang::CXXConstructorDecl* constructor = expr->getConstructor();
    if (constructor != nullptr && !constructor->isImplicit()) {
      AddReference(constructor, expr->getLocation());
    }
    return true;
  }

  // `const bool use_pir = FLAGS_x;`: later conditions on use_pir are guards.
  bool VisitVarDecl(clang::VarDecl* var) {
    if (!var->isLocalVarDecl() || var->getInit() == nullptr || InInstantiation()) return true;
    if (std::optional<GuardMatch> match = MatchGuard(var->getInit(), state_.config.cpp_guards)) {
      guard_variables_[var->getCanonicalDecl()] = *match;
    }
    return true;
  }

  // Remembers, for an `if` without else, the statements after it in its block: the legacy tail
  // when the `if` is an early return on a guard (decided when the `if` is visited, after the guard
  // variables declared before it).
  bool VisitCompoundStmt(clang::CompoundStmt* block) {
    if (InInstantiation()) return true;
    for (unsigned i = 0; i + 1 < block->size(); ++i) {
      const auto* branch = llvm::dyn_cast_or_null<clang::IfStmt>(block->body_begin()[i]);
      if (branch != nullptr && branch->getElse() == nullptr) tails_[branch] = {block, i + 1};
    }
    return true;
  }

  bool VisitIfStmt(clang::IfStmt* branch) {
    if (const auto* nested = llvm::dyn_cast_or_null<clang::IfStmt>(branch->getElse())) {
      else_ifs_.insert(nested);
    }
    if (!Reportable(branch->getIfLoc()) || branch->getConditionVariable() != nullptr) return true;
    const std::optional<Condition> condition = MatchCondition(branch->getCond());
    if (!condition) return true;
    const char* shape = condition->via_variable        ? "guard-variable"
                        : condition->guard.negated     ? "negated"
                        : else_ifs_.count(branch) != 0 ? "elif"
                                                       : "if-else";
    const clang::Stmt* then = branch->getThen();
    const clang::Stmt* otherwise = branch->getElse();
    if (condition->guard.negated) {
      std::optional<clang::SourceRange> twin;
      if (otherwise != nullptr) twin = otherwise->getSourceRange();
      AddBranch(branch->getCond(), *condition, "if-body", shape, then->getSourceRange(), twin,
                OnlyRaises(then));
    } else if (otherwise != nullptr) {
      AddBranch(branch->getCond(), *condition, "else-branch", shape, otherwise->getSourceRange(),
                then->getSourceRange(), OnlyRaises(otherwise));
    } else if (auto tail = tails_.find(branch); tail != tails_.end() && EndsWithReturn(then)) {
      const auto [block, first] = tail->second;
      bool raises = true;
      for (unsigned i = first; i < block->size(); ++i) raises &= OnlyRaises(block->body_begin()[i]);
      const clang::SourceRange legacy(block->body_begin()[first]->getBeginLoc(),
                                      block->body_back()->getEndLoc());
      AddBranch(branch->getCond(), *condition, "tail-after-early-return",
                condition->via_variable ? "guard-variable" : "early-return", legacy,
                then->getSourceRange(), raises);
    }
    return true;
  }

  bool VisitConditionalOperator(clang::ConditionalOperator* expr) {
    if (!Reportable(expr->getQuestionLoc())) return true;
    const std::optional<Condition> condition = MatchCondition(expr->getCond());
    if (!condition) return true;
    const bool negated = condition->guard.negated;
    const clang::Expr* legacy = negated ? expr->getTrueExpr() : expr->getFalseExpr();
    const clang::Expr* twin = negated ? expr->getFalseExpr() : expr->getTrueExpr();
    AddBranch(expr->getCond(), *condition, negated ? "if-body" : "else-branch",
              condition->via_variable ? "guard-variable" : "ternary", legacy->getSourceRange(),
              twin->getSourceRange(), OnlyRaises(legacy));
    return true;
  }

 private:
  struct Frame {
    std::string key;
    bool instantiation = false;
  };
  struct Condition {
    GuardMatch guard;
    bool via_variable = false;
  };

  bool InInstantiation() const { return !frames_.empty() && frames_.back().instantiation; }

  // Branches are reported where they are written: not inside macros (a macro's argument is
  // written at the use), not in instantiations (their pattern is reported), only under the root.
  bool Reportable(clang::SourceLocation loc) {
    if (loc.isMacroID() && !locator_.sm().isMacroArgExpansion(loc)) return false;
    return !InInstantiation() && locator_.Relative(loc) != nullptr;
  }

  std::optional<Condition> MatchCondition(const clang::Expr* condition) const {
    bool negated = false;
    const clang::Expr* bare = StripCondition(condition, &negated);
    if (const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(bare)) {
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
        auto it = guard_variables_.find(var->getCanonicalDecl());
        if (it != guard_variables_.end()) {
          return Condition{{it->second.name, it->second.negated != negated}, true};
        }
      }
    }
    if (std::optional<GuardMatch> match = MatchGuard(condition, state_.config.cpp_guards)) {
      return Condition{*match, false};
    }
    return std::nullopt;
  }

  void AddBranch(const clang::Expr* guard, const Condition& condition, const char* legacy_kind,
                 const char* shape, clang::SourceRange legacy,
                 std::optional<clang::SourceRange> twin, bool only_raises) {
    const std::string* file = locator_.Relative(guard->getBeginLoc());
    if (file == nullptr) return;
    GuardedBranch branch;
    branch.file = *file;
    branch.enclosing = frames_.empty() ? "" : frames_.back().key;
    branch.guard_text = locator_.Text(guard->getSourceRange());
    branch.guard_name = condition.guard.name;
    branch.guard_line = locator_.Position(guard->getBeginLoc()).first;
    branch.negated = condition.guard.negated;
    branch.legacy_kind = legacy_kind;
    branch.shape = shape;
    branch.legacy = locator_.Range(legacy);
    if (twin) branch.twin = locator_.Range(*twin);
    branch.legacy_only_raises = only_raises;
    state_.Model(*file).branches.push_back(std::move(branch));
  }

  // A reference from code under the root to a function declared under the root.
  void AddReference(const clang::FunctionDecl* target, clang::SourceLocation loc) {
    const std::string* file = locator_.Relative(loc);
    if (file == nullptr) return;
    target = PatternOf(target);
    bool declared_here = false;
    for (const clang::FunctionDecl* decl : target->redecls()) {
      if (locator_.Relative(decl->getLocation()) != nullptr) {
        declared_here = true;
        break;
      }
    }
    if (!declared_here) return;
    Reference reference;
    reference.from = frames_.empty() ? "" : frames_.back().key;
    reference.target = Usr(target);
    if (reference.target.empty()) return;
    std::tie(reference.line, reference.column) = locator_.Position(loc);
    state_.Model(*file).references.push_back(std::move(reference));
  }

  // A type as written, with every name fully qualified: "const pir::Program &".
  std::string TypeText(clang::QualType type) const {
    return clang::TypeName::getFullyQualifiedType(type, context_).getAsString(policy_);
  }

  TuState& state_;
  Locator& locator_;
  clang::ASTContext& context_;
  clang::PrintingPolicy policy_;
  std::vector<Frame> frames_;
  std::map<const clang::VarDecl*, GuardMatch> guard_variables_;
  // An `if` without else → its block and the index of the statement after it.
  std::map<const clang::IfStmt*, std::pair<const clang::CompoundStmt*, unsigned>> tails_;
  std::set<const clang::IfStmt*> else_ifs_;
};

class UnitConsumer : public clang::ASTConsumer {
 public:
  explicit UnitConsumer(TuState& state) : state_(state) {}

  void HandleTranslationUnit(clang::ASTContext& context) override {
    if (context.getDiagnostics().hasErrorOccurred()) return;  // reported as a problem instead
    UnitVisitor visitor(state_, context);
    visitor.TraverseDecl(context.getTranslationUnitDecl());
  }

 private:
  TuState& state_;
};

class UnitAction : public clang::ASTFrontendAction {
 public:
  explicit UnitAction(TuState& state) : state_(state) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& compiler,
                                                        llvm::StringRef) override {
    state_.locator =
        std::make_unique<Locator>(compiler.getSourceManager(), compiler.getLangOpts(), state_.root);
    clang::Preprocessor& pp = compiler.getPreprocessor();
    pp.addPPCallbacks(std::make_unique<RegistrationCallbacks>(state_, pp));
    return std::make_unique<UnitConsumer>(state_);
  }

 private:
  TuState& state_;
};

// Keeps the first error (Clang's or the driver's) and prints nothing.
class FirstError : public clang::DiagnosticConsumer {
 public:
  FirstError(const TuCommand& command, const std::string& root) : command_(command), root_(root) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error || first_) return;
    FileProblem problem;
    problem.file = command_.relative;
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    problem.message = message.str().str();
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const clang::SourceManager& sm = info.getSourceManager();
      const clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getFileLoc(info.getLocation()));
      if (presumed.isValid()) {
        llvm::SmallString<256> path(presumed.getFilename());
        llvm::sys::fs::make_absolute(command_.directory, path);
        llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
        llvm::SmallString<256> real;
        if (!llvm::sys::fs::real_path(path, real)) path = real;
        const std::optional<std::string> relative = RelativeTo(path.str().str(), root_);
        const std::string file = relative ? *relative : path.str().str();
        problem.line = static_cast<int>(presumed.getLine());
        problem.column = static_cast<int>(presumed.getColumn());
        if (file != command_.relative) {
          // An error in a header: say where, and keep the problem with the TU that failed.
          problem.message = file + ":" + std::to_string(problem.line) + ":" +
                            std::to_string(problem.column) + ": " + problem.message;
          problem.line = 0;
          problem.column = 0;
        }
      }
    }
    first_ = std::move(problem);
  }

  const std::optional<FileProblem>& first() const { return first_; }

 private:
  const TuCommand& command_;
  const std::string& root_;
  std::optional<FileProblem> first_;
};

// The compile command for a syntax-only parse by Clang: no output, no dependency files, no warnings
// (g++'s -Werror must not fail a parse), Clang's own builtin headers, and no "N errors generated"
// on stderr (printed only with carets).
std::vector<std::string> ClangCommandLine(const TuCommand& command) {
  namespace tooling = clang::tooling;
  tooling::ArgumentsAdjuster adjust = tooling::combineAdjusters(
      tooling::combineAdjusters(tooling::getClangStripOutputAdjuster(),
                                tooling::getClangStripDependencyFileAdjuster()),
      tooling::getClangSyntaxOnlyAdjuster());
  std::vector<std::string> args = adjust(command.command_line, command.file);
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (i > 0 && (arg == "-Werror" || arg.rfind("-Werror=", 0) == 0 || arg == "-pedantic-errors")) {
      continue;
    }
    kept.push_back(arg);
  }
  return tooling::getInsertArgumentAdjuster(
      tooling::CommandLineArguments{"-w", "-fno-caret-diagnostics",
                                    "-resource-dir=" IRM_CLANG_RESOURCE_DIR},
      tooling::ArgumentInsertPosition::END)(kept, command.file);
}

// Registered classes and functions named as written in the macro ("ns::Cls" or "Cls" inside
// ns): the USR of the one unit of this TU whose qualified name ends so, else the name as written.
void ResolveRegistrations(TuState& state) {
  std::map<std::string, std::set<std::string>> by_qualname;
  for (const auto& [file, model] : state.models) {
    for (const ClassUnit& unit : model.classes) by_qualname[unit.qualname].insert(unit.key);
    for (const FunctionUnit& unit : model.functions) by_qualname[unit.qualname].insert(unit.key);
  }
  for (Registration& registration : state.registrations) {
    std::string name = registration.target;
    if (name.rfind("::", 0) == 0) name = name.substr(2);
    if (name.empty()) continue;
    std::set<std::string> keys;
    for (const auto& [qualname, unit_keys] : by_qualname) {
      if (qualname == name || (qualname.size() > name.size() + 2 &&
                               qualname.compare(qualname.size() - name.size() - 2,
                                                std::string::npos, "::" + name) == 0)) {
        keys.insert(unit_keys.begin(), unit_keys.end());
      }
    }
    if (keys.size() == 1) registration.target = *keys.begin();
    state.Model(registration.file).registrations.push_back(std::move(registration));
  }
}

}  // namespace

TuResult AnalyzeTranslationUnit(const TuCommand& command, const std::string& root,
                                const DeadcodeConfig& config) {
  TuResult result;
  if (command.command_line.empty()) {
    result.problem = FileProblem{command.relative, 0, 0, "the compile command is empty"};
    return result;
  }
  TuState state(root, config);
  FirstError errors(command, root);
  // A file system of its own per TU: its working directory is the command's, without a chdir of
  // the process that other TUs' threads would see.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs(
      llvm::vfs::createPhysicalFileSystem().release());
  if (fs->setCurrentWorkingDirectory(command.directory)) {
    result.problem = FileProblem{command.relative, 0, 0,
                                 "cannot enter the command's directory " + command.directory};
    return result;
  }
  llvm::IntrusiveRefCntPtr<clang::FileManager> files(
      new clang::FileManager(clang::FileSystemOptions(), fs));
  clang::tooling::ToolInvocation invocation(ClangCommandLine(command),
                                            std::make_unique<UnitAction>(state), files.get());
  invocation.setDiagnosticConsumer(&errors);
  const auto start = std::chrono::steady_clock::now();
  const bool ok = invocation.run();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ok || errors.first()) {
    result.problem = errors.first() ? *errors.first()
                                    : FileProblem{command.relative, 0, 0,
                                                  "the translation unit does not compile"};
    return result;
  }
  ResolveRegistrations(state);
  FileModel& own = state.Model(command.relative);
  own.seconds = result.seconds;
  result.files.push_back(std::move(own));
  for (auto& [file, model] : state.models) {
    if (file != command.relative) result.files.push_back(std::move(model));
  }
  return result;
}

}  // namespace irm::deadcode
