// The PIR program printer: blocks, generic op lines, value naming in first-print order, the custom
// forms of pd_op.if and pd_op.while, and the extensions (printer.h) that keep the text lossless —
// decided by a pass over the printed ops that finds where each block argument is first read.
#include "newir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>
#include <unordered_map>
#include <vector>

#include "newir/block.h"
#include "newir/text_print.h"

namespace irm::newir {

bool IsHiddenAttribute(std::string_view name) {
  return name == "op_callstack" || name == "sym_shape_str";
}

namespace {

bool HasVisibleAttributes(const AttributeMap& attrs) {
  for (const auto& [name, value] : attrs) {
    if (!IsHiddenAttribute(name)) return true;
  }
  return false;
}

enum class OpForm { kGeneric, kIf, kWhile };

// Paddle's IfOp::Print form, for an if with two single-block regions without arguments.
bool FitsIfForm(const Operation& op) {
  if (op.name() != "pd_op.if" || op.num_regions() != 2) return false;
  for (size_t r = 0; r < 2; ++r) {
    const Region& region = op.region(r);
    if (region.num_blocks() != 1 || region.front().num_arguments() != 0 ||
        region.front().num_kwargs() != 0) {
      return false;
    }
  }
  return true;
}

Type InputType(const Operation& op, size_t i) {
  return i + 1 < op.num_operands() && op.operand(i + 1) != nullptr ? op.operand(i + 1)->type()
                                                                   : Type();
}

// Paddle's WhileOp::Print form, for a while whose results have its loop inputs' types (the form
// prints no types but the body arguments' own).
bool FitsWhileForm(const Operation& op) {
  if (op.name() != "pd_op.while" || op.num_operands() < 1 || op.num_regions() != 1 ||
      op.region(0).num_blocks() != 1 || op.region(0).front().num_kwargs() != 0 ||
      op.num_results() + 1 != op.num_operands()) {
    return false;
  }
  for (size_t i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type() != InputType(op, i)) return false;
  }
  return true;
}

OpForm FormOf(const Operation& op, const PrintOptions& options) {
  if (options.generic) return OpForm::kGeneric;
  if (FitsIfForm(op)) return OpForm::kIf;
  if (FitsWhileForm(op)) return OpForm::kWhile;
  return OpForm::kGeneric;
}

bool HasRegularRegions(const Operation& op) {
  for (size_t r = 0; r < op.num_regions(); ++r) {
    if (op.region(r).num_blocks() != 1) return false;
  }
  return true;
}

// Where each block (keyword) argument is first read in print order: the block whose op line reads
// it, whether a type list follows (the generic form) and the order of first reads. The parser
// rebuilds an argument from that first read (parser.h), so the printer declares the arguments
// explicitly wherever the first read would not rebuild them.
class FirstReads {
 public:
  FirstReads(const PrintOptions& options) : options_(options) {}

  void Walk(const Block& block) {
    for (const Operation& op : block) Walk(op, block);
  }
  void Walk(const Operation& op, const Block& block) {
    const bool typed = FormOf(op, options_) == OpForm::kGeneric;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (v != nullptr && v->IsBlockArgument()) reads_.try_emplace(v, Read{&block, typed, next_++});
    }
    for (size_t r = 0; r < op.num_regions(); ++r) {
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) Walk(op.region(r).block(b));
    }
  }

  // Whether the positional arguments of `block` need the `^` header: each must be first read on
  // an op line of `block` itself, with a type list, in argument order.
  bool NeedsHeader(const Block& block) const {
    size_t previous = 0;
    for (size_t i = 0; i < block.num_arguments(); ++i) {
      auto it = reads_.find(block.argument(i));
      if (it == reads_.end() || it->second.block != &block || !it->second.typed ||
          (i > 0 && it->second.order <= previous)) {
        return true;
      }
      previous = it->second.order;
    }
    return false;
  }

  // Whether a keyword argument's type would not come back from its first read (a kwarg never
  // read with a type list stays typeless, which is right for a null type).
  bool NeedsType(const Value* kwarg) const {
    auto it = reads_.find(kwarg);
    return !kwarg->type().IsNull() && (it == reads_.end() || !it->second.typed);
  }

 private:
  struct Read {
    const Block* block;
    bool typed;
    size_t order;
  };
  const PrintOptions& options_;
  std::unordered_map<const Value*, Read> reads_;
  size_t next_ = 0;
};

class Printer {
 public:
  Printer(const PrintOptions& options, const FirstReads& reads)
      : options_(options), reads_(reads) {}

  std::string Take() { return std::move(out_); }

  // `{`, the argument header, the keyword arguments, one line per op, `}` and a newline.
  void PrintBlock(const Block& block) {
    Indent();
    out_ += "{\n";
    ++level_;
    if (block.num_arguments() > 0 && reads_.NeedsHeader(block)) {
      Indent();
      out_ += '^';
      for (size_t i = 0; i < block.num_arguments(); ++i) {
        if (i > 0) out_ += ", ";
        PrintValue(block.argument(i));
        out_ += " : ";
        PrintType(block.argument(i)->type());
      }
      out_ += '\n';
    }
    // Paddle's PrintBlock: `^kw:` on its own line, then one keyword argument per line, one level
    // deeper.
    if (block.num_kwargs() > 0) {
      Indent();
      out_ += "^kw:\n";
      ++level_;
      for (size_t i = 0; i < block.num_kwargs(); ++i) {
        const Value* kwarg = block.kwarg(i);
        Indent();
        PrintValue(kwarg);
        if (reads_.NeedsType(kwarg)) {
          out_ += " : ";
          PrintType(kwarg->type());
        }
        out_ += '\n';
      }
      --level_;
    }
    PrintOps(block);
    --level_;
    Indent();
    out_ += "}\n";
  }

  void PrintOp(const Operation& op) {
    switch (FormOf(op, options_)) {
      case OpForm::kIf:
        return PrintIf(op);
      case OpForm::kWhile:
        return PrintWhile(op);
      case OpForm::kGeneric:
        return PrintGeneric(op);
    }
  }

 private:
  void Indent() { out_.append(4 * level_, ' '); }

  // Each op of `block` on its own line at the current level.
  void PrintOps(const Block& block) {
    for (const Operation& op : block) {
      Indent();
      PrintOp(op);
      out_ += '\n';
    }
  }

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
    // A block argument's attributes travel with its first appearance, as Paddle prints them.
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

  void PrintType(const Type& type) { out_ += newir::PrintType(type, options_.style); }

  // `{a:1,b:2}`, sorted by name (the map's order), hidden names left out.
  void PrintAttributeMap(const AttributeMap& attrs) {
    out_ += '{';
    bool first = true;
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      if (IsHiddenAttribute(it->first)) continue;
      if (!first) out_ += ',';
      first = false;
      out_ += it->first;
      out_ += ':';
      if (const ProcessMesh* mesh = it->second.AsProcessMesh();
          mesh != nullptr && RunsOn(it, attrs)) {
        out_ += "(pd_dist.ProcessMesh){" + ProcessMeshText(*mesh) + "}";
      } else {
        out_ += PrintAttribute(it->second, options_.style);
      }
    }
    out_ += '}';
  }

  // Whether the attribute after `it` has a name that the bare process-mesh form would swallow.
  static bool RunsOn(AttributeMap::const_iterator it, const AttributeMap& attrs) {
    for (++it; it != attrs.end() && IsHiddenAttribute(it->first); ++it) {
    }
    if (it == attrs.end()) return false;
    return it->first == "dim_names" || it->first == "dims_mappings" || it->first == "dims_maping";
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
    if (!HasRegularRegions(op)) {
      std::vector<size_t> counts;
      for (size_t r = 0; r < op.num_regions(); ++r) counts.push_back(op.region(r).num_blocks());
      if (op.num_results() > 0) out_ += ' ';
      out_ += fmt::format("[regions:{}]", fmt::join(counts, ","));
    }
    // Paddle's PrintGeneralOperation: a newline, then every block, each ending with a newline.
    if (op.num_regions() > 0) out_ += '\n';
    for (size_t r = 0; r < op.num_regions(); ++r) {
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) PrintBlock(op.region(r).block(b));
    }
  }

  // Paddle's IfOp::Print.
  void PrintIf(const Operation& op) {
    PrintHead(op);
    out_ += " (";
    PrintValueList(op.operands());
    out_ += ") ";
    PrintAttributeMap(op.attributes());
    out_ += " -> ";
    PrintResultTypes(op);
    out_ += " {\n";
    ++level_;
    PrintOps(op.region(0).front());
    --level_;
    Indent();
    out_ += "} else {\n";
    ++level_;
    PrintOps(op.region(1).front());
    --level_;
    Indent();
    out_ += '}';
  }

  // Paddle's WhileOp::Print (its `{ ` before the newline and its `^` line at the op's level
  // included), with our attribute map and body argument types when they are needed.
  void PrintWhile(const Operation& op) {
    const Block& body = op.region(0).front();
    PrintHead(op);
    out_ += " (cond=";
    PrintValue(op.operand(0));
    out_ += ", inputs=";
    for (size_t i = 1; i < op.num_operands(); ++i) {
      if (i > 1) out_ += ", ";
      PrintValue(op.operand(i));
    }
    out_ += ") ";
    if (HasVisibleAttributes(op.attributes())) {
      PrintAttributeMap(op.attributes());
      out_ += ' ';
    }
    out_ += "{ \n";
    Indent();
    out_ += '^';
    for (size_t i = 0; i < body.num_arguments(); ++i) {
      if (i > 0) out_ += ", ";
      const Value* arg = body.argument(i);
      PrintValue(arg);
      if (arg->type() != InputType(op, i)) {
        out_ += " : ";
        PrintType(arg->type());
      }
    }
    out_ += '\n';
    ++level_;
    PrintOps(body);
    --level_;
    Indent();
    out_ += '}';
  }

  const PrintOptions& options_;
  const FirstReads& reads_;
  std::string out_;
  int level_ = 0;
  std::unordered_map<const Value*, std::string> names_;
  size_t next_result_ = 0;
  size_t next_arg_ = 0;
};

}  // namespace

std::string PrintProgram(const Program& program, const PrintOptions& options) {
  const Operation& module = program.module();
  FirstReads reads(options);
  for (size_t r = 0; r < module.num_regions(); ++r) {
    for (size_t b = 0; b < module.region(r).num_blocks(); ++b)
      reads.Walk(module.region(r).block(b));
  }
  Printer printer(options, reads);
  // Paddle prints only the module's regions, not the module op itself.
  for (size_t r = 0; r < module.num_regions(); ++r) {
    for (size_t b = 0; b < module.region(r).num_blocks(); ++b) {
      printer.PrintBlock(module.region(r).block(b));
    }
  }
  return printer.Take();
}

std::string PrintOperation(const Operation& op, const PrintOptions& options) {
  FirstReads reads(options);
  const Block none;
  reads.Walk(op, op.parent_block() != nullptr ? *op.parent_block() : none);
  Printer printer(options, reads);
  printer.PrintOp(op);
  std::string out = printer.Take();
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace irm::newir
