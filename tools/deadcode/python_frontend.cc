// The Python front end: one tree-sitter parse per file, one cursor pass that tabulates the named
// nodes (python_syntax.h), then one walk over that table that records definitions, references,
// imports and guarded branches (python_guards.cc decides the shapes).
#include "tools/deadcode/python_frontend.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "tools/deadcode/python_guards.h"
#include "tools/deadcode/python_syntax.h"

namespace irm::deadcode {

namespace {

using python::FieldChild;
using python::GuardFinder;
using python::Kind;
using python::KindOf;
using python::NamedChildren;
using python::Node;
using python::NodeTable;
using python::RangeOf;
using python::Syntax;
using python::Text;

// Deeper trees are refused rather than walked: the walk recurses, and Python itself refuses
// such nesting (its parser stops at 200 levels of parentheses).
constexpr int kMaxDepth = 400;

// One parser per thread, reused across files.
struct ParserDeleter {
  void operator()(TSParser* parser) const { ts_parser_delete(parser); }
};

TSParser* ThreadParser(const Syntax& syntax) {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser;
  thread_local bool usable = false;
  if (!parser) {
    parser.reset(ts_parser_new());
    usable = ts_parser_set_language(parser.get(), syntax.language());
  }
  return usable ? parser.get() : nullptr;
}

// The first ERROR or MISSING node in document order, or a null node.
TSNode FirstError(const Syntax& syntax, TSNode root) {
  TSNode node = root;
  while (true) {
    if (syntax.KindOf(node) == Kind::kError || ts_node_is_missing(node)) return node;
    TSNode next{};
    TSTreeCursor cursor = ts_tree_cursor_new(node);
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      do {
        TSNode child = ts_tree_cursor_current_node(&cursor);
        if (ts_node_has_error(child) || ts_node_is_missing(child)) {
          next = child;
          break;
        }
      } while (ts_tree_cursor_goto_next_sibling(&cursor));
    }
    ts_tree_cursor_delete(&cursor);
    // has_error without an erroneous child: the node itself is the place.
    if (ts_node_is_null(next)) return node;
    node = next;
  }
}

struct Scope {
  enum Type { kModule, kClass, kFunction } type = kModule;
  std::string qualname;  // within the module: "C.m", "f.<locals>.g"; "" for the module
  std::string key;       // functions: the unit key
  python::LazyGuardVariables variables;
};

class Extractor {
 public:
  Extractor(const Syntax& syntax, std::string_view source, const std::string& file,
            const DeadcodeConfig& config, FileModel* model)
      : f_(syntax.fields()),
        source_(source),
        config_(config),
        model_(*model),
        guards_(syntax, source, config.python_guards, file) {
    std::string_view base = file;
    size_t slash = base.rfind('/');
    if (slash != std::string_view::npos) base.remove_prefix(slash + 1);
    is_package_ = base == "__init__.py";
  }

  void Run(const Node* root) {
    scopes_.push_back({Scope::kModule, "", "", {&guards_, root}});
    Statements(root);
    scopes_.pop_back();
    AssignLegacyBranches();
  }

 private:
  std::string Qualify(const std::string& local) const {
    return model_.module.empty() ? local : model_.module + "." + local;
  }
  std::string ChildQualname(const std::string& name) const {
    const Scope& parent = scopes_.back();
    switch (parent.type) {
      case Scope::kModule:
        return name;
      case Scope::kClass:
        return parent.qualname + "." + name;
      case Scope::kFunction:
        return parent.qualname + ".<locals>." + name;
    }
    return name;
  }
  static std::string UniqueKey(const std::string& qualname, std::map<std::string, int>* seen) {
    int count = ++(*seen)[qualname];
    return count == 1 ? qualname : qualname + "#" + std::to_string(count);
  }
  const std::string& CurrentFunction() const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->type == Scope::kFunction) return it->key;
    }
    static const std::string kNone;
    return kNone;
  }

  void AddReference(std::string target, const Node* node) {
    Reference reference;
    reference.from = CurrentFunction();
    reference.target = std::move(target);
    TSPoint start = ts_node_start_point(node->ts);
    reference.line = static_cast<int>(start.row) + 1;
    reference.column = static_cast<int>(start.column) + 1;
    model_.references.push_back(std::move(reference));
  }

  // The statements of a block or the module; an if statement sees the statements after it.
  void Statements(const Node* block) {
    std::vector<const Node*> statements = guards_.Statements(block);
    for (size_t i = 0; i < statements.size(); ++i) {
      if (KindOf(statements[i]) == Kind::kIfStatement) {
        std::span<const Node* const> tail(statements.data() + i + 1, statements.size() - i - 1);
        guards_.IfStatement(statements[i], tail, &scopes_.back().variables, CurrentFunction(),
                            &model_.branches);
        Children(statements[i]);
      } else {
        Visit(statements[i]);
      }
    }
  }

  void Children(const Node* node) {
    for (const Node& child : NamedChildren(node)) Visit(&child);
  }

  // A dotted load ("a.b.c", "super().f") into `out`; false for anything else.
  bool Chain(const Node* node, std::string* out) {
    switch (KindOf(node)) {
      case Kind::kIdentifier:
        out->append(Text(source_, node));
        return true;
      case Kind::kAttribute: {
        if (!Chain(FieldChild(node, f_.object), out)) return false;
        out->push_back('.');
        out->append(Text(source_, FieldChild(node, f_.attribute)));
        return true;
      }
      case Kind::kCall: {
        const Node* function = FieldChild(node, f_.function);
        if (KindOf(function) != Kind::kIdentifier || Text(source_, function) != "super") {
          return false;
        }
        out->append("super()");
        return true;
      }
      default:
        return false;
    }
  }

  // An assignment target: names bound are not references, but what a subscript or attribute
  // target reads is evaluated.
  void Store(const Node* node) {
    const Kind kind = KindOf(node);
    if (kind == Kind::kIdentifier || kind == Kind::kAttribute) return;
    if (kind == Kind::kSubscript) {
      Children(node);
    } else if (IsTargetGroup(kind)) {
      for (const Node& child : NamedChildren(node)) Store(&child);
    } else {
      Visit(node);
    }
  }

  void Visit(const Node* node) {
    switch (KindOf(node)) {
      case Kind::kIdentifier:
        AddReference(std::string(Text(source_, node)), node);
        return;
      case Kind::kAttribute: {
        std::string chain;
        if (Chain(node, &chain)) {
          AddReference(std::move(chain), node);
        } else {
          Visit(FieldChild(node, f_.object));  // g().f, a[0].f: only what the object reads
        }
        return;
      }
      case Kind::kKeywordArgument:
        Visit(FieldChild(node, f_.value));
        return;
      case Kind::kAssignment:
      case Kind::kAugmentedAssignment:
      case Kind::kForStatement:
      case Kind::kForInClause:
        // Targets are stored; an annotation (`x: T = v`, assignments only) reads nothing.
        for (const Node& child : NamedChildren(node)) {
          if (child.field == f_.left) {
            Store(&child);
          } else if (child.field != f_.type) {
            Visit(&child);
          }
        }
        return;
      case Kind::kNamedExpression:
        Visit(FieldChild(node, f_.value));
        return;
      case Kind::kDecoratedDefinition:
        Decorated(node);
        return;
      case Kind::kFunctionDefinition:
        Function(node, node, {});
        return;
      case Kind::kClassDefinition:
        Class(node, node, {});
        return;
      case Kind::kBlock:
        Statements(node);
        return;
      case Kind::kConditionalExpression:
        guards_.Conditional(node, &scopes_.back().variables, CurrentFunction(), &model_.branches);
        Children(node);
        return;
      case Kind::kParameters:
      case Kind::kLambdaParameters:
        // Only default values are evaluated (in the enclosing scope).
        for (const Node& child : NamedChildren(node)) {
          Kind kind = KindOf(&child);
          if (kind == Kind::kDefaultParameter || kind == Kind::kTypedDefaultParameter) {
            Visit(FieldChild(&child, f_.value));
          }
        }
        return;
      case Kind::kImport:
      case Kind::kImportFrom:
        Import(node);
        return;
      case Kind::kFutureImport:
      case Kind::kAsPatternTarget:
      case Kind::kGlobal:
      case Kind::kNonlocal:
      case Kind::kDelete:
      case Kind::kType:
      case Kind::kComment:
        return;
      default:
        if (node != nullptr) Children(node);
    }
  }

  void Decorated(const Node* node) {
    std::vector<const Node*> decorators;
    const Node* definition = nullptr;
    for (const Node& child : NamedChildren(node)) {
      if (KindOf(&child) == Kind::kDecorator) {
        decorators.push_back(&child);
        Children(&child);  // evaluated in the enclosing scope
      } else if (child.field == f_.definition) {
        definition = &child;
      }
    }
    if (KindOf(definition) == Kind::kFunctionDefinition) {
      Function(definition, node, decorators);
    } else if (KindOf(definition) == Kind::kClassDefinition) {
      Class(definition, node, decorators);
    }
  }

  // The decorator's expression as written, and the registration it makes, if any.
  std::vector<std::string> DecoratorTexts(const std::vector<const Node*>& decorators,
                                          const Node* range_node, const std::string& key) {
    std::vector<std::string> texts;
    for (const Node* decorator : decorators) {
      const Node* expression = nullptr;
      for (const Node& child : NamedChildren(decorator)) {
        if (KindOf(&child) != Kind::kComment) expression = &child;
      }
      if (expression == nullptr) continue;
      texts.emplace_back(Text(source_, expression));
      Registration(expression, range_node, key);
    }
    return texts;
  }

  // @register_pass("name") where register_pass is a registration family's decorator.
  void Registration(const Node* expression, const Node* range_node, const std::string& key) {
    if (KindOf(expression) != Kind::kCall) return;
    const Node* function = FieldChild(expression, f_.function);
    std::string_view name = Text(source_, function);
    if (KindOf(function) == Kind::kAttribute) {
      name = Text(source_, FieldChild(function, f_.attribute));
    } else if (KindOf(function) != Kind::kIdentifier) {
      return;
    }
    std::vector<const Node*> arguments = guards_.Statements(FieldChild(expression, f_.arguments));
    if (arguments.empty() || KindOf(arguments[0]) != Kind::kString) return;
    std::string_view literal = Text(source_, arguments[0]);
    if (literal.size() < 2 || (literal.front() != '"' && literal.front() != '\'') ||
        literal.back() != literal.front()) {
      return;
    }
    for (const RegistrationFamily& family : config_.registrations) {
      for (int legacy = 0; legacy < 2; ++legacy) {
        const auto& macros = legacy ? family.legacy_macros : family.new_macros;
        if (std::find(macros.begin(), macros.end(), name) == macros.end()) continue;
        deadcode::Registration registration;
        registration.registry = family.registry;
        registration.key = std::string(literal.substr(1, literal.size() - 2));
        registration.legacy = legacy == 1;
        registration.macro = std::string(name);
        registration.file = model_.file;
        registration.range = RangeOf(source_, range_node);
        registration.target = key;
        model_.registrations.push_back(std::move(registration));
        return;
      }
    }
  }

  void Function(const Node* node, const Node* range_node,
                const std::vector<const Node*>& decorators) {
    std::string name(Text(source_, FieldChild(node, f_.name)));
    std::string qualname = ChildQualname(name);
    FunctionUnit unit;
    unit.qualname = Qualify(qualname);
    unit.key = UniqueKey(unit.qualname, &function_keys_);
    unit.name = name;
    unit.class_name =
        scopes_.back().type == Scope::kClass ? Qualify(scopes_.back().qualname) : std::string();
    unit.scope = unit.class_name.empty() ? model_.module : unit.class_name;
    unit.file = model_.file;
    unit.range = RangeOf(source_, range_node);
    unit.decorators = DecoratorTexts(decorators, range_node, unit.key);
    std::string key = unit.key;
    model_.functions.push_back(std::move(unit));

    Visit(FieldChild(node, f_.parameters));  // defaults, in the enclosing scope
    const Node* body = FieldChild(node, f_.body);
    scopes_.push_back({Scope::kFunction, qualname, key, {&guards_, body}});
    Visit(body);
    scopes_.pop_back();
  }

  void Class(const Node* node, const Node* range_node, const std::vector<const Node*>& decorators) {
    std::string name(Text(source_, FieldChild(node, f_.name)));
    std::string qualname = ChildQualname(name);
    ClassUnit unit;
    unit.qualname = Qualify(qualname);
    unit.key = UniqueKey(unit.qualname, &class_keys_);
    unit.file = model_.file;
    unit.range = RangeOf(source_, range_node);
    const Node* superclasses = FieldChild(node, f_.superclasses);
    for (const Node* base : guards_.Statements(superclasses)) {
      if (KindOf(base) != Kind::kKeywordArgument) {
        unit.bases.emplace_back(Text(source_, base));  // as written: a.B, Generic[T]
      }
    }
    unit.decorators = DecoratorTexts(decorators, range_node, unit.key);
    model_.classes.push_back(std::move(unit));

    if (superclasses != nullptr) Visit(superclasses);
    const Node* body = FieldChild(node, f_.body);
    scopes_.push_back({Scope::kClass, qualname, "", {&guards_, body}});
    Visit(body);
    scopes_.pop_back();
  }

  // "a.b.c" from a dotted_name, whatever the spacing.
  std::string Dotted(const Node* node) const {
    std::string out;
    for (const Node& child : NamedChildren(node)) {
      if (KindOf(&child) != Kind::kIdentifier) continue;
      if (!out.empty()) out.push_back('.');
      out.append(Text(source_, &child));
    }
    return out;
  }

  // The absolute module a relative import names: `dots` leading dots then `rest`.
  std::string ResolveRelative(int dots, const std::string& rest) const {
    auto parent = [](const std::string& name) {
      size_t dot = name.rfind('.');
      return dot == std::string::npos ? std::string() : name.substr(0, dot);
    };
    // One dot is the current package: a package's __init__ is the package, a module's package
    // is its parent; each further dot goes one package up.
    std::string package = is_package_ ? model_.module : parent(model_.module);
    for (int up = 1; up < dots && !package.empty(); ++up) package = parent(package);
    if (package.empty()) {
      return std::string(static_cast<size_t>(dots), '.') + rest;  // beyond the top package
    }
    return rest.empty() ? package : package + "." + rest;
  }

  void Import(const Node* node) {
    auto& imports = model_.imports;
    if (KindOf(node) == Kind::kImport) {
      for (const Node& child : NamedChildren(node)) {
        if (child.field != f_.name) continue;
        const Node* name = &child;
        if (KindOf(name) == Kind::kDottedName) {
          // `import a.b` binds `a`.
          std::string dotted = Dotted(name);
          std::string first = dotted.substr(0, dotted.find('.'));
          imports.emplace_back(first, first);
        } else if (KindOf(name) == Kind::kAliasedImport) {
          imports.emplace_back(std::string(Text(source_, FieldChild(name, f_.alias))),
                               Dotted(FieldChild(name, f_.name)));
        }
      }
      return;
    }
    const Node* module_name = FieldChild(node, f_.module_name);
    std::string base;
    if (KindOf(module_name) == Kind::kDottedName) {
      base = Dotted(module_name);
    } else if (KindOf(module_name) == Kind::kRelativeImport) {
      int dots = 0;
      std::string rest;
      for (const Node& child : NamedChildren(module_name)) {
        if (KindOf(&child) == Kind::kImportPrefix) {
          std::string_view prefix = Text(source_, &child);
          dots = static_cast<int>(std::count(prefix.begin(), prefix.end(), '.'));
        } else if (KindOf(&child) == Kind::kDottedName) {
          rest = Dotted(&child);
        }
      }
      base = ResolveRelative(dots, rest);
    } else {
      return;
    }
    auto join = [&](const std::string& name) {
      return base.empty() || base.back() == '.' ? base + name : base + "." + name;
    };
    for (const Node& child : NamedChildren(node)) {
      if (child.field == f_.name && KindOf(&child) == Kind::kDottedName) {
        std::string name = Dotted(&child);
        imports.emplace_back(name, join(name));
      } else if (child.field == f_.name && KindOf(&child) == Kind::kAliasedImport) {
        imports.emplace_back(std::string(Text(source_, FieldChild(&child, f_.alias))),
                             join(Dotted(FieldChild(&child, f_.name))));
      } else if (KindOf(&child) == Kind::kWildcardImport) {
        imports.emplace_back("*", base);
      }
    }
  }

  // Every reference inside a branch's legacy part lists that branch, outermost first.
  void AssignLegacyBranches() {
    const auto& branches = model_.branches;
    if (branches.empty()) return;
    std::vector<int> order(branches.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    auto key = [&](int i) {
      const SourceRange& r = branches[static_cast<size_t>(i)].legacy;
      return std::make_tuple(r.start_line, r.start_column, -r.end_line, -r.end_column, i);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    for (Reference& reference : model_.references) {
      for (int i : order) {
        if (branches[static_cast<size_t>(i)].legacy.Contains(reference.line, reference.column)) {
          reference.legacy_branches.push_back(i);
        }
      }
    }
  }

  const python::Fields& f_;
  std::string_view source_;
  const DeadcodeConfig& config_;
  FileModel& model_;
  GuardFinder guards_;
  bool is_package_ = false;
  std::vector<Scope> scopes_;
  std::map<std::string, int> function_keys_;
  std::map<std::string, int> class_keys_;
};

}  // namespace

std::string PythonModuleName(const std::string& relative_path) {
  std::string path = relative_path;
  if (path.ends_with(".py")) path.resize(path.size() - 3);
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = slash + 1;
  }
  if (!parts.empty() && parts.back() == "__init__") parts.pop_back();
  std::string module;
  for (const std::string& part : parts) {
    if (!module.empty()) module.push_back('.');
    module += part;
  }
  return module;
}

Status CheckPythonGrammar() { return Syntax::Get().status(); }

FileModel AnalyzePythonSource(std::string_view source, const std::string& file,
                              const std::string& module, const DeadcodeConfig& config) {
  auto start = std::chrono::steady_clock::now();
  FileModel model;
  model.language = Language::kPython;
  model.file = file;
  model.module = module;
  auto problem = [&](int line, int column, std::string message) {
    model.problems.push_back({file, line, column, std::move(message)});
  };
  StatusOr<const Syntax*> syntax = Syntax::Get();
  if (!syntax.ok()) {
    problem(0, 0, syntax.status().message());
    return model;
  }
  TSParser* parser = ThreadParser(**syntax);
  if (parser == nullptr) {
    problem(0, 0, "the tree-sitter library refused the tree-sitter-python grammar");
    return model;
  }
  if (source.size() > UINT32_MAX) {
    problem(0, 0, "file larger than 4 GiB");
    return model;
  }
  TSTree* tree =
      ts_parser_parse_string(parser, nullptr, source.data(), static_cast<uint32_t>(source.size()));
  if (tree == nullptr) {
    ts_parser_reset(parser);
    problem(0, 0, "tree-sitter gave no syntax tree");
    return model;
  }
  TSNode root = ts_tree_root_node(tree);
  // One table per thread, reused across files.
  thread_local NodeTable nodes;
  if (ts_node_has_error(root)) {
    TSPoint at = ts_node_start_point(FirstError(**syntax, root));
    problem(static_cast<int>(at.row) + 1, static_cast<int>(at.column) + 1, "syntax error");
  } else if (!nodes.Build(**syntax, root, kMaxDepth)) {
    problem(0, 0, "syntax tree nested deeper than 400 levels; not analyzed");
  } else {
    Extractor(**syntax, source, file, config, &model).Run(nodes.root());
  }
  ts_tree_delete(tree);
  model.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return model;
}

}  // namespace irm::deadcode
