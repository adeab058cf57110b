// The Python front end's view of tree-sitter's syntax tree: node kinds as an enum (mapped once
// from the grammar's symbol names, so the walk compares integers, not strings), the field ids it
// reads, node text and 1-based ranges, and child iteration through a tree cursor (tree-sitter
// 0.20's ts_node_child is linear in the index, a cursor is not). Internal to the front end.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
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

// A child of a node with the field it fills (0 for none).
struct Child {
  TSNode node;
  TSFieldId field;
};

// The named children of `node`, extras (comments) included, in order.
void NamedChildren(TSNode node, std::vector<Child>* out);
std::vector<Child> NamedChildren(TSNode node);
// The first named child filling `field`, or a null node.
TSNode FieldChild(TSNode node, TSFieldId field);
// The named children filling `field`, in order.
std::vector<TSNode> FieldChildren(TSNode node, TSFieldId field);

inline std::string_view Text(std::string_view source, TSNode node) {
  uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
  if (start > source.size() || end > source.size() || end < start) return {};
  return source.substr(start, end - start);
}

// The node's 1-based range, end column exclusive; a node that ends at the start of a line ends
// on the line before.
SourceRange RangeOf(std::string_view source, TSNode node);
// From the start of `first` to the end of `last`.
SourceRange RangeSpan(std::string_view source, TSNode first, TSNode last);

}  // namespace irm::deadcode::python
