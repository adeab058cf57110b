// The grammar tables of the Python front end and the small tree helpers it walks with.
#include "tools/deadcode/python_syntax.h"

#include <fmt/format.h>

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

namespace {

// One cursor per thread, reset for each use: creating a cursor allocates its stack, and these
// helpers run for nearly every node. None of them calls another while it holds the cursor.
class ThreadCursor {
 public:
  ThreadCursor() = default;
  ~ThreadCursor() {
    if (made_) ts_tree_cursor_delete(&cursor_);
  }
  ThreadCursor(const ThreadCursor&) = delete;
  ThreadCursor& operator=(const ThreadCursor&) = delete;
  TSTreeCursor* At(TSNode node) {
    if (made_) {
      ts_tree_cursor_reset(&cursor_, node);
    } else {
      cursor_ = ts_tree_cursor_new(node);
      made_ = true;
    }
    return &cursor_;
  }

 private:
  TSTreeCursor cursor_{};
  bool made_ = false;
};

TSTreeCursor* CursorAt(TSNode node) {
  thread_local ThreadCursor cursor;
  return cursor.At(node);
}

}  // namespace

void NamedChildren(TSNode node, std::vector<Child>* out) {
  out->clear();
  if (ts_node_is_null(node)) return;
  TSTreeCursor* cursor = CursorAt(node);
  if (ts_tree_cursor_goto_first_child(cursor)) {
    do {
      TSNode child = ts_tree_cursor_current_node(cursor);
      if (ts_node_is_named(child)) {
        out->push_back({child, ts_tree_cursor_current_field_id(cursor)});
      }
    } while (ts_tree_cursor_goto_next_sibling(cursor));
  }
}

std::vector<Child> NamedChildren(TSNode node) {
  std::vector<Child> out;
  NamedChildren(node, &out);
  return out;
}

TSNode FieldChild(TSNode node, TSFieldId field) {
  if (field == 0 || ts_node_is_null(node)) return TSNode{};
  TSTreeCursor* cursor = CursorAt(node);
  if (ts_tree_cursor_goto_first_child(cursor)) {
    do {
      if (ts_tree_cursor_current_field_id(cursor) == field) {
        return ts_tree_cursor_current_node(cursor);
      }
    } while (ts_tree_cursor_goto_next_sibling(cursor));
  }
  return TSNode{};
}

std::vector<TSNode> FieldChildren(TSNode node, TSFieldId field) {
  std::vector<TSNode> out;
  if (field == 0 || ts_node_is_null(node)) return out;
  TSTreeCursor* cursor = CursorAt(node);
  if (ts_tree_cursor_goto_first_child(cursor)) {
    do {
      if (ts_tree_cursor_current_field_id(cursor) == field) {
        out.push_back(ts_tree_cursor_current_node(cursor));
      }
    } while (ts_tree_cursor_goto_next_sibling(cursor));
  }
  return out;
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

SourceRange RangeOf(std::string_view source, TSNode node) { return RangeSpan(source, node, node); }

SourceRange RangeSpan(std::string_view source, TSNode first, TSNode last) {
  SourceRange range;
  TSPoint start = ts_node_start_point(first);
  range.start_line = static_cast<int>(start.row) + 1;
  range.start_column = static_cast<int>(start.column) + 1;
  EndOf(source, ts_node_start_byte(first), ts_node_end_byte(last), ts_node_end_point(last),
        &range.end_line, &range.end_column);
  return range;
}

}  // namespace irm::deadcode::python
