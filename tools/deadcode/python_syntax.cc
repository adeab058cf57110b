// The grammar tables of the Python front end, the node table it walks, range helpers, and the
// allocation hooks it installs in tree-sitter (freed syntax nodes kept per thread for reuse).
#include "tools/deadcode/python_syntax.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

namespace {

// Tree-sitter allocates and frees a block for nearly every syntax node, and deleting a tree frees
// them all at once, more than malloc's per-thread cache holds, so malloc's slower paths showed in
// profiles. These hooks keep freed small blocks on per-thread lists for the next parse. Every
// block is still malloc's own (the hooks only delay free), so blocks allocated before the hooks
// were installed, or on another thread, are handled alike.
constexpr size_t kGranule = 16;
constexpr size_t kClasses = 32;                       // lists for blocks of 16 to 496 bytes
constexpr size_t kMaxCachedBytes = size_t{16} << 20;  // what one thread keeps at most

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible, so that it stays usable while other thread-local objects (the parser,
// the node table) free their blocks at thread exit; `closed` then sends blocks back to malloc.
struct BlockCache {
  FreeBlock* heads[kClasses];
  size_t cached_bytes;
  bool registered;
  bool closed;
};
thread_local BlockCache cache;

void Release() {
  cache.closed = true;
  for (FreeBlock*& head : cache.heads) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
  cache.cached_bytes = 0;
}

// Returns the cached blocks to malloc when the thread ends.
struct BlockCacheReleaser {
  ~BlockCacheReleaser() { Release(); }
};

[[noreturn]] void OutOfMemory(size_t size) {
  std::fprintf(stderr, "tree-sitter: out of memory allocating %zu bytes\n", size);
  std::abort();  // as tree-sitter's own allocator does
}

void* CachedMalloc(size_t size) {
  size_t cls = std::max<size_t>(1, (size + kGranule - 1) / kGranule);
  if (cls < kClasses && cache.heads[cls] != nullptr) {
    FreeBlock* block = cache.heads[cls];
    cache.heads[cls] = block->next;
    cache.cached_bytes -= cls * kGranule;
    return block;
  }
  void* block = std::malloc(cls < kClasses ? cls * kGranule : size);
  if (block == nullptr) OutOfMemory(size);
  return block;
}

void CachedFree(void* pointer) {
  if (pointer == nullptr) return;
  // The largest class whose every request fits the block.
  size_t cls = malloc_usable_size(pointer) / kGranule;
  if (cls == 0 || cls >= kClasses || cache.closed ||
      cache.cached_bytes + cls * kGranule > kMaxCachedBytes) {
    std::free(pointer);
    return;
  }
  if (!cache.registered) {
    cache.registered = true;
    thread_local BlockCacheReleaser releaser;
    (void)releaser;
  }
  auto* block = static_cast<FreeBlock*>(pointer);
  block->next = cache.heads[cls];
  cache.heads[cls] = block;
  cache.cached_bytes += cls * kGranule;
}

void* CachedCalloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) OutOfMemory(SIZE_MAX);
  void* block = CachedMalloc(count * size);
  std::memset(block, 0, count * size);
  return block;
}

void* CachedRealloc(void* pointer, size_t size) {
  if (pointer == nullptr) return CachedMalloc(size);
  if (size <= malloc_usable_size(pointer)) return pointer;
  void* block = std::realloc(pointer, size);  // a malloc block: realloc may grow it in place
  if (block == nullptr) OutOfMemory(size);
  return block;
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
    ts_set_allocator(CachedMalloc, CachedCalloc, CachedRealloc, CachedFree);
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
