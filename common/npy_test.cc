// Tests of the .npy reader and writer: byte-exact NumPy-compatible output (expected files written
// out by hand from numpy/lib/format.py's rules), round trips for every dtype and shape kind,
// hand-made big-endian and Fortran-order inputs, the header variants NumPy and Python 2 produce,
// and every kind of malformed input with its exact diagnostic.
#include "common/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"

namespace irm {
namespace {

using namespace std::string_literals;

// A version 1.0 file around a header text taken as is (no padding) and raw data.
std::string Npy(const std::string& header, const std::string& data = "") {
  std::string out = "\x93NUMPY\x01\x00"s;
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + data;
}

std::string Pattern(size_t n) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>((i * 37 + 11) & 0xff);
  return bytes;
}

HostTensor Tensor(DType dtype, std::vector<int64_t> shape, std::string bytes) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes = std::move(bytes);
  return t;
}

std::string ParseError(const std::string& bytes) {
  StatusOr<HostTensor> result = ParseNpy(bytes, "f.npy");
  if (result.ok()) return "parsed";
  EXPECT_EQ(result.status().code(), StatusCode::kParseError);
  return result.status().ToString();
}

// ---- writing: exact bytes -------------------------------------------------------------------

TEST(NpyWrite, Float32OneByTwoIsExactlyWhatNumPyWrites) {
  // np.save of np.array([[1, 2]], np.float32): the dict, 20 spare spaces for axis 0 (21 -
  // len("1")), then padding so that magic + length + header is 128 bytes, then '\n' and the data.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
  std::string expected = "\x93NUMPY\x01\x00\x76\x00"s + header +
                         std::string(118 - header.size() - 1, ' ') + "\n" +
                         "\x00\x00\x80\x3f\x00\x00\x00\x40"s;
  ASSERT_EQ(expected.size(), 128u + 8u);
  StatusOr<std::string> bytes =
      SerializeNpy(Tensor(DType::kFloat32, {1, 2}, "\x00\x00\x80\x3f\x00\x00\x00\x40"s));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, expected);
}

TEST(NpyWrite, ScalarHasNoGrowthSpaces) {
  // np.save of np.float64(1.5): shape (), no spare spaces; 10 + 55 + 1 = 66 pads to 128.
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }";
  ASSERT_EQ(header.size(), 55u);
  std::string expected = "\x93NUMPY\x01\x00\x76\x00"s + header + std::string(62, ' ') + "\n" +
                         "\x00\x00\x00\x00\x00\x00\xf8\x3f"s;
  StatusOr<std::string> bytes =
      SerializeNpy(Tensor(DType::kFloat64, {}, "\x00\x00\x00\x00\x00\x00\xf8\x3f"s));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, expected);
}

TEST(NpyWrite, AlreadyAlignedHeaderGetsAFullBlockOfPadding) {
  // NumPy's padlen = 64 - (10 + hlen) % 64 is 64, not 0, when the header is already aligned:
  // 10 + 97 (dict) + 20 (spare) + 1 ('\n') = 128, so 64 more spaces; length field 182.
  std::string header =
      "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
      "1, 1), }";
  ASSERT_EQ(header.size(), 97u);
  std::string data(100, '\x01');
  std::string expected =
      "\x93NUMPY\x01\x00\xb6\x00"s + header + std::string(20 + 64, ' ') + "\n" + data;
  StatusOr<std::string> bytes =
      SerializeNpy(Tensor(DType::kBool, {1, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, data));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->size(), 192u + 100u);
  EXPECT_EQ(*bytes, expected);
}

TEST(NpyWrite, OneDimensionalShapeAndOneByteDescr) {
  // (3,): spare spaces 21 - 1 = 20; '|u1' as NumPy writes one-byte types.
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
  std::string expected = "\x93NUMPY\x01\x00\x76\x00"s + header +
                         std::string(118 - header.size() - 1, ' ') + "\n" + "abc";
  StatusOr<std::string> bytes = SerializeNpy(Tensor(DType::kUInt8, {3}, "abc"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, expected);
}

TEST(NpyWrite, DescrOfEveryDType) {
  struct Case {
    DType dtype;
    const char* descr;
  };
  const Case cases[] = {
      {DType::kBool, "|b1"},    {DType::kInt8, "|i1"},      {DType::kUInt8, "|u1"},
      {DType::kInt16, "<i2"},   {DType::kInt32, "<i4"},     {DType::kInt64, "<i8"},
      {DType::kFloat16, "<f2"}, {DType::kBFloat16, "<V2"},  {DType::kFloat32, "<f4"},
      {DType::kFloat64, "<f8"}, {DType::kComplex64, "<c8"}, {DType::kComplex128, "<c16"},
  };
  for (const Case& c : cases) {
    StatusOr<std::string> bytes = SerializeNpy(Tensor(c.dtype, {0}, ""));
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    std::string start = "{'descr': '"s + c.descr + "', ";
    EXPECT_EQ(bytes->substr(10, start.size()), start) << DTypeName(c.dtype);
    EXPECT_EQ(bytes->size() % 64, 0u) << DTypeName(c.dtype);
    EXPECT_EQ(bytes->back(), '\n') << DTypeName(c.dtype);
  }
}

TEST(NpyWrite, LongHeaderSwitchesToVersion2) {
  // 25000 dims of 1 make a dict longer than version 1.0's uint16 length can say.
  std::vector<int64_t> shape(25000, 1);
  StatusOr<std::string> bytes = SerializeNpy(Tensor(DType::kUInt8, shape, "\x07"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->substr(0, 8), "\x93NUMPY\x02\x00"s);
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= uint32_t{static_cast<uint8_t>((*bytes)[8 + i])} << (8 * i);
  EXPECT_EQ((12 + len) % 64, 0u);
  EXPECT_EQ(bytes->size(), 12 + len + 1);
  StatusOr<HostTensor> back = ParseNpy(*bytes, "f.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape, shape);
  EXPECT_EQ(back->bytes, "\x07");
}

TEST(NpyWrite, RejectsInconsistentTensors) {
  StatusOr<std::string> short_bytes = SerializeNpy(Tensor(DType::kFloat32, {2, 3}, "abcd"));
  ASSERT_FALSE(short_bytes.ok());
  EXPECT_EQ(short_bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(short_bytes.status().ToString(),
            "error: cannot write .npy: the shape (2, 3) of float32 needs 24 bytes, the tensor has "
            "4");
  StatusOr<std::string> negative = SerializeNpy(Tensor(DType::kInt8, {-1}, ""));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().ToString(),
            "error: cannot write .npy: the shape (-1,) is negative or too large");
  StatusOr<std::string> huge =
      SerializeNpy(Tensor(DType::kInt8, {int64_t{1} << 40, int64_t{1} << 40}, ""));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().ToString(),
            "error: cannot write .npy: the shape (1099511627776, 1099511627776) is negative or "
            "too large");
  StatusOr<std::string> bad_dtype = SerializeNpy(Tensor(static_cast<DType>(99), {}, ""));
  ASSERT_FALSE(bad_dtype.ok());
  EXPECT_EQ(bad_dtype.status().ToString(), "error: cannot write .npy: unknown dtype code 99");
}

// ---- round trips ----------------------------------------------------------------------------

TEST(NpyRoundTrip, EveryDTypeAndShapeKind) {
  const DType dtypes[] = {DType::kBool,    DType::kInt8,    DType::kUInt8,     DType::kInt16,
                          DType::kInt32,   DType::kInt64,   DType::kFloat16,   DType::kBFloat16,
                          DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}, {12345678901, 0}};
  for (DType dtype : dtypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      HostTensor tensor = Tensor(dtype, shape, Pattern(numel * DTypeSize(dtype)));
      StatusOr<std::string> bytes = SerializeNpy(tensor);
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      // The data is the tail of the file, untouched.
      EXPECT_EQ(bytes->substr(bytes->size() - tensor.bytes.size()), tensor.bytes);
      StatusOr<HostTensor> back = ParseNpy(*bytes, "f.npy");
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, tensor) << DTypeName(dtype) << " rank " << shape.size();
    }
  }
}

TEST(NpyRoundTrip, ThroughFiles) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("irm_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.npy").string();
  HostTensor tensor = Tensor(DType::kInt16, {3, 2}, Pattern(12));
  ASSERT_TRUE(SaveNpy(tensor, path).ok());
  StatusOr<HostTensor> back = LoadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, tensor);

  Status bad = SaveNpy(Tensor(DType::kInt16, {3}, "x"), (dir / "u.npy").string());
  EXPECT_EQ(bad.ToString(), (dir / "u.npy").string() +
                                ": error: cannot write .npy: the shape (3,) of int16 needs 6 "
                                "bytes, the tensor has 1");
  EXPECT_FALSE(std::filesystem::exists(dir / "u.npy"));

  StatusOr<HostTensor> missing = LoadNpy((dir / "none.npy").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  std::string garbage_path = (dir / "g.npy").string();
  ASSERT_TRUE(WriteFileAtomically(garbage_path, "PK\x03\x04").ok());
  StatusOr<HostTensor> garbage = LoadNpy(garbage_path);
  EXPECT_EQ(
      garbage.status().ToString(),
      garbage_path + ": byte 0: error: not a .npy file: it does not start with \"\\x93NUMPY\"");
  std::filesystem::remove_all(dir);
}

// ---- reading what other writers produce -----------------------------------------------------

TEST(NpyRead, BigEndianIsSwappedToLittleEndian) {
  StatusOr<HostTensor> i4 =
      ParseNpy(Npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n",
                   "\x00\x00\x00\x01\x01\x02\x03\x04"s),
               "f.npy");
  ASSERT_TRUE(i4.ok()) << i4.status().ToString();
  EXPECT_EQ(*i4, Tensor(DType::kInt32, {2}, "\x01\x00\x00\x00\x04\x03\x02\x01"s));

  // complex64 (1, 2): each float swapped on its own, real part first.
  StatusOr<HostTensor> c8 = ParseNpy(Npy("{'descr': '>c8', 'fortran_order': False, 'shape': (), }",
                                         "\x3f\x80\x00\x00\x40\x00\x00\x00"s),
                                     "f.npy");
  ASSERT_TRUE(c8.ok()) << c8.status().ToString();
  EXPECT_EQ(*c8, Tensor(DType::kComplex64, {}, "\x00\x00\x80\x3f\x00\x00\x00\x40"s));

  StatusOr<HostTensor> c16 =
      ParseNpy(Npy("{'descr': '>c16', 'fortran_order': False, 'shape': (), }",
                   "\x01\x02\x03\x04\x05\x06\x07\x08\x11\x12\x13\x14\x15\x16\x17\x18"s),
               "f.npy");
  ASSERT_TRUE(c16.ok()) << c16.status().ToString();
  EXPECT_EQ(c16->bytes, "\x08\x07\x06\x05\x04\x03\x02\x01\x18\x17\x16\x15\x14\x13\x12\x11"s);

  StatusOr<HostTensor> f8 =
      ParseNpy(Npy("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
                   "\x3f\xf8\x00\x00\x00\x00\x00\x00"s),
               "f.npy");
  ASSERT_TRUE(f8.ok()) << f8.status().ToString();
  EXPECT_EQ(f8->bytes, "\x00\x00\x00\x00\x00\x00\xf8\x3f"s);

  StatusOr<HostTensor> bf16 = ParseNpy(
      Npy("{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }", "\x3f\x80\x40\x00"s),
      "f.npy");
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  EXPECT_EQ(*bf16, Tensor(DType::kBFloat16, {2}, "\x80\x3f\x00\x40"s));

  // One-byte types have no byte order: '>' changes nothing.
  StatusOr<HostTensor> i1 = ParseNpy(
      Npy("{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"s), "f.npy");
  ASSERT_TRUE(i1.ok()) << i1.status().ToString();
  EXPECT_EQ(*i1, Tensor(DType::kInt8, {2}, "\x01\x02"s));
}

TEST(NpyRead, FortranOrderIsConvertedToCOrder) {
  // int8 (2, 3), element (i, j) = 10 i + j, stored column by column.
  StatusOr<HostTensor> m =
      ParseNpy(Npy("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3), }",
                   "\x00\x0a\x01\x0b\x02\x0c"s),
               "f.npy");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*m, Tensor(DType::kInt8, {2, 3}, "\x00\x01\x02\x0a\x0b\x0c"s));

  // int16 (2, 3, 4), element (i, j, k) = 100 i + 10 j + k at Fortran offset i + 2 j + 6 k.
  std::string fortran(48, '\0'), c_order(48, '\0');
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        int value = 100 * i + 10 * j + k;
        int f = i + 2 * j + 6 * k, c = 12 * i + 4 * j + k;
        fortran[2 * f] = c_order[2 * c] = static_cast<char>(value & 0xff);
        fortran[2 * f + 1] = c_order[2 * c + 1] = static_cast<char>(value >> 8);
      }
    }
  }
  StatusOr<HostTensor> cube = ParseNpy(
      Npy("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3, 4), }", fortran), "f.npy");
  ASSERT_TRUE(cube.ok()) << cube.status().ToString();
  EXPECT_EQ(*cube, Tensor(DType::kInt16, {2, 3, 4}, c_order));

  // Big-endian and Fortran order together: (2, 2) int16 [[1, 2], [3, 4]].
  StatusOr<HostTensor> both =
      ParseNpy(Npy("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }",
                   "\x00\x01\x00\x03\x00\x02\x00\x04"s),
               "f.npy");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->bytes, "\x01\x00\x02\x00\x03\x00\x04\x00"s);

  // Rank <= 1 and empty arrays are the same in either order.
  StatusOr<HostTensor> vec =
      ParseNpy(Npy("{'descr': '|u1', 'fortran_order': True, 'shape': (3,), }", "abc"), "f.npy");
  ASSERT_TRUE(vec.ok()) << vec.status().ToString();
  EXPECT_EQ(vec->bytes, "abc");
  StatusOr<HostTensor> empty =
      ParseNpy(Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 0), }"), "f.npy");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, Tensor(DType::kFloat32, {3, 0}, ""));
}

TEST(NpyRead, HeaderVariants) {
  const std::string data = "\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x00"s;
  const HostTensor expected = Tensor(DType::kInt16, {2, 3}, data);
  const std::string headers[] = {
      // Keys in another order, double quotes, no trailing comma, odd whitespace.
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<i2'}",
      "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "  {\t'descr':'<i2','fortran_order':False,'shape':(2,3,),}\r\n   ",
      "{ 'descr' : '=i2' , 'fortran_order' : False , 'shape' : ( 2 , 3 ) , }\n",
      // Python 2's long integers, as old NumPy wrote them.
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 3L), }",
      // No byte-order character: native.
      "{'descr': 'i2', 'fortran_order': False, 'shape': (2, 3), }",
  };
  for (const std::string& header : headers) {
    StatusOr<HostTensor> t = ParseNpy(Npy(header, data), "f.npy");
    ASSERT_TRUE(t.ok()) << header << "\n" << t.status().ToString();
    EXPECT_EQ(*t, expected) << header;
  }
}

TEST(NpyRead, Versions2And3) {
  std::string header = "{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }\n";
  for (char major : {'\x02', '\x03'}) {
    std::string file = "\x93NUMPY"s + major + '\0';
    file.push_back(static_cast<char>(header.size()));
    file += "\x00\x00\x00"s + header + "\x05\x00"s;
    StatusOr<HostTensor> t = ParseNpy(file, "f.npy");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(*t, Tensor(DType::kInt16, {1}, "\x05\x00"s));
  }
}

TEST(NpyRead, ByteOrderCharactersWhereTheyMakeSense) {
  // '|' is fine for one-byte types and for raw V2 (NumPy's own way of writing a void dtype).
  StatusOr<HostTensor> b1 =
      ParseNpy(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (1,)}", "\x01"), "f.npy");
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  EXPECT_EQ(b1->dtype, DType::kBool);
  StatusOr<HostTensor> v2 =
      ParseNpy(Npy("{'descr': '|V2', 'fortran_order': False, 'shape': ()}", "\x80\x3f"), "f.npy");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(*v2, Tensor(DType::kBFloat16, {}, "\x80\x3f"s));
  StatusOr<HostTensor> u1 =
      ParseNpy(Npy("{'descr': '<u1', 'fortran_order': False, 'shape': (1,)}", "\xff"), "f.npy");
  ASSERT_TRUE(u1.ok()) << u1.status().ToString();
  EXPECT_EQ(u1->dtype, DType::kUInt8);
}

// ---- malformed input ------------------------------------------------------------------------

TEST(NpyMalformed, MagicAndVersion) {
  const std::string not_npy =
      "f.npy: byte 0: error: not a .npy file: it does not start with \"\\x93NUMPY\"";
  EXPECT_EQ(ParseError(""), not_npy);
  EXPECT_EQ(ParseError("garbage, not an array"), not_npy);
  EXPECT_EQ(ParseError("\x93NUMPX\x01\x00"s), not_npy);
  EXPECT_EQ(
      ParseError("\x93NU"s),
      "f.npy: byte 3: error: truncated: the file ends inside the magic string and format version");
  EXPECT_EQ(
      ParseError("\x93NUMPY\x01"s),
      "f.npy: byte 7: error: truncated: the file ends inside the magic string and format version");
  EXPECT_EQ(ParseError("\x93NUMPY\x04\x00\x10\x00"s),
            "f.npy: byte 6: error: unsupported .npy format version 4.0 (1.0, 2.0 and 3.0 are "
            "read)");
  EXPECT_EQ(ParseError("\x93NUMPY\x01\x01\x10\x00"s),
            "f.npy: byte 6: error: unsupported .npy format version 1.1 (1.0, 2.0 and 3.0 are "
            "read)");
  EXPECT_EQ(ParseError("\x93NUMPY\x00\x00\x10\x00"s),
            "f.npy: byte 6: error: unsupported .npy format version 0.0 (1.0, 2.0 and 3.0 are "
            "read)");
}

TEST(NpyMalformed, HeaderLength) {
  EXPECT_EQ(ParseError("\x93NUMPY\x01\x00\x10"s),
            "f.npy: byte 8: error: truncated: the header length needs 2 bytes, the file has 1");
  EXPECT_EQ(ParseError("\x93NUMPY\x02\x00\x10\x00"s),
            "f.npy: byte 8: error: truncated: the header length needs 4 bytes, the file has 2");
  EXPECT_EQ(ParseError("\x93NUMPY\x01\x00\x76\x00{'descr'"s),
            "f.npy: byte 8: error: the header length 118 goes beyond the end of the file (8 bytes "
            "after the length field)");
  // A 4 GiB header length in a 12-byte file: rejected before anything is allocated.
  EXPECT_EQ(ParseError("\x93NUMPY\x02\x00\xff\xff\xff\xff"s),
            "f.npy: byte 8: error: the header length 4294967295 goes beyond the end of the file (0 "
            "bytes after the length field)");
  EXPECT_EQ(ParseError(Npy("")),
            "f.npy: byte 10: error: expected '{' to start the header dict, found the end of the "
            "header");
}

TEST(NpyMalformed, HeaderDict) {
  EXPECT_EQ(ParseError(Npy("[1, 2]")),
            "f.npy: byte 10: error: expected '{' to start the header dict, found '['");
  EXPECT_EQ(ParseError(Npy("\x00{}"s)),
            "f.npy: byte 10: error: expected '{' to start the header dict, found byte 0x00");
  EXPECT_EQ(ParseError(Npy("{'descr' '<f4'}")),
            "f.npy: byte 19: error: expected ':' after the key 'descr', found \"'\"");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4' 'shape': ()}")),
            "f.npy: byte 26: error: expected ',' or '}' after the value of 'descr', found \"'\"");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x")),
            "f.npy: byte 64: error: unexpected 'x' after the header dict");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', ")),
            "f.npy: byte 27: error: expected a quoted string for a key, found the end of the "
            "header");
  EXPECT_EQ(ParseError(Npy("{descr: '<f4'}")),
            "f.npy: byte 11: error: expected a quoted string for a key, found 'd'");
  EXPECT_EQ(ParseError(Npy("{'descr: }")),
            "f.npy: byte 11: error: unterminated string in the header");
  EXPECT_EQ(ParseError(Npy("{'de\\x': 1}")),
            "f.npy: byte 14: error: escape sequences are not supported in the header");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}")),
            "f.npy: byte 64: error: unknown key 'extra' in the header (the keys are 'descr', "
            "'fortran_order' and 'shape')");
  EXPECT_EQ(
      ParseError(Npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}")),
      "f.npy: byte 27: error: duplicate key 'descr' in the header");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False}")),
            "f.npy: byte 10: error: the header has no 'shape' key");
  EXPECT_EQ(ParseError(Npy("{'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 10: error: the header has no 'descr' key");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'shape': ()}")),
            "f.npy: byte 10: error: the header has no 'fortran_order' key");
}

TEST(NpyMalformed, HeaderValues) {
  EXPECT_EQ(ParseError(Npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 20: error: the value of 'descr' must be a string such as '<f4' "
            "(structured dtypes are not supported), found '['");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}")),
            "f.npy: byte 44: error: the value of 'fortran_order' must be True or False, found '0'");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}")),
            "f.npy: byte 44: error: the value of 'fortran_order' must be True or False, found 'F'");
  EXPECT_EQ(
      ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}")),
      "f.npy: byte 60: error: the value of 'shape' must be a tuple such as (2, 3), found '['");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }")),
            "f.npy: byte 64: error: shape dimension -1 is negative");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }")),
            "f.npy: byte 60: error: the shape (5) is not a tuple; a 1-d shape is written (5,)");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}")),
            "f.npy: byte 63: error: expected ',' or ')' in the shape, found '3'");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}")),
            "f.npy: byte 64: error: expected an integer dimension in the shape, found 'x'");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,")),
            "f.npy: byte 63: error: expected an integer dimension in the shape, found the end of "
            "the header");
  EXPECT_EQ(
      ParseError(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")),
      "f.npy: byte 61: error: shape dimension does not fit in 64 bits");
}

TEST(NpyMalformed, Descr) {
  EXPECT_EQ(ParseError(Npy("{'descr': '<U10', 'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 20: error: unsupported descr '<U10' (supported: b1 i1 u1 i2 i4 i8 f2 V2 "
            "f4 f8 c8 c16)");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f3', 'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 20: error: unsupported descr '<f3' (supported: b1 i1 u1 i2 i4 i8 f2 V2 "
            "f4 f8 c8 c16)");
  EXPECT_EQ(ParseError(Npy("{'descr': '', 'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 20: error: unsupported descr '' (supported: b1 i1 u1 i2 i4 i8 f2 V2 f4 "
            "f8 c8 c16)");
  EXPECT_EQ(ParseError(Npy("{'descr': '<f99999999999999999999999', 'fortran_order': False, "
                           "'shape': ()}")),
            "f.npy: byte 20: error: unsupported descr '<f99999999999999999999999' (supported: b1 "
            "i1 u1 i2 i4 i8 f2 V2 f4 f8 c8 c16)");
  EXPECT_EQ(ParseError(Npy("{'descr': '|f4', 'fortran_order': False, 'shape': ()}")),
            "f.npy: byte 20: error: unsupported descr '|f4': '|' gives no byte order for a "
            "multi-byte type");
}

TEST(NpyMalformed, DataSize) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(header.size(), 59u);
  EXPECT_EQ(ParseError(Npy(header, std::string(20, 'x'))),
            "f.npy: byte 69: error: the data is truncated: the shape (2, 3) of float32 needs 24 "
            "bytes, the file has 20");
  EXPECT_EQ(ParseError(Npy(header, std::string(28, 'x'))),
            "f.npy: byte 93: error: 4 bytes of trailing data after the array (the shape (2, 3) of "
            "float32 needs 24 bytes)");
  // 2^62 x 4 float32 elements: 2^66 bytes, overflowing 64 bits; rejected, not allocated.
  const std::string huge =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
  EXPECT_EQ(ParseError(Npy(huge, "x")),
            "f.npy: byte " + std::to_string(10 + huge.size()) +
                ": error: the shape (4611686018427387904, 4) of float32 is too large: its size "
                "overflows 64 bits");
  // A zero dim does not make such a shape acceptable (NumPy refuses it too).
  const std::string huge_empty =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }";
  EXPECT_EQ(ParseError(Npy(huge_empty)),
            "f.npy: byte " + std::to_string(10 + huge_empty.size()) +
                ": error: the shape (0, 4611686018427387904, 4) of float32 is too large: its size "
                "overflows 64 bits");
  // Large but not overflowing: the file simply does not hold it.
  const std::string big = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}";
  EXPECT_EQ(ParseError(Npy(big, "12345678")),
            "f.npy: byte " + std::to_string(10 + big.size()) +
                ": error: the data is truncated: the shape (1000000000000,) of float64 needs "
                "8000000000000 bytes, the file has 8");
}

TEST(NpyMalformed, EveryTruncationOfAValidFileIsAnError) {
  StatusOr<std::string> bytes = SerializeNpy(Tensor(DType::kInt32, {2, 2}, Pattern(16)));
  ASSERT_TRUE(bytes.ok());
  for (size_t n = 0; n < bytes->size(); ++n) {
    StatusOr<HostTensor> t = ParseNpy(bytes->substr(0, n), "f.npy");
    ASSERT_FALSE(t.ok()) << n;
    EXPECT_EQ(t.status().code(), StatusCode::kParseError) << n;
    EXPECT_EQ(t.status().location().file, "f.npy") << n;
    EXPECT_EQ(t.status().location().detail.rfind("byte ", 0), 0u) << n;
  }
}

}  // namespace
}  // namespace irm
