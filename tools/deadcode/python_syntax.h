// The Python front end's view of tree-sitter's syntax tree: node kinds as an enum (mapped once
// from the grammar's symbol names, so the walk compares integers, not strings), the field ids it
// reads, and a flat table of a parsed file's named nodes, each with its kind, the field it fills
// and its named children as one contiguous run, built in one cursor pass: the walk then reads
// children and fields as array entries instead of re-scanning a node's children with a tree
// cursor for every field (tree-sitter 0.20's ts_node_child is linear in the index, and cursor
// moves dominated the walk). Node text and 1-based ranges. Internal to the front end.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tools/deadcode/code_model.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace irm::deadcode::python {

enum class Kind : uint8_t {
  kOther,
  kModule,
  kError,
  kComment,
  kIdentifier,
  kAttribute,
  kCall,
  kSubscript,
  kArgumentList,
  kKeywordArgument,
  kParenthesized,
  kNotOperator,
  kBooleanOperator,
  kString,
  kList,
  kFunctionDefinition,
  kClassDefinition,
  kDecoratedDefinition,
  kDecorator,
  kBlock,
  kIfStatement,
  kElifClause,
  kElseClause,
  kConditionalExpression,
  kExpressionStatement,
  kAssignment,
  kAugmentedAssignment,
  kReturn,
  kRaise,
  kPass,
  kImport,
  kImportFrom,
  kFutureImport,
  kAliasedImport,
  kDottedName,
  kRelativeImport,
  kImportPrefix,
  kWildcardImport,
  kParameters,
  kLambdaParameters,
  kDefaultParameter,
  kTypedDefaultParameter,
  kType,
  kForStatement,
  kForInClause,
  kAsPatternTarget,
  kNamedExpression,
  kPatternList,
  kTuplePattern,
  kListPattern,
  kTuple,
  kListSplatPattern,
  kDictionarySplatPattern,
  kGlobal,
  kNonlocal,
  kDelete,
  kCount,
};

// Field ids of the grammar, looked up once.
struct Fields {
  TSFieldId name = 0, body = 0, condition = 0, consequence = 0, alternative = 0, function = 0,
            arguments = 0, object = 0, attribute = 0, value = 0, subscript = 0, left = 0, right = 0,
            argument = 0, module_name = 0, alias = 0, definition = 0, superclasses = 0,
            parameters = 0, type = 0, return_type = 0;
};

// The grammar tables, built once per process.
class Syntax {
 public:
  // The grammar's tables, or the error saying why the grammar cannot be used with this library.
  // The first call also installs tree-sitter allocation hooks that keep freed blocks per thread
  // (every block stays malloc's own, so they are safe at any time; python_syntax.cc).
  static StatusOr<const Syntax*> Get();

  Kind KindOf(TSNode node) const {
    TSSymbol symbol = ts_node_symbol(node);
    if (symbol == static_cast<TSSymbol>(-1)) return Kind::kError;  // ts_builtin_sym_error
    return symbol < kinds_.size() ? kinds_[symbol] : Kind::kOther;
  }
  const Fields& fields() const { return fields_; }
  const TSLanguage* language() const { return language_; }

 private:
  Syntax() = default;
  const TSLanguage* language_ = nullptr;
  std::vector<Kind> kinds_;
  Fields fields_;
};

// Checks a grammar's language version against the range this tree-sitter library loads.
Status CheckLanguageVersion(uint32_t version);

// A node that groups assignment targets — `a, b`, `(a, b)`, `[a, *b]` — whose named children are
// targets themselves.
inline bool IsTargetGroup(Kind kind) {
  switch (kind) {
    case Kind::kPatternList:
    case Kind::kTuplePattern:
    case Kind::kListPattern:
    case Kind::kTuple:
    case Kind::kList:
    case Kind::kParenthesized:
    case Kind::kListSplatPattern:
      return true;
    default:
      return false;
  }
}

// A named node of a parsed file (extras such as comments included). A null node is nullptr.
struct Node {
  TSNode ts;
  const Node* children = nullptr;  // the named children, in order
  uint32_t child_count = 0;
  TSFieldId field = 0;  // the field this node fills in its parent, 0 for none
  Kind kind = Kind::kOther;
};

inline Kind KindOf(const Node* node) { return node == nullptr ? Kind::kOther : node->kind; }

// The named children of `node` (none for a null node), extras included, in order.
inline std::span<const Node> NamedChildren(const Node* node) {
  if (node == nullptr) return {};
  return {node->children, node->child_count};
}

// The first named child filling `field`, or nullptr.
inline const Node* FieldChild(const Node* node, TSFieldId field) {
  if (field == 0) return nullptr;
  for (const Node& child : NamedChildren(node)) {
    if (child.field == field) return &child;
  }
  return nullptr;
}

// The named nodes of one syntax tree. Reused from file to file (one per thread), so that its
// buffers and cursor are allocated once.
class NodeTable {
 public:
  NodeTable() = default;
  ~NodeTable();
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  // Tabulates the tree under `root`, or returns false, leaving the table empty, when the tree
  // nests deeper than `max_depth` levels (every node counted, anonymous ones included). The
  // nodes stay valid until the next Build and while the tree lives.
  bool Build(const Syntax& syntax, TSNode root, int max_depth);
  const Node* root() const { return nodes_.empty() ? nullptr : nodes_.data(); }

 private:
  TSTreeCursor* CursorAt(TSNode node);

  std::vector<Node> nodes_;
  std::vector<uint32_t> first_child_;  // while building: indexes, as nodes_ may move
  std::vector<uint16_t> depth_;
  TSTreeCursor cursor_{};
  bool has_cursor_ = false;
};

// Whether the tree under `root` nests deeper than `limit` (walked with a cursor, without
// recursion).
bool DeeperThan(TSNode root, int limit);

inline std::string_view Text(std::string_view source, TSNode node) {
  uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
  if (start > source.size() || end > source.size() || end < start) return {};
  return source.substr(start, end - start);
}

// The node's text; empty for a null node.
inline std::string_view Text(std::string_view source, const Node* node) {
  return node == nullptr ? std::string_view() : Text(source, node->ts);
}

// The node's 1-based start line.
inline int StartLine(const Node* node) {
  return static_cast<int>(ts_node_start_point(node->ts).row) + 1;
}

// The node's 1-based range, end column exclusive; a node that ends at the start of a line ends
// on the line before.
SourceRange RangeOf(std::string_view source, const Node* node);
// From the start of `first` to the end of `last`.
SourceRange RangeSpan(std::string_view source, const Node* first, const Node* last);

}  // namespace irm::deadcode::python
