// Types and attributes in PIR JSON, both ways (see pir_json_attributes.h).
#include "newir/pir_json_attributes.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "newir/dialect.h"
#include "newir/pir_json_names.h"

namespace irm::newir::pir_json {
namespace {

// {"#": name} or {"#": name, "D": ...}: Begin opens the object and writes the name; the caller
// writes D's value (if any) and closes the object.
void Begin(JsonOut& out, std::string_view name) {
  out.BeginObject();
  out.Member("#", name);
}
void BeginData(JsonOut& out, std::string_view name) {
  Begin(out, name);
  out.Key("D");
}
void Named(JsonOut& out, std::string_view name) {
  Begin(out, name);
  out.EndObject();
}

// NaN and infinities go to "VD" (JSON has no such numbers).
void WriteFloat(JsonOut& out, double v, std::string_view name) {
  Begin(out, name);
  if (std::isnan(v)) {
    out.Member("VD", "NaN");
  } else if (std::isinf(v)) {
    out.Member("VD", v > 0 ? "INF" : "-INF");
  } else {
    out.Key("D");
    out.Double(v);
  }
  out.EndObject();
}

void WriteInts(JsonOut& out, const std::vector<int64_t>& v) {
  out.BeginArray();
  for (int64_t x : v) out.Int(x);
  out.EndArray();
}

void WriteMesh(JsonOut& out, const ProcessMesh& mesh) {
  BeginData(out, "4.a_process_mesh");
  out.BeginArray();
  WriteInts(out, mesh.shape);
  WriteInts(out, mesh.process_ids);
  out.BeginArray();
  for (const std::string& n : mesh.dim_names) out.String(n);
  out.EndArray();
  out.EndArray();
  out.EndObject();
}

void WriteTensorDist(JsonOut& out, const TensorDistAttr& dist) {
  BeginData(out, "4.a_tensor_dist");
  out.BeginArray();
  WriteMesh(out, dist.mesh);
  WriteInts(out, dist.dims_mapping);
  out.BeginArray();
  for (const auto& [m, r] : dist.partial_status) {
    out.BeginArray();
    out.Int(m);
    out.Int(static_cast<int32_t>(r));
    out.EndArray();
  }
  out.EndArray();
  if (dist.placements) {
    out.BeginArray();
    for (const Placement& p : *dist.placements) {
      out.BeginArray();
      switch (p.kind) {
        case Placement::Kind::kReplicate:
          out.String("R");
          break;
        case Placement::Kind::kShard:
          out.String("S");
          out.Int(p.dim);
          break;
        case Placement::Kind::kPartial:
          out.String("P");
          out.Int(static_cast<int32_t>(p.reduce));
          break;
      }
      out.EndArray();
    }
    out.EndArray();
  }
  out.EndArray();
  out.EndObject();
}

}  // namespace

void WriteNull(JsonOut& out) { Named(out, "NULL"); }

void WriteType(JsonOut& out, const Type& type) {
  if (const char* scalar = ScalarJsonNameOf(type.kind())) {
    Named(out, scalar);
    return;
  }
  switch (type.kind()) {
    case TypeKind::kDenseTensor:
    case TypeKind::kSelectedRows:
      BeginData(out, type.kind() == TypeKind::kDenseTensor ? "0.t_dtensor" : "1.t_selected_rows");
      out.BeginArray();
      WriteType(out, type.dtype());
      WriteInts(out, type.dims());
      out.String(DataLayoutName(type.layout()));
      out.BeginArray();
      for (const auto& level : type.lod()) {
        out.BeginArray();
        for (size_t x : level) out.Uint(x);
        out.EndArray();
      }
      out.EndArray();
      out.Uint(type.offset());
      out.EndArray();
      out.EndObject();
      return;
    case TypeKind::kDenseTensorArray:
      BeginData(out, "1.t_dense_tensor_array");
      out.BeginArray();
      WriteType(out, type.dtype());
      WriteInts(out, type.dims());
      out.String(DataLayoutName(type.layout()));
      out.EndArray();
      out.EndObject();
      return;
    case TypeKind::kVector:
      BeginData(out, "0.t_vec");
      out.BeginArray();
      for (const Type& e : type.elements()) WriteType(out, e);
      out.EndArray();
      out.EndObject();
      return;
    case TypeKind::kDistDenseTensor:
      BeginData(out, "4.t_dist_dtensor");
      out.BeginArray();
      WriteType(out, type.dense());
      WriteTensorDist(out, *type.dist_attr());
      WriteInts(out, type.local_dims());
      out.EndArray();
      out.EndObject();
      return;
    case TypeKind::kSparseCooTensor:
      BeginData(out, "1.t_sparse_coo_tensor");
      out.BeginArray();
      WriteType(out, type.dtype());
      WriteInts(out, type.dims());
      WriteInts(out, type.non_zero_dims());
      out.String(DataLayoutName(type.layout()));
      WriteType(out, type.non_zero_indices());
      WriteType(out, type.non_zero_elements());
      if (type.coalesced()) out.Bool(true);  // our extension; ReadType says why
      out.EndArray();
      out.EndObject();
      return;
    case TypeKind::kSparseCsrTensor:
      BeginData(out, "1.t_sparse_csr_tensor");
      out.BeginArray();
      WriteType(out, type.dtype());
      WriteInts(out, type.dims());
      out.String(DataLayoutName(type.layout()));
      WriteType(out, type.non_zero_crows());
      WriteType(out, type.non_zero_cols());
      WriteType(out, type.non_zero_elements());
      out.EndArray();
      out.EndObject();
      return;
    default:
      WriteNull(out);
      return;
  }
}

void WriteAttr(JsonOut& out, const Attribute& attr) {
  switch (attr.kind()) {
    case AttrKind::kNull:
      WriteNull(out);
      return;
    case AttrKind::kBool:
      BeginData(out, "0.a_bool");
      out.Bool(*attr.AsBool());
      break;
    case AttrKind::kInt32:
      BeginData(out, "0.a_i32");
      out.Int(*attr.AsInt32());
      break;
    case AttrKind::kInt64:
      BeginData(out, "0.a_i64");
      out.Int(*attr.AsInt64());
      break;
    case AttrKind::kFloat:
      WriteFloat(out, *attr.AsFloat(), "0.a_f32");
      return;
    case AttrKind::kDouble:
      WriteFloat(out, *attr.AsDouble(), "0.a_f64");
      return;
    case AttrKind::kString:
      BeginData(out, "0.a_str");
      out.String(*attr.AsString());
      break;
    case AttrKind::kArray:
      BeginData(out, "0.a_array");
      out.BeginArray();
      for (const Attribute& e : *attr.AsArray()) WriteAttr(out, e);
      out.EndArray();
      break;
    case AttrKind::kType:
      BeginData(out, "0.a_type");
      WriteType(out, *attr.AsType());
      break;
    case AttrKind::kIntArray:
      BeginData(out, "1.a_intarray");
      WriteInts(out, attr.AsIntArray()->values);
      break;
    case AttrKind::kDataType:
      BeginData(out, "1.a_dtype");
      out.String(DataTypeName(*attr.AsDataType()));
      break;
    case AttrKind::kPlace: {
      const Place& p = *attr.AsPlace();
      BeginData(out, "1.a_place");
      out.BeginArray();
      out.Int(static_cast<int32_t>(p.type));
      out.Int(p.device);
      out.String(p.device_type);
      out.EndArray();
      break;
    }
    case AttrKind::kDataLayout:
      BeginData(out, "1.a_layout");
      out.String(DataLayoutName(*attr.AsDataLayout()));
      break;
    case AttrKind::kScalar: {
      const ScalarValue& s = *attr.AsScalar();
      BeginData(out, "1.a_scalar");
      out.BeginArray();
      out.String(DataTypeName(s.dtype));
      if (const bool* b = std::get_if<bool>(&s.value)) {
        out.Bool(*b);
      } else if (const int64_t* i = std::get_if<int64_t>(&s.value)) {
        out.Int(*i);
      } else {
        const double d = std::get<double>(s.value);
        if (std::isnan(d)) {
          out.String("NaN");
        } else if (std::isinf(d)) {
          out.String(d > 0 ? "INF" : "-INF");
        } else {
          out.Double(d);
        }
      }
      out.EndArray();
      break;
    }
    case AttrKind::kProcessMesh:
      WriteMesh(out, *attr.AsProcessMesh());
      return;
    case AttrKind::kTensorDist:
      WriteTensorDist(out, *attr.AsTensorDist());
      return;
    case AttrKind::kOperationDist: {
      const OperationDistAttr& o = *attr.AsOperationDist();
      BeginData(out, "4.a_op_dist");
      out.BeginArray();
      WriteMesh(out, o.mesh);
      out.BeginArray();
      for (const Attribute& a : o.operands) WriteAttr(out, a);
      out.EndArray();
      out.BeginArray();
      for (const Attribute& a : o.results) WriteAttr(out, a);
      out.EndArray();
      out.Int(o.chunk_id);
      out.EndArray();
      break;
    }
  }
  out.EndObject();
}

StatusOr<AttrReader::Name> AttrReader::ReadName(const json& j, const Ptr& ptr) const {
  IRM_RETURN_IF_ERROR(Expect(j, ptr, json::value_t::object));
  IRM_ASSIGN_OR_RETURN(const json* n, Member(j, ptr, "#", json::value_t::string));
  const std::string_view name = n->get_ref<const std::string&>();
  if (name == "NULL") return Name{"", name, name};
  const size_t dot = DialectIdEnd(name);
  if (dot == std::string::npos || dot >= 6) {
    return Err(Sub(ptr, "#"), fmt::format("'{}' has no dialect id", name));
  }
  int id = 0;
  std::from_chars(name.data(), name.data() + dot, id);
  const std::optional<std::string_view> dialect = DialectFromJsonId(id);
  if (!dialect) {
    return Err(Sub(ptr, "#"), fmt::format("unknown dialect id {} in '{}'", id, name));
  }
  return Name{*dialect, name.substr(dot + 1), name};
}

StatusOr<LoD> AttrReader::ReadLoD(const json& j, const Ptr& ptr) const {
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

StatusOr<DataLayout> AttrReader::Layout(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(std::string s, String(j, ptr));
  const std::optional<DataLayout> layout = DataLayoutFromName(s);
  if (!layout) return Err(ptr, fmt::format("unknown data layout '{}'", s));
  return *layout;
}

StatusOr<Type> AttrReader::Dtype(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(Type t, ReadType(j, ptr));
  if (!t.IsScalar()) return Err(ptr, "a tensor's dtype must be a builtin scalar type");
  return t;
}

StatusOr<Type> AttrReader::ReadType(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(const Name name, ReadName(j, ptr));
  const auto& [dialect, local, full] = name;
  if (local == "NULL") return Type();
  IRM_RETURN_IF_ERROR(CheckKeys(j, ptr, {"#", "D"}));
  const Ptr d = Sub(ptr, "D");
  if (dialect == "builtin") {
    if (const std::optional<TypeKind> scalar = ScalarKindFromName(local)) {
      return Type::Scalar(*scalar);
    }
    if (local == "t_vec") {
      IRM_ASSIGN_OR_RETURN(const json* data, Member(j, ptr, "D", json::value_t::array));
      std::vector<Type> elements;
      for (size_t i = 0; i < data->size(); ++i) {
        IRM_ASSIGN_OR_RETURN(Type e, ReadType((*data)[i], Sub(d, i)));
        elements.push_back(std::move(e));
      }
      return Type::Vector(std::move(elements));
    }
  }
  if ((dialect == "builtin" && local == "t_dtensor") ||
      (dialect == "pd_op" && local == "t_selected_rows")) {
    IRM_ASSIGN_OR_RETURN(const json* data,
                         Data(j, ptr, full, 5, "dtype, dims, layout, lod, offset"));
    IRM_ASSIGN_OR_RETURN(Type dtype, Dtype((*data)[0], Sub(d, 0)));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints((*data)[1], Sub(d, 1)));
    IRM_ASSIGN_OR_RETURN(DataLayout layout, Layout((*data)[2], Sub(d, 2)));
    IRM_ASSIGN_OR_RETURN(LoD lod, ReadLoD((*data)[3], Sub(d, 3)));
    IRM_ASSIGN_OR_RETURN(int64_t offset, Int((*data)[4], Sub(d, 4)));
    if (offset < 0) return Err(Sub(d, 4), "the offset must not be negative");
    return local == "t_dtensor" ? Type::DenseTensor(dtype, std::move(dims), layout, std::move(lod),
                                                    static_cast<size_t>(offset))
                                : Type::SelectedRows(dtype, std::move(dims), layout, std::move(lod),
                                                     static_cast<size_t>(offset));
  }
  if (dialect == "pd_op" && local == "t_dense_tensor_array") {
    IRM_ASSIGN_OR_RETURN(const json* data, Data(j, ptr, full, 3, "dtype, dims, layout"));
    IRM_ASSIGN_OR_RETURN(Type dtype, Dtype((*data)[0], Sub(d, 0)));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints((*data)[1], Sub(d, 1)));
    IRM_ASSIGN_OR_RETURN(DataLayout layout, Layout((*data)[2], Sub(d, 2)));
    return Type::DenseTensorArray(dtype, std::move(dims), layout);
  }
  if (dialect == "pd_op" && (local == "t_sparse_coo_tensor" || local == "t_sparse_csr_tensor")) {
    // Paddle's serialize_utils.h / deserialize_utils.h: COO is [dtype, dims, non_zero_dims,
    // layout, indices, elements], CSR [dtype, dims, layout, crows, cols, elements], the parts as
    // dense tensor types. Paddle does not write COO's `coalesced`; we append it as a seventh
    // element when it is true (Paddle's reader reads the first six and ignores it).
    const bool coo = local == "t_sparse_coo_tensor";
    const json* raw = Find(j, "D");
    const bool with_coalesced = coo && raw != nullptr && raw->is_array() && raw->size() == 7;
    IRM_ASSIGN_OR_RETURN(const json* data,
                         coo ? Data(j, ptr, full, with_coalesced ? 7 : 6,
                                    "dtype, dims, non_zero_dims, layout, indices, elements")
                             : Data(j, ptr, full, 6, "dtype, dims, layout, crows, cols, elements"));
    IRM_ASSIGN_OR_RETURN(Type dtype, Dtype((*data)[0], Sub(d, 0)));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints((*data)[1], Sub(d, 1)));
    std::vector<int64_t> non_zero_dims;
    size_t next = 2;
    if (coo) {
      IRM_ASSIGN_OR_RETURN(non_zero_dims, Ints((*data)[2], Sub(d, 2)));
      next = 3;
    }
    IRM_ASSIGN_OR_RETURN(DataLayout layout, Layout((*data)[next], Sub(d, next)));
    std::vector<Type> parts;
    for (size_t i = next + 1; i < 6; ++i) {
      IRM_ASSIGN_OR_RETURN(Type part, ReadType((*data)[i], Sub(d, i)));
      if (part.kind() != TypeKind::kDenseTensor) {
        return Err(Sub(d, i), "a sparse tensor part must be a 0.t_dtensor type");
      }
      parts.push_back(std::move(part));
    }
    bool coalesced = false;
    if (with_coalesced) {
      IRM_RETURN_IF_ERROR(Expect((*data)[6], Sub(d, 6), json::value_t::boolean));
      coalesced = (*data)[6].get<bool>();
    }
    StatusOr<Type> t =
        coo ? Type::SparseCooTensor(dtype, std::move(dims), std::move(non_zero_dims), layout,
                                    parts[0], parts[1], coalesced)
            : Type::SparseCsrTensor(dtype, std::move(dims), layout, parts[0], parts[1], parts[2]);
    if (!t.ok()) return Err(ptr, t.status().message());
    return std::move(t).value();
  }
  if (dialect == "pd_dist" && local == "t_dist_dtensor") {
    IRM_ASSIGN_OR_RETURN(const json* data,
                         Data(j, ptr, full, 3, "dense tensor, tensor dist, local dims"));
    IRM_ASSIGN_OR_RETURN(Type dense, ReadType((*data)[0], Sub(d, 0)));
    IRM_ASSIGN_OR_RETURN(Attribute dist, ReadAttr((*data)[1], Sub(d, 1)));
    if (dist.kind() != AttrKind::kTensorDist) {
      return Err(Sub(d, 1), "expected a 4.a_tensor_dist attribute");
    }
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> local_dims, Ints((*data)[2], Sub(d, 2)));
    StatusOr<Type> t = Type::DistDenseTensor(dense, *dist.AsTensorDist(), std::move(local_dims));
    if (!t.ok()) return Err(ptr, t.status().message());
    return std::move(t).value();
  }
  return Err(Sub(ptr, "#"), fmt::format("unknown type '{}'", full));
}

StatusOr<double> AttrReader::FloatValue(const json& j, const Ptr& ptr) const {
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

StatusOr<ProcessMesh> AttrReader::Mesh(const json& j, const Ptr& ptr) const {
  // A mesh is read straight into a ProcessMesh (there is one in every tensor dist attribute);
  // anything else is read as the attribute it says it is, for that attribute's own diagnostic.
  if (const json* n = j.is_object() ? Find(j, "#") : nullptr;
      n != nullptr && n->is_string() && n->get_ref<const std::string&>() == "4.a_process_mesh") {
    IRM_RETURN_IF_ERROR(CheckKeys(j, ptr, {"#", "D", "VD"}));
    return MeshData(j, ptr, "4.a_process_mesh");
  }
  IRM_ASSIGN_OR_RETURN(Attribute a, ReadAttr(j, ptr));
  if (a.kind() != AttrKind::kProcessMesh) {
    return Err(ptr, "expected a 4.a_process_mesh attribute");
  }
  return *a.AsProcessMesh();
}

StatusOr<ProcessMesh> AttrReader::MeshData(const json& j, const Ptr& ptr,
                                           std::string_view full) const {
  const Ptr d = Sub(ptr, "D");
  IRM_ASSIGN_OR_RETURN(const json* m, Data(j, ptr, full, 3, "shape, process ids, dim names"));
  ProcessMesh mesh;
  IRM_ASSIGN_OR_RETURN(mesh.shape, Ints((*m)[0], Sub(d, 0)));
  IRM_ASSIGN_OR_RETURN(mesh.process_ids, Ints((*m)[1], Sub(d, 1)));
  IRM_RETURN_IF_ERROR(Expect((*m)[2], Sub(d, 2), json::value_t::array));
  for (size_t i = 0; i < (*m)[2].size(); ++i) {
    IRM_ASSIGN_OR_RETURN(std::string n, String((*m)[2][i], Sub(Sub(d, 2), i)));
    mesh.dim_names.push_back(std::move(n));
  }
  return mesh;
}

StatusOr<Attribute> AttrReader::ReadAttr(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(const Name name, ReadName(j, ptr));
  const auto& [dialect, local, full] = name;
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
        IRM_ASSIGN_OR_RETURN(Attribute e, ReadAttr((*v)[i], Sub(d, i)));
        elements.push_back(std::move(e));
      }
      return Attribute::Array(std::move(elements));
    }
    if (local == "a_type") {
      IRM_ASSIGN_OR_RETURN(Type t, ReadType(*v, d));
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
      } else if (x.is_null()) {
        // nlohmann dumps a non-finite double as null, so that is what Paddle's writer leaves of
        // a NaN or infinite scalar.
        return Err(Sub(d, 1),
                   "a null scalar value (how Paddle's writer saves NaN and infinities) "
                   "cannot be read back");
      } else {
        return Err(Sub(d, 1), fmt::format("expected a scalar value, found {}", JsonKindName(x)));
      }
      return Attribute::Scalar(std::move(value));
    }
  } else if (dialect == "pd_dist") {
    if (local == "a_process_mesh") {
      IRM_ASSIGN_OR_RETURN(ProcessMesh mesh, MeshData(j, ptr, full));
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
          IRM_ASSIGN_OR_RETURN(Attribute a, ReadAttr((*o)[k][i], Sub(p, i)));
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

StatusOr<DataType> AttrReader::ReadDataType(const json& j, const Ptr& ptr) const {
  IRM_ASSIGN_OR_RETURN(std::string s, String(j, ptr));
  const std::optional<DataType> t = DataTypeFromName(s);
  if (!t) return Err(ptr, fmt::format("unknown data type '{}'", s));
  return *t;
}

StatusOr<Attribute> AttrReader::TensorDist(const json& t, const Ptr& d) const {
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

}  // namespace irm::newir::pir_json
