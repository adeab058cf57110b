// The typed-style PIR text parser: a character cursor that lexes on demand (identifiers, numbers,
// strings, punctuation) and a recursive-descent parser over it. Recursion is bounded by a depth
// counter shared by blocks, arrays and types, so hostile input cannot exhaust the stack.
#include "newir/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <charconv>
#include <limits>
#include <unordered_map>
#include <vector>

#include "newir/block.h"

namespace irm::newir {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '.'; }
// Characters of a number token: digits, sign, dot, exponent and the letters of nan/inf.
bool IsNumberChar(char c) {
  return IsDigit(c) || IsIdentStart(c) || c == '.' || c == '+' || c == '-';
}

// Shows a token in a diagnostic: the text up to the next separator, or "end of input".
std::string Describe(std::string_view rest) {
  if (rest.empty()) return "end of input";
  if (rest[0] == '\n') return "end of line";
  size_t n = 0;
  if (IsIdentChar(rest[0]) || rest[0] == '%' || rest[0] == '-') {
    n = 1;
    while (n < rest.size() && n < 40 && (IsIdentChar(rest[n]) || rest[n] == '%')) ++n;
  } else {
    n = 1;
  }
  return fmt::format("'{}'", rest.substr(0, n));
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const ParseOptions& options)
      : text_(text), file_(file), options_(options) {}

  // ---- Cursor and errors ----------------------------------------------------------------------

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  std::string_view Rest() const { return text_.substr(pos_); }
  bool LookingAt(std::string_view s) const { return Rest().substr(0, s.size()) == s; }

  // Spaces, tabs and newlines; the text form has no comments.
  void SkipWs() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }
  // Spaces only: used where a newline would end a construct (the result type list).
  void SkipSpaces() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t')) ++pos_;
  }

  Status ErrorAt(size_t pos, std::string message) const {
    int line = 1;
    int col = 1;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status(StatusCode::kParseError, Location::Text(file_, line, col), std::move(message));
  }
  Status Error(std::string message) const { return ErrorAt(pos_, std::move(message)); }
  // "expected X <context>, found Y".
  Status Expected(std::string_view what, std::string_view context) const {
    return Error(fmt::format("expected {}{}{}, found {}", what, context.empty() ? "" : " ", context,
                             Describe(Rest())));
  }

  bool Consume(std::string_view s) {
    if (!LookingAt(s)) return false;
    pos_ += s.size();
    return true;
  }
  Status Expect(std::string_view s, std::string_view context) {
    if (Consume(s)) return Status::Ok();
    return Expected(fmt::format("'{}'", s), context);
  }

  std::string_view LexIdent() {
    size_t start = pos_;
    if (!AtEnd() && IsIdentStart(Peek())) {
      while (!AtEnd() && IsIdentChar(Peek())) ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  std::string_view LexNumber() {
    size_t start = pos_;
    while (!AtEnd() && IsNumberChar(Peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  template <typename T>
  StatusOr<T> ParseInt(std::string_view what) {
    size_t start = pos_;
    std::string_view tok = LexNumber();
    T value{};
    auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), value);
    if (tok.empty() || ec == std::errc::invalid_argument || end != tok.data() + tok.size()) {
      pos_ = start;
      return Expected(what, "");
    }
    if (ec == std::errc::result_out_of_range) {
      return ErrorAt(start, fmt::format("{} '{}' is out of range", what, tok));
    }
    return value;
  }

  template <typename T>
  StatusOr<T> ParseFloat(std::string_view what) {
    size_t start = pos_;
    std::string_view tok = LexNumber();
    T value{};
    // from_chars does not take a leading '+' and reads "-nan" without its sign on some
    // libraries: handle the sign here.
    bool negative = !tok.empty() && tok[0] == '-';
    std::string_view body = negative ? tok.substr(1) : tok;
    if (body == "nan") {
      value = std::numeric_limits<T>::quiet_NaN();
    } else if (body == "inf") {
      value = std::numeric_limits<T>::infinity();
    } else {
      auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
      if (body.empty() || body[0] == '-' || ec == std::errc::invalid_argument ||
          end != body.data() + body.size()) {
        pos_ = start;
        return Expected(what, "");
      }
      if (ec == std::errc::result_out_of_range) {
        return ErrorAt(start, fmt::format("{} '{}' is out of range", what, tok));
      }
    }
    return negative ? -value : value;
  }

  Status Enter() {
    if (++depth_ > kMaxParseDepth) {
      return Error(fmt::format("nesting deeper than {} levels", kMaxParseDepth));
    }
    return Status::Ok();
  }
  void Leave() { --depth_; }

  // ---- Types ----------------------------------------------------------------------------------

  // `2x3xf32`, `-1x4xi64`, `f32` (0-D): dims then the element type.
  Status ParseShapeAndDtype(std::vector<int64_t>& dims, Type& dtype) {
    while (IsDigit(Peek()) || Peek() == '-') {
      IRM_ASSIGN_OR_RETURN(int64_t d, ParseDim());
      dims.push_back(d);
      IRM_RETURN_IF_ERROR(Expect("x", "after a tensor dimension"));
    }
    size_t start = pos_;
    std::string_view name = LexIdent();
    std::optional<Type> t = Type::ScalarFromName(name);
    if (!t) {
      pos_ = start;
      return name.empty() ? Expected("an element type", "in tensor type")
                          : Error(fmt::format("unknown element type '{}'", name));
    }
    dtype = *t;
    return Status::Ok();
  }

  StatusOr<int64_t> ParseDim() {
    size_t start = pos_;
    bool negative = Consume("-");
    size_t digits = pos_;
    while (IsDigit(Peek())) ++pos_;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text_.data() + digits, text_.data() + pos_, value);
    if (pos_ == digits) return Expected("a dimension", "");
    if (ec != std::errc() || end != text_.data() + pos_) {
      return ErrorAt(start, "tensor dimension is out of range");
    }
    return negative ? -value : value;
  }

  StatusOr<std::vector<int64_t>> ParseIntList(std::string_view context) {
    std::vector<int64_t> out;
    IRM_RETURN_IF_ERROR(Expect("[", context));
    if (Consume("]")) return out;
    while (true) {
      IRM_ASSIGN_OR_RETURN(int64_t v, ParseInt<int64_t>("an integer"));
      out.push_back(v);
      if (Consume("]")) return out;
      IRM_RETURN_IF_ERROR(Expect(",", fmt::format("or ']' {}", context)));
    }
  }

  // `mesh_shape:[2],process_ids:[0,1]`
  StatusOr<ProcessMesh> ParseMeshBody() {
    ProcessMesh mesh;
    IRM_RETURN_IF_ERROR(Expect("mesh_shape:", "in process mesh"));
    IRM_ASSIGN_OR_RETURN(mesh.shape, ParseIntList("in mesh_shape"));
    IRM_RETURN_IF_ERROR(Expect(",process_ids:", "in process mesh"));
    IRM_ASSIGN_OR_RETURN(mesh.process_ids, ParseIntList("in process_ids"));
    return mesh;
  }

  StatusOr<ReduceType> ParseReduceName() {
    size_t start = pos_;
    std::string_view name = LexIdent();
    for (int32_t i = 0; i < kNumReduceTypes; ++i) {
      if (name == ReduceTypeName(static_cast<ReduceType>(i))) return static_cast<ReduceType>(i);
    }
    pos_ = start;
    return Expected("a reduce type (SUM, MAX, MIN, PRODUCT, AVG, ANY, ALL)", "");
  }

  // TensorDistAttr::ToString: mesh, `,dims_mappings:[…]`, then optional `, partial(d,T,…)` and
  // `, placements:[…]`.
  StatusOr<TensorDistAttr> ParseTensorDistBody() {
    TensorDistAttr dist;
    IRM_ASSIGN_OR_RETURN(dist.mesh, ParseMeshBody());
    IRM_RETURN_IF_ERROR(Expect(",dims_mappings:", "in tensor dist attribute"));
    IRM_ASSIGN_OR_RETURN(dist.dims_mapping, ParseIntList("in dims_mappings"));
    if (Consume(", partial(")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(int64_t dim, ParseInt<int64_t>("a mesh dimension"));
        IRM_RETURN_IF_ERROR(Expect(",", "after partial mesh dimension"));
        IRM_ASSIGN_OR_RETURN(ReduceType reduce, ParseReduceName());
        dist.partial_status[dim] = reduce;
        if (Consume(")")) break;
        IRM_RETURN_IF_ERROR(Expect(",", "or ')' in partial list"));
      }
    }
    if (Consume(", placements:[")) {
      std::vector<Placement> placements;
      if (!Consume("]")) {
        while (true) {
          if (Consume("Replicate()")) {
            placements.push_back(Placement::Replicate());
          } else if (Consume("Shard(dim=")) {
            IRM_ASSIGN_OR_RETURN(int64_t dim, ParseInt<int64_t>("a tensor dimension"));
            IRM_RETURN_IF_ERROR(Expect(")", "after Shard dimension"));
            placements.push_back(Placement::Shard(dim));
          } else if (Consume("Partial(reduce_type=")) {
            IRM_ASSIGN_OR_RETURN(ReduceType reduce, ParseReduceName());
            IRM_RETURN_IF_ERROR(Expect(")", "after Partial reduce type"));
            placements.push_back(Placement::Partial(reduce));
          } else {
            return Expected("a placement (Shard, Replicate, Partial)", "");
          }
          if (Consume("]")) break;
          IRM_RETURN_IF_ERROR(Expect(", ", "or ']' in placements"));
        }
      }
      dist.placements = std::move(placements);
    }
    return dist;
  }

  StatusOr<Type> ParseType() {
    IRM_RETURN_IF_ERROR(Enter());
    StatusOr<Type> t = ParseTypeInner();
    Leave();
    return t;
  }

  StatusOr<Type> ParseTypeInner() {
    size_t start = pos_;
    if (Consume("<<NULL TYPE>>")) return Type();
    std::string_view name = LexIdent();
    if (name.empty()) return Expected("a type", "");
    if (name == "vec") {
      IRM_RETURN_IF_ERROR(Expect("[", "after 'vec'"));
      std::vector<Type> elements;
      if (!Consume("]")) {
        while (true) {
          IRM_ASSIGN_OR_RETURN(Type e, ParseType());
          elements.push_back(std::move(e));
          if (Consume("]")) break;
          IRM_RETURN_IF_ERROR(Expect(",", "or ']' in vector type"));
        }
      }
      return Type::Vector(std::move(elements));
    }
    if (name == "builtin.tensor" || name == "tensor" || name == "pd_op.tensor_array" ||
        name == "pd_op.selectedrows" || name == "pd_dist.tensor") {
      IRM_RETURN_IF_ERROR(Expect("<", fmt::format("after '{}'", name)));
      std::vector<int64_t> dims;
      Type dtype;
      IRM_RETURN_IF_ERROR(ParseShapeAndDtype(dims, dtype));
      if (name == "pd_dist.tensor") {
        IRM_RETURN_IF_ERROR(Expect(", ", "after the dense part of a dist tensor type"));
        IRM_ASSIGN_OR_RETURN(TensorDistAttr dist, ParseTensorDistBody());
        IRM_RETURN_IF_ERROR(Expect(">", "to close dist tensor type"));
        StatusOr<Type> t = Type::DistDenseTensor(Type::DenseTensor(dtype, dims), std::move(dist));
        if (!t.ok()) return ErrorAt(start, t.status().message());
        return t;
      }
      IRM_RETURN_IF_ERROR(Expect(">", fmt::format("to close '{}' type", name)));
      if (name == "pd_op.tensor_array") return Type::DenseTensorArray(dtype, dims);
      if (name == "pd_op.selectedrows") return Type::SelectedRows(dtype, dims);
      return Type::DenseTensor(dtype, dims);
    }
    if (std::optional<Type> t = Type::ScalarFromName(name)) return *t;
    pos_ = start;
    return Error(fmt::format("unknown type '{}'", name));
  }

  // ---- Attributes -----------------------------------------------------------------------------

  StatusOr<std::string> ParseString() {
    size_t start = pos_;
    IRM_RETURN_IF_ERROR(Expect("\"", ""));
    std::string out;
    while (true) {
      if (AtEnd()) return ErrorAt(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (AtEnd()) return ErrorAt(start, "unterminated string");
        c = text_[pos_++];
      }
      out += c;
    }
  }

  StatusOr<Place> ParsePlace() {
    IRM_RETURN_IF_ERROR(Expect("Place(", "in place attribute"));
    std::string_view kind = LexIdent();
    Place place;
    if (kind == "cpu") {
      place.type = AllocationType::kCpu;
    } else if (kind == "gpu_pinned") {
      place.type = AllocationType::kGpuPinned;
    } else if (kind == "xpu_pinned") {
      place.type = AllocationType::kXpuPinned;
    } else if (kind.empty()) {
      return Expected("a device kind", "in place");
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
      IRM_RETURN_IF_ERROR(Expect(":", "after device kind"));
      IRM_ASSIGN_OR_RETURN(place.device, ParseInt<int32_t>("a device id"));
    }
    IRM_RETURN_IF_ERROR(Expect(")", "to close place"));
    return place;
  }

  // `{mesh:{shape:[…],process_ids:[…]},operand(0):{…},result(0):{…},chunk_id:N}`
  StatusOr<Attribute> ParseOperationDist() {
    OperationDistAttr op;
    IRM_RETURN_IF_ERROR(Expect("{mesh:{shape:", "in operation dist attribute"));
    IRM_ASSIGN_OR_RETURN(op.mesh.shape, ParseIntList("in mesh shape"));
    IRM_RETURN_IF_ERROR(Expect(",process_ids:", "in operation dist mesh"));
    IRM_ASSIGN_OR_RETURN(op.mesh.process_ids, ParseIntList("in process_ids"));
    IRM_RETURN_IF_ERROR(Expect("}", "to close operation dist mesh"));
    for (std::vector<Attribute>* list : {&op.operands, &op.results}) {
      const char* key = list == &op.operands ? ",operand(" : ",result(";
      while (Consume(key)) {
        size_t at = pos_;
        IRM_ASSIGN_OR_RETURN(int64_t index, ParseInt<int64_t>("an index"));
        if (index != static_cast<int64_t>(list->size())) {
          return ErrorAt(at, fmt::format("expected index {}, found {}", list->size(), index));
        }
        IRM_RETURN_IF_ERROR(Expect("):{", "in operation dist attribute"));
        IRM_ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
        list->push_back(std::move(a));
        IRM_RETURN_IF_ERROR(Expect("}", "to close operation dist entry"));
      }
    }
    IRM_RETURN_IF_ERROR(Expect(",chunk_id:", "in operation dist attribute"));
    IRM_ASSIGN_OR_RETURN(op.chunk_id, ParseInt<int64_t>("a chunk id"));
    IRM_RETURN_IF_ERROR(Expect("}", "to close operation dist attribute"));
    return Attribute::OperationDist(std::move(op));
  }

  StatusOr<Attribute> ParseAttribute() {
    IRM_RETURN_IF_ERROR(Enter());
    StatusOr<Attribute> a = ParseAttributeInner();
    Leave();
    return a;
  }

  StatusOr<Attribute> ParseAttributeInner() {
    if (Peek() == '"') {
      IRM_ASSIGN_OR_RETURN(std::string s, ParseString());
      return Attribute::String(std::move(s));
    }
    if (Consume("[")) {
      std::vector<Attribute> items;
      if (!Consume("]")) {
        while (true) {
          IRM_ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
          items.push_back(std::move(a));
          if (Consume("]")) break;
          IRM_RETURN_IF_ERROR(Expect(",", "or ']' in array attribute"));
        }
      }
      return Attribute::Array(std::move(items));
    }
    if (Consume("<#AttrNull>")) return Attribute();
    if (Peek() == '{') return ParseOperationDist();
    if (Peek() == '(') return ParsePrefixedAttribute();
    size_t start = pos_;
    std::string_view word = LexIdent();
    if (word == "true") return Attribute::Bool(true);
    if (word == "false") return Attribute::Bool(false);
    if (word == "mesh_shape") {
      pos_ = start;
      IRM_ASSIGN_OR_RETURN(ProcessMesh mesh, ParseMeshBody());
      if (!LookingAt(",dims_mappings:")) return Attribute::ProcessMeshAttr(std::move(mesh));
      pos_ = start;
      IRM_ASSIGN_OR_RETURN(TensorDistAttr dist, ParseTensorDistBody());
      return Attribute::TensorDist(std::move(dist));
    }
    pos_ = start;
    if (word.empty() && !LookingAt("<<NULL TYPE>>")) return Expected("an attribute value", "");
    IRM_ASSIGN_OR_RETURN(Type t, ParseType());
    return Attribute::TypeAttr(std::move(t));
  }

  // `(Int32)0`, `(Float)0.5`, `(pd_op.IntArray)[1,2]`, `(pd_op.Scalar:float32)1`, …
  StatusOr<Attribute> ParsePrefixedAttribute() {
    size_t start = pos_;
    ++pos_;  // '('
    // Kinds are short names: do not let a stray '(' swallow the rest of the text.
    size_t close = Rest().substr(0, 64).find(')');
    if (close == std::string_view::npos) return Expected("')'", "after attribute kind");
    std::string_view kind = Rest().substr(0, close);
    pos_ += close + 1;
    if (kind == "Int32") return Wrap(ParseInt<int32_t>("a 32-bit integer"), Attribute::Int32);
    if (kind == "Int64") return Wrap(ParseInt<int64_t>("a 64-bit integer"), Attribute::Int64);
    if (kind == "Float") return Wrap(ParseFloat<float>("a float"), Attribute::Float);
    if (kind == "Double") return Wrap(ParseFloat<double>("a double"), Attribute::Double);
    if (kind == "pd_op.IntArray") {
      IRM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList("in IntArray"));
      return Attribute::IntArrayAttr(std::move(v));
    }
    if (kind == "pd_op.DataType") {
      IRM_ASSIGN_OR_RETURN(DataType dt, ParseDataType());
      return Attribute::DataTypeAttr(dt);
    }
    if (kind == "pd_op.Place") {
      IRM_ASSIGN_OR_RETURN(Place p, ParsePlace());
      return Attribute::PlaceAttr(std::move(p));
    }
    if (kind == "pd_op.DataLayout") {
      size_t at = pos_;
      std::string_view name = LexIdent();
      if (Peek() == '(') {
        size_t end = Rest().find(')');
        if (end != std::string_view::npos) pos_ += end + 1;
        name = text_.substr(at, pos_ - at);
      }
      std::optional<DataLayout> layout = DataLayoutFromName(name);
      if (!layout) return ErrorAt(at, fmt::format("unknown data layout '{}'", name));
      return Attribute::DataLayoutAttr(*layout);
    }
    if (kind.starts_with("pd_op.Scalar:")) {
      std::optional<DataType> dt = DataTypeFromName(kind.substr(13));
      if (!dt) {
        return ErrorAt(start + 14, fmt::format("unknown data type '{}'", kind.substr(13)));
      }
      return ParseScalar(*dt);
    }
    return ErrorAt(start, fmt::format("unknown attribute kind '({})'", kind));
  }

  template <typename T, typename F>
  static StatusOr<Attribute> Wrap(StatusOr<T> v, F make) {
    if (!v.ok()) return v.status();
    return make(*v);
  }

  StatusOr<DataType> ParseDataType() {
    size_t at = pos_;
    std::string_view name = LexIdent();
    std::optional<DataType> dt = DataTypeFromName(name);
    if (!dt) return ErrorAt(at, fmt::format("unknown data type '{}'", name));
    return *dt;
  }

  // The value's alternative is not printed: true/false are bool; a float dtype, or text that is
  // only a float (a dot, an exponent, nan, inf), is double; anything else an integer.
  StatusOr<Attribute> ParseScalar(DataType dtype) {
    size_t at = pos_;
    std::string_view tok = LexNumber();
    pos_ = at;
    ScalarValue s;
    s.dtype = dtype;
    if (tok == "true" || tok == "false") {
      pos_ += tok.size();
      s.value = tok == "true";
      return Attribute::Scalar(std::move(s));
    }
    bool is_float_dtype = dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
                          dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 ||
                          dtype == DataType::kComplex64 || dtype == DataType::kComplex128 ||
                          dtype == DataType::kFloat8E4M3FN || dtype == DataType::kFloat8E5M2;
    bool float_text = tok.find_first_of(".eEni") != std::string_view::npos;
    if (is_float_dtype || float_text) {
      IRM_ASSIGN_OR_RETURN(double d, ParseFloat<double>("a scalar value"));
      s.value = d;
    } else {
      IRM_ASSIGN_OR_RETURN(int64_t i, ParseInt<int64_t>("a scalar value"));
      s.value = i;
    }
    return Attribute::Scalar(std::move(s));
  }

  // `{name:value,…}` (the names printed sorted; any order is accepted, duplicates are not).
  StatusOr<AttributeMap> ParseAttributeMap(std::string_view context) {
    AttributeMap attrs;
    IRM_RETURN_IF_ERROR(Expect("{", context));
    if (Consume("}")) return attrs;
    while (true) {
      size_t at = pos_;
      std::string_view name = LexIdent();
      if (name.empty()) return Expected("an attribute name", "");
      IRM_RETURN_IF_ERROR(Expect(":", "after attribute name"));
      IRM_ASSIGN_OR_RETURN(Attribute a, ParseAttribute());
      if (!attrs.emplace(std::string(name), std::move(a)).second) {
        return ErrorAt(at, fmt::format("duplicate attribute '{}'", name));
      }
      if (Consume("}")) return attrs;
      IRM_RETURN_IF_ERROR(Expect(",", "or '}' in attribute map"));
    }
  }

  // ---- Values ---------------------------------------------------------------------------------

  std::string_view LexValueName() {
    size_t start = pos_;
    if (Peek() != '%') return {};
    ++pos_;
    while (!AtEnd() && (IsIdentStart(Peek()) || IsDigit(Peek()))) ++pos_;
    if (pos_ == start + 1) {
      pos_ = start;
      return {};
    }
    return text_.substr(start, pos_ - start);
  }

  Status Define(std::string_view name, size_t at, Value* value) {
    if (!values_.emplace(std::string(name), value).second) {
      return ErrorAt(at, fmt::format("redefinition of value '{}'", name));
    }
    return Status::Ok();
  }

  // A read of a value; `%arg_N {attrs}` on first appearance defines a block argument of `block`.
  StatusOr<Value*> ParseOperand(Block& block) {
    if (Consume("<<NULL VALUE>>")) return static_cast<Value*>(nullptr);
    size_t at = pos_;
    std::string_view name = LexValueName();
    if (name.empty()) return Expected("a value", "");
    if (LookingAt(" {") && name.starts_with("%arg_")) {
      Value* arg = block.AddArgument(Type());
      IRM_RETURN_IF_ERROR(Define(name, at, arg));
      ++pos_;
      IRM_ASSIGN_OR_RETURN(AttributeMap attrs, ParseAttributeMap("for block argument"));
      for (auto& [k, v] : attrs) arg->SetAttribute(k, v);
      return arg;
    }
    auto it = values_.find(std::string(name));
    if (it == values_.end()) return ErrorAt(at, fmt::format("use of undefined value '{}'", name));
    return it->second;
  }

  // ---- Ops and blocks -------------------------------------------------------------------------

  // The ops of `block` up to (not including) the closing `}`.
  Status ParseOps(Block& block) {
    while (true) {
      SkipWs();
      if (AtEnd()) return Expected("'}'", "to close block");
      if (Peek() == '}') return Status::Ok();
      IRM_RETURN_IF_ERROR(ParseOp(block));
    }
  }

  // `{` [`^kw:` kwargs] ops `}`.
  Status ParseBlock(Block& block) {
    IRM_RETURN_IF_ERROR(Enter());
    IRM_RETURN_IF_ERROR(Expect("{", "to open block"));
    SkipWs();
    if (Consume("^kw:")) {
      while (true) {
        SkipWs();
        if (!LookingAt("%kwarg_")) break;
        size_t at = pos_;
        std::string_view name = LexValueName();
        std::string kw(name.substr(7));
        if (kw.empty()) return ErrorAt(at, "keyword argument without a name");
        SkipSpaces();
        IRM_ASSIGN_OR_RETURN(AttributeMap attrs, ParseAttributeMap("after keyword argument"));
        StatusOr<Value*> v = block.AddKwarg(kw, Type());
        if (!v.ok()) return ErrorAt(at, v.status().message());
        for (auto& [k, a] : attrs) (*v)->SetAttribute(k, a);
        IRM_RETURN_IF_ERROR(Define(name, at, *v));
      }
    }
    IRM_RETURN_IF_ERROR(ParseOps(block));
    ++pos_;  // '}'
    Leave();
    return Status::Ok();
  }

  // Counts the `{ … }` groups that follow (the op's regions) without parsing them, so the op can
  // be created with its regions before their contents are read.
  size_t CountRegions() const {
    size_t p = pos_;
    size_t count = 0;
    while (true) {
      while (p < text_.size() &&
             (text_[p] == ' ' || text_[p] == '\n' || text_[p] == '\t' || text_[p] == '\r')) {
        ++p;
      }
      if (p >= text_.size() || text_[p] != '{') return count;
      int level = 0;
      for (; p < text_.size(); ++p) {
        char c = text_[p];
        if (c == '"') {
          for (++p; p < text_.size() && text_[p] != '"'; ++p) {
            if (text_[p] == '\\') ++p;
          }
        } else if (c == '{') {
          ++level;
        } else if (c == '}' && --level == 0) {
          ++p;
          break;
        }
      }
      if (level != 0) return count + 1;  // unterminated: the parse reports it
      ++count;
    }
  }

  // Result types up to the end of the line (a region or the next op starts on the next one).
  StatusOr<std::vector<Type>> ParseResultTypes() {
    std::vector<Type> types;
    SkipSpaces();
    if (!(IsIdentStart(Peek()) || LookingAt("<<NULL TYPE>>"))) return types;
    while (true) {
      IRM_ASSIGN_OR_RETURN(Type t, ParseType());
      types.push_back(std::move(t));
      if (!Consume(", ")) return types;
    }
  }

  // Gives typeless (block and keyword) arguments the type their slot says; checks the others.
  Status MatchOperandTypes(const std::vector<Value*>& operands, const std::vector<Type>& types,
                           const std::vector<size_t>& at, std::string_view op_name) {
    for (size_t i = 0; i < operands.size(); ++i) {
      Value* v = operands[i];
      if (v == nullptr) continue;
      if (v->type().IsNull()) {
        v->set_type(types[i]);
      } else if (v->type() != types[i]) {
        return ErrorAt(at[i],
                       fmt::format("operand {} of '{}' has type {}, but the type list says {}", i,
                                   op_name, v->type().ToString(), types[i].ToString()));
      }
    }
    return Status::Ok();
  }

  Status ParseOp(Block& block) {
    // Results.
    std::vector<std::pair<std::string_view, size_t>> results;
    IRM_RETURN_IF_ERROR(Expect("(", "to start an op (its result list)"));
    if (!Consume(")")) {
      while (true) {
        size_t at = pos_;
        std::string_view name = LexValueName();
        if (name.empty()) return Expected("a result name", "");
        results.emplace_back(name, at);
        if (Consume(")")) break;
        IRM_RETURN_IF_ERROR(Expect(", ", "or ')' after result name"));
      }
    }
    SkipSpaces();
    IRM_RETURN_IF_ERROR(Expect("=", "after result list"));
    SkipSpaces();
    size_t name_at = pos_;
    if (Peek() != '"') return Expected("an op name in quotes", "");
    IRM_ASSIGN_OR_RETURN(std::string op_name, ParseString());
    // Op names are `dialect.op` identifiers; the printer writes them unescaped, so anything else
    // could not survive a print/parse round trip.
    const bool identifier =
        !op_name.empty() && std::all_of(op_name.begin(), op_name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
        });
    if (!identifier) {
      return ErrorAt(name_at, "op names are made of letters, digits, '_' and '.'");
    }
    const OpInfo* info = options_.registry->Lookup(op_name);
    if (info == nullptr && !options_.allow_unregistered) {
      return ErrorAt(name_at, fmt::format("unknown op '{}'", op_name));
    }
    SkipSpaces();
    if (Consume("[id:")) {  // debug info: read and dropped
      IRM_RETURN_IF_ERROR(ParseInt<uint64_t>("an op id").status());
      IRM_RETURN_IF_ERROR(Expect("]", "after op id"));
      SkipSpaces();
    }
    IRM_RETURN_IF_ERROR(Expect("(", "before operand list"));
    if (op_name == "pd_op.while" && LookingAt("cond=")) {
      return ParseWhile(block, op_name, info, results);
    }
    std::vector<Value*> operands;
    std::vector<size_t> operand_at;
    if (!Consume(")")) {
      while (true) {
        operand_at.push_back(pos_);
        IRM_ASSIGN_OR_RETURN(Value * v, ParseOperand(block));
        operands.push_back(v);
        SkipSpaces();
        if (Consume(")")) break;
        if (!Consume(", ")) return Expected("')'", "after operand list");
      }
    }
    SkipSpaces();
    IRM_ASSIGN_OR_RETURN(AttributeMap attrs, ParseAttributeMap("for op attributes"));
    SkipSpaces();
    bool if_form = op_name == "pd_op.if" && LookingAt("->");
    if (!if_form) {
      IRM_RETURN_IF_ERROR(Expect(":", "before the op's type list"));
      SkipSpaces();
      size_t types_at = pos_;
      IRM_RETURN_IF_ERROR(Expect("(", "to open operand type list"));
      std::vector<Type> operand_types;
      if (!Consume(")")) {
        while (true) {
          IRM_ASSIGN_OR_RETURN(Type t, ParseType());
          operand_types.push_back(std::move(t));
          if (Consume(")")) break;
          IRM_RETURN_IF_ERROR(Expect(", ", "or ')' in operand type list"));
        }
      }
      if (operand_types.size() != operands.size()) {
        return ErrorAt(types_at, fmt::format("'{}' has {} operands but {} operand types", op_name,
                                             operands.size(), operand_types.size()));
      }
      IRM_RETURN_IF_ERROR(MatchOperandTypes(operands, operand_types, operand_at, op_name));
    }
    SkipSpaces();
    IRM_RETURN_IF_ERROR(Expect("->", "before result types"));
    SkipSpaces();
    size_t rtypes_at = pos_;
    IRM_ASSIGN_OR_RETURN(std::vector<Type> result_types, ParseResultTypes());
    if (result_types.size() != results.size()) {
      return ErrorAt(rtypes_at, fmt::format("'{}' has {} results but {} result types", op_name,
                                            results.size(), result_types.size()));
    }
    size_t num_regions = if_form ? 2 : CountRegions();
    auto op =
        Operation::Create(op_name, operands, result_types, std::move(attrs), num_regions, info);
    Operation* created = block.PushBack(std::move(op));
    for (size_t i = 0; i < results.size(); ++i) {
      IRM_RETURN_IF_ERROR(Define(results[i].first, results[i].second, created->result(i)));
    }
    if (if_form) {
      SkipSpaces();
      IRM_RETURN_IF_ERROR(Expect("{", "to open the true branch of pd_op.if"));
      IRM_RETURN_IF_ERROR(ParseBranch(created->region(0).AddBlock()));
      SkipSpaces();
      IRM_RETURN_IF_ERROR(Expect("else", "after the true branch of pd_op.if"));
      SkipSpaces();
      IRM_RETURN_IF_ERROR(Expect("{", "to open the false branch of pd_op.if"));
      return ParseBranch(created->region(1).AddBlock());
    }
    for (size_t r = 0; r < num_regions; ++r) {
      SkipWs();
      IRM_RETURN_IF_ERROR(ParseBlock(created->region(r).AddBlock()));
    }
    return Status::Ok();
  }

  // The body of a custom-form region after its `{`: ops, then `}`.
  Status ParseBranch(Block& block) {
    IRM_RETURN_IF_ERROR(Enter());
    IRM_RETURN_IF_ERROR(ParseOps(block));
    ++pos_;  // '}'
    Leave();
    return Status::Ok();
  }

  // `(cond=%c, inputs=%a, %b) {` `^%arg_0 {…}, …` ops `}`; results take the inputs' types.
  Status ParseWhile(Block& block, const std::string& op_name, const OpInfo* info,
                    const std::vector<std::pair<std::string_view, size_t>>& results) {
    std::vector<Value*> operands;
    IRM_RETURN_IF_ERROR(Expect("cond=", "in pd_op.while"));
    IRM_ASSIGN_OR_RETURN(Value * cond, ParseOperand(block));
    operands.push_back(cond);
    IRM_RETURN_IF_ERROR(Expect(", inputs=", "after the pd_op.while condition"));
    if (!Consume(")")) {
      while (true) {
        IRM_ASSIGN_OR_RETURN(Value * v, ParseOperand(block));
        operands.push_back(v);
        SkipSpaces();
        if (Consume(")")) break;
        if (!Consume(", ")) return Expected("')'", "after operand list");
      }
    }
    if (results.size() != operands.size() - 1) {
      return Error(fmt::format("pd_op.while has {} results but {} loop inputs", results.size(),
                               operands.size() - 1));
    }
    std::vector<Type> result_types;
    for (size_t i = 1; i < operands.size(); ++i) {
      result_types.push_back(operands[i] != nullptr ? operands[i]->type() : Type());
    }
    SkipSpaces();
    IRM_RETURN_IF_ERROR(Expect("{", "to open the pd_op.while body"));
    Operation* created =
        block.PushBack(Operation::Create(op_name, operands, result_types, {}, 1, info));
    for (size_t i = 0; i < results.size(); ++i) {
      IRM_RETURN_IF_ERROR(Define(results[i].first, results[i].second, created->result(i)));
    }
    Block& body = created->region(0).AddBlock();
    SkipWs();
    IRM_RETURN_IF_ERROR(Expect("^", "before the pd_op.while body arguments"));
    if (Peek() == '%') {
      while (true) {
        size_t at = pos_;
        std::string_view name = LexValueName();
        if (!LookingAt(" {")) return Expected("' {'", "after a pd_op.while body argument");
        Value* arg = body.AddArgument(Type());
        IRM_RETURN_IF_ERROR(Define(name, at, arg));
        ++pos_;
        IRM_ASSIGN_OR_RETURN(AttributeMap attrs, ParseAttributeMap("for block argument"));
        for (auto& [k, v] : attrs) arg->SetAttribute(k, v);
        if (!Consume(", ")) break;
      }
    }
    return ParseBranch(body);
  }

  StatusOr<Program> ParseWholeProgram() {
    Program program;
    SkipWs();
    IRM_RETURN_IF_ERROR(ParseBlock(program.block()));
    SkipWs();
    if (!AtEnd()) return Expected("end of input", "after the program");
    return program;
  }

  template <typename T>
  StatusOr<T> Whole(StatusOr<T> v) {
    if (!v.ok()) return v;
    if (!AtEnd()) return Expected("end of input", "");
    return v;
  }

 private:
  std::string_view text_;
  const std::string& file_;
  const ParseOptions& options_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::unordered_map<std::string, Value*> values_;
};

}  // namespace

StatusOr<Program> ParseProgram(std::string_view text, const std::string& file,
                               const ParseOptions& options) {
  Parser parser(text, file, options);
  return parser.ParseWholeProgram();
}

StatusOr<Attribute> ParseAttribute(std::string_view text, const std::string& file) {
  ParseOptions options;
  Parser parser(text, file, options);
  return parser.Whole(parser.ParseAttribute());
}

StatusOr<Type> ParseType(std::string_view text, const std::string& file) {
  ParseOptions options;
  Parser parser(text, file, options);
  return parser.Whole(parser.ParseType());
}

}  // namespace irm::newir
