// The PIR JSON writer: the program's top region as Paddle's save layout (see pir_json.h), built
// as a nlohmann::json tree and dumped.
#include <fmt/format.h>

#include <unordered_map>
#include <utility>

#include "newir/pir_json.h"
#include "newir/pir_json_attributes.h"
#include "newir/pir_json_names.h"

namespace irm::newir {
namespace {

using pir_json::AttrToJson;
using pir_json::CompressOpName;
using pir_json::IsResultAttr;
using pir_json::json;
using pir_json::kDistAttrNames;
using pir_json::kParamAFlags;
using pir_json::kParamOAFlags;
using pir_json::kQuantAttrNames;
using pir_json::TypeToJson;

class Writer {
 public:
  explicit Writer(const PirJsonWriteOptions& options) : options_(options) {}

  json Program(const newir::Program& program) {
    // Subtrees are moved into place, never put in an initializer list: nlohmann copies those.
    json doc = json::object();
    doc["base_code"] =
        json{{"magic", "pir"}, {"version", kPirJsonVersion}, {"trainable", options_.trainable}};
    json& regions = doc["program"]["regions"] = json::array();
    regions.push_back(Region(program.module().region(0)));
    return doc;
  }

 private:
  static json NamedAttr(const std::string& name, const Attribute& attr) {
    json j = json::object();
    j["N"] = name;
    j["AT"] = AttrToJson(attr);
    return j;
  }

  // The {"N", "AT"} entries of those of `names` that the op has, in the order of `names`.
  template <size_t N>
  static json NamedAttrsOf(const Operation& op, const char* const (&names)[N]) {
    json list = json::array();
    for (const char* name : names) {
      if (op.HasAttribute(name)) list.push_back(NamedAttr(name, op.attribute(name)));
    }
    return list;
  }

  json NewResult(const Value* v) {
    const int64_t id = next_result_++;
    ids_[v] = id;
    json j = json::object();
    j["%"] = id;
    j["TT"] = TypeToJson(v->type());
    return j;
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
      const std::vector<Attribute>* arr = a.AsArray();
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

  json Parameter(const Operation& op) {
    auto flag = [&](const char* f) { return (*op.attribute(f).AsArray())[0].AsBool()[0] ? 1 : 0; };
    json a = json::array();
    for (const char* f : kParamAFlags) a.push_back(flag(f));
    a.push_back(*op.attribute("parameter_name").AsString());
    json oa = json::array();
    for (const char* f : kParamOAFlags) oa.push_back(flag(f));
    json j = json::object();
    j["#"] = "p";
    j["A"] = std::move(a);
    j["O"] = NewResult(op.result(0));
    // OA is written even when not trainable (unlike Paddle): the reader could not tell the flags.
    j["OA"] = std::move(oa);
    // Paddle writes both lists on every parameter, empty or not.
    j["DA"] = NamedAttrsOf(op, kDistAttrNames);
    j["QA"] = NamedAttrsOf(op, kQuantAttrNames);
    return j;
  }

  json Op(const Operation& op) {
    if (IsCompressibleParameter(op)) return Parameter(op);
    json in = json::array();
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      auto it = v != nullptr ? ids_.find(v) : ids_.end();
      in.push_back(json{{"%", it != ids_.end() ? it->second : 0}});
    }
    json out = json::array();
    for (size_t i = 0; i < op.num_results(); ++i) out.push_back(NewResult(op.result(i)));
    json attrs = json::array();
    json result_attrs = json::array();
    for (const auto& [name, attr] : op.attributes()) {
      if (IsResultAttr(name)) {
        if (options_.trainable) result_attrs.push_back(NamedAttr(name, attr));
      } else {
        attrs.push_back(NamedAttr(name, attr));
      }
    }
    json j = json::object();
    j["#"] = CompressOpName(op.name());
    j["I"] = std::move(in);
    j["O"] = std::move(out);
    j["A"] = std::move(attrs);
    if (options_.trainable) j["OA"] = std::move(result_attrs);
    if (op.num_regions() > 0) {
      json regions = json::array();
      for (size_t i = 0; i < op.num_regions(); ++i) regions.push_back(Region(op.region(i)));
      j["regions"] = std::move(regions);
    }
    return j;
  }

  json Arg(const Value* v, bool kwarg) {
    const int64_t id = next_arg_--;
    ids_[v] = id;
    json j = json::object();
    j["%"] = id;
    j["TT"] = TypeToJson(v->type());
    if (kwarg) j["key"] = v->kwarg_name();
    if (!v->attributes().empty()) {
      json attrs = json::array();
      for (const auto& [name, attr] : v->attributes()) attrs.push_back(NamedAttr(name, attr));
      j["A"] = std::move(attrs);
    }
    return j;
  }

  json Block(const newir::Block& block) {
    json j{{"#", fmt::format("block_{}", block_counter_++)}};
    json args = json::array();
    for (size_t i = 0; i < block.num_arguments(); ++i)
      args.push_back(Arg(block.argument(i), false));
    j["args"] = std::move(args);
    if (block.num_kwargs() > 0) {
      json kwargs = json::array();
      for (size_t i = 0; i < block.num_kwargs(); ++i) kwargs.push_back(Arg(block.kwarg(i), true));
      j["kwargs"] = std::move(kwargs);
    }
    json ops = json::array();
    for (const Operation& op : block) ops.push_back(Op(op));
    j["ops"] = std::move(ops);
    return j;
  }

  json Region(const newir::Region& region) {
    json j{{"#", fmt::format("region_{}", region_counter_++)}};
    json blocks = json::array();
    for (size_t i = 0; i < region.num_blocks(); ++i) blocks.push_back(Block(region.block(i)));
    j["blocks"] = std::move(blocks);
    return j;
  }

  PirJsonWriteOptions options_;
  int64_t next_result_ = 1;
  int64_t next_arg_ = -1;
  int region_counter_ = 0;
  int block_counter_ = 0;
  std::unordered_map<const Value*, int64_t> ids_;
};

}  // namespace

std::string WritePirJson(const Program& program, const PirJsonWriteOptions& options) {
  // JSON strings are Unicode: replacing invalid UTF-8 (which nlohmann would throw on) keeps the
  // writer from failing on a string attribute read from elsewhere.
  return Writer(options).Program(program).dump(options.indent, ' ', false,
                                               json::error_handler_t::replace);
}

}  // namespace irm::newir
