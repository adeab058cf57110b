// NumPy .npy reading and writing. The reader treats the file as untrusted: every length is checked
// against the bytes that are really there before anything is allocated, the header dict is read by
// a small strict parser (not an evaluator), and each failure names the byte where it was found.
// The writer reproduces NumPy's own np.save output byte for byte (header key order, the spare
// spaces NumPy leaves for growing the first axis, the 64-byte alignment), so files diff cleanly
// against ones written by Python.
#include "common/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "common/file_io.h"

namespace irm {
namespace {

// Data bytes are copied as they are: HostTensor holds little-endian bytes and so does the host.
static_assert(std::endian::native == std::endian::little,
              "the .npy code assumes a little-endian host");

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kArrayAlign = 64;
// NumPy (>= 1.24) pads the header with spaces so that the first axis can grow to this many digits
// in place; we do the same to write identical files.
constexpr size_t kGrowthAxisMaxDigits = 21;

Status ErrorAt(const std::string& file, size_t byte, std::string message) {
  return Status(StatusCode::kParseError, Location::File(file).With(fmt::format("byte {}", byte)),
                std::move(message));
}

// ---- dtypes ---------------------------------------------------------------------------------

struct NpyType {
  DType dtype;
  char kind;  // NumPy's type character: b (bool), i, u, f, c, V (raw bytes: bfloat16 here)
  size_t size;
};

constexpr NpyType kNpyTypes[] = {
    {DType::kBool, 'b', 1},    {DType::kInt8, 'i', 1},      {DType::kUInt8, 'u', 1},
    {DType::kInt16, 'i', 2},   {DType::kInt32, 'i', 4},     {DType::kInt64, 'i', 8},
    {DType::kFloat16, 'f', 2}, {DType::kBFloat16, 'V', 2},  {DType::kFloat32, 'f', 4},
    {DType::kFloat64, 'f', 8}, {DType::kComplex64, 'c', 8}, {DType::kComplex128, 'c', 16},
};

bool IsKnownDType(DType dtype) { return static_cast<size_t>(dtype) < std::size(kNpyTypes); }

const NpyType& NpyTypeOf(DType dtype) {
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == dtype) return t;
  }
  return kNpyTypes[0];  // unreachable for a known dtype
}

// What NumPy writes: '|' for one-byte types (byte order does not apply), '<' otherwise.
std::string DescrOf(DType dtype) {
  const NpyType& t = NpyTypeOf(dtype);
  return fmt::format("{}{}{}", t.size == 1 ? '|' : '<', t.kind, t.size);
}

struct ParsedDescr {
  DType dtype;
  bool big_endian;
};

// '<f4', '>i8', '|b1', '=c16', 'f4' (no order: native). '|' (no byte order) is accepted only
// where byte order does not matter: one-byte types, and V2, which NumPy writes as '|V2' for raw
// two-byte values.
std::optional<ParsedDescr> ParseDescr(std::string_view descr, std::string* why) {
  char order = '=';
  if (!descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos) {
    order = descr[0];
    descr.remove_prefix(1);
  }
  if (descr.size() < 2) return std::nullopt;
  char kind = descr[0];
  size_t size = 0;
  for (char c : descr.substr(1)) {
    if (c < '0' || c > '9' || size > 100) return std::nullopt;
    size = size * 10 + static_cast<size_t>(c - '0');
  }
  for (const NpyType& t : kNpyTypes) {
    if (t.kind != kind || t.size != size) continue;
    if (order == '|' && t.size > 1 && t.kind != 'V') {
      *why = "'|' gives no byte order for a multi-byte type";
      return std::nullopt;
    }
    return ParsedDescr{t.dtype, order == '>' && t.size > 1};
  }
  return std::nullopt;
}

// ---- shapes ---------------------------------------------------------------------------------

// Python's repr of a tuple: (), (5,), (2, 3).
std::string ShapeRepr(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// ---- the header dict ------------------------------------------------------------------------

struct NpyHeader {
  std::string descr;
  size_t descr_byte = 0;  // where the descr value starts, for diagnostics
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A strict reader of the Python dict literal NumPy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Keys in any order, any whitespace, an optional trailing comma, ' or " quotes, Python 2's "2L"
// integers. Anything else (escapes, other keys, other value types) is an error at its byte.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, size_t base, const std::string& file)
      : text_(text), base_(base), file_(file) {}

  StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{' to start the header dict, found " + Found());
    SkipSpace();
    while (!Consume('}')) {
      size_t key_pos = pos_;
      IRM_ASSIGN_OR_RETURN(std::string key, ParseString("a key"));
      SkipSpace();
      if (!Consume(':'))
        return Error(fmt::format("expected ':' after the key '{}', found {}", key, Found()));
      SkipSpace();
      bool* seen = key == "descr"           ? &seen_descr
                   : key == "fortran_order" ? &seen_fortran
                   : key == "shape"         ? &seen_shape
                                            : nullptr;
      if (seen == nullptr) {
        return ErrorAtPos(key_pos, fmt::format("unknown key '{}' in the header (the keys are "
                                               "'descr', 'fortran_order' and 'shape')",
                                               key));
      }
      if (*seen) return ErrorAtPos(key_pos, fmt::format("duplicate key '{}' in the header", key));
      *seen = true;
      if (key == "descr") {
        header.descr_byte = base_ + pos_;
        if (AtEnd() || (Peek() != '\'' && Peek() != '"')) {
          return Error(
              "the value of 'descr' must be a string such as '<f4' (structured dtypes "
              "are not supported), found " +
              Found());
        }
        IRM_ASSIGN_OR_RETURN(header.descr, ParseString("the descr"));
      } else if (key == "fortran_order") {
        IRM_ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
      } else {
        IRM_ASSIGN_OR_RETURN(header.shape, ParseShape());
      }
      SkipSpace();
      if (Consume(',')) {
        SkipSpace();
      } else if (AtEnd() || Peek() != '}') {
        return Error("expected ',' or '}' after the value of '" + key + "', found " + Found());
      }
    }
    SkipSpace();
    if (!AtEnd()) return Error("unexpected " + Found() + " after the header dict");
    const char* missing = !seen_descr     ? "descr"
                          : !seen_fortran ? "fortran_order"
                          : !seen_shape   ? "shape"
                                          : nullptr;
    if (missing != nullptr) {
      return ErrorAtPos(0, fmt::format("the header has no '{}' key", missing));
    }
    return header;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool Consume(char c) {
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r'))
      ++pos_;
  }
  // The next character for a message: 'x', byte 0x93, or the end of the header.
  std::string Found() const {
    if (AtEnd()) return "the end of the header";
    unsigned char c = static_cast<unsigned char>(Peek());
    if (c == '\'') return "\"'\"";
    if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
  }
  Status Error(std::string message) const { return ErrorAtPos(pos_, std::move(message)); }
  Status ErrorAtPos(size_t pos, std::string message) const {
    return ErrorAt(file_, base_ + pos, std::move(message));
  }

  // A quoted string without escapes (no key or descr NumPy writes needs one).
  StatusOr<std::string> ParseString(const char* what) {
    if (AtEnd() || (Peek() != '\'' && Peek() != '"')) {
      return Error(fmt::format("expected a quoted string for {}, found {}", what, Found()));
    }
    char quote = Peek();
    size_t start = ++pos_;
    while (!AtEnd() && Peek() != quote) {
      if (Peek() == '\\') return Error("escape sequences are not supported in the header");
      if (Peek() == '\n') break;
      ++pos_;
    }
    if (AtEnd() || Peek() != quote)
      return ErrorAtPos(start - 1, "unterminated string in the header");
    std::string value(text_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }

  StatusOr<bool> ParseBool() {
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      std::string_view w(word);
      if (text_.substr(pos_, w.size()) == w) {
        size_t end = pos_ + w.size();
        if (end == text_.size() || !IsIdentChar(text_[end])) {
          pos_ = end;
          return value;
        }
      }
    }
    return Error("the value of 'fortran_order' must be True or False, found " + Found());
  }

  static bool IsIdentChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  StatusOr<int64_t> ParseDim() {
    size_t start = pos_;
    if (Consume('-')) {
      if (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
        size_t digits = pos_;
        while (!AtEnd() && Peek() >= '0' && Peek() <= '9') ++pos_;
        return ErrorAtPos(start, fmt::format("shape dimension -{} is negative",
                                             text_.substr(digits, pos_ - digits)));
      }
      pos_ = start;
    }
    if (AtEnd() || Peek() < '0' || Peek() > '9') {
      return Error("expected an integer dimension in the shape, found " + Found());
    }
    int64_t value = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, Peek() - '0', &value)) {
        return ErrorAtPos(start, "shape dimension does not fit in 64 bits");
      }
      ++pos_;
    }
    if (!AtEnd() && (Peek() == 'L' || Peek() == 'l')) ++pos_;  // Python 2 long: 3L
    return value;
  }

  StatusOr<std::vector<int64_t>> ParseShape() {
    size_t open = pos_;
    if (!Consume('(')) {
      return Error("the value of 'shape' must be a tuple such as (2, 3), found " + Found());
    }
    std::vector<int64_t> shape;
    SkipSpace();
    bool trailing_comma = false;
    while (!Consume(')')) {
      IRM_ASSIGN_OR_RETURN(int64_t dim, ParseDim());
      shape.push_back(dim);
      SkipSpace();
      trailing_comma = Consume(',');
      SkipSpace();
      if (!trailing_comma && (AtEnd() || Peek() != ')')) {
        return Error("expected ',' or ')' in the shape, found " + Found());
      }
    }
    if (shape.size() == 1 && !trailing_comma) {
      return ErrorAtPos(open, fmt::format("the shape ({}) is not a tuple; a 1-d shape is written "
                                          "({},)",
                                          shape[0], shape[0]));
    }
    return shape;
  }

  std::string_view text_;
  size_t base_;  // file offset of text_[0]
  const std::string& file_;
  size_t pos_ = 0;
};

// Little-endian bytes from big-endian ones: each scalar (each half of a complex) reversed.
void ByteSwap(std::string* bytes, size_t scalar_size) {
  for (size_t i = 0; i + scalar_size <= bytes->size(); i += scalar_size) {
    std::reverse(bytes->begin() + static_cast<std::ptrdiff_t>(i),
                 bytes->begin() + static_cast<std::ptrdiff_t>(i + scalar_size));
  }
}

// C-order bytes from Fortran-order ones (the same multi-index, the other layout).
std::string FortranToC(std::string_view src, const std::vector<int64_t>& shape, size_t item) {
  std::string out(src.size(), '\0');
  size_t rank = shape.size();
  std::vector<size_t> fstride(rank);  // Fortran strides in elements: the first axis is contiguous
  size_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= static_cast<size_t>(shape[k]);
  }
  size_t numel = s;
  std::vector<int64_t> index(rank, 0);
  size_t from = 0;  // Fortran element offset of `index`
  for (size_t to = 0; to < numel; ++to) {
    std::copy_n(src.data() + from * item, item, out.data() + to * item);
    // Advance `index` in C order (last axis fastest), keeping `from` in step.
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        from += fstride[k];
        break;
      }
      from -= static_cast<size_t>(shape[k] - 1) * fstride[k];
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

StatusOr<HostTensor> ParseNpy(std::string_view bytes, const std::string& file) {
  size_t magic_part = std::min(bytes.size(), kMagic.size());
  if (bytes.empty() || bytes.substr(0, magic_part) != kMagic.substr(0, magic_part)) {
    return ErrorAt(file, 0, "not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  if (bytes.size() < kMagic.size() + 2) {
    return ErrorAt(file, bytes.size(),
                   "truncated: the file ends inside the magic string and format version");
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  uint8_t minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return ErrorAt(file, 6,
                   fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)",
                               major, minor));
  }
  size_t len_size = major == 1 ? 2 : 4;
  size_t header_start = 8 + len_size;
  if (bytes.size() < header_start) {
    return ErrorAt(file, 8,
                   fmt::format("truncated: the header length needs {} bytes, the file has {}",
                               len_size, bytes.size() - 8));
  }
  size_t header_len = 0;
  for (size_t i = 0; i < len_size; ++i) {
    header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  }
  if (header_len > bytes.size() - header_start) {
    return ErrorAt(file, 8,
                   fmt::format("the header length {} goes beyond the end of the file ({} bytes "
                               "after the length field)",
                               header_len, bytes.size() - header_start));
  }
  HeaderParser parser(bytes.substr(header_start, header_len), header_start, file);
  IRM_ASSIGN_OR_RETURN(NpyHeader header, parser.Parse());

  std::string why;
  std::optional<ParsedDescr> descr = ParseDescr(header.descr, &why);
  if (!descr) {
    return ErrorAt(file, header.descr_byte,
                   fmt::format("unsupported descr '{}'{}", header.descr,
                               why.empty() ? " (supported: b1 i1 u1 i2 i4 i8 f2 V2 f4 f8 c8 c16)"
                                           : ": " + why));
  }
  size_t item = DTypeSize(descr->dtype);
  size_t data_start = header_start + header_len;
  std::optional<uint64_t> nbytes = CheckedByteSize(header.shape, item);
  if (!nbytes) {
    return ErrorAt(file, data_start,
                   fmt::format("the shape {} of {} is too large: its size overflows 64 bits",
                               ShapeRepr(header.shape), DTypeName(descr->dtype)));
  }
  size_t left = bytes.size() - data_start;
  if (*nbytes > left) {
    return ErrorAt(file, data_start,
                   fmt::format("the data is truncated: the shape {} of {} needs {} bytes, the "
                               "file has {}",
                               ShapeRepr(header.shape), DTypeName(descr->dtype), *nbytes, left));
  }
  if (*nbytes < left) {
    return ErrorAt(
        file, data_start + *nbytes,
        fmt::format("{} bytes of trailing data after the array (the shape {} of {} "
                    "needs {} bytes)",
                    left - *nbytes, ShapeRepr(header.shape), DTypeName(descr->dtype), *nbytes));
  }

  HostTensor tensor;
  tensor.dtype = descr->dtype;
  tensor.shape = std::move(header.shape);
  std::string_view data = bytes.substr(data_start);
  if (header.fortran_order && tensor.shape.size() > 1 && !data.empty()) {
    tensor.bytes = FortranToC(data, tensor.shape, item);
  } else {
    tensor.bytes.assign(data);
  }
  if (descr->big_endian) {
    ByteSwap(&tensor.bytes, NpyTypeOf(descr->dtype).kind == 'c' ? item / 2 : item);
  }
  return tensor;
}

StatusOr<std::string> SerializeNpy(const HostTensor& tensor) {
  if (!IsKnownDType(tensor.dtype)) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("cannot write .npy: unknown dtype code {}", static_cast<int>(tensor.dtype)));
  }
  std::optional<uint64_t> nbytes = CheckedByteSize(tensor.shape, DTypeSize(tensor.dtype));
  if (!nbytes) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("cannot write .npy: the shape {} is negative or too large",
                              ShapeRepr(tensor.shape)));
  }
  if (*nbytes != tensor.bytes.size()) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("cannot write .npy: the shape {} of {} needs {} bytes, the tensor "
                              "has {}",
                              ShapeRepr(tensor.shape), DTypeName(tensor.dtype), *nbytes,
                              tensor.bytes.size()));
  }
  // NumPy's _write_array_header: sorted keys, repr of each value, spare spaces for the first
  // axis, then _wrap_header's padding to 64 bytes (a full 64 when already aligned) and '\n'.
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   DescrOf(tensor.dtype), ShapeRepr(tensor.shape));
  if (!tensor.shape.empty()) {
    header.append(kGrowthAxisMaxDigits - fmt::format("{}", tensor.shape[0]).size(), ' ');
  }
  int major = 1;
  size_t len_size = 2;
  size_t hlen = header.size() + 1;
  size_t padlen = kArrayAlign - (kMagic.size() + 2 + len_size + hlen) % kArrayAlign;
  if (hlen + padlen > 0xffff) {  // does not fit version 1.0's uint16: NumPy moves to 2.0
    major = 2;
    len_size = 4;
    padlen = kArrayAlign - (kMagic.size() + 2 + len_size + hlen) % kArrayAlign;
  }
  if (hlen + padlen > 0xffffffffu) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  "cannot write .npy: the header is too long");
  }
  uint64_t stored_len = hlen + padlen;
  std::string out;
  out.reserve(kMagic.size() + 2 + len_size + stored_len + tensor.bytes.size());
  out.append(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < len_size; ++i)
    out.push_back(static_cast<char>((stored_len >> (8 * i)) & 0xff));
  out.append(header);
  out.append(padlen, ' ');
  out.push_back('\n');
  out.append(tensor.bytes);
  return out;
}

StatusOr<HostTensor> LoadNpy(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpy(bytes, path == "-" ? "<stdin>" : path);
}

Status SaveNpy(const HostTensor& tensor, const std::string& path) {
  StatusOr<std::string> bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return Status(bytes.status()).InFile(path);
  return WriteFileAtomically(path, *bytes);
}

}  // namespace irm
