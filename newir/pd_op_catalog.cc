// Reads the pd_op catalog (pd_op_catalog.h has the line format) into op table entries and
// registers those the hand-written rows leave out. The data is one string compiled in, read when
// the registry is built: a table of initialisers for ~1,500 ops would cost the build far more.
#include "newir/pd_op_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "newir/parse_values.h"
#include "newir/text_cursor.h"

namespace irm::newir {
namespace {

constexpr std::string_view kCatalogText =
#include "newir/pd_op_catalog.inc"
    ;

struct KindCode {
  std::string_view code;
  AttrKind kind;          // what the attribute must be (kNull: any, a Scalar)
  AttrKind untyped_kind;  // what an untyped value reads as (Scalar), or an array's elements
};

constexpr KindCode kKindCodes[] = {
    {"b", AttrKind::kBool, AttrKind::kNull},
    {"i32", AttrKind::kInt32, AttrKind::kNull},
    {"i64", AttrKind::kInt64, AttrKind::kNull},
    {"f32", AttrKind::kFloat, AttrKind::kNull},
    {"f64", AttrKind::kDouble, AttrKind::kNull},
    {"str", AttrKind::kString, AttrKind::kNull},
    {"dt", AttrKind::kDataType, AttrKind::kNull},
    {"pl", AttrKind::kPlace, AttrKind::kNull},
    {"lo", AttrKind::kDataLayout, AttrKind::kNull},
    {"ia", AttrKind::kIntArray, AttrKind::kNull},
    // Paddle stores a Scalar attribute as the builtin attribute of its value's kind.
    {"sf32", AttrKind::kNull, AttrKind::kFloat},
    {"sf64", AttrKind::kNull, AttrKind::kDouble},
    {"si32", AttrKind::kNull, AttrKind::kInt32},
    {"si64", AttrKind::kNull, AttrKind::kInt64},
    {"ai32", AttrKind::kArray, AttrKind::kInt32},
    {"ai64", AttrKind::kArray, AttrKind::kInt64},
    {"af32", AttrKind::kArray, AttrKind::kFloat},
    {"af64", AttrKind::kArray, AttrKind::kDouble},
    {"ab", AttrKind::kArray, AttrKind::kBool},
    {"astr", AttrKind::kArray, AttrKind::kString},
    {"asc", AttrKind::kArray, AttrKind::kNull},
};

const char* CategorySummary(CatalogCategory category) {
  switch (category) {
    case CatalogCategory::kForward:
      return "Paddle op (catalog signature)";
    case CatalogCategory::kBackward:
      return "Paddle gradient op (catalog signature)";
    case CatalogCategory::kFused:
      return "Paddle fused op (catalog signature)";
    case CatalogCategory::kSparse:
      return "Paddle sparse op (catalog signature)";
    case CatalogCategory::kInplace:
      return "Paddle in-place op (catalog signature)";
  }
  return "";
}

class CatalogReader {
 public:
  CatalogReader(std::string_view text, const std::string& file) : c_(text, file) {}

  StatusOr<std::vector<CatalogOp>> Read() {
    std::vector<CatalogOp> ops;
    while (true) {
      while (c_.Peek() == '\n') c_.set_pos(c_.pos() + 1);
      if (c_.AtEnd()) return ops;
      if (c_.Peek() == '#') {  // a header line
        while (!c_.AtEnd() && c_.Peek() != '\n') c_.set_pos(c_.pos() + 1);
        continue;
      }
      IRM_ASSIGN_OR_RETURN(CatalogOp op, ReadLine());
      ops.push_back(std::move(op));
    }
  }

 private:
  // Up to (not including) any of `stops`, on this line.
  std::string_view Field(std::string_view stops) {
    const size_t start = c_.pos();
    while (!c_.AtEnd() && c_.Peek() != '\n' && stops.find(c_.Peek()) == std::string_view::npos) {
      c_.set_pos(c_.pos() + 1);
    }
    return c_.Slice(start, c_.pos());
  }

  StatusOr<CatalogOp> ReadLine() {
    CatalogOp op;
    const size_t flags_at = c_.pos();
    const std::string_view flags = Field(" ");
    if (flags.empty()) return c_.Expected("op flags", "");
    switch (flags[0]) {
      case 'F':
        op.category = CatalogCategory::kForward;
        break;
      case 'B':
        op.category = CatalogCategory::kBackward;
        break;
      case 'U':
        op.category = CatalogCategory::kFused;
        break;
      case 'S':
        op.category = CatalogCategory::kSparse;
        break;
      case 'I':
        op.category = CatalogCategory::kInplace;
        break;
      default:
        return c_.ErrorAt(flags_at, fmt::format("unknown op category '{}'", flags[0]));
    }
    if (flags.size() > 2 || (flags.size() == 2 && flags[1] != 'E')) {
      return c_.ErrorAt(flags_at, fmt::format("unknown op flags '{}'", flags));
    }
    op.info.side_effect = flags.size() == 2;
    op.info.inplace = op.category == CatalogCategory::kInplace;
    IRM_RETURN_IF_ERROR(c_.Expect(" ", "after op flags"));
    const size_t name_at = c_.pos();
    const std::string_view name = Field("|");
    if (name.empty() || !std::all_of(name.begin(), name.end(), TextCursor::IsIdentChar)) {
      return c_.ErrorAt(name_at, "expected an op name");
    }
    op.info.name = fmt::format("pd_op.{}", name);
    op.info.summary = CategorySummary(op.category);
    IRM_RETURN_IF_ERROR(c_.Expect("|", "after the op name"));
    IRM_RETURN_IF_ERROR(ReadSlots(op.info.operands, true));
    IRM_RETURN_IF_ERROR(c_.Expect("|", "after the operands"));
    IRM_RETURN_IF_ERROR(ReadSlots(op.info.results, false));
    IRM_RETURN_IF_ERROR(c_.Expect("|", "after the results"));
    IRM_RETURN_IF_ERROR(ReadAttributes(op.info.attributes));
    if (c_.Consume("|")) {
      IRM_RETURN_IF_ERROR(ReadKinds(op.operand_kinds, ">"));
      IRM_RETURN_IF_ERROR(c_.Expect(">", "after the operand kinds"));
      const size_t at = c_.pos();
      IRM_RETURN_IF_ERROR(ReadKinds(op.result_kinds, "\n"));
      if (op.operand_kinds.size() > op.info.operands.size() ||
          op.result_kinds.size() != op.info.results.size()) {
        return c_.ErrorAt(at, "the tensor kinds do not match the operands and results");
      }
    }
    if (!c_.AtEnd() && !c_.Consume("\n")) return c_.Expected("the end of the line", "");
    return op;
  }

  template <typename Spec>
  Status ReadSlots(std::vector<Spec>& slots, bool operands) {
    if (c_.Peek() == '|' || c_.Peek() == '\n' || c_.AtEnd()) return Status::Ok();  // none
    while (true) {
      const size_t at = c_.pos();
      std::string_view slot = Field(",|");
      Spec spec;
      if (slot.ends_with("[]")) {
        spec.variadic = true;
        slot.remove_suffix(2);
      }
      if constexpr (std::is_same_v<Spec, OperandSpec>) {
        if (operands && (slot.ends_with('#') || slot.ends_with('$'))) {
          spec.int_array = slot.back() == '#';
          slot.remove_suffix(1);
        }
      }
      if (slot.ends_with('?')) {
        spec.optional = true;
        slot.remove_suffix(1);
      }
      if (slot.empty()) return c_.ErrorAt(at, "expected a slot name");
      spec.name = std::string(slot);
      slots.push_back(std::move(spec));
      if (!c_.Consume(",")) break;
    }
    return Status::Ok();
  }

  // `coo,dense` up to `end`; empty when `end` comes at once.
  Status ReadKinds(std::vector<CatalogTensorKind>& kinds, std::string_view end) {
    if (c_.AtEnd() || c_.Peek() == end[0]) return Status::Ok();
    while (true) {
      const size_t at = c_.pos();
      const std::string_view word = Field(std::string(",") + std::string(end));
      if (word == "dense") {
        kinds.push_back(CatalogTensorKind::kDense);
      } else if (word == "coo") {
        kinds.push_back(CatalogTensorKind::kSparseCoo);
      } else if (word == "csr") {
        kinds.push_back(CatalogTensorKind::kSparseCsr);
      } else {
        return c_.ErrorAt(at, fmt::format("unknown tensor kind '{}' (dense, coo or csr)", word));
      }
      if (!c_.Consume(",")) return Status::Ok();
    }
  }

  Status ReadAttributes(std::vector<AttrSpec>& attrs) {
    while (c_.Peek() != '\n' && c_.Peek() != '|' && !c_.AtEnd()) {
      const std::string_view name = c_.LexIdent();
      if (name.empty()) return c_.Expected("an attribute name", "");
      IRM_RETURN_IF_ERROR(c_.Expect(":", "after the attribute name"));
      const size_t kind_at = c_.pos();
      const std::string_view code = Field("=;|");
      const auto* kind = std::find_if(std::begin(kKindCodes), std::end(kKindCodes),
                                      [code](const KindCode& k) { return k.code == code; });
      if (kind == std::end(kKindCodes)) {
        return c_.ErrorAt(kind_at, fmt::format("unknown attribute kind '{}'", code));
      }
      AttrSpec spec;
      spec.name = std::string(name);
      spec.kind = kind->kind;
      if (kind->kind == AttrKind::kArray) {
        spec.element_kind = kind->untyped_kind;
      } else {
        spec.untyped_kind = kind->untyped_kind;
      }
      if (!c_.Consume("=")) {
        spec.required = true;
      } else if (!c_.Consume("?")) {
        AttrExpectation expect;
        expect.kind = spec.kind != AttrKind::kNull ? spec.kind : spec.untyped_kind;
        expect.element = spec.element_kind;
        expect.what = fmt::format("the default of '{}'", name);
        IRM_ASSIGN_OR_RETURN(spec.default_value, ParseAttributeAt(c_, expect));
      }
      attrs.push_back(std::move(spec));
      if (!c_.Consume(";")) break;
    }
    return Status::Ok();
  }

  TextCursor c_;
};

}  // namespace

std::string_view CatalogCategoryName(CatalogCategory category) {
  switch (category) {
    case CatalogCategory::kForward:
      return "forward";
    case CatalogCategory::kBackward:
      return "backward";
    case CatalogCategory::kFused:
      return "fused";
    case CatalogCategory::kSparse:
      return "sparse";
    case CatalogCategory::kInplace:
      return "inplace";
  }
  return "?";
}

std::string_view PdOpCatalogText() { return kCatalogText; }

std::string_view PdOpCatalogHeader() {
  const size_t start = kCatalogText.find('#');
  if (start == std::string_view::npos) return {};
  const size_t end = kCatalogText.find('\n', start);
  return kCatalogText.substr(start + 2, end == std::string_view::npos ? end : end - start - 2);
}

StatusOr<std::vector<CatalogOp>> ParsePdOpCatalog(std::string_view text, const std::string& file) {
  CatalogReader reader(text, file);
  return reader.Read();
}

namespace {

// The compiled-in catalog, read once: registries are built often (every test builds its own).
const StatusOr<std::vector<CatalogOp>>& CompiledCatalog() {
  static const auto* const kCatalog =
      new StatusOr<std::vector<CatalogOp>>(ParsePdOpCatalog(kCatalogText));
  return *kCatalog;
}

}  // namespace

const std::vector<CatalogOp>& PdOpCatalog() {
  static const std::vector<CatalogOp> kNone;
  const StatusOr<std::vector<CatalogOp>>& catalog = CompiledCatalog();
  return catalog.ok() ? *catalog : kNone;
}

Status RegisterPdOpCatalog(OpRegistry& registry, std::vector<std::string>* skipped) {
  // The catalog is checked in and read by its tests: a bad one is a build defect, reported here.
  const StatusOr<std::vector<CatalogOp>>& catalog = CompiledCatalog();
  if (!catalog.ok()) return catalog.status();
  for (const CatalogOp& op : *catalog) {
    if (registry.Lookup(op.info.name) != nullptr) {
      if (skipped != nullptr) skipped->push_back(op.info.name);
      continue;
    }
    IRM_RETURN_IF_ERROR(registry.Register(op.info));
  }
  return Status::Ok();
}

const CatalogOp* FindPdOpCatalogOp(std::string_view op_name) {
  static const auto* const kByName = [] {
    auto* by_name = new std::unordered_map<std::string_view, const CatalogOp*>();
    for (const CatalogOp& op : PdOpCatalog()) by_name->emplace(op.info.name, &op);
    return by_name;
  }();
  auto it = kByName->find(op_name);
  return it != kByName->end() ? it->second : nullptr;
}

bool IsPdOpCatalogOnly(std::string_view op_name) {
  static const auto* const kCatalogOnly = [] {
    auto* names = new std::unordered_set<std::string>();
    for (const CatalogOp& op : PdOpCatalog()) names->insert(op.info.name);
    for (const std::string& hand : PdOpHandRowNames()) names->erase(hand);
    return names;
  }();
  return kCatalogOnly->contains(std::string(op_name));
}

}  // namespace irm::newir
