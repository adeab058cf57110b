// The PIR JSON reader: parses with nlohmann (after a depth check, so that no input can exhaust
// the stack), then walks the tree checking every element's shape and reports the first problem
// with the JSON pointer of the element; nlohmann's exceptions are caught at the boundary.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <utility>

#include "common/json_depth.h"
#include "common/json_parse.h"
#include "newir/dialect.h"
#include "newir/nesting.h"
#include "newir/pir_json.h"
#include "newir/pir_json_attributes.h"
#include "newir/pir_json_names.h"

namespace irm::newir {
namespace {

using pir_json::AttrReader;
using pir_json::DialectIdEnd;
using pir_json::json;
using pir_json::kParamAFlags;
using pir_json::kParamOAFlags;
using pir_json::Ptr;
using pir_json::Sub;

// Deeper documents are rejected before nlohmann parses them, so that neither nlohmann nor the
// recursive reader below can exhaust the stack.
constexpr int kMaxJsonDepth = 512;

class Reader : public AttrReader {
 public:
  using AttrReader::AttrReader;

  StatusOr<newir::Program> Program(const json& doc) {
    const Ptr root;
    IRM_RETURN_IF_ERROR(Expect(doc, root, json::value_t::object));
    const Ptr base_ptr = Sub(root, "base_code");
    const Ptr magic_ptr = Sub(base_ptr, "magic");
    const json* base = Find(doc, "base_code");
    const json* magic = base != nullptr && base->is_object() ? Find(*base, "magic") : nullptr;
    if (magic == nullptr) return Err(magic_ptr, "not a PIR JSON file: no magic");
    if (!magic->is_string() || magic->get<std::string>() != "pir") {
      return Err(magic_ptr,
                 fmt::format("not a PIR JSON file: magic is {}, expected \"pir\"", magic->dump()));
    }
    IRM_RETURN_IF_ERROR(CheckKeys(*base, base_ptr, {"magic", "version", "trainable"}));
    if (const json* v = Find(*base, "version")) {
      IRM_RETURN_IF_ERROR(Expect(*v, Sub(base_ptr, "version"), json::value_t::number_integer));
    }
    if (const json* t = Find(*base, "trainable")) {
      IRM_RETURN_IF_ERROR(Expect(*t, Sub(base_ptr, "trainable"), json::value_t::boolean));
    }
    IRM_RETURN_IF_ERROR(CheckKeys(doc, root, {"base_code", "program"}));
    IRM_ASSIGN_OR_RETURN(const json* program, Member(doc, root, "program", json::value_t::object));
    const Ptr program_ptr = Sub(root, "program");
    IRM_RETURN_IF_ERROR(CheckKeys(*program, program_ptr, {"regions"}));
    IRM_ASSIGN_OR_RETURN(const json* regions,
                         Member(*program, program_ptr, "regions", json::value_t::array));
    const Ptr regions_ptr = Sub(program_ptr, "regions");
    if (regions->size() != 1) {
      return Err(regions_ptr,
                 fmt::format("expected 1 region (the top module's), found {}", regions->size()));
    }
    newir::Program result;
    const Ptr region_ptr = Sub(regions_ptr, size_t{0});
    IRM_ASSIGN_OR_RETURN(const json* blocks, RegionBlocks((*regions)[0], region_ptr));
    const Ptr blocks_ptr = Sub(region_ptr, "blocks");
    if (blocks->size() != 1) {
      return Err(blocks_ptr,
                 fmt::format("expected 1 block (the top block), found {}", blocks->size()));
    }
    IRM_RETURN_IF_ERROR(Block((*blocks)[0], Sub(blocks_ptr, size_t{0}), result.block()));
    return result;
  }

 private:
  // Reads an `A`/`OA` list of {"N": name, "AT": attr} into `attrs`.
  Status NamedAttrs(const json& list, const Ptr& ptr, AttributeMap& attrs) const {
    IRM_RETURN_IF_ERROR(Expect(list, ptr, json::value_t::array));
    for (size_t i = 0; i < list.size(); ++i) {
      const Ptr at = Sub(ptr, i);
      IRM_RETURN_IF_ERROR(Expect(list[i], at, json::value_t::object));
      IRM_RETURN_IF_ERROR(CheckKeys(list[i], at, {"N", "AT"}));
      IRM_ASSIGN_OR_RETURN(const json* n, Member(list[i], at, "N", json::value_t::string));
      IRM_ASSIGN_OR_RETURN(const json* a, Member(list[i], at, "AT", json::value_t::object));
      IRM_ASSIGN_OR_RETURN(Attribute attr, ReadAttr(*a, Sub(at, "AT")));
      const std::string& name = n->get_ref<const std::string&>();
      if (!attrs.try_emplace(name, std::move(attr)).second) {
        return Err(Sub(at, "N"), fmt::format("attribute '{}' given twice", name));
      }
    }
    return Status::Ok();
  }

  // Paddle's writer lists a parameter's dist attributes (op_dist_attr, op_role) under `DA` and its
  // quant attributes (struct_name) under `QA`, as {"N": name, "AT": attr} entries like `A`'s; an
  // op of another kind keeps them in `A`, but the lists are read wherever they appear.
  Status DistAndQuantAttrs(const json& op, const Ptr& ptr, AttributeMap& attrs) const {
    if (const json* da = Find(op, "DA"))
      IRM_RETURN_IF_ERROR(NamedAttrs(*da, Sub(ptr, "DA"), attrs));
    if (const json* qa = Find(op, "QA"))
      IRM_RETURN_IF_ERROR(NamedAttrs(*qa, Sub(ptr, "QA"), attrs));
    return Status::Ok();
  }

  // A value definition {"%": id, "TT": type}: returns the id (checked for sign and uniqueness)
  // and the type.
  StatusOr<std::pair<int64_t, newir::Type>> ValueDef(const json& j, const Ptr& ptr,
                                                     bool result) const {
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::object));
    IRM_ASSIGN_OR_RETURN(const json* idj, Member(j, ptr, "%", json::value_t::number_integer));
    IRM_ASSIGN_OR_RETURN(int64_t id, Int(*idj, Sub(ptr, "%")));
    if (result ? id <= 0 : id >= 0) {
      return Err(Sub(ptr, "%"),
                 fmt::format("{} ids must be {}, found {}", result ? "result" : "block argument",
                             result ? "positive" : "negative", id));
    }
    if (values_.contains(id)) {
      return Err(Sub(ptr, "%"), fmt::format("value id {} is defined twice", id));
    }
    IRM_ASSIGN_OR_RETURN(const json* tt, Member(j, ptr, "TT", json::value_t::object));
    IRM_ASSIGN_OR_RETURN(newir::Type type, ReadType(*tt, Sub(ptr, "TT")));
    return std::pair<int64_t, newir::Type>{id, std::move(type)};
  }

  StatusOr<std::string> OpName(const json& op, const Ptr& ptr) const {
    const std::string& name = (*Find(op, "#")).get_ref<const std::string&>();
    const size_t dot = DialectIdEnd(name);
    if (dot == std::string::npos) return name;  // an op of no known dialect, written as it is
    if (dot > 6) return Err(Sub(ptr, "#"), fmt::format("unknown dialect id in '{}'", name));
    int id = 0;
    std::from_chars(name.data(), name.data() + dot, id);
    const std::optional<std::string_view> dialect = DialectFromJsonId(id);
    if (!dialect) {
      return Err(Sub(ptr, "#"), fmt::format("unknown dialect id {} in '{}'", id, name));
    }
    const std::string_view local = std::string_view(name).substr(dot + 1);
    // `builtin.get_parameter` was renamed `builtin.parameter` (PR #59239); read as the text
    // parser reads it, so a file naming the old op loads as the op it became.
    if (*dialect == "builtin" && local == "get_parameter") return std::string("builtin.parameter");
    return fmt::format("{}.{}", OpNamePrefixOfDialect(*dialect), local);
  }

  Status Parameter(const json& op, const Ptr& ptr, newir::Block& block) {
    IRM_RETURN_IF_ERROR(CheckKeys(op, ptr, {"#", "A", "O", "OA", "DA", "QA"}));
    IRM_ASSIGN_OR_RETURN(const json* a, Member(op, ptr, "A", json::value_t::array));
    const Ptr ap = Sub(ptr, "A");
    if (a->size() != 4) {
      return Err(ap, fmt::format("a compressed parameter's A must have 4 elements "
                                 "(is_distributed, is_parameter, need_clip, name), found {}",
                                 a->size()));
    }
    AttributeMap attrs;
    auto flag = [&](const json& j, const Ptr& at) -> StatusOr<Attribute> {
      IRM_ASSIGN_OR_RETURN(int64_t v, Int(j, at));
      if (v != 0 && v != 1) return Err(at, fmt::format("expected 0 or 1, found {}", v));
      return Attribute::Array({Attribute::Bool(v == 1)});
    };
    for (size_t i = 0; i < 3; ++i) {
      IRM_ASSIGN_OR_RETURN(attrs[kParamAFlags[i]], flag((*a)[i], Sub(ap, i)));
    }
    IRM_ASSIGN_OR_RETURN(std::string pname, String((*a)[3], Sub(ap, 3)));
    attrs["parameter_name"] = Attribute::String(std::move(pname));
    for (const char* f : kParamOAFlags) attrs[f] = Attribute::Array({Attribute::Bool(true)});
    if (const json* oa = Find(op, "OA")) {
      const Ptr op_ = Sub(ptr, "OA");
      IRM_RETURN_IF_ERROR(Expect(*oa, op_, json::value_t::array));
      if (oa->size() != 3) {
        return Err(op_, fmt::format("a compressed parameter's OA must have 3 elements "
                                    "(persistable, stop_gradient, trainable), found {}",
                                    oa->size()));
      }
      for (size_t i = 0; i < 3; ++i) {
        IRM_ASSIGN_OR_RETURN(attrs[kParamOAFlags[i]], flag((*oa)[i], Sub(op_, i)));
      }
    }
    IRM_RETURN_IF_ERROR(DistAndQuantAttrs(op, ptr, attrs));
    IRM_ASSIGN_OR_RETURN(const json* o, Member(op, ptr, "O", json::value_t::object));
    IRM_ASSIGN_OR_RETURN(auto def, ValueDef(*o, Sub(ptr, "O"), true));
    Operation* created =
        block.PushBack(Operation::Create("builtin.parameter", {}, {def.second}, std::move(attrs), 0,
                                         OpRegistry::Global().Lookup("builtin.parameter")));
    values_[def.first] = created->result(0);
    return Status::Ok();
  }

  Status Op(const json& op, const Ptr& ptr, newir::Block& block) {
    IRM_RETURN_IF_ERROR(Expect(op, ptr, json::value_t::object));
    IRM_ASSIGN_OR_RETURN(const json* n, Member(op, ptr, "#", json::value_t::string));
    if (*n == "p") return Parameter(op, ptr, block);
    IRM_RETURN_IF_ERROR(CheckKeys(op, ptr, {"#", "I", "O", "A", "OA", "DA", "QA", "regions"}));
    IRM_ASSIGN_OR_RETURN(std::string name, OpName(op, ptr));
    std::vector<Value*> operands;
    if (const json* in = Find(op, "I")) {
      const Ptr ip = Sub(ptr, "I");
      IRM_RETURN_IF_ERROR(Expect(*in, ip, json::value_t::array));
      for (size_t i = 0; i < in->size(); ++i) {
        const Ptr at = Sub(ip, i);
        IRM_RETURN_IF_ERROR(Expect((*in)[i], at, json::value_t::object));
        IRM_RETURN_IF_ERROR(CheckKeys((*in)[i], at, {"%"}));
        IRM_ASSIGN_OR_RETURN(const json* idj,
                             Member((*in)[i], at, "%", json::value_t::number_integer));
        IRM_ASSIGN_OR_RETURN(int64_t id, Int(*idj, Sub(at, "%")));
        if (id == 0) {
          operands.push_back(nullptr);
          continue;
        }
        auto it = values_.find(id);
        if (it == values_.end() || it->second == nullptr) {
          return Err(at, fmt::format("undefined value id {}", id));
        }
        operands.push_back(it->second);
      }
    }
    std::vector<int64_t> ids;
    std::vector<newir::Type> types;
    if (const json* out = Find(op, "O")) {
      const Ptr op_ = Sub(ptr, "O");
      IRM_RETURN_IF_ERROR(Expect(*out, op_, json::value_t::array));
      for (size_t i = 0; i < out->size(); ++i) {
        IRM_RETURN_IF_ERROR(Expect((*out)[i], Sub(op_, i), json::value_t::object));
        IRM_RETURN_IF_ERROR(CheckKeys((*out)[i], Sub(op_, i), {"%", "TT"}));
        IRM_ASSIGN_OR_RETURN(auto def, ValueDef((*out)[i], Sub(op_, i), true));
        if (std::find(ids.begin(), ids.end(), def.first) != ids.end()) {
          return Err(Sub(Sub(op_, i), "%"), fmt::format("value id {} is defined twice", def.first));
        }
        ids.push_back(def.first);
        types.push_back(std::move(def.second));
      }
    }
    AttributeMap attrs;
    if (const json* a = Find(op, "A")) IRM_RETURN_IF_ERROR(NamedAttrs(*a, Sub(ptr, "A"), attrs));
    if (const json* a = Find(op, "OA")) {
      IRM_RETURN_IF_ERROR(NamedAttrs(*a, Sub(ptr, "OA"), attrs));
    }
    IRM_RETURN_IF_ERROR(DistAndQuantAttrs(op, ptr, attrs));
    const json* regions = Find(op, "regions");
    if (regions != nullptr) {
      IRM_RETURN_IF_ERROR(Expect(*regions, Sub(ptr, "regions"), json::value_t::array));
    }
    const size_t num_regions = regions != nullptr ? regions->size() : 0;
    // The result ids are taken (so that the regions cannot define them again) but not yet
    // readable: null until the regions are read.
    for (int64_t id : ids) values_[id] = nullptr;
    Operation* created = block.PushBack(Operation::Create(
        name, operands, types, std::move(attrs), num_regions, OpRegistry::Global().Lookup(name)));
    const Ptr regions_ptr = Sub(ptr, "regions");
    for (size_t i = 0; i < num_regions; ++i) {
      const Ptr rp = Sub(regions_ptr, i);
      IRM_ASSIGN_OR_RETURN(const json* blocks, RegionBlocks((*regions)[i], rp));
      for (size_t b = 0; b < blocks->size(); ++b) {
        IRM_RETURN_IF_ERROR(
            Block((*blocks)[b], Sub(Sub(rp, "blocks"), b), created->region(i).AddBlock()));
      }
    }
    // Results become visible after the op's regions: nested ops cannot read them.
    for (size_t i = 0; i < ids.size(); ++i) values_[ids[i]] = created->result(i);
    return Status::Ok();
  }

  StatusOr<const json*> RegionBlocks(const json& region, const Ptr& ptr) const {
    IRM_RETURN_IF_ERROR(Expect(region, ptr, json::value_t::object));
    IRM_RETURN_IF_ERROR(CheckKeys(region, ptr, {"#", "blocks"}));
    return Member(region, ptr, "blocks", json::value_t::array);
  }

  // One block of the program, the top block at depth 1: refused past kMaxRegionNesting levels of
  // regions, the bound the writers keep (nesting.h), so that what reads here also prints as text.
  Status Block(const json& block, const Ptr& ptr, newir::Block& out) {
    if (block_depth_ > kMaxRegionNesting) {
      return Err(ptr, fmt::format("regions nested deeper than {} levels", kMaxRegionNesting));
    }
    ++block_depth_;
    Status status = BlockBody(block, ptr, out);
    --block_depth_;
    return status;
  }

  Status BlockBody(const json& block, const Ptr& ptr, newir::Block& out) {
    IRM_RETURN_IF_ERROR(Expect(block, ptr, json::value_t::object));
    IRM_RETURN_IF_ERROR(CheckKeys(block, ptr, {"#", "args", "kwargs", "ops"}));
    for (const char* key : {"args", "kwargs"}) {
      const json* list = Find(block, key);
      if (list == nullptr) continue;
      const bool kwarg = key[0] == 'k';
      const Ptr lp = Sub(ptr, key);
      IRM_RETURN_IF_ERROR(Expect(*list, lp, json::value_t::array));
      for (size_t i = 0; i < list->size(); ++i) {
        const json& arg = (*list)[i];
        const Ptr at = Sub(lp, i);
        IRM_RETURN_IF_ERROR(Expect(arg, at, json::value_t::object));
        IRM_RETURN_IF_ERROR(CheckKeys(arg, at, {"%", "TT", "A", "key"}));
        const json* k = Find(arg, "key");
        // Paddle's writer repeats the positional arguments under "kwargs" without a key.
        if (kwarg && k == nullptr) continue;
        IRM_ASSIGN_OR_RETURN(auto def, ValueDef(arg, at, false));
        Value* v = nullptr;
        if (kwarg) {
          IRM_ASSIGN_OR_RETURN(std::string name, String(*k, Sub(at, "key")));
          StatusOr<Value*> added = out.AddKwarg(name, def.second);
          if (!added.ok()) return Err(Sub(at, "key"), added.status().message());
          v = *added;
        } else {
          v = out.AddArgument(def.second);
        }
        if (const json* a = Find(arg, "A")) {
          AttributeMap attrs;
          IRM_RETURN_IF_ERROR(NamedAttrs(*a, Sub(at, "A"), attrs));
          for (auto& [name, attr] : attrs) v->SetAttribute(name, attr);
        }
        values_[def.first] = v;
      }
    }
    if (const json* ops = Find(block, "ops")) {
      const Ptr op_ = Sub(ptr, "ops");
      IRM_RETURN_IF_ERROR(Expect(*ops, op_, json::value_t::array));
      for (size_t i = 0; i < ops->size(); ++i) {
        IRM_RETURN_IF_ERROR(Op((*ops)[i], Sub(op_, i), out));
      }
    }
    return Status::Ok();
  }

  std::unordered_map<int64_t, Value*> values_;
  int block_depth_ = 0;  // blocks open in Block()
};

}  // namespace

StatusOr<Program> ReadPirJson(std::string_view text, const std::string& file) {
  IRM_RETURN_IF_ERROR(CheckJsonDepth(text, file, kMaxJsonDepth));
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return JsonSyntaxError(text, file, e.byte, e.what());
  } catch (const json::exception& e) {
    return Status(StatusCode::kParseError, Location::File(file), e.what());
  }
  try {
    return Reader(file).Program(doc);
  } catch (const json::exception& e) {
    // Every access above is checked first; this is the net for a check that was missed.
    return Status(StatusCode::kInternal, Location::File(file), e.what());
  }
}

}  // namespace irm::newir
