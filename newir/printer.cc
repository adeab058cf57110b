// The PIR text printer: generic op lines, nested regions, value naming in first-print order, and
// the custom forms Paddle uses for pd_op.if and pd_op.while.
#include "newir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "newir/block.h"

namespace irm::newir {
namespace {

// Paddle never prints these: the call stack is long and machine-specific, the symbolic shape is
// derived data.
bool IsHiddenAttribute(std::string_view name) {
  return name == "op_callstack" || name == "sym_shape_str";
}

// The same spelling as Attribute::ToString uses for floats, so both styles agree on values.
template <typename F>
std::string FloatText(F v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return fmt::format("{}", v);
}

std::string CurrentAttributeText(const Attribute& attr) {
  switch (attr.kind()) {
    case AttrKind::kInt32:
      return fmt::format("{}", *attr.AsInt32());
    case AttrKind::kInt64:
      return fmt::format("{}", *attr.AsInt64());
    case AttrKind::kFloat:
      return FloatText(*attr.AsFloat());
    case AttrKind::kDouble:
      return FloatText(*attr.AsDouble());
    case AttrKind::kArray: {
      std::vector<std::string> items;
      for (const Attribute& a : *attr.AsArray()) items.push_back(CurrentAttributeText(a));
      return fmt::format("[{}]", fmt::join(items, ","));
    }
    case AttrKind::kType:
      return attr.AsType()->ToString(TypeStyle::kCurrent);
    case AttrKind::kIntArray:
      return fmt::format("[{}]", fmt::join(attr.AsIntArray()->values, ","));
    case AttrKind::kDataType:
      return DataTypeName(*attr.AsDataType());
    case AttrKind::kPlace:
      return attr.AsPlace()->ToString();
    case AttrKind::kDataLayout:
      return DataLayoutName(*attr.AsDataLayout());
    case AttrKind::kScalar: {
      const ScalarValue& s = *attr.AsScalar();
      if (const double* d = std::get_if<double>(&s.value)) return FloatText(*d);
      if (const int64_t* i = std::get_if<int64_t>(&s.value)) return fmt::format("{}", *i);
      return std::get<bool>(s.value) ? "true" : "false";
    }
    default:
      // Null, bool, string and the dist attributes print the same in both styles.
      return attr.ToString();
  }
}

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string Take() { return std::move(out_); }
  void Newline() { out_ += '\n'; }

  // `{`, the keyword arguments, one line per op, `}`. Unlike Paddle, no newline after the brace:
  // the caller adds it, so a region op is not followed by an empty line.
  void PrintBlock(const Block& block) {
    Indent();
    out_ += "{\n";
    ++level_;
    // Paddle's PrintBlock: `^kw:` on its own line, then one keyword argument per line, one level
    // deeper.
    if (block.num_kwargs() > 0) {
      Indent();
      out_ += "^kw:\n";
      ++level_;
      for (size_t i = 0; i < block.num_kwargs(); ++i) {
        Indent();
        PrintValue(block.kwarg(i));
        out_ += '\n';
      }
      --level_;
    }
    for (const Operation& op : block) {
      Indent();
      PrintOp(op);
      out_ += '\n';
    }
    --level_;
    Indent();
    out_ += '}';
  }

  void PrintOp(const Operation& op) {
    if (!options_.generic) {
      if (op.name() == "pd_op.if" && PrintIf(op)) return;
      if (op.name() == "pd_op.while" && PrintWhile(op)) return;
    }
    PrintGeneric(op);
  }

 private:
  void Indent() { out_.append(4 * level_, ' '); }

  void PrintValue(const Value* v) {
    if (v == nullptr) {
      out_ += "<<NULL VALUE>>";
      return;
    }
    if (auto it = names_.find(v); it != names_.end()) {
      out_ += it->second;
      return;
    }
    std::string name;
    switch (v->kind()) {
      case Value::Kind::kOpResult:
        name = fmt::format("%{}", next_result_++);
        break;
      case Value::Kind::kBlockArgument:
        name = fmt::format("%arg_{}", next_arg_++);
        break;
      case Value::Kind::kBlockKwarg:
        name = "%kwarg_" + v->kwarg_name();
        break;
    }
    out_ += name;
    names_.emplace(v, std::move(name));
    // A block argument's attributes travel with its first appearance, as Paddle prints them
    // (` {}` when there are none).
    if (v->IsBlockArgument()) {
      out_ += " ";
      PrintAttributeMap(v->attributes());
    }
  }

  void PrintValueList(const std::vector<Value*>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ", ";
      PrintValue(values[i]);
    }
  }

  void PrintType(const Type& type) { out_ += type.ToString(options_.style); }

  // `{a:1,b:2}`, sorted by name (the map's order), hidden names left out.
  void PrintAttributeMap(const AttributeMap& attrs) {
    out_ += '{';
    bool first = true;
    for (const auto& [name, value] : attrs) {
      if (IsHiddenAttribute(name)) continue;
      if (!first) out_ += ',';
      first = false;
      out_ += name;
      out_ += ':';
      out_ += PrintAttribute(value, options_.style);
    }
    out_ += '}';
  }

  // `(%0, %1) = "dialect.op" [id:N]`
  void PrintHead(const Operation& op) {
    out_ += '(';
    PrintValueList(op.results());
    out_ += ") = \"";
    out_ += op.name();
    out_ += '"';
    if (options_.debug_info) out_ += fmt::format(" [id:{}]", op.id());
  }

  void PrintResultTypes(const Operation& op) {
    for (size_t i = 0; i < op.num_results(); ++i) {
      if (i > 0) out_ += ", ";
      PrintType(op.result(i)->type());
    }
  }

  void PrintGeneric(const Operation& op) {
    PrintHead(op);
    out_ += " (";
    PrintValueList(op.operands());
    out_ += ") ";
    PrintAttributeMap(op.attributes());
    out_ += " : (";
    for (size_t i = 0; i < op.num_operands(); ++i) {
      if (i > 0) out_ += ", ";
      const Value* v = op.operand(i);
      PrintType(v != nullptr ? v->type() : Type());
    }
    out_ += ") -> ";
    PrintResultTypes(op);
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        out_ += '\n';
        PrintBlock(region.block(b));
      }
    }
  }

  // Ops of `block` one level deeper than the current one, each on its own line.
  void PrintBlockBody(const Block& block) {
    ++level_;
    for (const Operation& op : block) {
      Indent();
      PrintOp(op);
      out_ += '\n';
    }
    --level_;
  }

  // Paddle's IfOp::Print: `(%r) = "pd_op.if" (%cond) {attrs} -> ty {` true ops `} else {` false
  // ops `}`. Only a well-formed if (two single-block regions without block arguments) takes this
  // form; anything else falls back to the generic form so nothing is hidden.
  bool PrintIf(const Operation& op) {
    if (op.num_regions() != 2) return false;
    for (size_t r = 0; r < 2; ++r) {
      const Region& region = op.region(r);
      if (region.num_blocks() != 1 || region.front().num_arguments() != 0 ||
          region.front().num_kwargs() != 0) {
        return false;
      }
    }
    PrintHead(op);
    out_ += " (";
    PrintValueList(op.operands());
    out_ += ") ";
    PrintAttributeMap(op.attributes());
    out_ += " -> ";
    PrintResultTypes(op);
    out_ += " {\n";
    PrintBlockBody(op.region(0).front());
    Indent();
    out_ += "} else {\n";
    PrintBlockBody(op.region(1).front());
    Indent();
    out_ += '}';
    return true;
  }

  // Paddle's WhileOp::Print: `(%r) = "pd_op.while" (cond=%c, inputs=%a, %b) {`, a `^` line with
  // the body's arguments, the body ops (ending with cf.yield), `}`. Needs the condition operand
  // and one single-block body region.
  bool PrintWhile(const Operation& op) {
    if (op.num_operands() < 1 || op.num_regions() != 1 || op.region(0).num_blocks() != 1 ||
        op.region(0).front().num_kwargs() != 0) {
      return false;
    }
    const Block& body = op.region(0).front();
    PrintHead(op);
    out_ += " (cond=";
    PrintValue(op.operand(0));
    out_ += ", inputs=";
    for (size_t i = 1; i < op.num_operands(); ++i) {
      if (i > 1) out_ += ", ";
      PrintValue(op.operand(i));
    }
    out_ += ") {\n";
    ++level_;
    Indent();
    out_ += '^';
    for (size_t i = 0; i < body.num_arguments(); ++i) {
      if (i > 0) out_ += ", ";
      PrintValue(body.argument(i));
    }
    out_ += '\n';
    --level_;
    PrintBlockBody(body);
    Indent();
    out_ += '}';
    return true;
  }

  const PrintOptions& options_;
  std::string out_;
  int level_ = 0;
  std::unordered_map<const Value*, std::string> names_;
  size_t next_result_ = 0;
  size_t next_arg_ = 0;
};

}  // namespace

std::string PrintAttribute(const Attribute& attr, TypeStyle style) {
  return style == TypeStyle::kTyped ? attr.ToString() : CurrentAttributeText(attr);
}

std::string PrintProgram(const Program& program, const PrintOptions& options) {
  Printer printer(options);
  const Operation& module = program.module();
  // Paddle prints only the module's regions, not the module op itself.
  for (size_t r = 0; r < module.num_regions(); ++r) {
    for (size_t b = 0; b < module.region(r).num_blocks(); ++b) {
      printer.PrintBlock(module.region(r).block(b));
      printer.Newline();
    }
  }
  return printer.Take();
}

std::string PrintOperation(const Operation& op, const PrintOptions& options) {
  Printer printer(options);
  printer.PrintOp(op);
  return printer.Take();
}

}  // namespace irm::newir
