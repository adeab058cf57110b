// Guard matching and the shapes of guarded branches in Python (see python_guards.h).
#include "tools/deadcode/python_guards.h"

#include <utility>

namespace irm::deadcode::python {

namespace {

std::string_view LastComponent(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace

const Node* GuardFinder::StripParentheses(const Node* node) const {
  // A parenthesized expression holds one expression (comments aside).
  while (node != nullptr && KindOf(node) == Kind::kParenthesized) {
    const Node* inner = nullptr;
    for (const Node& child : NamedChildren(node)) {
      if (KindOf(&child) != Kind::kComment) {
        inner = &child;
        break;
      }
    }
    if (inner == nullptr) break;
    node = inner;
  }
  return node;
}

std::vector<const Node*> GuardFinder::Statements(const Node* block) const {
  std::vector<const Node*> out;
  if (block == nullptr) return out;
  for (const Node& child : NamedChildren(block)) {
    if (KindOf(&child) != Kind::kComment) out.push_back(&child);
  }
  return out;
}

std::optional<std::string> GuardFinder::StringValue(const Node* node) const {
  if (KindOf(node) != Kind::kString) return std::nullopt;
  std::string_view text = Text(source_, node);
  // Plain and raw literals only: an f-string or a byte string is not a flag name.
  size_t quote = text.find_first_of("'\"");
  if (quote == std::string_view::npos) return std::nullopt;
  for (char prefix : text.substr(0, quote)) {
    if (prefix != 'r' && prefix != 'R' && prefix != 'u' && prefix != 'U') return std::nullopt;
  }
  text.remove_prefix(quote);
  size_t width =
      (text.size() >= 6 && (text.starts_with("'''") || text.starts_with("\"\"\""))) ? 3 : 1;
  if (text.size() < 2 * width) return std::nullopt;
  return std::string(text.substr(width, text.size() - 2 * width));
}

bool GuardFinder::IsFlagRead(const Node* subscript, const std::string& flag) const {
  // get_flags("F")["F"] or get_flags(["F"])["F"], get_flags reached by any dotted path.
  const Fields& f = syntax_.fields();
  const Node* call = StripParentheses(FieldChild(subscript, f.value));
  if (call == nullptr || KindOf(call) != Kind::kCall) return false;
  const Node* function = FieldChild(call, f.function);
  Kind function_kind = KindOf(function);
  if (function_kind != Kind::kIdentifier && function_kind != Kind::kAttribute) return false;
  if (LastComponent(Text(source_, function)) != "get_flags") return false;
  std::vector<const Node*> arguments = Statements(FieldChild(call, f.arguments));
  if (arguments.size() != 1) return false;
  const Node* argument = arguments[0];
  if (KindOf(argument) == Kind::kList) {
    std::vector<const Node*> items = Statements(argument);
    if (items.size() != 1) return false;
    argument = items[0];
  }
  if (StringValue(argument) != flag) return false;
  const Node* key = nullptr;
  for (const Node& child : NamedChildren(subscript)) {
    if (child.field != f.subscript) continue;
    if (key != nullptr) return false;  // more than one key
    key = &child;
  }
  return key != nullptr && StringValue(key) == flag;
}

std::optional<std::string> GuardFinder::MatchExpression(const Node* expression) const {
  const Fields& f = syntax_.fields();
  Kind kind = KindOf(expression);
  for (const GuardPattern& guard : guards_) {
    if (guard.kind == "call") {
      if (kind != Kind::kCall) continue;
      const Node* function = FieldChild(expression, f.function);
      if (KindOf(function) == Kind::kIdentifier) {
        if (Text(source_, function) == guard.text) return guard.name;
      } else if (KindOf(function) == Kind::kAttribute) {
        if (Text(source_, FieldChild(function, f.attribute)) == guard.text) return guard.name;
      }
    } else if (guard.kind == "name") {
      if (kind == Kind::kIdentifier && Text(source_, expression) == guard.text) return guard.name;
      if (kind == Kind::kAttribute &&
          Text(source_, FieldChild(expression, f.attribute)) == guard.text) {
        return guard.name;
      }
    } else if (guard.kind == "attribute") {
      if (kind == Kind::kAttribute &&
          Text(source_, FieldChild(expression, f.attribute)) == guard.text) {
        return guard.name;
      }
    } else if (guard.kind == "flag") {
      if (kind == Kind::kIdentifier && Text(source_, expression) == guard.text) return guard.name;
      if (kind == Kind::kSubscript && IsFlagRead(expression, guard.text)) return guard.name;
    }
  }
  return std::nullopt;
}

const GuardVariables& LazyGuardVariables::Get() {
  if (!variables_) variables_ = finder_->CollectVariables(body_);
  return *variables_;
}

std::optional<GuardMatch> GuardFinder::Match(const Node* condition,
                                             LazyGuardVariables* variables) const {
  const Node* expression = StripParentheses(condition);
  bool negated = false;
  if (KindOf(expression) == Kind::kNotOperator) {
    negated = true;
    expression = StripParentheses(FieldChild(expression, syntax_.fields().argument));
  }
  if (expression == nullptr) return std::nullopt;
  if (std::optional<std::string> name = MatchExpression(expression)) {
    return GuardMatch{*name, negated, false};
  }
  if (variables != nullptr && KindOf(expression) == Kind::kIdentifier) {
    const GuardVariables& known = variables->Get();
    auto it = known.find(Text(source_, expression));
    if (it != known.end() && it->second.line < StartLine(condition)) {
      return GuardMatch{it->second.guard.name, negated != it->second.guard.negated, true};
    }
  }
  return std::nullopt;
}

void GuardFinder::CountTargets(const Node* target,
                               std::map<std::string, int, std::less<>>* counts) const {
  const Kind kind = KindOf(target);
  if (kind == Kind::kIdentifier) {
    ++(*counts)[std::string(Text(source_, target))];
  } else if (IsTargetGroup(kind) || kind == Kind::kAsPatternTarget) {
    for (const Node& child : NamedChildren(target)) CountTargets(&child, counts);
  }
}

void GuardFinder::ScanScope(const Node* node, std::map<std::string, int, std::less<>>* counts,
                            GuardVariables* candidates) const {
  const Fields& f = syntax_.fields();
  for (const Node& child : NamedChildren(node)) {
    const Node* n = &child;
    switch (KindOf(n)) {
      case Kind::kFunctionDefinition:
      case Kind::kClassDefinition:
      case Kind::kDecoratedDefinition:
        continue;  // other scopes
      case Kind::kAssignment: {
        const Node* left = FieldChild(n, f.left);
        CountTargets(left, counts);
        const Node* right = FieldChild(n, f.right);
        if (KindOf(left) == Kind::kIdentifier && right != nullptr) {
          if (std::optional<GuardMatch> match = Match(right, nullptr)) {
            std::string name(Text(source_, left));
            if (!candidates->contains(name)) {
              (*candidates)[name] = {*match, StartLine(n)};
            }
          }
        }
        break;
      }
      case Kind::kAugmentedAssignment:
      case Kind::kForStatement:
      case Kind::kForInClause:
        CountTargets(FieldChild(n, f.left), counts);
        break;
      case Kind::kNamedExpression:
        CountTargets(FieldChild(n, f.name), counts);
        break;
      case Kind::kAsPatternTarget:
        CountTargets(n, counts);
        break;
      default:
        break;
    }
    if (KindOf(n) == Kind::kAsPatternTarget) continue;
    ScanScope(n, counts, candidates);
  }
}

GuardVariables GuardFinder::CollectVariables(const Node* body) const {
  std::map<std::string, int, std::less<>> counts;
  GuardVariables candidates;
  ScanScope(body, &counts, &candidates);
  GuardVariables out;
  for (auto& [name, variable] : candidates) {
    if (counts[name] == 1) out.emplace(name, std::move(variable));
  }
  return out;
}

bool GuardFinder::AlwaysExits(const Node* block) const {
  std::vector<const Node*> statements = Statements(block);
  if (statements.empty()) return false;
  const Node* last = statements.back();
  Kind kind = KindOf(last);
  if (kind == Kind::kReturn || kind == Kind::kRaise) return true;
  if (kind != Kind::kIfStatement) return false;
  // An if whose every branch exits, an else included.
  const Fields& f = syntax_.fields();
  if (!AlwaysExits(FieldChild(last, f.consequence))) return false;
  bool has_else = false;
  for (const Node& child : NamedChildren(last)) {
    if (child.field != f.alternative) continue;
    const Node* clause = &child;
    if (KindOf(clause) == Kind::kElseClause) {
      has_else = true;
      if (!AlwaysExits(FieldChild(clause, f.body))) return false;
    } else if (!AlwaysExits(FieldChild(clause, f.consequence))) {
      return false;
    }
  }
  return has_else;
}

bool GuardFinder::OnlyRaises(std::span<const Node* const> statements) const {
  bool raises = false;
  for (const Node* statement : statements) {
    switch (KindOf(statement)) {
      case Kind::kRaise:
        raises = true;
        break;
      case Kind::kPass:
        break;
      case Kind::kExpressionStatement: {
        // A docstring-like string literal.
        std::vector<const Node*> parts = Statements(statement);
        if (parts.size() != 1 || KindOf(parts[0]) != Kind::kString) return false;
        break;
      }
      default:
        return false;
    }
  }
  return raises;
}

std::optional<GuardMatch> GuardFinder::MatchLegacyConjunct(const Node* condition,
                                                           LazyGuardVariables* variables) const {
  const Fields& f = syntax_.fields();
  std::vector<const Node*> work = {StripParentheses(condition)};
  while (!work.empty()) {
    const Node* node = work.back();
    work.pop_back();
    if (KindOf(node) != Kind::kBooleanOperator) {
      std::optional<GuardMatch> match = Match(node, variables);
      if (match && match->negated) return match;
      continue;
    }
    const Node* left = FieldChild(node, f.left);
    const Node* right = FieldChild(node, f.right);
    if (left == nullptr || right == nullptr) continue;
    // The operator is an anonymous token: read it between the operands.
    const uint32_t from = ts_node_end_byte(left->ts);
    const uint32_t to = ts_node_start_byte(right->ts);
    if (to < from || to > source_.size()) continue;
    std::string_view op = source_.substr(from, to - from);
    while (!op.empty() && (op.front() == ' ' || op.front() == '\t' || op.front() == '\n' ||
                           op.front() == '\\' || op.front() == '\r')) {
      op.remove_prefix(1);
    }
    while (!op.empty() && (op.back() == ' ' || op.back() == '\t' || op.back() == '\n' ||
                           op.back() == '\\' || op.back() == '\r')) {
      op.remove_suffix(1);
    }
    if (op != "and") continue;  // in an `or`, neither side alone decides the body
    work.push_back(StripParentheses(right));
    work.push_back(StripParentheses(left));
  }
  return std::nullopt;
}

GuardedBranch GuardFinder::Make(const Node* condition, const GuardMatch& match,
                                const std::string& enclosing, const char* legacy_kind,
                                const char* shape, std::span<const Node* const> legacy) const {
  GuardedBranch branch;
  branch.file = file_;
  branch.enclosing = enclosing;
  branch.guard_text = std::string(Text(source_, condition));
  branch.guard_name = match.name;
  branch.guard_line = StartLine(condition);
  branch.negated = match.negated;
  branch.legacy_kind = legacy_kind;
  branch.shape = match.variable ? "guard-variable" : shape;
  branch.legacy = RangeSpan(source_, legacy.front(), legacy.back());
  branch.legacy_only_raises = OnlyRaises(legacy);
  return branch;
}

void GuardFinder::IfStatement(const Node* node, std::span<const Node* const> tail,
                              LazyGuardVariables* variables, const std::string& enclosing,
                              std::vector<GuardedBranch>* out) const {
  const Fields& f = syntax_.fields();
  const Node* condition = FieldChild(node, f.condition);
  std::vector<const Node*> body = Statements(FieldChild(node, f.consequence));
  std::vector<const Node*> elifs;
  std::vector<const Node*> else_body;
  for (const Node& child : NamedChildren(node)) {
    if (child.field != f.alternative) continue;
    const Node* clause = &child;
    if (KindOf(clause) == Kind::kElifClause) {
      elifs.push_back(clause);
    } else if (KindOf(clause) == Kind::kElseClause) {
      else_body = Statements(FieldChild(clause, f.body));
    }
  }
  auto span = [&](std::span<const Node* const> statements) {
    return RangeSpan(source_, statements.front(), statements.back());
  };

  if (std::optional<GuardMatch> match = Match(condition, variables); match && !body.empty()) {
    if (!match->negated) {
      if (!elifs.empty()) {
        // The else of `if G: … elif X: … else: …` also runs for X on the new-IR path.
      } else if (!else_body.empty()) {
        GuardedBranch branch =
            Make(condition, *match, enclosing, "else-branch", "if-else", else_body);
        branch.twin = span(body);
        out->push_back(std::move(branch));
      } else if (!tail.empty() && AlwaysExits(FieldChild(node, f.consequence))) {
        GuardedBranch branch =
            Make(condition, *match, enclosing, "tail-after-early-return", "early-return", tail);
        branch.twin = span(body);
        out->push_back(std::move(branch));
      }
    } else {
      bool early = elifs.empty() && else_body.empty() && !tail.empty() &&
                   AlwaysExits(FieldChild(node, f.consequence));
      GuardedBranch branch =
          Make(condition, *match, enclosing, "if-body", early ? "early-return" : "negated", body);
      if (early) {
        branch.twin = span(tail);
      } else if (elifs.empty() && !else_body.empty()) {
        branch.twin = span(else_body);
      }
      out->push_back(std::move(branch));
    }
  }

  if (KindOf(StripParentheses(condition)) == Kind::kBooleanOperator && !body.empty()) {
    // `if X and not G:` runs its body on the legacy path only; what else runs is mixed, so there
    // is no twin block. Its shape is the negated one's (the report's shapes are a closed set);
    // the guard text shows the whole condition.
    if (std::optional<GuardMatch> match = MatchLegacyConjunct(condition, variables)) {
      out->push_back(Make(condition, *match, enclosing, "if-body", "negated", body));
    }
  }

  for (size_t i = 0; i < elifs.size(); ++i) {
    const Node* elif_condition = FieldChild(elifs[i], f.condition);
    std::vector<const Node*> elif_body = Statements(FieldChild(elifs[i], f.consequence));
    std::optional<GuardMatch> match = Match(elif_condition, variables);
    if (!match || elif_body.empty()) continue;
    bool else_follows = i + 1 == elifs.size() && !else_body.empty();
    if (!match->negated) {
      if (!else_follows) continue;  // what follows is not purely legacy
      GuardedBranch branch =
          Make(elif_condition, *match, enclosing, "else-branch", "elif", else_body);
      branch.twin = span(elif_body);
      out->push_back(std::move(branch));
    } else {
      GuardedBranch branch = Make(elif_condition, *match, enclosing, "if-body", "elif", elif_body);
      if (else_follows) branch.twin = span(else_body);
      out->push_back(std::move(branch));
    }
  }
}

void GuardFinder::Conditional(const Node* node, LazyGuardVariables* variables,
                              const std::string& enclosing, std::vector<GuardedBranch>* out) const {
  std::vector<const Node*> parts = Statements(node);  // A, condition, B
  if (parts.size() != 3) return;
  std::optional<GuardMatch> match = Match(parts[1], variables);
  if (!match) return;
  const Node* legacy = match->negated ? parts[0] : parts[2];
  const Node* twin = match->negated ? parts[2] : parts[0];
  GuardedBranch branch =
      Make(parts[1], *match, enclosing, match->negated ? "if-body" : "else-branch", "ternary",
           std::span<const Node* const>(&legacy, 1));
  branch.twin = RangeOf(source_, twin);
  out->push_back(std::move(branch));
}

}  // namespace irm::deadcode::python
