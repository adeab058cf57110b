// Writer and reader of the new IR's JSON form (Paddle PIR's save layout, see pir_json.h). Both
// work on nlohmann::json trees; the reader checks every element's shape and reports the first
// problem with the JSON pointer of the element, and catches nlohmann's exceptions at the boundary.
#include "newir/pir_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>

#include "common/json_pointer.h"
#include "newir/dialect.h"

namespace irm::newir {
namespace {

using json = nlohmann::json;

// Deeper documents are rejected before nlohmann parses them, so that neither nlohmann nor the
// recursive reader below can exhaust the stack.
constexpr int kMaxJsonDepth = 512;

struct ScalarName {
  TypeKind kind;
  const char* name;
};
constexpr ScalarName kScalarNames[] = {
    {TypeKind::kBF16, "t_bf16"},     {TypeKind::kF16, "t_f16"},
    {TypeKind::kF32, "t_f32"},       {TypeKind::kF64, "t_f64"},
    {TypeKind::kBool, "t_bool"},     {TypeKind::kI8, "t_i8"},
    {TypeKind::kU8, "t_ui8"},        {TypeKind::kI16, "t_i16"},
    {TypeKind::kI32, "t_i32"},       {TypeKind::kI64, "t_i64"},
    {TypeKind::kIndex, "t_index"},   {TypeKind::kC64, "t_c64"},
    {TypeKind::kC128, "t_c128"},     {TypeKind::kF8E4M3FN, "t_f8e4m3fn"},
    {TypeKind::kF8E5M2, "t_f8e5m2"}, {TypeKind::kUndefined, "t_undefined"},
};

// Parameter flags of the compressed `p` op, in the order of its `A` and `OA` lists.
constexpr const char* kParamAFlags[] = {"is_distributed", "is_parameter", "need_clip"};
constexpr const char* kParamOAFlags[] = {"persistable", "stop_gradient", "trainable"};
constexpr bool kParamADefaults[] = {false, true, true};

bool IsResultAttr(std::string_view name) {
  return name == "stop_gradient" || name == "persistable";
}

json Null() { return json{{"#", "NULL"}}; }

// ---------------------------------------------------------------------------------------------
// Writer.

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
  static json Float(double v, const char* name) {
    if (std::isnan(v)) return json{{"#", name}, {"VD", "NaN"}};
    if (std::isinf(v)) return json{{"#", name}, {"VD", v > 0 ? "INF" : "-INF"}};
    return json{{"#", name}, {"D", v}};
  }

  static json Ints(const std::vector<int64_t>& v) {
    json a = json::array();
    for (int64_t x : v) a.push_back(x);
    return a;
  }

  static json Mesh(const ProcessMesh& mesh) {
    json names = json::array();
    for (const std::string& n : mesh.dim_names) names.push_back(n);
    return json{{"#", "4.a_process_mesh"},
                {"D", json::array({Ints(mesh.shape), Ints(mesh.process_ids), std::move(names)})}};
  }

  static json TensorDist(const TensorDistAttr& dist) {
    json partial = json::array();
    for (const auto& [m, r] : dist.partial_status) {
      partial.push_back(json::array({m, static_cast<int32_t>(r)}));
    }
    json d = json::array({Mesh(dist.mesh), Ints(dist.dims_mapping), std::move(partial)});
    if (dist.placements) {
      json placements = json::array();
      for (const Placement& p : *dist.placements) {
        switch (p.kind) {
          case Placement::Kind::kReplicate:
            placements.push_back(json::array({"R"}));
            break;
          case Placement::Kind::kShard:
            placements.push_back(json::array({"S", p.dim}));
            break;
          case Placement::Kind::kPartial:
            placements.push_back(json::array({"P", static_cast<int32_t>(p.reduce)}));
            break;
        }
      }
      d.push_back(std::move(placements));
    }
    return json{{"#", "4.a_tensor_dist"}, {"D", std::move(d)}};
  }

  static json Type(const newir::Type& type) {
    if (type.IsNull()) return Null();
    if (type.IsScalar()) {
      for (const ScalarName& s : kScalarNames) {
        if (s.kind == type.kind()) return json{{"#", std::string("0.") + s.name}};
      }
    }
    auto lod = [&] {
      json l = json::array();
      for (const auto& level : type.lod()) {
        json a = json::array();
        for (size_t x : level) a.push_back(x);
        l.push_back(std::move(a));
      }
      return l;
    };
    switch (type.kind()) {
      case TypeKind::kDenseTensor:
      case TypeKind::kSelectedRows:
        return json{
            {"#", type.kind() == TypeKind::kDenseTensor ? "0.t_dtensor" : "1.t_selected_rows"},
            {"D", json::array({Type(type.dtype()), Ints(type.dims()), DataLayoutName(type.layout()),
                               lod(), type.offset()})}};
      case TypeKind::kDenseTensorArray:
        return json{{"#", "1.t_dense_tensor_array"},
                    {"D", json::array({Type(type.dtype()), Ints(type.dims()),
                                       DataLayoutName(type.layout())})}};
      case TypeKind::kVector: {
        json d = json::array();
        for (const newir::Type& e : type.elements()) d.push_back(Type(e));
        return json{{"#", "0.t_vec"}, {"D", std::move(d)}};
      }
      case TypeKind::kDistDenseTensor:
        return json{{"#", "4.t_dist_dtensor"},
                    {"D", json::array({Type(type.dense()), TensorDist(*type.dist_attr()),
                                       Ints(type.local_dims())})}};
      default:
        return Null();
    }
  }

  static json Attr(const Attribute& attr) {
    switch (attr.kind()) {
      case AttrKind::kNull:
        return Null();
      case AttrKind::kBool:
        return json{{"#", "0.a_bool"}, {"D", *attr.AsBool()}};
      case AttrKind::kInt32:
        return json{{"#", "0.a_i32"}, {"D", *attr.AsInt32()}};
      case AttrKind::kInt64:
        return json{{"#", "0.a_i64"}, {"D", *attr.AsInt64()}};
      case AttrKind::kFloat:
        return Float(*attr.AsFloat(), "0.a_f32");
      case AttrKind::kDouble:
        return Float(*attr.AsDouble(), "0.a_f64");
      case AttrKind::kString:
        return json{{"#", "0.a_str"}, {"D", *attr.AsString()}};
      case AttrKind::kArray: {
        json d = json::array();
        for (const Attribute& e : *attr.AsArray()) d.push_back(Attr(e));
        return json{{"#", "0.a_array"}, {"D", std::move(d)}};
      }
      case AttrKind::kType:
        return json{{"#", "0.a_type"}, {"D", Type(*attr.AsType())}};
      case AttrKind::kIntArray:
        return json{{"#", "1.a_intarray"}, {"D", Ints(attr.AsIntArray()->values)}};
      case AttrKind::kDataType:
        return json{{"#", "1.a_dtype"}, {"D", DataTypeName(*attr.AsDataType())}};
      case AttrKind::kPlace: {
        const Place& p = *attr.AsPlace();
        return json{{"#", "1.a_place"},
                    {"D", json::array({static_cast<int32_t>(p.type), p.device, p.device_type})}};
      }
      case AttrKind::kDataLayout:
        return json{{"#", "1.a_layout"}, {"D", DataLayoutName(*attr.AsDataLayout())}};
      case AttrKind::kScalar: {
        const ScalarValue& s = *attr.AsScalar();
        json v;
        if (const bool* b = std::get_if<bool>(&s.value)) {
          v = *b;
        } else if (const int64_t* i = std::get_if<int64_t>(&s.value)) {
          v = *i;
        } else {
          const double d = std::get<double>(s.value);
          if (std::isnan(d)) {
            v = "NaN";
          } else if (std::isinf(d)) {
            v = d > 0 ? "INF" : "-INF";
          } else {
            v = d;
          }
        }
        return json{{"#", "1.a_scalar"}, {"D", json::array({DataTypeName(s.dtype), v})}};
      }
      case AttrKind::kProcessMesh:
        return Mesh(*attr.AsProcessMesh());
      case AttrKind::kTensorDist:
        return TensorDist(*attr.AsTensorDist());
      case AttrKind::kOperationDist: {
        const OperationDistAttr& o = *attr.AsOperationDist();
        json operands = json::array();
        for (const Attribute& a : o.operands) operands.push_back(Attr(a));
        json results = json::array();
        for (const Attribute& a : o.results) results.push_back(Attr(a));
        return json{{"#", "4.a_op_dist"},
                    {"D", json::array({Mesh(o.mesh), std::move(operands), std::move(results),
                                       o.chunk_id})}};
      }
    }
    return Null();
  }

  static json NamedAttr(const std::string& name, const Attribute& attr) {
    json j = json::object();
    j["N"] = name;
    j["AT"] = Attr(attr);
    return j;
  }

  // "pd_op.matmul" -> "1.matmul"; names of no known dialect are written as they are.
  static std::string OpName(const std::string& name) {
    const std::string_view dialect = DialectOfOpName(name);
    const std::optional<int> id = DialectJsonId(dialect);
    if (!id) return name;
    return fmt::format("{}.{}", *id, std::string_view(name).substr(name.find('.') + 1));
  }

  json NewResult(const Value* v) {
    const int64_t id = next_result_++;
    ids_[v] = id;
    json j = json::object();
    j["%"] = id;
    j["TT"] = Type(v->type());
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
    if (op.HasAttribute("op_dist_attr")) {
      if (op.attribute("op_dist_attr").kind() != AttrKind::kOperationDist) return false;
      ++seen;
    }
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
    j["OA"] = std::move(oa);
    if (op.HasAttribute("op_dist_attr")) j["DA"] = Attr(op.attribute("op_dist_attr"));
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
    j["#"] = OpName(op.name());
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
    j["TT"] = Type(v->type());
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

// ---------------------------------------------------------------------------------------------
// Reader.

std::string KindOf(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a float";
    default:
      return "a binary value";
  }
}

// A JSON pointer built lazily: each step points at its parent (which outlives it, being a caller's
// argument or local), and the text is only rendered for a diagnostic, so reading a valid
// document builds no path strings.
class Ptr {
 public:
  Ptr() = default;
  Ptr(const Ptr* parent, std::string_view key) : parent_(parent), key_(key) {}
  Ptr(const Ptr* parent, size_t index) : parent_(parent), index_(index), is_index_(true) {}

  std::string Render() const {
    if (parent_ == nullptr) return "";
    std::string out = parent_->Render();
    if (is_index_) return out + "/" + std::to_string(index_);
    AppendJsonPointerToken(&out, key_);
    return out;
  }

 private:
  const Ptr* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

Ptr Sub(const Ptr& ptr, std::string_view key) { return Ptr(&ptr, key); }
Ptr Sub(const Ptr& ptr, size_t index) { return Ptr(&ptr, index); }

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  StatusOr<newir::Program> Program(const json& doc) {
    const Ptr root;
    if (!doc.is_object()) {
      return Err(root, fmt::format("expected an object, found {}", KindOf(doc)));
    }
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
    if (const json* v = Find(*base, "version"); v != nullptr && !v->is_number_integer()) {
      return Err(Sub(base_ptr, "version"),
                 fmt::format("expected an integer, found {}", KindOf(*v)));
    }
    if (const json* t = Find(*base, "trainable"); t != nullptr && !t->is_boolean()) {
      return Err(Sub(base_ptr, "trainable"),
                 fmt::format("expected a boolean, found {}", KindOf(*t)));
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
  Status Err(const Ptr& ptr, std::string message) const {
    const std::string where = ptr.Render();
    return Status(StatusCode::kParseError, Location::File(file_).With(where.empty() ? "/" : where),
                  std::move(message));
  }

  static const json* Find(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  Status CheckKeys(const json& obj, const Ptr& ptr,
                   std::initializer_list<std::string_view> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (std::string_view a : allowed) ok = ok || it.key() == a;
      if (!ok) return Err(Sub(ptr, it.key()), fmt::format("unknown key '{}'", it.key()));
    }
    return Status::Ok();
  }

  Status Expect(const json& j, const Ptr& ptr, json::value_t type) const {
    const bool ok = type == json::value_t::number_integer
                        ? j.is_number_integer()
                        : (type == json::value_t::number_float ? j.is_number() : j.type() == type);
    if (ok) return Status::Ok();
    const std::string want = type == json::value_t::number_float ? "a number" : KindOf(json(type));
    return Err(ptr, fmt::format("expected {}, found {}", want, KindOf(j)));
  }

  StatusOr<const json*> Member(const json& obj, const Ptr& ptr, const char* key,
                               json::value_t type) const {
    const json* m = Find(obj, key);
    if (m == nullptr) return Err(ptr, fmt::format("missing key '{}'", key));
    IRM_RETURN_IF_ERROR(Expect(*m, Sub(ptr, key), type));
    return m;
  }

  StatusOr<int64_t> Int(const json& j, const Ptr& ptr) const {
    if (j.is_number_unsigned() &&
        j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Err(ptr, fmt::format("integer {} is out of range", j.dump()));
    }
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::number_integer));
    return j.get<int64_t>();
  }

  StatusOr<int32_t> Int32(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(int64_t v, Int(j, ptr));
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return Err(ptr, fmt::format("integer {} is out of the int32 range", v));
    }
    return static_cast<int32_t>(v);
  }

  StatusOr<std::vector<int64_t>> Ints(const json& j, const Ptr& ptr) const {
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::array));
    std::vector<int64_t> out;
    for (size_t i = 0; i < j.size(); ++i) {
      IRM_ASSIGN_OR_RETURN(int64_t v, Int(j[i], Sub(ptr, i)));
      out.push_back(v);
    }
    return out;
  }

  StatusOr<std::string> String(const json& j, const Ptr& ptr) const {
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::string));
    return j.get<std::string>();
  }

  // The `D` array of `j`, which must have `arity` elements (described by `what`).
  StatusOr<const json*> Data(const json& j, const Ptr& ptr, const std::string& name, size_t arity,
                             const char* what) const {
    IRM_ASSIGN_OR_RETURN(const json* d, Member(j, ptr, "D", json::value_t::array));
    if (d->size() != arity) {
      return Err(Sub(ptr, "D"), fmt::format("'{}' data must have {} elements ({}), found {}", name,
                                            arity, what, d->size()));
    }
    return d;
  }

  // Splits "1.a_intarray" into its dialect ("pd_op") and local name; "NULL" has no dialect.
  StatusOr<std::pair<std::string_view, std::string>> Name(const json& j, const Ptr& ptr) const {
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::object));
    IRM_ASSIGN_OR_RETURN(const json* n, Member(j, ptr, "#", json::value_t::string));
    const std::string name = n->get<std::string>();
    if (name == "NULL") return std::pair<std::string_view, std::string>{"", name};
    const size_t dot = name.find('.');
    int id = 0;
    bool numeric = dot != std::string::npos && dot > 0 && dot < 6;
    for (size_t i = 0; numeric && i < dot; ++i) {
      numeric = (name[i] >= '0' && name[i] <= '9') || (i == 0 && name[i] == '-' && dot > 1);
    }
    if (!numeric) return Err(Sub(ptr, "#"), fmt::format("'{}' has no dialect id", name));
    id = std::stoi(name.substr(0, dot));
    const std::optional<std::string_view> dialect = DialectFromJsonId(id);
    if (!dialect) {
      return Err(Sub(ptr, "#"), fmt::format("unknown dialect id {} in '{}'", id, name));
    }
    return std::pair<std::string_view, std::string>{*dialect, name.substr(dot + 1)};
  }

  StatusOr<LoD> ReadLoD(const json& j, const Ptr& ptr) const {
    IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::array));
    LoD lod;
    for (size_t i = 0; i < j.size(); ++i) {
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> level, Ints(j[i], Sub(ptr, i)));
      std::vector<size_t> out;
      for (size_t k = 0; k < level.size(); ++k) {
        if (level[k] < 0) return Err(Sub(Sub(ptr, i), k), "LoD offsets must not be negative");
        out.push_back(static_cast<size_t>(level[k]));
      }
      lod.push_back(std::move(out));
    }
    return lod;
  }

  StatusOr<DataLayout> Layout(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(std::string s, String(j, ptr));
    const std::optional<DataLayout> layout = DataLayoutFromName(s);
    if (!layout) return Err(ptr, fmt::format("unknown data layout '{}'", s));
    return *layout;
  }

  StatusOr<newir::Type> Dtype(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(newir::Type t, Type(j, ptr));
    if (!t.IsScalar()) return Err(ptr, "a tensor's dtype must be a builtin scalar type");
    return t;
  }

  StatusOr<newir::Type> Type(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(auto name, Name(j, ptr));
    const std::string full = (*Find(j, "#")).get<std::string>();
    const auto& [dialect, local] = name;
    if (local == "NULL") return newir::Type();
    IRM_RETURN_IF_ERROR(CheckKeys(j, ptr, {"#", "D"}));
    const Ptr d = Sub(ptr, "D");
    if (dialect == "builtin") {
      for (const ScalarName& s : kScalarNames) {
        if (local == s.name) return newir::Type::Scalar(s.kind);
      }
      if (local == "t_vec") {
        IRM_ASSIGN_OR_RETURN(const json* data, Member(j, ptr, "D", json::value_t::array));
        std::vector<newir::Type> elements;
        for (size_t i = 0; i < data->size(); ++i) {
          IRM_ASSIGN_OR_RETURN(newir::Type e, Type((*data)[i], Sub(d, i)));
          elements.push_back(std::move(e));
        }
        return newir::Type::Vector(std::move(elements));
      }
    }
    if ((dialect == "builtin" && local == "t_dtensor") ||
        (dialect == "pd_op" && local == "t_selected_rows")) {
      IRM_ASSIGN_OR_RETURN(const json* data,
                           Data(j, ptr, full, 5, "dtype, dims, layout, lod, offset"));
      IRM_ASSIGN_OR_RETURN(newir::Type dtype, Dtype((*data)[0], Sub(d, 0)));
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints((*data)[1], Sub(d, 1)));
      IRM_ASSIGN_OR_RETURN(DataLayout layout, Layout((*data)[2], Sub(d, 2)));
      IRM_ASSIGN_OR_RETURN(LoD lod, ReadLoD((*data)[3], Sub(d, 3)));
      IRM_ASSIGN_OR_RETURN(int64_t offset, Int((*data)[4], Sub(d, 4)));
      if (offset < 0) return Err(Sub(d, 4), "the offset must not be negative");
      return local == "t_dtensor"
                 ? newir::Type::DenseTensor(dtype, std::move(dims), layout, std::move(lod),
                                            static_cast<size_t>(offset))
                 : newir::Type::SelectedRows(dtype, std::move(dims), layout, std::move(lod),
                                             static_cast<size_t>(offset));
    }
    if (dialect == "pd_op" && local == "t_dense_tensor_array") {
      IRM_ASSIGN_OR_RETURN(const json* data, Data(j, ptr, full, 3, "dtype, dims, layout"));
      IRM_ASSIGN_OR_RETURN(newir::Type dtype, Dtype((*data)[0], Sub(d, 0)));
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints((*data)[1], Sub(d, 1)));
      IRM_ASSIGN_OR_RETURN(DataLayout layout, Layout((*data)[2], Sub(d, 2)));
      return newir::Type::DenseTensorArray(dtype, std::move(dims), layout);
    }
    if (dialect == "pd_dist" && local == "t_dist_dtensor") {
      IRM_ASSIGN_OR_RETURN(const json* data,
                           Data(j, ptr, full, 3, "dense tensor, tensor dist, local dims"));
      IRM_ASSIGN_OR_RETURN(newir::Type dense, Type((*data)[0], Sub(d, 0)));
      IRM_ASSIGN_OR_RETURN(Attribute dist, Attr((*data)[1], Sub(d, 1)));
      if (dist.kind() != AttrKind::kTensorDist) {
        return Err(Sub(d, 1), "expected a 4.a_tensor_dist attribute");
      }
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> local_dims, Ints((*data)[2], Sub(d, 2)));
      StatusOr<newir::Type> t =
          newir::Type::DistDenseTensor(dense, *dist.AsTensorDist(), std::move(local_dims));
      if (!t.ok()) return Err(ptr, t.status().message());
      return std::move(t).value();
    }
    return Err(Sub(ptr, "#"), fmt::format("unknown type '{}'", full));
  }

  StatusOr<double> FloatValue(const json& j, const Ptr& ptr) const {
    if (const json* vd = Find(j, "VD")) {
      IRM_ASSIGN_OR_RETURN(std::string s, String(*vd, Sub(ptr, "VD")));
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "INF") return std::numeric_limits<double>::infinity();
      if (s == "-INF") return -std::numeric_limits<double>::infinity();
      return Err(Sub(ptr, "VD"),
                 fmt::format("unknown special float '{}' (expected NaN, INF or -INF)", s));
    }
    IRM_ASSIGN_OR_RETURN(const json* d, Member(j, ptr, "D", json::value_t::number_float));
    return d->get<double>();
  }

  StatusOr<ProcessMesh> Mesh(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(Attribute a, Attr(j, ptr));
    if (a.kind() != AttrKind::kProcessMesh) {
      return Err(ptr, "expected a 4.a_process_mesh attribute");
    }
    return *a.AsProcessMesh();
  }

  StatusOr<Attribute> Attr(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(auto name, Name(j, ptr));
    const std::string full = (*Find(j, "#")).get<std::string>();
    const auto& [dialect, local] = name;
    if (local == "NULL") return Attribute();
    IRM_RETURN_IF_ERROR(CheckKeys(j, ptr, {"#", "D", "VD"}));
    const Ptr d = Sub(ptr, "D");
    auto data = [&]() -> StatusOr<const json*> {
      const json* m = Find(j, "D");
      if (m == nullptr) return Err(ptr, "missing key 'D'");
      return m;
    };
    if (dialect == "builtin") {
      if (local == "a_f32" || local == "a_f64") {
        IRM_ASSIGN_OR_RETURN(double v, FloatValue(j, ptr));
        return local == "a_f32" ? Attribute::Float(static_cast<float>(v)) : Attribute::Double(v);
      }
      IRM_ASSIGN_OR_RETURN(const json* v, data());
      if (local == "a_bool") {
        IRM_RETURN_IF_ERROR(Expect(*v, d, json::value_t::boolean));
        return Attribute::Bool(v->get<bool>());
      }
      if (local == "a_i32") {
        IRM_ASSIGN_OR_RETURN(int32_t x, Int32(*v, d));
        return Attribute::Int32(x);
      }
      if (local == "a_i64" || local == "a_index") {
        IRM_ASSIGN_OR_RETURN(int64_t x, Int(*v, d));
        return Attribute::Int64(x);
      }
      if (local == "a_str") {
        IRM_ASSIGN_OR_RETURN(std::string s, String(*v, d));
        return Attribute::String(std::move(s));
      }
      if (local == "a_array") {
        IRM_RETURN_IF_ERROR(Expect(*v, d, json::value_t::array));
        std::vector<Attribute> elements;
        for (size_t i = 0; i < v->size(); ++i) {
          IRM_ASSIGN_OR_RETURN(Attribute e, Attr((*v)[i], Sub(d, i)));
          elements.push_back(std::move(e));
        }
        return Attribute::Array(std::move(elements));
      }
      if (local == "a_type") {
        IRM_ASSIGN_OR_RETURN(newir::Type t, Type(*v, d));
        return Attribute::TypeAttr(std::move(t));
      }
    } else if (dialect == "pd_op") {
      IRM_ASSIGN_OR_RETURN(const json* v, data());
      if (local == "a_intarray") {
        IRM_ASSIGN_OR_RETURN(std::vector<int64_t> values, Ints(*v, d));
        return Attribute::IntArrayAttr(std::move(values));
      }
      if (local == "a_dtype") {
        IRM_ASSIGN_OR_RETURN(DataType t, ReadDataType(*v, d));
        return Attribute::DataTypeAttr(t);
      }
      if (local == "a_layout") {
        IRM_ASSIGN_OR_RETURN(DataLayout l, Layout(*v, d));
        return Attribute::DataLayoutAttr(l);
      }
      if (local == "a_place") {
        IRM_ASSIGN_OR_RETURN(const json* p, Data(j, ptr, full, 3,
                                                 "allocation type, device, "
                                                 "device type"));
        IRM_ASSIGN_OR_RETURN(int32_t type, Int32((*p)[0], Sub(d, 0)));
        static constexpr int32_t kTypes[] = {0, 1, 2, 3, 4, 5, 7, 9};
        bool known = false;
        for (int32_t t : kTypes) known = known || t == type;
        if (!known) return Err(Sub(d, 0), fmt::format("unknown allocation type {}", type));
        IRM_ASSIGN_OR_RETURN(int32_t device, Int32((*p)[1], Sub(d, 1)));
        IRM_ASSIGN_OR_RETURN(std::string device_type, String((*p)[2], Sub(d, 2)));
        return Attribute::PlaceAttr(
            Place{static_cast<AllocationType>(type), device, std::move(device_type)});
      }
      if (local == "a_scalar") {
        IRM_ASSIGN_OR_RETURN(const json* s, Data(j, ptr, full, 2, "dtype, value"));
        IRM_ASSIGN_OR_RETURN(DataType t, ReadDataType((*s)[0], Sub(d, 0)));
        const json& x = (*s)[1];
        ScalarValue value{t, 0.0};
        if (x.is_boolean()) {
          value.value = x.get<bool>();
        } else if (x.is_number_integer()) {
          IRM_ASSIGN_OR_RETURN(int64_t i, Int(x, Sub(d, 1)));
          value.value = i;
        } else if (x.is_number_float()) {
          value.value = x.get<double>();
        } else if (x == "NaN" || x == "INF" || x == "-INF") {
          value.value = x == "NaN"   ? std::numeric_limits<double>::quiet_NaN()
                        : x == "INF" ? std::numeric_limits<double>::infinity()
                                     : -std::numeric_limits<double>::infinity();
        } else {
          return Err(Sub(d, 1), fmt::format("expected a scalar value, found {}", KindOf(x)));
        }
        return Attribute::Scalar(std::move(value));
      }
    } else if (dialect == "pd_dist") {
      if (local == "a_process_mesh") {
        IRM_ASSIGN_OR_RETURN(const json* m, Data(j, ptr, full, 3, "shape, process ids, dim names"));
        ProcessMesh mesh;
        IRM_ASSIGN_OR_RETURN(mesh.shape, Ints((*m)[0], Sub(d, 0)));
        IRM_ASSIGN_OR_RETURN(mesh.process_ids, Ints((*m)[1], Sub(d, 1)));
        IRM_RETURN_IF_ERROR(Expect((*m)[2], Sub(d, 2), json::value_t::array));
        for (size_t i = 0; i < (*m)[2].size(); ++i) {
          IRM_ASSIGN_OR_RETURN(std::string n, String((*m)[2][i], Sub(Sub(d, 2), i)));
          mesh.dim_names.push_back(std::move(n));
        }
        return Attribute::ProcessMeshAttr(std::move(mesh));
      }
      if (local == "a_tensor_dist") {
        IRM_ASSIGN_OR_RETURN(const json* t, Member(j, ptr, "D", json::value_t::array));
        if (t->size() != 3 && t->size() != 4) {
          return Err(d, fmt::format("'{}' data must have 3 or 4 elements (mesh, dims mapping, "
                                    "partial status[, placements]), found {}",
                                    full, t->size()));
        }
        return TensorDist(*t, d);
      }
      if (local == "a_op_dist") {
        IRM_ASSIGN_OR_RETURN(const json* o,
                             Data(j, ptr, full, 4, "mesh, operands, results, chunk id"));
        OperationDistAttr dist;
        IRM_ASSIGN_OR_RETURN(dist.mesh, Mesh((*o)[0], Sub(d, 0)));
        for (int k = 1; k <= 2; ++k) {
          const Ptr p = Sub(d, k);
          IRM_RETURN_IF_ERROR(Expect((*o)[k], p, json::value_t::array));
          for (size_t i = 0; i < (*o)[k].size(); ++i) {
            IRM_ASSIGN_OR_RETURN(Attribute a, Attr((*o)[k][i], Sub(p, i)));
            if (a.kind() != AttrKind::kTensorDist && a.kind() != AttrKind::kArray &&
                a.kind() != AttrKind::kNull) {
              return Err(Sub(p, i), fmt::format("an op dist entry must be a tensor dist, an array "
                                                "or NULL, not {}",
                                                AttrKindName(a.kind())));
            }
            (k == 1 ? dist.operands : dist.results).push_back(std::move(a));
          }
        }
        IRM_ASSIGN_OR_RETURN(dist.chunk_id, Int((*o)[3], Sub(d, 3)));
        return Attribute::OperationDist(std::move(dist));
      }
    }
    return Err(Sub(ptr, "#"), fmt::format("unknown attribute '{}'", full));
  }

  StatusOr<DataType> ReadDataType(const json& j, const Ptr& ptr) const {
    IRM_ASSIGN_OR_RETURN(std::string s, String(j, ptr));
    const std::optional<DataType> t = DataTypeFromName(s);
    if (!t) return Err(ptr, fmt::format("unknown data type '{}'", s));
    return *t;
  }

  StatusOr<Attribute> TensorDist(const json& t, const Ptr& d) const {
    TensorDistAttr dist;
    IRM_ASSIGN_OR_RETURN(dist.mesh, Mesh(t[0], Sub(d, 0)));
    IRM_ASSIGN_OR_RETURN(dist.dims_mapping, Ints(t[1], Sub(d, 1)));
    const Ptr pp = Sub(d, 2);
    IRM_RETURN_IF_ERROR(Expect(t[2], pp, json::value_t::array));
    for (size_t i = 0; i < t[2].size(); ++i) {
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> pair, Ints(t[2][i], Sub(pp, i)));
      if (pair.size() != 2) {
        return Err(Sub(pp, i), fmt::format("a partial status entry must be [mesh dim, reduce "
                                           "type], found {} elements",
                                           pair.size()));
      }
      const std::optional<ReduceType> r = ReduceTypeFromInt(pair[1]);
      if (!r) return Err(Sub(Sub(pp, i), 1), fmt::format("unknown reduce type {}", pair[1]));
      dist.partial_status[pair[0]] = *r;
    }
    if (t.size() == 4) {
      const Ptr pl = Sub(d, 3);
      IRM_RETURN_IF_ERROR(Expect(t[3], pl, json::value_t::array));
      std::vector<Placement> placements;
      for (size_t i = 0; i < t[3].size(); ++i) {
        const json& p = t[3][i];
        const Ptr at = Sub(pl, i);
        IRM_RETURN_IF_ERROR(Expect(p, at, json::value_t::array));
        if (p.size() == 1 && p[0] == "R") {
          placements.push_back(Placement::Replicate());
        } else if (p.size() == 2 && p[0] == "S") {
          IRM_ASSIGN_OR_RETURN(int64_t dim, Int(p[1], Sub(at, 1)));
          placements.push_back(Placement::Shard(dim));
        } else if (p.size() == 2 && p[0] == "P") {
          IRM_ASSIGN_OR_RETURN(int64_t rt, Int(p[1], Sub(at, 1)));
          const std::optional<ReduceType> r = ReduceTypeFromInt(rt);
          if (!r) return Err(Sub(at, 1), fmt::format("unknown reduce type {}", rt));
          placements.push_back(Placement::Partial(*r));
        } else {
          return Err(at, "a placement must be [\"R\"], [\"S\", dim] or [\"P\", reduce type]");
        }
      }
      dist.placements = std::move(placements);
    }
    return Attribute::TensorDist(std::move(dist));
  }

  // Reads an `A`/`OA` list of {"N": name, "AT": attr} into `attrs`.
  Status NamedAttrs(const json& list, const Ptr& ptr, AttributeMap& attrs) const {
    IRM_RETURN_IF_ERROR(Expect(list, ptr, json::value_t::array));
    for (size_t i = 0; i < list.size(); ++i) {
      const Ptr at = Sub(ptr, i);
      IRM_RETURN_IF_ERROR(Expect(list[i], at, json::value_t::object));
      IRM_RETURN_IF_ERROR(CheckKeys(list[i], at, {"N", "AT"}));
      IRM_ASSIGN_OR_RETURN(const json* n, Member(list[i], at, "N", json::value_t::string));
      IRM_ASSIGN_OR_RETURN(const json* a, Member(list[i], at, "AT", json::value_t::object));
      IRM_ASSIGN_OR_RETURN(Attribute attr, Attr(*a, Sub(at, "AT")));
      const std::string name = n->get<std::string>();
      if (attrs.contains(name)) {
        return Err(Sub(at, "N"), fmt::format("attribute '{}' given twice", name));
      }
      attrs.emplace(name, std::move(attr));
    }
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
    IRM_ASSIGN_OR_RETURN(newir::Type type, Type(*tt, Sub(ptr, "TT")));
    return std::pair<int64_t, newir::Type>{id, std::move(type)};
  }

  StatusOr<std::string> OpName(const json& op, const Ptr& ptr) const {
    const std::string name = (*Find(op, "#")).get<std::string>();
    const size_t dot = name.find('.');
    bool numeric = dot != std::string::npos && dot > 0;
    for (size_t i = 0; numeric && i < dot; ++i) {
      numeric = (name[i] >= '0' && name[i] <= '9') || (i == 0 && name[i] == '-' && dot > 1);
    }
    if (!numeric) return name;  // an op of no known dialect, written as it is
    if (dot > 6) return Err(Sub(ptr, "#"), fmt::format("unknown dialect id in '{}'", name));
    const int id = std::stoi(name.substr(0, dot));
    const std::optional<std::string_view> dialect = DialectFromJsonId(id);
    if (!dialect) {
      return Err(Sub(ptr, "#"), fmt::format("unknown dialect id {} in '{}'", id, name));
    }
    return fmt::format("{}.{}", OpNamePrefixOfDialect(*dialect), name.substr(dot + 1));
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
    if (const json* da = Find(op, "DA")) {
      const Ptr da_ptr = Sub(ptr, "DA");
      const Ptr first_ptr = Sub(da_ptr, size_t{0});
      const bool wrapped = da->is_array() && da->size() == 1;
      const json* dj = wrapped ? &(*da)[0] : da;
      const Ptr& dp = wrapped ? first_ptr : da_ptr;
      IRM_ASSIGN_OR_RETURN(Attribute dist, Attr(*dj, dp));
      if (dist.kind() != AttrKind::kOperationDist) {
        return Err(dp, "expected a 4.a_op_dist attribute");
      }
      attrs["op_dist_attr"] = std::move(dist);
    }
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
        if (it == values_.end()) return Err(at, fmt::format("undefined value id {}", id));
        operands.push_back(it->second);
      }
    }
    std::vector<int64_t> ids;
    std::vector<newir::Type> types;
    if (const json* out = Find(op, "O")) {
      const Ptr op_ = Sub(ptr, "O");
      IRM_RETURN_IF_ERROR(Expect(*out, op_, json::value_t::array));
      std::set<int64_t> here;
      for (size_t i = 0; i < out->size(); ++i) {
        IRM_RETURN_IF_ERROR(Expect((*out)[i], Sub(op_, i), json::value_t::object));
        IRM_RETURN_IF_ERROR(CheckKeys((*out)[i], Sub(op_, i), {"%", "TT"}));
        IRM_ASSIGN_OR_RETURN(auto def, ValueDef((*out)[i], Sub(op_, i), true));
        if (!here.insert(def.first).second) {
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
    if (const json* da = Find(op, "DA")) {
      IRM_ASSIGN_OR_RETURN(Attribute dist, Attr(*da, Sub(ptr, "DA")));
      attrs["op_dist_attr"] = std::move(dist);
    }
    const json* regions = Find(op, "regions");
    if (regions != nullptr) {
      IRM_RETURN_IF_ERROR(Expect(*regions, Sub(ptr, "regions"), json::value_t::array));
    }
    const size_t num_regions = regions != nullptr ? regions->size() : 0;
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

  Status Block(const json& block, const Ptr& ptr, newir::Block& out) {
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

  std::string file_;
  std::unordered_map<int64_t, Value*> values_;
};

// 1-based line and column of byte `offset` in `text`.
std::pair<int, int> LineCol(std::string_view text, size_t offset) {
  int line = 1;
  int col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// The offset of the first bracket that opens a level deeper than kMaxJsonDepth, if any.
std::optional<size_t> TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string WritePirJson(const Program& program, const PirJsonWriteOptions& options) {
  return Writer(options).Program(program).dump(options.indent);
}

StatusOr<Program> ReadPirJson(std::string_view text, const std::string& file) {
  if (std::optional<size_t> at = TooDeep(text)) {
    const auto [line, col] = LineCol(text, *at);
    return Status(StatusCode::kParseError, Location::Text(file, line, col),
                  fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth));
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's byte is 1-based: the position of the character it stopped at.
    const auto [line, col] = LineCol(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string message = e.what();
    const size_t colon = message.find(": ", message.find("parse error"));
    if (colon != std::string::npos) message = message.substr(colon + 2);
    return Status(StatusCode::kParseError, Location::Text(file, line, col), message);
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
