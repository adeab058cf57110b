// Types of the PIR text form, and the pd_dist pieces types and attributes share (process mesh,
// tensor dist tail, partial status, placements). Every spelling Paddle has printed reads:
// `tensor<2x3xf32>` (3.0+), `builtin.tensor<…>` (3.0-beta, optionally with a layout after the
// dtype as one 2024 version printed it), `pd_op.tensor<…>` (2023), `pd_op.tensor_array<f32>`,
// `pd_op.selectedrows<…>`, `vec[…]`, and `pd_dist.tensor<…>` with or without process_ids. Our own
// lossless extensions (printer.h) read too: a non-default layout, `, lod:[[…]]`, `, offset:N`,
// tensor-array dims, `, local_dims:[…]` and mesh `,dim_names:[…]`. Sparse tensors read as Paddle
// prints COO ones, `pd_op.sparsecootensor<2x3xf32>`, plus our `pd_op.sparsecsrtensor<…>` and the
// parts Paddle leaves out (text_print.h SparsePartDefault).
#include <fmt/format.h>

#include "newir/parse_values.h"
#include "newir/text_print.h"

namespace irm::newir {
namespace {

constexpr auto IsDigit = TextCursor::IsDigit;
constexpr auto IsIdentStart = TextCursor::IsIdentStart;

// `2x3xf32`, `-1x4xi64`, `f32` (0-D): dims, then the element type.
Status ParseShapeAndDtype(TextCursor& c, std::vector<int64_t>& dims, Type& dtype) {
  while (IsDigit(c.Peek()) || c.Peek() == '-') {
    const size_t start = c.pos();
    const bool negative = c.Consume("-");
    const size_t digits = c.pos();
    while (IsDigit(c.Peek())) c.set_pos(c.pos() + 1);
    if (c.pos() == digits) return c.Expected("a dimension", "");
    const std::string_view text = c.Slice(digits, c.pos());
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return c.ErrorAt(start, "tensor dimension is out of range");
    }
    dims.push_back(negative ? -value : value);
    IRM_RETURN_IF_ERROR(c.Expect("x", "after a tensor dimension"));
  }
  const size_t start = c.pos();
  const std::string_view name = c.LexIdent();
  std::optional<Type> t = Type::ScalarFromName(name);
  if (!t) {
    c.set_pos(start);
    return name.empty() ? c.Expected("an element type", "in tensor type")
                        : c.Error(fmt::format("unknown element type '{}'", name));
  }
  dtype = *t;
  return Status::Ok();
}

// ` NHWC` or ` Undefined(AnyLayout)` after the dtype; NCHW when absent.
StatusOr<DataLayout> ParseOptionalLayout(TextCursor& c) {
  if (c.Peek() != ' ' || !IsIdentStart(c.Peek(1))) return DataLayout::kNCHW;
  c.set_pos(c.pos() + 1);
  const size_t start = c.pos();
  c.LexIdent();
  if (c.Peek() == '(') {
    const size_t close = c.Rest().substr(0, 32).find(')');
    if (close != std::string_view::npos) c.set_pos(c.pos() + close + 1);
  }
  const std::string_view name = c.Slice(start, c.pos());
  std::optional<DataLayout> layout = DataLayoutFromName(name);
  if (!layout) return c.ErrorAt(start, fmt::format("unknown data layout '{}'", name));
  return *layout;
}

// `[[0,2,4],[0,1]]`
StatusOr<LoD> ParseLoD(TextCursor& c) {
  LoD lod;
  IRM_RETURN_IF_ERROR(c.Expect("[", "to open the lod"));
  if (c.Consume("]")) return lod;
  while (true) {
    std::vector<size_t> level;
    IRM_RETURN_IF_ERROR(c.Expect("[", "to open a lod level"));
    if (!c.Consume("]")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(uint64_t v, c.ParseInt<uint64_t>("a lod offset"));
        level.push_back(static_cast<size_t>(v));
        if (c.Consume("]")) break;
        IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in a lod level"));
      }
    }
    lod.push_back(std::move(level));
    if (c.Consume("]")) return lod;
    IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in the lod"));
  }
}

struct DenseExtras {
  LoD lod;
  size_t offset = 0;
  std::optional<std::vector<int64_t>> local_dims;
};

// The `, lod:…`, `, offset:N` (and for dist tensors `, local_dims:[…]`) extensions, in order.
Status ParseDenseExtras(TextCursor& c, DenseExtras& extras, bool dist) {
  if (c.Consume(", lod:")) {
    IRM_ASSIGN_OR_RETURN(extras.lod, ParseLoD(c));
  }
  if (c.Consume(", offset:")) {
    IRM_ASSIGN_OR_RETURN(uint64_t offset, c.ParseInt<uint64_t>("a tensor offset"));
    extras.offset = static_cast<size_t>(offset);
  }
  if (dist && c.Consume(", local_dims:")) {
    IRM_ASSIGN_OR_RETURN(extras.local_dims, c.ParseIntList("in local_dims"));
  }
  return Status::Ok();
}

StatusOr<ReduceType> ParseReduceName(TextCursor& c) {
  const size_t start = c.pos();
  const std::string_view name = c.LexIdent();
  for (int32_t i = 0; i < kNumReduceTypes; ++i) {
    if (name == ReduceTypeName(static_cast<ReduceType>(i))) return static_cast<ReduceType>(i);
  }
  c.set_pos(start);
  if (name.empty()) return c.Expected("a reduce type", "");
  return c.Error(fmt::format(
      "unknown reduce type '{}' (expected SUM, MAX, MIN, PRODUCT, AVG, ANY or ALL)", name));
}

// `Shard(dim=0)`, `Replicate()`, `Partial(reduce_type=SUM)` (phi's placement_types.h spellings).
StatusOr<Placement> ParsePlacement(TextCursor& c) {
  const size_t start = c.pos();
  if (c.Consume("Replicate()")) return Placement::Replicate();
  if (c.Consume("Shard(dim=")) {
    IRM_ASSIGN_OR_RETURN(int64_t dim, c.ParseInt<int64_t>("a tensor dimension"));
    if (c.LookingAt(", split_factor=") || c.LookingAt(", shard_order=")) {
      return c.Error("Shard split_factor and shard_order are not supported");
    }
    IRM_RETURN_IF_ERROR(c.Expect(")", "after the Shard dimension"));
    return Placement::Shard(dim);
  }
  if (c.Consume("Partial(reduce_type=")) {
    IRM_ASSIGN_OR_RETURN(ReduceType reduce, ParseReduceName(c));
    IRM_RETURN_IF_ERROR(c.Expect(")", "after the Partial reduce type"));
    return Placement::Partial(reduce);
  }
  const std::string_view name = c.LexIdent();
  c.set_pos(start);
  if (name.empty()) return c.Expected("a placement", "");
  return c.Error(fmt::format(
      "unknown placement '{}' (expected Shard(dim=N), Replicate() or Partial(reduce_type=T))",
      name));
}

// `, label:<dense tensor type>` when present; `part` keeps its default otherwise.
Status ParseSparsePart(TextCursor& c, std::string_view label, Type& part) {
  if (!c.Consume(fmt::format(", {}:", label))) return Status::Ok();
  const size_t at = c.pos();
  IRM_ASSIGN_OR_RETURN(part, ParseTypeAt(c));
  if (part.kind() != TypeKind::kDenseTensor) {
    return c.ErrorAt(at, fmt::format("sparse tensor {} type must be a dense tensor, not '{}'",
                                     label, part.ToString()));
  }
  return Status::Ok();
}

// The body of `pd_op.sparsecootensor<…>` / `pd_op.sparsecsrtensor<…>` after the `<`.
StatusOr<Type> ParseSparseBody(TextCursor& c, size_t start, bool coo) {
  std::vector<int64_t> dims;
  Type dtype;
  IRM_RETURN_IF_ERROR(ParseShapeAndDtype(c, dims, dtype));
  IRM_ASSIGN_OR_RETURN(DataLayout layout, ParseOptionalLayout(c));
  const Type fallback = SparsePartDefault(dtype, dims);
  Type indices_or_crows = fallback, cols = fallback, elements = fallback;
  std::vector<int64_t> non_zero_dims = dims;
  bool coalesced = false;
  if (coo) {
    if (c.Consume(", non_zero_dims:")) {
      IRM_ASSIGN_OR_RETURN(non_zero_dims, c.ParseIntList("in non_zero_dims"));
    }
    IRM_RETURN_IF_ERROR(ParseSparsePart(c, "indices", indices_or_crows));
  } else {
    IRM_RETURN_IF_ERROR(ParseSparsePart(c, "crows", indices_or_crows));
    IRM_RETURN_IF_ERROR(ParseSparsePart(c, "cols", cols));
  }
  IRM_RETURN_IF_ERROR(ParseSparsePart(c, "elements", elements));
  if (coo && c.Consume(", coalesced:")) {
    if (c.Consume("true")) {
      coalesced = true;
    } else if (!c.Consume("false")) {
      return c.Expected("true or false", "after 'coalesced:'");
    }
  }
  const char* name = coo ? "pd_op.sparsecootensor" : "pd_op.sparsecsrtensor";
  IRM_RETURN_IF_ERROR(c.Expect(">", fmt::format("to close '{}' type", name)));
  StatusOr<Type> t =
      coo ? Type::SparseCooTensor(dtype, std::move(dims), std::move(non_zero_dims), layout,
                                  std::move(indices_or_crows), std::move(elements), coalesced)
          : Type::SparseCsrTensor(dtype, std::move(dims), layout, std::move(indices_or_crows),
                                  std::move(cols), std::move(elements));
  if (!t.ok()) return c.ErrorAt(start, t.status().message());
  return t;
}

StatusOr<Type> ParseTypeInner(TextCursor& c) {
  const size_t start = c.pos();
  if (c.Consume("<<NULL TYPE>>")) return Type();
  const std::string_view name = c.LexIdent();
  if (name.empty()) return c.Expected("a type", "");
  if (name == "vec") {
    IRM_RETURN_IF_ERROR(c.Expect("[", "after 'vec'"));
    std::vector<Type> elements;
    if (!c.Consume("]")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(Type e, ParseTypeAt(c));
        elements.push_back(std::move(e));
        if (c.Consume("]")) break;
        IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in vector type"));
      }
    }
    return Type::Vector(std::move(elements));
  }
  if (name == "pd_op.sparsecootensor" || name == "pd_op.sparsecsrtensor") {
    IRM_RETURN_IF_ERROR(c.Expect("<", fmt::format("after '{}'", name)));
    return ParseSparseBody(c, start, name == "pd_op.sparsecootensor");
  }
  if (name == "pd_op.") {
    // Paddle (op_dialect.cc PrintTypeImpl) prints a sparse CSR type as the bare dialect prefix.
    c.set_pos(start);
    return c.Error(
        "'pd_op.' is how Paddle prints a sparse CSR tensor type, without its dtype or dims; the "
        "type cannot be recovered from the text: read the program's JSON form instead");
  }
  const bool dense = name == "tensor" || name == "builtin.tensor" || name == "pd_op.tensor";
  const bool array = name == "pd_op.tensor_array";
  const bool rows = name == "pd_op.selectedrows";
  const bool dist = name == "pd_dist.tensor";
  if (dense || array || rows || dist) {
    IRM_RETURN_IF_ERROR(c.Expect("<", fmt::format("after '{}'", name)));
    std::vector<int64_t> dims;
    Type dtype;
    IRM_RETURN_IF_ERROR(ParseShapeAndDtype(c, dims, dtype));
    IRM_ASSIGN_OR_RETURN(DataLayout layout, ParseOptionalLayout(c));
    if (array) {
      IRM_RETURN_IF_ERROR(c.Expect(">", "to close 'pd_op.tensor_array' type"));
      return Type::DenseTensorArray(dtype, std::move(dims), layout);
    }
    std::optional<TensorDistAttr> dist_attr;
    if (dist) {
      IRM_RETURN_IF_ERROR(c.Expect(", ", "after the dense part of a dist tensor type"));
      TensorDistAttr d;
      IRM_ASSIGN_OR_RETURN(d.mesh, ParseMeshBody(c));
      const size_t at = c.pos();
      if (!c.Consume(",") || !AtDimsMappingKey(c)) {
        c.set_pos(at);
        return c.Expected("',dims_mappings:'", "in tensor dist attribute");
      }
      IRM_RETURN_IF_ERROR(ParseTensorDistTail(c, d));
      dist_attr = std::move(d);
    }
    DenseExtras extras;
    IRM_RETURN_IF_ERROR(ParseDenseExtras(c, extras, dist));
    IRM_RETURN_IF_ERROR(c.Expect(">", fmt::format("to close '{}' type", name)));
    if (rows) {
      return Type::SelectedRows(dtype, std::move(dims), layout, std::move(extras.lod),
                                extras.offset);
    }
    Type tensor =
        Type::DenseTensor(dtype, std::move(dims), layout, std::move(extras.lod), extras.offset);
    if (!dist) return tensor;
    StatusOr<Type> t =
        Type::DistDenseTensor(std::move(tensor), std::move(*dist_attr), extras.local_dims);
    if (!t.ok()) return c.ErrorAt(start, t.status().message());
    return t;
  }
  if (std::optional<Type> t = Type::ScalarFromName(name)) return *t;
  c.set_pos(start);
  if (c.Peek(name.size()) == '<') {
    return c.Error(fmt::format("unsupported type '{}'", name));
  }
  return c.Error(fmt::format("unknown type '{}'", name));
}

}  // namespace

StatusOr<Type> ParseTypeAt(TextCursor& c) {
  IRM_RETURN_IF_ERROR(c.Enter());
  StatusOr<Type> t = ParseTypeInner(c);
  c.Leave();
  return t;
}

StatusOr<std::vector<std::string>> ParseDimNameList(TextCursor& c) {
  std::vector<std::string> out;
  IRM_RETURN_IF_ERROR(c.Expect("[", "to open dim_names"));
  if (c.Consume("]")) return out;
  while (true) {
    if (c.Peek() != '"') return c.Expected("a quoted dim name", "");
    IRM_ASSIGN_OR_RETURN(std::string s, c.ParseString());
    out.push_back(std::move(s));
    if (c.Consume("]")) return out;
    IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in dim_names"));
  }
}

StatusOr<ProcessMesh> ParseMeshBody(TextCursor& c) {
  ProcessMesh mesh;
  IRM_RETURN_IF_ERROR(c.Expect("mesh_shape:", "in process mesh"));
  IRM_ASSIGN_OR_RETURN(mesh.shape, c.ParseIntList("in mesh_shape"));
  if (c.Consume(",process_ids:")) {
    IRM_ASSIGN_OR_RETURN(mesh.process_ids, c.ParseIntList("in process_ids"));
  }
  // `,dim_names:` not followed by a list is the next attribute of an attribute map, not ours.
  if (c.LookingAt(",dim_names:[")) {
    c.Consume(",dim_names:");
    IRM_ASSIGN_OR_RETURN(mesh.dim_names, ParseDimNameList(c));
  }
  return mesh;
}

bool AtDimsMappingKey(const TextCursor& c) {
  return c.LookingAt("dims_mappings:") || c.LookingAt("dims_maping:");
}

Status ParseTensorDistTail(TextCursor& c, TensorDistAttr& dist) {
  if (!c.Consume("dims_mappings:") && !c.Consume("dims_maping:")) {
    return c.Expected("'dims_mappings:'", "in tensor dist attribute");
  }
  IRM_ASSIGN_OR_RETURN(dist.dims_mapping, c.ParseIntList("in dims_mappings"));
  // Paddle joins the partial entries with ',' after one ", ": `, partial(0,SUM),partial(1,AVG)`.
  if (c.Consume(", partial(")) {
    while (true) {
      const size_t at = c.pos();
      IRM_ASSIGN_OR_RETURN(int64_t dim, c.ParseInt<int64_t>("a mesh dimension"));
      IRM_RETURN_IF_ERROR(c.Expect(",", "after the partial mesh dimension"));
      IRM_ASSIGN_OR_RETURN(ReduceType reduce, ParseReduceName(c));
      IRM_RETURN_IF_ERROR(c.Expect(")", "to close partial"));
      if (!dist.partial_status.emplace(dim, reduce).second) {
        return c.ErrorAt(at, fmt::format("mesh dim {} is partial twice", dim));
      }
      if (!c.Consume(",partial(")) break;
    }
  }
  if (c.Consume(", placements:")) {
    std::vector<Placement> placements;
    IRM_RETURN_IF_ERROR(c.Expect("[", "to open placements"));
    if (!c.Consume("]")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(Placement p, ParsePlacement(c));
        placements.push_back(p);
        if (c.Consume("]")) break;
        IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in placements"));
        c.SkipSpaces();
      }
    }
    dist.placements = std::move(placements);
  }
  return Status::Ok();
}

}  // namespace irm::newir
