// Attribute values of the PIR text form. A value with a kind prefix (`(Int32)0`, `(Float)0.5`,
// `(pd_op.IntArray)[1,2]`, the 2023 `(Array)[…]`, our `(pd_op.Scalar:int64)3`) says its kind; a
// value without one (`0`, `0.5`, `[1,2]`, `float32`, `Place(cpu)`, `NCHW`) takes the kind the op
// table expects, or the fallback documented in parser.h when nothing is expected. The pd_dist
// values read in all their printed eras: `{mesh:{…},operand(0):{…},result(0):{…},chunk_id:-1}`,
// the same without chunk_id and with mesh-less `{dims_maping:[…]}` entries (early 2024), and the
// brace-less `mesh_shape:[2],process_ids:[0,1],result(0):{…}` of March 2024.
#include <fmt/format.h>

#include <cmath>

#include "newir/parse_values.h"

namespace irm::newir {
namespace {

constexpr auto IsDigit = TextCursor::IsDigit;

const char* KindWord(AttrKind kind) {
  switch (kind) {
    case AttrKind::kBool:
      return "a bool";
    case AttrKind::kInt32:
      return "an int32";
    case AttrKind::kInt64:
      return "an int64";
    case AttrKind::kFloat:
      return "a float";
    case AttrKind::kDouble:
      return "a double";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kArray:
      return "an array";
    case AttrKind::kType:
      return "a type";
    case AttrKind::kIntArray:
      return "an IntArray";
    case AttrKind::kDataType:
      return "a DataType";
    case AttrKind::kPlace:
      return "a Place";
    case AttrKind::kDataLayout:
      return "a DataLayout";
    case AttrKind::kScalar:
      return "a Scalar";
    case AttrKind::kProcessMesh:
      return "a process mesh";
    case AttrKind::kTensorDist:
      return "a tensor dist attribute";
    case AttrKind::kOperationDist:
      return "an operation dist attribute";
    case AttrKind::kNull:
      break;
  }
  return "a value";
}

// "attribute 'transpose_x' of 'pd_op.matmul' takes a bool, found '3'"
Status Mismatch(const TextCursor& c, size_t at, const AttrExpectation& expect) {
  return c.ErrorAt(at, fmt::format("{} takes {}, found {}", expect.what, KindWord(expect.kind),
                                   c.DescribeAt(at)));
}

bool IsIntegerText(std::string_view tok) {
  if (!tok.empty() && tok[0] == '-') tok.remove_prefix(1);
  if (tok.empty()) return false;
  for (char ch : tok) {
    if (!IsDigit(ch)) return false;
  }
  return true;
}

// A number token (without consuming it), or empty when the cursor is not at one.
std::string_view PeekNumber(TextCursor& c) {
  const size_t start = c.pos();
  const std::string_view tok = c.LexNumber();
  c.set_pos(start);
  if (tok.empty()) return tok;
  const std::string_view body = tok[0] == '-' ? tok.substr(1) : tok;
  if (body == "nan" || body == "inf" || (!body.empty() && (IsDigit(body[0]) || body[0] == '.'))) {
    return tok;
  }
  return {};
}

StatusOr<Place> ParsePlace(TextCursor& c) {
  IRM_RETURN_IF_ERROR(c.Expect("Place(", "in place attribute"));
  const std::string_view kind = c.LexIdent();
  Place place;
  if (kind == "cpu") {
    place.type = AllocationType::kCpu;
  } else if (kind == "gpu_pinned") {
    place.type = AllocationType::kGpuPinned;
  } else if (kind == "xpu_pinned") {
    place.type = AllocationType::kXpuPinned;
  } else if (kind.empty()) {
    return c.Expected("a device kind", "in place");
  } else {
    if (kind == "gpu") {
      place.type = AllocationType::kGpu;
    } else if (kind == "xpu") {
      place.type = AllocationType::kXpu;
    } else if (kind == "ipu") {
      place.type = AllocationType::kIpu;
    } else if (kind == "undefined") {
      place.type = AllocationType::kUndefined;
    } else {
      place.type = AllocationType::kCustom;
      place.device_type = std::string(kind);
    }
    IRM_RETURN_IF_ERROR(c.Expect(":", "after device kind"));
    IRM_ASSIGN_OR_RETURN(place.device, c.ParseInt<int32_t>("a device id"));
  }
  IRM_RETURN_IF_ERROR(c.Expect(")", "to close place"));
  return place;
}

// `NCHW`, `Undefined(AnyLayout)`; nullopt (nothing consumed) when it is not a layout name.
std::optional<DataLayout> TryParseLayout(TextCursor& c) {
  const size_t start = c.pos();
  c.LexIdent();
  if (c.Peek() == '(') {
    const size_t close = c.Rest().substr(0, 32).find(')');
    if (close != std::string_view::npos) c.set_pos(c.pos() + close + 1);
  }
  std::optional<DataLayout> layout = DataLayoutFromName(c.Slice(start, c.pos()));
  if (!layout) c.set_pos(start);
  return layout;
}

// A Scalar's value; its alternative comes from the text alone: true/false are bool, an integer
// is int64, anything else (a dot, an exponent, nan, inf) is double.
StatusOr<ScalarValue> ParseScalarValue(TextCursor& c, DataType dtype) {
  ScalarValue s;
  s.dtype = dtype;
  if (c.Consume("true")) {
    s.value = true;
  } else if (c.Consume("false")) {
    s.value = false;
  } else if (IsIntegerText(PeekNumber(c))) {
    IRM_ASSIGN_OR_RETURN(int64_t i, c.ParseInt<int64_t>("a scalar value"));
    s.value = i;
  } else {
    IRM_ASSIGN_OR_RETURN(double d, c.ParseFloat<double>("a scalar value"));
    s.value = d;
  }
  return s;
}

// One `operand(i)` / `result(i)` entry after its `{`: a mesh-less `dims_maping:[…]` (the op's
// mesh), or any attribute value.
StatusOr<Attribute> ParseOpDistEntry(TextCursor& c, const ProcessMesh& op_mesh) {
  if (AtDimsMappingKey(c)) {
    TensorDistAttr dist;
    dist.mesh = op_mesh;
    IRM_RETURN_IF_ERROR(ParseTensorDistTail(c, dist));
    return Attribute::TensorDist(std::move(dist));
  }
  return ParseAttributeAt(c);
}

// `,operand(0):{…}` … `,result(0):{…}` …, indices counting from 0.
Status ParseOpDistEntries(TextCursor& c, OperationDistAttr& op) {
  for (std::vector<Attribute>* list : {&op.operands, &op.results}) {
    const char* key = list == &op.operands ? ",operand(" : ",result(";
    while (c.Consume(key)) {
      const size_t at = c.pos();
      IRM_ASSIGN_OR_RETURN(int64_t index, c.ParseInt<int64_t>("an index"));
      if (index != static_cast<int64_t>(list->size())) {
        return c.ErrorAt(at, fmt::format("expected index {}, found {}", list->size(), index));
      }
      IRM_RETURN_IF_ERROR(c.Expect("):{", "in operation dist attribute"));
      IRM_ASSIGN_OR_RETURN(Attribute a, ParseOpDistEntry(c, op.mesh));
      list->push_back(std::move(a));
      IRM_RETURN_IF_ERROR(c.Expect("}", "to close operation dist entry"));
    }
  }
  return Status::Ok();
}

// `{mesh:{shape:[…],process_ids:[…]},operand(0):{…},result(0):{…},chunk_id:N}`; chunk_id is
// absent before late 2024 (then -1).
StatusOr<Attribute> ParseOperationDist(TextCursor& c) {
  OperationDistAttr op;
  IRM_RETURN_IF_ERROR(c.Expect("{mesh:{shape:", "in operation dist attribute"));
  IRM_ASSIGN_OR_RETURN(op.mesh.shape, c.ParseIntList("in mesh shape"));
  IRM_RETURN_IF_ERROR(c.Expect(",process_ids:", "in operation dist mesh"));
  IRM_ASSIGN_OR_RETURN(op.mesh.process_ids, c.ParseIntList("in process_ids"));
  if (c.LookingAt(",dim_names:[")) {
    c.Consume(",dim_names:");
    IRM_ASSIGN_OR_RETURN(op.mesh.dim_names, ParseDimNameList(c));
  }
  IRM_RETURN_IF_ERROR(c.Expect("}", "to close operation dist mesh"));
  IRM_RETURN_IF_ERROR(ParseOpDistEntries(c, op));
  if (c.Consume(",chunk_id:")) {
    IRM_ASSIGN_OR_RETURN(op.chunk_id, c.ParseInt<int64_t>("a chunk id"));
  }
  IRM_RETURN_IF_ERROR(c.Expect("}", "to close operation dist attribute"));
  return Attribute::OperationDist(std::move(op));
}

// A value that opens with `mesh_shape:`: a process mesh, a tensor dist attribute (the mesh, then
// dims_mappings), or the March 2024 brace-less operation dist attribute (the mesh, then entries).
StatusOr<Attribute> ParseMeshLedValue(TextCursor& c) {
  IRM_ASSIGN_OR_RETURN(ProcessMesh mesh, ParseMeshBody(c));
  if (c.Peek() == ',') {
    c.set_pos(c.pos() + 1);
    if (AtDimsMappingKey(c)) {
      TensorDistAttr dist;
      dist.mesh = std::move(mesh);
      IRM_RETURN_IF_ERROR(ParseTensorDistTail(c, dist));
      return Attribute::TensorDist(std::move(dist));
    }
    c.set_pos(c.pos() - 1);
  }
  if (c.LookingAt(",operand(") || c.LookingAt(",result(")) {
    OperationDistAttr op;
    op.mesh = std::move(mesh);
    IRM_RETURN_IF_ERROR(ParseOpDistEntries(c, op));
    return Attribute::OperationDist(std::move(op));
  }
  return Attribute::ProcessMeshAttr(std::move(mesh));
}

StatusOr<Attribute> ParseArray(TextCursor& c, const AttrExpectation& element) {
  IRM_RETURN_IF_ERROR(c.Expect("[", "to open an array"));
  std::vector<Attribute> items;
  if (!c.Consume("]")) {
    while (true) {
      IRM_ASSIGN_OR_RETURN(Attribute a, ParseAttributeAt(c, element));
      items.push_back(std::move(a));
      if (c.Consume("]")) break;
      IRM_RETURN_IF_ERROR(c.Expect(",", "or ']' in array attribute"));
    }
  }
  return Attribute::Array(std::move(items));
}

AttrExpectation ElementOf(const AttrExpectation& expect) {
  AttrExpectation element;
  element.kind = expect.element;
  if (element.kind != AttrKind::kNull) element.what = "an element of " + expect.what;
  return element;
}

template <typename T, typename F>
StatusOr<Attribute> Wrap(StatusOr<T> v, F make) {
  if (!v.ok()) return v.status();
  return make(*v);
}

// `(Int32)0`, `(Float)0.5`, `(pd_op.IntArray)[1,2]`, `(pd_op.Scalar:float32)1.0`, …
StatusOr<Attribute> ParsePrefixed(TextCursor& c) {
  const size_t start = c.pos();
  c.set_pos(start + 1);  // '('
  // Kinds are short names: a stray '(' must not swallow the rest of the text.
  const size_t close = c.Rest().substr(0, 64).find(')');
  if (close == std::string_view::npos) return c.Expected("')'", "after attribute kind");
  const std::string_view kind = c.Rest().substr(0, close);
  c.set_pos(c.pos() + close + 1);
  if (kind == "Int32") return Wrap(c.ParseInt<int32_t>("a 32-bit integer"), Attribute::Int32);
  if (kind == "Int64") return Wrap(c.ParseInt<int64_t>("a 64-bit integer"), Attribute::Int64);
  if (kind == "Float") return Wrap(c.ParseFloat<float>("a float"), Attribute::Float);
  if (kind == "Double") return Wrap(c.ParseFloat<double>("a double"), Attribute::Double);
  if (kind == "Array") return ParseArray(c, {});
  if (kind == "pd_op.IntArray") {
    return Wrap(c.ParseIntList("in IntArray"), Attribute::IntArrayAttr);
  }
  if (kind == "pd_op.DataType") {
    const size_t at = c.pos();
    const std::string_view name = c.LexIdent();
    std::optional<DataType> dt = DataTypeFromName(name);
    if (!dt) return c.ErrorAt(at, fmt::format("unknown data type '{}'", name));
    return Attribute::DataTypeAttr(*dt);
  }
  if (kind == "pd_op.Place") return Wrap(ParsePlace(c), Attribute::PlaceAttr);
  if (kind == "pd_op.DataLayout") {
    const size_t at = c.pos();
    std::optional<DataLayout> layout = TryParseLayout(c);
    if (!layout) {
      const std::string_view name = c.LexIdent();
      return c.ErrorAt(at, fmt::format("unknown data layout '{}'", name));
    }
    return Attribute::DataLayoutAttr(*layout);
  }
  if (kind.starts_with("pd_op.Scalar:")) {
    std::optional<DataType> dt = DataTypeFromName(kind.substr(13));
    if (!dt) {
      return c.ErrorAt(start + 14, fmt::format("unknown data type '{}'", kind.substr(13)));
    }
    return Wrap(ParseScalarValue(c, *dt), Attribute::Scalar);
  }
  if (kind == "pd_dist.ProcessMesh") {
    IRM_RETURN_IF_ERROR(c.Expect("{", "to open a delimited process mesh"));
    IRM_ASSIGN_OR_RETURN(ProcessMesh mesh, ParseMeshBody(c));
    IRM_RETURN_IF_ERROR(c.Expect("}", "to close a delimited process mesh"));
    return Attribute::ProcessMeshAttr(std::move(mesh));
  }
  return c.ErrorAt(start, fmt::format("unknown attribute kind '({})'", kind));
}

// A number without a kind: Int32, Int64 when it does not fit, Float, Double when it does not fit.
StatusOr<Attribute> ParseBareNumber(TextCursor& c, std::string_view tok) {
  const size_t start = c.pos();
  if (IsIntegerText(tok)) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc())
      return c.ErrorAt(start, fmt::format("integer '{}' is out of range", tok));
    c.set_pos(start + tok.size());
    if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
      return Attribute::Int32(static_cast<int32_t>(v));
    }
    return Attribute::Int64(v);
  }
  StatusOr<float> f = c.ParseFloat<float>("an attribute value");
  if (f.ok()) return Attribute::Float(*f);
  c.set_pos(start);
  return Wrap(c.ParseFloat<double>("an attribute value"), Attribute::Double);
}

// A value without a kind prefix and without an expectation (parser.h, "fallback").
StatusOr<Attribute> ParseFallback(TextCursor& c) {
  const size_t start = c.pos();
  if (c.Peek() == '"') return Wrap(c.ParseString(), Attribute::String);
  if (c.Peek() == '[') return ParseArray(c, {});
  if (c.LookingAt("{mesh:")) return ParseOperationDist(c);
  if (c.LookingAt("mesh_shape:")) return ParseMeshLedValue(c);
  if (c.LookingAt("Place(")) return Wrap(ParsePlace(c), Attribute::PlaceAttr);
  if (c.LookingAt("<<NULL TYPE>>")) return Wrap(ParseTypeAt(c), Attribute::TypeAttr);
  if (std::string_view tok = PeekNumber(c); !tok.empty()) return ParseBareNumber(c, tok);
  const std::string_view word = c.LexIdent();
  if (word.empty()) {
    c.set_pos(start);
    return c.Expected("an attribute value", "");
  }
  if (word == "true" || word == "false") return Attribute::Bool(word == "true");
  if (c.Peek() != '(') {
    if (std::optional<DataType> dt = DataTypeFromName(word)) return Attribute::DataTypeAttr(*dt);
  }
  c.set_pos(start);
  if (std::optional<DataLayout> layout = TryParseLayout(c)) {
    return Attribute::DataLayoutAttr(*layout);
  }
  return Wrap(ParseTypeAt(c), Attribute::TypeAttr);
}

// A value without a kind prefix whose kind the op table gives.
StatusOr<Attribute> ParseExpected(TextCursor& c, const AttrExpectation& expect) {
  const size_t start = c.pos();
  const std::string_view number = PeekNumber(c);
  switch (expect.kind) {
    case AttrKind::kBool:
      if (c.Consume("true")) return Attribute::Bool(true);
      if (c.Consume("false")) return Attribute::Bool(false);
      break;
    case AttrKind::kInt32:
      if (IsIntegerText(number)) {
        return Wrap(c.ParseInt<int32_t>("a 32-bit integer"), Attribute::Int32);
      }
      break;
    case AttrKind::kInt64:
      if (IsIntegerText(number)) {
        return Wrap(c.ParseInt<int64_t>("a 64-bit integer"), Attribute::Int64);
      }
      break;
    case AttrKind::kFloat:
      if (!number.empty()) return Wrap(c.ParseFloat<float>("a float"), Attribute::Float);
      break;
    case AttrKind::kDouble:
      if (!number.empty()) return Wrap(c.ParseFloat<double>("a double"), Attribute::Double);
      break;
    case AttrKind::kString:
      if (c.Peek() == '"') return Wrap(c.ParseString(), Attribute::String);
      break;
    case AttrKind::kArray:
      if (c.Peek() == '[') return ParseArray(c, ElementOf(expect));
      break;
    case AttrKind::kType:
      return Wrap(ParseTypeAt(c), Attribute::TypeAttr);
    case AttrKind::kIntArray:
      if (c.Peek() == '[') return Wrap(c.ParseIntList("in IntArray"), Attribute::IntArrayAttr);
      break;
    case AttrKind::kDataType:
      if (std::optional<DataType> dt = DataTypeFromName(c.LexIdent())) {
        return Attribute::DataTypeAttr(*dt);
      }
      c.set_pos(start);
      break;
    case AttrKind::kPlace:
      if (c.LookingAt("Place(")) return Wrap(ParsePlace(c), Attribute::PlaceAttr);
      break;
    case AttrKind::kDataLayout:
      if (std::optional<DataLayout> layout = TryParseLayout(c)) {
        return Attribute::DataLayoutAttr(*layout);
      }
      break;
    case AttrKind::kScalar:
      if (!number.empty() || c.LookingAt("true") || c.LookingAt("false")) {
        // Without a dtype in the text: bool, int64 or float64 by the value's own form.
        const DataType dtype = c.LookingAt("true") || c.LookingAt("false") ? DataType::kBool
                               : IsIntegerText(number)                     ? DataType::kInt64
                                                                           : DataType::kFloat64;
        return Wrap(ParseScalarValue(c, dtype), Attribute::Scalar);
      }
      break;
    case AttrKind::kProcessMesh:
    case AttrKind::kTensorDist:
    case AttrKind::kOperationDist:
      if (c.LookingAt("{mesh:") || c.LookingAt("mesh_shape:")) {
        IRM_ASSIGN_OR_RETURN(Attribute a,
                             c.LookingAt("{mesh:") ? ParseOperationDist(c) : ParseMeshLedValue(c));
        if (a.kind() == expect.kind) return a;
      }
      break;
    case AttrKind::kNull:
      return ParseFallback(c);
  }
  c.set_pos(start);
  return Mismatch(c, start, expect);
}

StatusOr<Attribute> ParseAttributeInner(TextCursor& c, const AttrExpectation& expect) {
  if (c.Consume("<#AttrNull>")) return Attribute();
  if (c.Peek() == '(') return ParsePrefixed(c);
  return ParseExpected(c, expect);
}

}  // namespace

StatusOr<Attribute> ParseAttributeAt(TextCursor& c, const AttrExpectation& expect) {
  IRM_RETURN_IF_ERROR(c.Enter());
  StatusOr<Attribute> a = ParseAttributeInner(c, expect);
  c.Leave();
  return a;
}

}  // namespace irm::newir
