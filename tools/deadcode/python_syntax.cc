// The grammar tables of the Python front end, the node table it walks and range helpers.
#include "tools/deadcode/python_syntax.h"

#include "tools/deadcode/tree_sitter_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace irm::deadcode::python {

namespace {

constexpr std::pair<const char*, Kind> kKindNames[] = {
    {"module", Kind::kModule},
    {"ERROR", Kind::kError},
    {"comment", Kind::kComment},
    {"identifier", Kind::kIdentifier},
    {"attribute", Kind::kAttribute},
    {"call", Kind::kCall},
    {"subscript", Kind::kSubscript},
    {"argument_list", Kind::kArgumentList},
    {"keyword_argument", Kind::kKeywordArgument},
    {"parenthesized_expression", Kind::kParenthesized},
    {"not_operator", Kind::kNotOperator},
    {"boolean_operator", Kind::kBooleanOperator},
    {"string", Kind::kString},
    {"list", Kind::kList},
    {"function_definition", Kind::kFunctionDefinition},
    {"class_definition", Kind::kClassDefinition},
    {"decorated_definition", Kind::kDecoratedDefinition},
    {"decorator", Kind::kDecorator},
    {"block", Kind::kBlock},
    {"if_statement", Kind::kIfStatement},
    {"elif_clause", Kind::kElifClause},
    {"else_clause", Kind::kElseClause},
    {"conditional_expression", Kind::kConditionalExpression},
    {"expression_statement", Kind::kExpressionStatement},
    {"assignment", Kind::kAssignment},
    {"augmented_assignment", Kind::kAugmentedAssignment},
    {"return_statement", Kind::kReturn},
    {"raise_statement", Kind::kRaise},
    {"pass_statement", Kind::kPass},
    {"import_statement", Kind::kImport},
    {"import_from_statement", Kind::kImportFrom},
    {"future_import_statement", Kind::kFutureImport},
    {"aliased_import", Kind::kAliasedImport},
    {"dotted_name", Kind::kDottedName},
    {"relative_import", Kind::kRelativeImport},
    {"import_prefix", Kind::kImportPrefix},
    {"wildcard_import", Kind::kWildcardImport},
    {"parameters", Kind::kParameters},
    {"lambda_parameters", Kind::kLambdaParameters},
    {"default_parameter", Kind::kDefaultParameter},
    {"typed_default_parameter", Kind::kTypedDefaultParameter},
    {"type", Kind::kType},
    {"for_statement", Kind::kForStatement},
    {"for_in_clause", Kind::kForInClause},
    {"as_pattern_target", Kind::kAsPatternTarget},
    {"named_expression", Kind::kNamedExpression},
    {"pattern_list", Kind::kPatternList},
    {"tuple_pattern", Kind::kTuplePattern},
    {"list_pattern", Kind::kListPattern},
    {"tuple", Kind::kTuple},
    {"list_splat_pattern", Kind::kListSplatPattern},
    {"dictionary_splat_pattern", Kind::kDictionarySplatPattern},
    {"global_statement", Kind::kGlobal},
    {"nonlocal_statement", Kind::kNonlocal},
    {"delete_statement", Kind::kDelete},
};

TSFieldId FieldId(const TSLanguage* language, const char* name) {
  return ts_language_field_id_for_name(language, name, static_cast<uint32_t>(std::strlen(name)));
}

}  // namespace

Status CheckLanguageVersion(uint32_t version) {
  if (version < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION ||
      version > TREE_SITTER_LANGUAGE_VERSION) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("the tree-sitter-python grammar has language version {}, but this "
                              "tree-sitter library loads versions {} to {}: build with "
                              "tree-sitter-python 0.23.x (scripts/setup fetches 0.23.6)",
                              version, TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
                              TREE_SITTER_LANGUAGE_VERSION));
  }
  return Status::Ok();
}

StatusOr<const Syntax*> Syntax::Get() {
  // Built once: the tables are read-only afterwards, so every thread shares them.
  static const StatusOr<const Syntax*> result = []() -> StatusOr<const Syntax*> {
    const TSLanguage* language = tree_sitter_python();
    IRM_RETURN_IF_ERROR(CheckLanguageVersion(ts_language_version(language)));
    // Process-wide, but tree-sitter serves only this front end here.
    InstallCachedAllocator();
    static Syntax syntax;
    syntax.language_ = language;
    uint32_t count = ts_language_symbol_count(language);
    syntax.kinds_.assign(count, Kind::kOther);
    for (uint32_t symbol = 0; symbol < count; ++symbol) {
      TSSymbolType type = ts_language_symbol_type(language, static_cast<TSSymbol>(symbol));
      const char* name = ts_language_symbol_name(language, static_cast<TSSymbol>(symbol));
      if (name == nullptr || type != TSSymbolTypeRegular) continue;
      for (const auto& [kind_name, kind] : kKindNames) {
        if (std::strcmp(name, kind_name) == 0) syntax.kinds_[symbol] = kind;
      }
    }
    Fields& f = syntax.fields_;
    f.name = FieldId(language, "name");
    f.body = FieldId(language, "body");
    f.condition = FieldId(language, "condition");
    f.consequence = FieldId(language, "consequence");
    f.alternative = FieldId(language, "alternative");
    f.function = FieldId(language, "function");
    f.arguments = FieldId(language, "arguments");
    f.object = FieldId(language, "object");
    f.attribute = FieldId(language, "attribute");
    f.value = FieldId(language, "value");
    f.subscript = FieldId(language, "subscript");
    f.left = FieldId(language, "left");
    f.right = FieldId(language, "right");
    f.argument = FieldId(language, "argument");
    f.module_name = FieldId(language, "module_name");
    f.alias = FieldId(language, "alias");
    f.definition = FieldId(language, "definition");
    f.superclasses = FieldId(language, "superclasses");
    f.parameters = FieldId(language, "parameters");
    f.type = FieldId(language, "type");
    f.return_type = FieldId(language, "return_type");
    return static_cast<const Syntax*>(&syntax);
  }();
  return result;
}

NodeTable::~NodeTable() {
  if (has_cursor_) ts_tree_cursor_delete(&cursor_);
}

TSTreeCursor* NodeTable::CursorAt(TSNode node) {
  // One cursor, reset for each node: creating a cursor allocates its stack.
  if (has_cursor_) {
    ts_tree_cursor_reset(&cursor_, node);
  } else {
    cursor_ = ts_tree_cursor_new(node);
    has_cursor_ = true;
  }
  return &cursor_;
}

bool NodeTable::Build(const Syntax& syntax, TSNode root, int max_depth) {
  nodes_.clear();
  first_child_.clear();
  depth_.clear();
  if (ts_node_is_null(root)) return true;
  nodes_.push_back({root, nullptr, 0, 0, syntax.KindOf(root)});
  depth_.push_back(0);
  // Breadth first: nodes_ doubles as the queue, and each node's named children are appended
  // together, so they end up contiguous.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const int child_depth = depth_[i] + 1;
    const uint32_t first = static_cast<uint32_t>(nodes_.size());
    first_child_.push_back(first);
    // The children the cursor visits: most named nodes are leaves (names, string parts) and need
    // no cursor, and the count spares the last, failing move to a next sibling, which is the
    // dearest (it climbs out of the grammar's hidden repetition nodes).
    const uint32_t visible_children = ts_node_child_count(nodes_[i].ts);
    if (visible_children == 0) continue;
    TSTreeCursor* cursor = CursorAt(nodes_[i].ts);
    if (ts_tree_cursor_goto_first_child(cursor)) {
      if (child_depth > max_depth) {
        nodes_.clear();
        return false;
      }
      uint32_t visited = 0;
      do {
        TSNode child = ts_tree_cursor_current_node(cursor);
        if (ts_node_is_named(child)) {
          nodes_.push_back(
              {child, nullptr, 0, ts_tree_cursor_current_field_id(cursor), syntax.KindOf(child)});
          depth_.push_back(static_cast<uint16_t>(child_depth));
        } else if (ts_node_child_count(child) > 0 && DeeperThan(child, max_depth - child_depth)) {
          // An anonymous node is not tabulated, but its nesting counts.
          nodes_.clear();
          return false;
        }
      } while (++visited < visible_children && ts_tree_cursor_goto_next_sibling(cursor));
    }
    nodes_[i].child_count = static_cast<uint32_t>(nodes_.size()) - first;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].children = nodes_.data() + first_child_[i];
  return true;
}

bool DeeperThan(TSNode root, int limit) {
  if (limit < 0) return true;
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  int depth = 0;
  bool deeper = false;
  while (true) {
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      if (++depth > limit) {
        deeper = true;
        break;
      }
      continue;
    }
    bool moved = false;
    while (!moved) {
      if (ts_tree_cursor_goto_next_sibling(&cursor)) {
        moved = true;
      } else if (depth > 0 && ts_tree_cursor_goto_parent(&cursor)) {
        --depth;
      } else {
        break;
      }
    }
    if (!moved) break;
  }
  ts_tree_cursor_delete(&cursor);
  return deeper;
}

namespace {

// 1-based line and exclusive 1-based column of the end of a node at `end_byte` / `end`.
void EndOf(std::string_view source, uint32_t start_byte, uint32_t end_byte, TSPoint end, int* line,
           int* column) {
  if (end.column == 0 && end_byte > start_byte && end.row > 0 && end_byte <= source.size() &&
      source[end_byte - 1] == '\n') {
    // Ends right after a newline: report the end of the line before.
    size_t newline = end_byte - 1;
    size_t previous = newline == 0 ? std::string_view::npos : source.rfind('\n', newline - 1);
    size_t line_start = previous == std::string_view::npos ? 0 : previous + 1;
    size_t content_end = newline;
    if (content_end > line_start && source[content_end - 1] == '\r') --content_end;
    *line = static_cast<int>(end.row);
    *column = static_cast<int>(content_end - line_start) + 1;
    return;
  }
  *line = static_cast<int>(end.row) + 1;
  *column = static_cast<int>(end.column) + 1;
}

}  // namespace

SourceRange RangeOf(std::string_view source, const Node* node) {
  return RangeSpan(source, node, node);
}

SourceRange RangeSpan(std::string_view source, const Node* first, const Node* last) {
  SourceRange range;
  TSPoint start = ts_node_start_point(first->ts);
  range.start_line = static_cast<int>(start.row) + 1;
  range.start_column = static_cast<int>(start.column) + 1;
  EndOf(source, ts_node_start_byte(first->ts), ts_node_end_byte(last->ts),
        ts_node_end_point(last->ts), &range.end_line, &range.end_column);
  return range;
}

}  // namespace irm::deadcode::python
