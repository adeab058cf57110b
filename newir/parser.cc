// The program-level PIR text parser: blocks with their argument headers and keyword arguments,
// generic op lines, the region-layout annotation, and the custom forms of pd_op.if and
// pd_op.while. Values and attributes come from parse_values.h; recursion is bounded by the
// cursor's depth counter shared by blocks, arrays and types.
#include "newir/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <vector>

#include "newir/block.h"
#include "newir/parse_values.h"

namespace irm::newir {
namespace {

constexpr auto IsDigit = TextCursor::IsDigit;
constexpr auto IsIdentStart = TextCursor::IsIdentStart;

// The names ops had in older prints, read as the op they became: `builtin.get_parameter` was
// renamed `builtin.parameter` by Paddle PR #59239 (November 2023).
std::string CurrentOpName(std::string name) {
  if (name == "builtin.get_parameter") return "builtin.parameter";
  return name;
}

using ResultNames = std::vector<std::pair<std::string_view, size_t>>;

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const ParseOptions& options,
         OpLines* op_lines)
      : c_(text, file), options_(options), op_lines_(op_lines) {}

  StatusOr<Program> ParseWholeProgram() {
    Program program;
    c_.SkipWs();
    Record(&program.module(), c_.pos());
    IRM_RETURN_IF_ERROR(ParseBlock(program.block()));
    c_.SkipWs();
    if (!c_.AtEnd()) return c_.Expected("end of input", "after the program");
    return program;
  }

 private:
  // ---- Values ---------------------------------------------------------------------------------

  std::string_view LexValueName() {
    const size_t start = c_.pos();
    if (c_.Peek() != '%') return {};
    c_.set_pos(start + 1);
    while (IsIdentStart(c_.Peek()) || IsDigit(c_.Peek())) c_.set_pos(c_.pos() + 1);
    if (c_.pos() == start + 1) {
      c_.set_pos(start);
      return {};
    }
    return c_.Slice(start, c_.pos());
  }

  Status Define(std::string_view name, size_t at, Value* value) {
    if (!values_.emplace(std::string(name), value).second) {
      return c_.ErrorAt(at, fmt::format("redefinition of value '{}'", name));
    }
    return Status::Ok();
  }

  // ` {attrs}` after a block argument or keyword argument, then our optional ` : type`.
  Status ParseArgumentTail(Value* arg, bool* typed) {
    IRM_ASSIGN_OR_RETURN(AttributeMap attrs, ParseAttributeMap("for block argument", nullptr, ""));
    for (auto& [k, v] : attrs) arg->SetAttribute(k, v);
    *typed = c_.Consume(" : ");
    if (*typed) {
      IRM_ASSIGN_OR_RETURN(Type t, ParseTypeAt(c_));
      arg->set_type(std::move(t));
    }
    return Status::Ok();
  }

  // A read of a value; `%arg_N {attrs}` on first appearance defines a block argument of `block`.
  StatusOr<Value*> ParseOperand(Block& block) {
    if (c_.Consume("<<NULL VALUE>>")) return static_cast<Value*>(nullptr);
    const size_t at = c_.pos();
    const std::string_view name = LexValueName();
    if (name.empty()) return c_.Expected("a value", "");
    if (c_.LookingAt(" {") && name.starts_with("%arg_")) {
      Value* arg = block.AddArgument(Type());
      IRM_RETURN_IF_ERROR(Define(name, at, arg));
      c_.set_pos(c_.pos() + 1);
      IRM_ASSIGN_OR_RETURN(AttributeMap attrs,
                           ParseAttributeMap("for block argument", nullptr, ""));
      for (auto& [k, v] : attrs) arg->SetAttribute(k, v);
      return arg;
    }
    auto it = values_.find(std::string(name));
    if (it == values_.end()) {
      return c_.ErrorAt(at, fmt::format("use of undefined value '{}'", name));
    }
    return it->second;
  }

  // After `^`: `%arg_0 {…}[ : type], %arg_1 {…}[ : type]` on one line, or the 2023 form without
  // attributes, `%arg_0, %arg_1` (pd_op.while's printer from Paddle PR #58089, October 2023,
  // before block arguments printed their attributes). An argument without a type takes
  // defaults[i] (the pd_op.while input it stands for) when there is one.
  Status ParseArgumentHeader(Block& block, const std::vector<Type>& defaults) {
    if (c_.Peek() != '%') return Status::Ok();
    while (true) {
      const size_t at = c_.pos();
      const std::string_view name = LexValueName();
      if (name.empty()) return c_.Expected("a block argument", "");
      const size_t index = block.num_arguments();
      Value* arg = block.AddArgument(index < defaults.size() ? defaults[index] : Type());
      IRM_RETURN_IF_ERROR(Define(name, at, arg));
      if (c_.LookingAt(" {")) {
        c_.set_pos(c_.pos() + 1);
        bool typed = false;
        IRM_RETURN_IF_ERROR(ParseArgumentTail(arg, &typed));
      }
      if (c_.Consume(", ")) continue;
      if (c_.Peek() == '\n' || c_.Peek() == '\r' || c_.AtEnd()) return Status::Ok();
      return c_.Expected("' {'", "after a block argument");
    }
  }

  // ---- Attributes -----------------------------------------------------------------------------

  // `{name:value,…}` (printed sorted; any order is accepted, duplicates are not). Values without a
  // kind prefix take the kind `info`'s table gives the attribute.
  StatusOr<AttributeMap> ParseAttributeMap(std::string_view context, const OpInfo* info,
                                           std::string_view op_name) {
    AttributeMap attrs;
    IRM_RETURN_IF_ERROR(c_.Expect("{", context));
    if (c_.Consume("}")) return attrs;
    while (true) {
      const size_t at = c_.pos();
      const std::string_view name = c_.LexIdent();
      if (name.empty()) return c_.Expected("an attribute name", "");
      IRM_RETURN_IF_ERROR(c_.Expect(":", "after attribute name"));
      AttrExpectation expect;
      if (const AttrSpec* spec = info != nullptr ? info->FindAttribute(name) : nullptr) {
        expect.kind = spec->kind != AttrKind::kNull ? spec->kind : spec->untyped_kind;
        expect.element = spec->element_kind;
        if (const AttributeSpan* items = spec->default_value.AsArray();
            expect.element == AttrKind::kNull && items != nullptr && !items->empty()) {
          expect.element = items->front().kind();
        }
        expect.what = fmt::format("attribute '{}' of '{}'", name, op_name);
      }
      IRM_ASSIGN_OR_RETURN(Attribute a, ParseAttributeAt(c_, expect));
      if (!attrs.emplace(std::string(name), std::move(a)).second) {
        return c_.ErrorAt(at, fmt::format("duplicate attribute '{}'", name));
      }
      if (c_.Consume("}")) return attrs;
      IRM_RETURN_IF_ERROR(c_.Expect(",", "or '}' in attribute map"));
    }
  }

  // ---- Blocks ---------------------------------------------------------------------------------

  // The ops of `block` up to (not including) the closing `}`.
  Status ParseOps(Block& block) {
    while (true) {
      c_.SkipWs();
      if (c_.AtEnd()) return c_.Expected("'}'", "to close block");
      if (c_.Peek() == '}') return Status::Ok();
      IRM_RETURN_IF_ERROR(ParseOp(block));
    }
  }

  // `{` [`^` argument header] [`^kw:` keyword arguments] ops `}`.
  Status ParseBlock(Block& block) {
    IRM_RETURN_IF_ERROR(c_.EnterBlock());
    IRM_RETURN_IF_ERROR(c_.Expect("{", "to open block"));
    c_.SkipWs();
    if (c_.Peek() == '^' && !c_.LookingAt("^kw:")) {
      c_.Consume("^");
      IRM_RETURN_IF_ERROR(ParseArgumentHeader(block, {}));
      c_.SkipWs();
    }
    if (c_.Consume("^kw:")) {
      while (true) {
        c_.SkipWs();
        if (!c_.LookingAt("%kwarg_")) break;
        const size_t at = c_.pos();
        const std::string_view name = LexValueName();
        const std::string kw(name.substr(7));
        if (kw.empty()) return c_.ErrorAt(at, "keyword argument without a name");
        c_.SkipSpaces();
        StatusOr<Value*> v = block.AddKwarg(kw, Type());
        if (!v.ok()) return c_.ErrorAt(at, v.status().message());
        IRM_RETURN_IF_ERROR(Define(name, at, *v));
        bool typed = false;
        IRM_RETURN_IF_ERROR(ParseArgumentTail(*v, &typed));
      }
    }
    IRM_RETURN_IF_ERROR(ParseOps(block));
    c_.set_pos(c_.pos() + 1);  // '}'
    c_.LeaveBlock();
    return Status::Ok();
  }

  // The body of a custom-form region after its `{`: ops, then `}`.
  Status ParseBranch(Block& block) {
    IRM_RETURN_IF_ERROR(c_.EnterBlock());
    IRM_RETURN_IF_ERROR(ParseOps(block));
    c_.set_pos(c_.pos() + 1);  // '}'
    c_.LeaveBlock();
    return Status::Ok();
  }

  // Counts the `{ … }` groups that follow (one single-block region each) without parsing them, so
  // that the op can be created with its regions before their contents are read.
  size_t CountRegions() const {
    const std::string_view text = c_.Rest();
    size_t p = 0;
    size_t count = 0;
    // A comment runs to the end of its line; its braces are not the program's.
    const auto skip_comment = [&text](size_t& at) {
      if (text.substr(at, 2) != "//") return false;
      while (at < text.size() && text[at] != '\n') ++at;
      return true;
    };
    while (true) {
      while (p < text.size()) {
        if (text[p] == ' ' || text[p] == '\n' || text[p] == '\t' || text[p] == '\r') {
          ++p;
        } else if (!skip_comment(p)) {
          break;
        }
      }
      if (p >= text.size() || text[p] != '{') return count;
      int level = 0;
      for (; p < text.size(); ++p) {
        const char ch = text[p];
        if (ch == '"') {
          for (++p; p < text.size() && text[p] != '"'; ++p) {
            if (text[p] == '\\') ++p;
          }
        } else if (skip_comment(p)) {
          if (p >= text.size()) break;
        } else if (ch == '{') {
          ++level;
        } else if (ch == '}' && --level == 0) {
          ++p;
          break;
        }
      }
      if (level != 0) return count + 1;  // unterminated: the parse reports it
      ++count;
    }
  }

  // ---- Ops ------------------------------------------------------------------------------------

  // Result types up to the end of the line (a region or the next op starts on the next one).
  StatusOr<std::vector<Type>> ParseResultTypes() {
    std::vector<Type> types;
    c_.SkipSpaces();
    if (!(IsIdentStart(c_.Peek()) || c_.LookingAt("<<NULL TYPE>>"))) return types;
    while (true) {
      IRM_ASSIGN_OR_RETURN(Type t, ParseTypeAt(c_));
      types.push_back(std::move(t));
      if (!c_.Consume(", ")) return types;
    }
  }

  // Gives typeless (block and keyword) arguments the type their slot says; checks the others.
  Status MatchOperandTypes(const std::vector<Value*>& operands, const std::vector<Type>& types,
                           const std::vector<size_t>& at, std::string_view op_name) {
    for (size_t i = 0; i < operands.size(); ++i) {
      Value* v = operands[i];
      if (v == nullptr) continue;
      if (v->type().IsNull()) {
        v->set_type(types[i]);
      } else if (v->type() != types[i]) {
        return c_.ErrorAt(
            at[i], fmt::format("operand {} of '{}' has type {}, but the type list says {}", i,
                               op_name, v->type().ToString(), types[i].ToString()));
      }
    }
    return Status::Ok();
  }

  // `[regions:1,0,2]` after the result types: the block count of every region (printer.h).
  StatusOr<std::optional<std::vector<size_t>>> ParseRegionLayout() {
    c_.SkipSpaces();
    if (!c_.Consume("[regions:")) return std::optional<std::vector<size_t>>();
    std::vector<size_t> counts;
    while (true) {
      IRM_ASSIGN_OR_RETURN(uint32_t n, c_.ParseInt<uint32_t>("a block count"));
      counts.push_back(n);
      if (c_.Consume("]")) return std::optional<std::vector<size_t>>(std::move(counts));
      IRM_RETURN_IF_ERROR(c_.Expect(",", "or ']' in the region layout"));
    }
  }

  // Notes where `op` starts, when the caller asked for op lines. Ops are recorded in text order
  // (an op before the ops of its regions), so the line count only moves forward.
  void Record(const Operation* op, size_t at) {
    if (op_lines_ == nullptr) return;
    const std::string_view counted = c_.Slice(line_pos_, at);
    line_ += static_cast<int>(std::count(counted.begin(), counted.end(), '\n'));
    line_pos_ = at;
    (*op_lines_)[op] = line_;
  }

  Status ParseOp(Block& block) {
    const size_t op_at = c_.pos();
    ResultNames results;
    IRM_RETURN_IF_ERROR(c_.Expect("(", "to start an op (its result list)"));
    if (!c_.Consume(")")) {
      while (true) {
        const size_t at = c_.pos();
        const std::string_view name = LexValueName();
        if (name.empty()) return c_.Expected("a result name", "");
        results.emplace_back(name, at);
        if (c_.Consume(")")) break;
        IRM_RETURN_IF_ERROR(c_.Expect(", ", "or ')' after result name"));
      }
    }
    c_.SkipSpaces();
    IRM_RETURN_IF_ERROR(c_.Expect("=", "after result list"));
    c_.SkipSpaces();
    const size_t name_at = c_.pos();
    // Custom printers of other dialects write the name bare: CINN's `cinn_op.fusion () -> ty {`
    // (early-2024 prints, Paddle PR #62130's IR dumps).
    const bool bare_name = IsIdentStart(c_.Peek());
    std::string op_name;
    if (bare_name) {
      op_name = std::string(c_.LexIdent());
      if (op_name.find('.') == std::string::npos) {
        return c_.ErrorAt(name_at,
                          fmt::format("expected an op name in quotes, found '{}'", op_name));
      }
    } else {
      if (c_.Peek() != '"') return c_.Expected("an op name in quotes", "");
      IRM_ASSIGN_OR_RETURN(op_name, c_.ParseString());
    }
    op_name = CurrentOpName(std::move(op_name));
    // Op names are `dialect.op` identifiers; the printer writes them unescaped, so anything else
    // could not survive a print/parse round trip.
    const bool identifier =
        !op_name.empty() && std::all_of(op_name.begin(), op_name.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
        });
    if (!identifier) {
      return c_.ErrorAt(name_at, "op names are made of letters, digits, '_' and '.'");
    }
    const OpInfo* info = options_.registry->Lookup(op_name);
    if (info == nullptr && !options_.allow_unregistered) {
      return c_.ErrorAt(
          name_at,
          fmt::format("unknown op '{}' (--allow-unregistered keeps it opaquely)", op_name));
    }
    c_.SkipSpaces();
    if (c_.Consume("[id:")) {  // debug info: read and dropped
      IRM_RETURN_IF_ERROR(c_.ParseInt<uint64_t>("an op id").status());
      IRM_RETURN_IF_ERROR(c_.Expect("]", "after op id"));
      c_.SkipSpaces();
    }
    IRM_RETURN_IF_ERROR(c_.Expect("(", "before operand list"));
    if (op_name == "pd_op.while" && c_.LookingAt("cond=")) {
      return ParseWhile(block, op_name, info, results, op_at);
    }
    std::vector<Value*> operands;
    std::vector<size_t> operand_at;
    if (!c_.Consume(")")) {
      while (true) {
        operand_at.push_back(c_.pos());
        IRM_ASSIGN_OR_RETURN(Value * v, ParseOperand(block));
        operands.push_back(v);
        c_.SkipSpaces();
        if (c_.Consume(")")) break;
        if (!c_.Consume(", ")) return c_.Expected("')'", "after operand list");
      }
    }
    c_.SkipSpaces();
    // A custom form without an attribute map (CINN's `() -> ty {`) has regions after its types.
    const bool no_attrs = bare_name && c_.LookingAt("->");
    AttributeMap attrs;
    if (!no_attrs) {
      IRM_ASSIGN_OR_RETURN(attrs, ParseAttributeMap("for op attributes", info, op_name));
      c_.SkipSpaces();
    }
    const bool if_form = op_name == "pd_op.if" && c_.LookingAt("->");
    const bool custom_form = if_form || (bare_name && c_.LookingAt("->"));
    if (!custom_form) {
      IRM_RETURN_IF_ERROR(c_.Expect(":", "before the op's type list"));
      c_.SkipSpaces();
      const size_t types_at = c_.pos();
      IRM_RETURN_IF_ERROR(c_.Expect("(", "to open operand type list"));
      std::vector<Type> operand_types;
      if (!c_.Consume(")")) {
        while (true) {
          IRM_ASSIGN_OR_RETURN(Type t, ParseTypeAt(c_));
          operand_types.push_back(std::move(t));
          if (c_.Consume(")")) break;
          IRM_RETURN_IF_ERROR(c_.Expect(", ", "or ')' in operand type list"));
        }
      }
      if (operand_types.size() != operands.size()) {
        return c_.ErrorAt(types_at, fmt::format("'{}' has {} operands but {} operand types",
                                                op_name, operands.size(), operand_types.size()));
      }
      IRM_RETURN_IF_ERROR(MatchOperandTypes(operands, operand_types, operand_at, op_name));
    }
    c_.SkipSpaces();
    IRM_RETURN_IF_ERROR(c_.Expect("->", "before result types"));
    c_.SkipSpaces();
    const size_t rtypes_at = c_.pos();
    IRM_ASSIGN_OR_RETURN(std::vector<Type> result_types, ParseResultTypes());
    if (result_types.size() != results.size()) {
      return c_.ErrorAt(rtypes_at, fmt::format("'{}' has {} results but {} result types", op_name,
                                               results.size(), result_types.size()));
    }
    std::optional<std::vector<size_t>> layout;
    if (!custom_form) {
      IRM_ASSIGN_OR_RETURN(layout, ParseRegionLayout());
    }
    const size_t num_regions = if_form ? 2 : layout ? layout->size() : CountRegions();
    Operation* created = block.PushBack(
        Operation::Create(op_name, operands, result_types, std::move(attrs), num_regions, info));
    Record(created, op_at);
    for (size_t i = 0; i < results.size(); ++i) {
      IRM_RETURN_IF_ERROR(Define(results[i].first, results[i].second, created->result(i)));
    }
    if (if_form) {
      // 2023 prints put the true branch's `{` on a line of its own (pir_save_load.md's if).
      c_.SkipWs();
      IRM_RETURN_IF_ERROR(c_.Expect("{", "to open the true branch of pd_op.if"));
      IRM_RETURN_IF_ERROR(ParseBranch(created->region(0).AddBlock()));
      c_.SkipSpaces();
      IRM_RETURN_IF_ERROR(c_.Expect("else", "after the true branch of pd_op.if"));
      c_.SkipSpaces();
      IRM_RETURN_IF_ERROR(c_.Expect("{", "to open the false branch of pd_op.if"));
      return ParseBranch(created->region(1).AddBlock());
    }
    if (custom_form) {  // `{` ops `}` per region, without block headers
      for (size_t r = 0; r < num_regions; ++r) {
        c_.SkipWs();
        IRM_RETURN_IF_ERROR(c_.Expect("{", "to open a region"));
        IRM_RETURN_IF_ERROR(ParseBranch(created->region(r).AddBlock()));
      }
      return Status::Ok();
    }
    for (size_t r = 0; r < num_regions; ++r) {
      const size_t blocks = layout ? (*layout)[r] : 1;
      for (size_t b = 0; b < blocks; ++b) {
        c_.SkipWs();
        IRM_RETURN_IF_ERROR(ParseBlock(created->region(r).AddBlock()));
      }
    }
    return Status::Ok();
  }

  // `(cond=%c, inputs=%a, %b) [{attrs}] {` `^%arg_0 {…}, …` ops `}`; results and body arguments
  // take the inputs' types unless the header says otherwise.
  Status ParseWhile(Block& block, const std::string& op_name, const OpInfo* info,
                    const ResultNames& results, size_t op_at) {
    std::vector<Value*> operands;
    IRM_RETURN_IF_ERROR(c_.Expect("cond=", "in pd_op.while"));
    IRM_ASSIGN_OR_RETURN(Value * cond, ParseOperand(block));
    operands.push_back(cond);
    IRM_RETURN_IF_ERROR(c_.Expect(", inputs=", "after the pd_op.while condition"));
    if (!c_.Consume(")")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(Value * v, ParseOperand(block));
        operands.push_back(v);
        c_.SkipSpaces();
        if (c_.Consume(")")) break;
        if (!c_.Consume(", ")) return c_.Expected("')'", "after operand list");
      }
    }
    if (results.size() != operands.size() - 1) {
      return c_.Error(fmt::format("pd_op.while has {} results but {} loop inputs", results.size(),
                                  operands.size() - 1));
    }
    std::vector<Type> input_types;
    for (size_t i = 1; i < operands.size(); ++i) {
      input_types.push_back(operands[i] != nullptr ? operands[i]->type() : Type());
    }
    c_.SkipSpaces();
    AttributeMap attrs;
    // Our extension: the attributes Paddle's custom form leaves out (printer.h).
    if (c_.Peek() == '{' && (IsIdentStart(c_.Peek(1)) || c_.Peek(1) == '}')) {
      IRM_ASSIGN_OR_RETURN(attrs, ParseAttributeMap("for op attributes", info, op_name));
      c_.SkipSpaces();
    }
    IRM_RETURN_IF_ERROR(c_.Expect("{", "to open the pd_op.while body"));
    Operation* created = block.PushBack(
        Operation::Create(op_name, operands, input_types, std::move(attrs), 1, info));
    Record(created, op_at);
    for (size_t i = 0; i < results.size(); ++i) {
      IRM_RETURN_IF_ERROR(Define(results[i].first, results[i].second, created->result(i)));
    }
    Block& body = created->region(0).AddBlock();
    c_.SkipWs();
    IRM_RETURN_IF_ERROR(c_.Expect("^", "before the pd_op.while body arguments"));
    IRM_RETURN_IF_ERROR(ParseArgumentHeader(body, input_types));
    return ParseBranch(body);
  }

  TextCursor c_;
  const ParseOptions& options_;
  OpLines* op_lines_;
  size_t line_pos_ = 0;  // Record has counted the lines up to here
  int line_ = 1;
  std::unordered_map<std::string, Value*> values_;
};

template <typename T>
StatusOr<T> Whole(TextCursor& c, StatusOr<T> v) {
  if (!v.ok()) return v;
  if (!c.AtEnd()) return c.Expected("end of input", "");
  return v;
}

}  // namespace

StatusOr<Program> ParseProgram(std::string_view text, const std::string& file,
                               const ParseOptions& options) {
  return ParseProgram(text, file, options, nullptr);
}

StatusOr<Program> ParseProgram(std::string_view text, const std::string& file,
                               const ParseOptions& options, OpLines* op_lines) {
  Parser parser(text, file, options, op_lines);
  return parser.ParseWholeProgram();
}

StatusOr<Attribute> ParseAttribute(std::string_view text, const std::string& file,
                                   AttrKind expected) {
  TextCursor c(text, file);
  AttrExpectation expect;
  expect.kind = expected;
  expect.what = "the attribute";
  return Whole(c, ParseAttributeAt(c, expect));
}

StatusOr<Type> ParseType(std::string_view text, const std::string& file) {
  TextCursor c(text, file);
  return Whole(c, ParseTypeAt(c));
}

}  // namespace irm::newir
