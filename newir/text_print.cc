// Printing of types, attribute values and the pd_dist metadata in the PIR text form, in the typed
// (canonical, lossless) and the current (Paddle 3.0+, untyped) styles. printer.h documents every
// form and says which parts are Paddle's and which are our extensions.
#include "newir/text_print.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "newir/printer.h"

namespace irm::newir {
namespace {

template <typename F>
std::string FloatTextOf(F v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return fmt::format("{}", v);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += fmt::format("{}x", d);
  return out;
}

std::string LoDText(const LoD& lod) {
  std::vector<std::string> levels;
  for (const std::vector<size_t>& level : lod) {
    levels.push_back(fmt::format("[{}]", fmt::join(level, ",")));
  }
  return fmt::format("[{}]", fmt::join(levels, ","));
}

// dims, dtype and the layout when it is not NCHW: `2x3xf32`, `2x3xf32 NHWC`.
std::string ShapeText(const Type& type, TypeStyle style, bool with_dims = true) {
  std::string out = with_dims ? DimsText(type.dims()) : std::string();
  out += PrintType(type.dtype(), style);
  if (type.layout() != DataLayout::kNCHW) {
    out += ' ';
    out += DataLayoutName(type.layout());
  }
  return out;
}

// `, lod:[[…]]` and `, offset:N` when they are not the defaults.
std::string LoDAndOffsetText(const Type& type) {
  std::string out;
  if (!type.lod().empty()) out += ", lod:" + LoDText(type.lod());
  if (type.offset() != 0) out += fmt::format(", offset:{}", type.offset());
  return out;
}

// A dist tensor's local dims, printed only when they are not what the dims mapping computes.
std::string LocalDimsText(const Type& type) {
  StatusOr<Type> computed = Type::DistDenseTensor(type.dense(), *type.dist_attr());
  if (computed.ok() && computed->local_dims() == type.local_dims()) return {};
  return fmt::format(", local_dims:[{}]", fmt::join(type.local_dims(), ","));
}

// The parts of a sparse tensor type that Paddle's print leaves out (op_dialect.cc PrintTypeImpl
// writes only dims and dtype), each written when it differs from its default (SparsePartDefault):
// `, non_zero_dims:[…]`, `, indices:T`, `, crows:T`, `, cols:T`, `, elements:T`,
// `, coalesced:true`.
std::string SparsePartsText(const Type& type, TypeStyle style) {
  const Type fallback = SparsePartDefault(type.dtype(), type.dims());
  std::string out;
  auto part = [&](const char* label, const Type& t) {
    if (t != fallback) out += fmt::format(", {}:{}", label, PrintType(t, style));
  };
  if (type.kind() == TypeKind::kSparseCooTensor) {
    if (type.non_zero_dims() != type.dims()) {
      out += fmt::format(", non_zero_dims:[{}]", fmt::join(type.non_zero_dims(), ","));
    }
    part("indices", type.non_zero_indices());
  } else {
    part("crows", type.non_zero_crows());
    part("cols", type.non_zero_cols());
  }
  part("elements", type.non_zero_elements());
  if (type.coalesced()) out += ", coalesced:true";
  return out;
}

// A double Scalar always shows that it is one (`2.0`, not `2`): the parser tells a Scalar's
// alternative from the text of its value.
std::string ScalarValueText(const ScalarValue& s, TypeStyle style) {
  if (const double* d = std::get_if<double>(&s.value)) {
    std::string text = FloatTextOf(*d);
    if (style == TypeStyle::kTyped && text.find_first_of(".eni") == std::string::npos) {
      text += ".0";
    }
    return text;
  }
  if (const int64_t* i = std::get_if<int64_t>(&s.value)) return fmt::format("{}", *i);
  return std::get<bool>(s.value) ? "true" : "false";
}

std::string OperationDistText(const OperationDistAttr& op, TypeStyle style) {
  std::string out = fmt::format("{{mesh:{{shape:[{}],process_ids:[{}]",
                                fmt::join(op.mesh.shape, ","), fmt::join(op.mesh.process_ids, ","));
  if (!op.mesh.dim_names.empty()) {
    std::vector<std::string> names;
    for (const std::string& n : op.mesh.dim_names) names.push_back(QuotedText(n));
    out += fmt::format(",dim_names:[{}]", fmt::join(names, ","));
  }
  out += '}';
  for (size_t i = 0; i < op.operands.size(); ++i) {
    out += fmt::format(",operand({}):{{{}}}", i, PrintAttribute(op.operands[i], style));
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    out += fmt::format(",result({}):{{{}}}", i, PrintAttribute(op.results[i], style));
  }
  return out + fmt::format(",chunk_id:{}}}", op.chunk_id);
}

}  // namespace

Type SparsePartDefault(const Type& dtype, const std::vector<int64_t>& dims) {
  return Type::DenseTensor(dtype, dims);
}

std::string FloatText(float v) { return FloatTextOf(v); }
std::string FloatText(double v) { return FloatTextOf(v); }

std::string QuotedText(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string ProcessMeshText(const ProcessMesh& mesh) {
  std::string out = fmt::format("mesh_shape:[{}],process_ids:[{}]", fmt::join(mesh.shape, ","),
                                fmt::join(mesh.process_ids, ","));
  if (!mesh.dim_names.empty()) {
    std::vector<std::string> names;
    for (const std::string& n : mesh.dim_names) names.push_back(QuotedText(n));
    out += fmt::format(",dim_names:[{}]", fmt::join(names, ","));
  }
  return out;
}

std::string PlacementText(const Placement& placement) {
  switch (placement.kind) {
    case Placement::Kind::kReplicate:
      return "Replicate()";
    case Placement::Kind::kShard:
      return fmt::format("Shard(dim={})", placement.dim);
    case Placement::Kind::kPartial:
      return fmt::format("Partial(reduce_type={})", ReduceTypeName(placement.reduce));
  }
  return "?";
}

std::string TensorDistText(const TensorDistAttr& dist) {
  std::string out = fmt::format("{},dims_mappings:[{}]", ProcessMeshText(dist.mesh),
                                fmt::join(dist.dims_mapping, ","));
  if (!dist.partial_status.empty()) {
    std::vector<std::string> items;
    for (const auto& [dim, reduce] : dist.partial_status) {
      items.push_back(fmt::format("partial({},{})", dim, ReduceTypeName(reduce)));
    }
    out += fmt::format(", {}", fmt::join(items, ","));
  }
  if (dist.placements) {
    std::vector<std::string> items;
    for (const Placement& p : *dist.placements) items.push_back(PlacementText(p));
    out += fmt::format(", placements:[{}]", fmt::join(items, ", "));
  }
  return out;
}

std::string PrintType(const Type& type, TypeStyle style) {
  switch (type.kind()) {
    case TypeKind::kNull:
      return "<<NULL TYPE>>";
    case TypeKind::kDenseTensor:
      return fmt::format("{}tensor<{}{}>", style == TypeStyle::kTyped ? "builtin." : "",
                         ShapeText(type, style), LoDAndOffsetText(type));
    case TypeKind::kVector: {
      std::vector<std::string> items;
      for (const Type& e : type.elements()) items.push_back(PrintType(e, style));
      return fmt::format("vec[{}]", fmt::join(items, ","));
    }
    case TypeKind::kDenseTensorArray:
      // Paddle prints only the dtype; dims are our extension, shown when there are any.
      return fmt::format("pd_op.tensor_array<{}>", ShapeText(type, style));
    case TypeKind::kSelectedRows:
      return fmt::format("pd_op.selectedrows<{}{}>", ShapeText(type, style),
                         LoDAndOffsetText(type));
    case TypeKind::kDistDenseTensor:
      return fmt::format("pd_dist.tensor<{}, {}{}{}>", ShapeText(type, style),
                         TensorDistText(*type.dist_attr()), LoDAndOffsetText(type),
                         LocalDimsText(type));
    case TypeKind::kSparseCooTensor:
      return fmt::format("pd_op.sparsecootensor<{}{}>", ShapeText(type, style),
                         SparsePartsText(type, style));
    case TypeKind::kSparseCsrTensor:
      // Paddle prints a CSR type as a bare `pd_op.`; the name is ours, made like the COO one.
      return fmt::format("pd_op.sparsecsrtensor<{}{}>", ShapeText(type, style),
                         SparsePartsText(type, style));
    default:
      return ScalarTypeName(type.kind());
  }
}

std::string PrintAttribute(const Attribute& attr, TypeStyle style) {
  const bool typed = style == TypeStyle::kTyped;
  switch (attr.kind()) {
    case AttrKind::kNull:
      return "<#AttrNull>";
    case AttrKind::kBool:
      return *attr.AsBool() ? "true" : "false";
    case AttrKind::kInt32:
      return fmt::format("{}{}", typed ? "(Int32)" : "", *attr.AsInt32());
    case AttrKind::kInt64:
      return fmt::format("{}{}", typed ? "(Int64)" : "", *attr.AsInt64());
    case AttrKind::kFloat:
      return (typed ? "(Float)" : "") + FloatTextOf(*attr.AsFloat());
    case AttrKind::kDouble:
      return (typed ? "(Double)" : "") + FloatTextOf(*attr.AsDouble());
    case AttrKind::kString:
      return QuotedText(*attr.AsString());
    case AttrKind::kArray: {
      std::vector<std::string> items;
      for (const Attribute& a : *attr.AsArray()) items.push_back(PrintAttribute(a, style));
      return fmt::format("[{}]", fmt::join(items, ","));
    }
    case AttrKind::kType:
      return PrintType(*attr.AsType(), style);
    case AttrKind::kIntArray:
      return fmt::format("{}[{}]", typed ? "(pd_op.IntArray)" : "",
                         fmt::join(attr.AsIntArray()->values, ","));
    case AttrKind::kDataType:
      return fmt::format("{}{}", typed ? "(pd_op.DataType)" : "", DataTypeName(*attr.AsDataType()));
    case AttrKind::kPlace:
      return (typed ? "(pd_op.Place)" : "") + attr.AsPlace()->ToString();
    case AttrKind::kDataLayout:
      return fmt::format("{}{}", typed ? "(pd_op.DataLayout)" : "",
                         DataLayoutName(*attr.AsDataLayout()));
    case AttrKind::kScalar: {
      const ScalarValue& s = *attr.AsScalar();
      if (!typed) return ScalarValueText(s, style);
      return fmt::format("(pd_op.Scalar:{}){}", DataTypeName(s.dtype), ScalarValueText(s, style));
    }
    case AttrKind::kProcessMesh:
      return ProcessMeshText(*attr.AsProcessMesh());
    case AttrKind::kTensorDist:
      return TensorDistText(*attr.AsTensorDist());
    case AttrKind::kOperationDist:
      return OperationDistText(*attr.AsOperationDist(), style);
  }
  return "<#AttrNull>";
}

}  // namespace irm::newir
