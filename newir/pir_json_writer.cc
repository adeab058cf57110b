// The PIR JSON writer: the program's top region as Paddle's save layout (see pir_json.h), written
// straight to text by JsonOut (the bytes nlohmann's dump would print, without building its tree).
#include <fmt/format.h>

#include <unordered_map>
#include <utility>

#include "newir/pir_json.h"
#include "newir/pir_json_attributes.h"
#include "newir/pir_json_names.h"

namespace irm::newir {
namespace {

using pir_json::CompressOpName;
using pir_json::IsResultAttr;
using pir_json::kDistAttrNames;
using pir_json::kParamAFlags;
using pir_json::kParamOAFlags;
using pir_json::kQuantAttrNames;
using pir_json::WriteAttr;
using pir_json::WriteType;

class Writer {
 public:
  explicit Writer(const PirJsonWriteOptions& options) : options_(options), out_(options.indent) {}

  // Keys in nlohmann's sorted order throughout, so that the text is what dump() would print.
  std::string Program(const newir::Program& program) {
    ids_.reserve(program.CountOps() * 2);
    out_.BeginObject();
    out_.Key("base_code");
    out_.BeginObject();
    out_.Member("magic", "pir");
    out_.Key("trainable");
    out_.Bool(options_.trainable);
    out_.Key("version");
    out_.Uint(kPirJsonVersion);
    out_.EndObject();
    out_.Key("program");
    out_.BeginObject();
    out_.Key("regions");
    out_.BeginArray();
    Region(program.module().region(0));
    out_.EndArray();
    out_.EndObject();
    out_.EndObject();
    return out_.Take();
  }

 private:
  // {"AT": attr, "N": name}
  void NamedAttr(std::string_view name, const Attribute& attr) {
    out_.BeginObject();
    out_.Key("AT");
    WriteAttr(out_, attr);
    out_.Member("N", name);
    out_.EndObject();
  }

  // The list of the entries of those of `names` that the op has, in the order of `names`.
  template <size_t N>
  void NamedAttrsOf(const Operation& op, const char* const (&names)[N]) {
    out_.BeginArray();
    for (const char* name : names) {
      const auto it = op.attributes().find(std::string_view(name));
      if (it != op.attributes().end()) NamedAttr(name, it->second);
    }
    out_.EndArray();
  }

  // {"%": id, "TT": type} of a new result.
  void NewResult(const Value* v) {
    const int64_t id = next_result_++;
    ids_.emplace(v, id);
    out_.BeginObject();
    out_.Member("%", id);
    out_.Key("TT");
    WriteType(out_, v->type());
    out_.EndObject();
  }

  // builtin.parameter is compressed only when the `p` form says everything the op holds.
  static bool IsCompressibleParameter(const Operation& op) {
    if (op.name() != "builtin.parameter" || op.num_operands() != 0 || op.num_results() != 1 ||
        op.num_regions() != 0) {
      return false;
    }
    size_t seen = 0;
    const Attribute name = op.attribute("parameter_name");
    if (name.kind() != AttrKind::kString) return false;
    ++seen;
    auto is_flag = [&](const char* flag) {
      const Attribute a = op.attribute(flag);
      const AttributeSpan* arr = a.AsArray();
      return arr != nullptr && arr->size() == 1 && (*arr)[0].kind() == AttrKind::kBool;
    };
    for (const char* f : kParamAFlags) {
      if (!is_flag(f)) return false;
      ++seen;
    }
    for (const char* f : kParamOAFlags) {
      if (!is_flag(f)) return false;
      ++seen;
    }
    // Whatever else the op holds must fit in its DA and QA lists.
    for (const char* f : kDistAttrNames) seen += op.HasAttribute(f) ? 1 : 0;
    for (const char* f : kQuantAttrNames) seen += op.HasAttribute(f) ? 1 : 0;
    return seen == op.attributes().size();
  }

  void Parameter(const Operation& op) {
    auto flag = [&](const char* f) { return (*op.attribute(f).AsArray())[0].AsBool()[0] ? 1 : 0; };
    out_.BeginObject();
    out_.Member("#", "p");
    out_.Key("A");
    out_.BeginArray();
    for (const char* f : kParamAFlags) out_.Int(flag(f));
    out_.String(*op.attribute("parameter_name").AsString());
    out_.EndArray();
    // Paddle writes both lists on every parameter, empty or not.
    out_.Key("DA");
    NamedAttrsOf(op, kDistAttrNames);
    out_.Key("O");
    NewResult(op.result(0));
    // OA is written even when not trainable (unlike Paddle): the reader could not tell the flags.
    out_.Key("OA");
    out_.BeginArray();
    for (const char* f : kParamOAFlags) out_.Int(flag(f));
    out_.EndArray();
    out_.Key("QA");
    NamedAttrsOf(op, kQuantAttrNames);
    out_.EndObject();
  }

  void Op(const Operation& op) {
    if (IsCompressibleParameter(op)) {
      Parameter(op);
      return;
    }
    out_.BeginObject();
    out_.Member("#", CompressOpName(op.name()));
    out_.Key("A");
    out_.BeginArray();
    for (const auto& [name, attr] : op.attributes()) {
      if (!IsResultAttr(name)) NamedAttr(name, attr);
    }
    out_.EndArray();
    out_.Key("I");
    out_.BeginArray();
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      auto it = v != nullptr ? ids_.find(v) : ids_.end();
      out_.BeginObject();
      out_.Member("%", it != ids_.end() ? it->second : 0);
      out_.EndObject();
    }
    out_.EndArray();
    out_.Key("O");
    out_.BeginArray();
    for (size_t i = 0; i < op.num_results(); ++i) NewResult(op.result(i));
    out_.EndArray();
    if (options_.trainable) {
      out_.Key("OA");
      out_.BeginArray();
      for (const auto& [name, attr] : op.attributes()) {
        if (IsResultAttr(name)) NamedAttr(name, attr);
      }
      out_.EndArray();
    }
    if (op.num_regions() > 0) {
      out_.Key("regions");
      out_.BeginArray();
      for (size_t i = 0; i < op.num_regions(); ++i) Region(op.region(i));
      out_.EndArray();
    }
    out_.EndObject();
  }

  void Arg(const Value* v, bool kwarg) {
    const int64_t id = next_arg_--;
    ids_.emplace(v, id);
    out_.BeginObject();
    out_.Member("%", id);
    if (!v->attributes().empty()) {
      out_.Key("A");
      out_.BeginArray();
      for (const auto& [name, attr] : v->attributes()) NamedAttr(name, attr);
      out_.EndArray();
    }
    out_.Key("TT");
    WriteType(out_, v->type());
    if (kwarg) out_.Member("key", v->kwarg_name());
    out_.EndObject();
  }

  void Block(const newir::Block& block) {
    out_.BeginObject();
    out_.Member("#", fmt::format("block_{}", block_counter_++));
    out_.Key("args");
    out_.BeginArray();
    for (size_t i = 0; i < block.num_arguments(); ++i) Arg(block.argument(i), false);
    out_.EndArray();
    if (block.num_kwargs() > 0) {
      out_.Key("kwargs");
      out_.BeginArray();
      for (size_t i = 0; i < block.num_kwargs(); ++i) Arg(block.kwarg(i), true);
      out_.EndArray();
    }
    out_.Key("ops");
    out_.BeginArray();
    for (const Operation& op : block) Op(op);
    out_.EndArray();
    out_.EndObject();
  }

  void Region(const newir::Region& region) {
    out_.BeginObject();
    out_.Member("#", fmt::format("region_{}", region_counter_++));
    out_.Key("blocks");
    out_.BeginArray();
    for (size_t i = 0; i < region.num_blocks(); ++i) Block(region.block(i));
    out_.EndArray();
    out_.EndObject();
  }

  PirJsonWriteOptions options_;
  pir_json::JsonOut out_;
  int64_t next_result_ = 1;
  int64_t next_arg_ = -1;
  int region_counter_ = 0;
  int block_counter_ = 0;
  std::unordered_map<const Value*, int64_t> ids_;
};

}  // namespace

std::string WritePirJson(const Program& program, const PirJsonWriteOptions& options) {
  return Writer(options).Program(program);
}

}  // namespace irm::newir
