// Tests of the .pdiparams reader and writer against files assembled byte by byte here from the
// layout of Paddle's dense_tensor_serialize.cc (no bytes come from the code under test), round
// trips for every dtype and for LoD, the Paddle dtype code mapping, the names Paddle stores for a
// program, and every kind of malformed input with its exact diagnostic.
#include "oldir/params_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"

namespace irm::oldir {
namespace {

using namespace std::string_literals;

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
std::string I32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// One tensor as Paddle writes it, from the given TensorDesc bytes, LoD levels and data.
std::string TensorBytes(const std::string& desc, const std::string& data,
                        const std::vector<std::vector<uint64_t>>& lod = {}) {
  std::string out = U32(0) + U64(lod.size());
  for (const auto& level : lod) {
    out += U64(level.size() * 8);
    for (uint64_t v : level) out += U64(v);
  }
  return out + U32(0) + I32(static_cast<int32_t>(desc.size())) + desc + data;
}

// float32 [2, 3] = 0, 1, 2, 3, 4, 5.
const std::string kFloatData =
    "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40"s;
// int64 [4] = 1, -1, 256, 2^40.
const std::string kInt64Data =
    "\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"
    "\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00"s;

// The two-tensor file, every byte spelled out.
std::string TwoTensorFile() {
  return
      // tensor 0: DenseTensor version, lod_level 0, tensor version, desc_size 6
      "\x00\x00\x00\x00"s
      "\x00\x00\x00\x00\x00\x00\x00\x00"s
      "\x00\x00\x00\x00"s
      "\x06\x00\x00\x00"s
      // TensorDesc: data_type (field 1) = FP32 (5); dims (field 2, unpacked) = 2, 3
      "\x08\x05\x10\x02\x10\x03"s +
      kFloatData +
      // tensor 1 (byte 50): same header, desc_size 4, TensorDesc INT64 (3) [4]
      "\x00\x00\x00\x00"s
      "\x00\x00\x00\x00\x00\x00\x00\x00"s
      "\x00\x00\x00\x00"s
      "\x04\x00\x00\x00"s
      "\x08\x03\x10\x04"s +
      kInt64Data;
}

ParamTensor Param(std::string name, DType dtype, std::vector<int64_t> shape, std::string bytes,
                  std::vector<std::vector<uint64_t>> lod = {}) {
  ParamTensor p;
  p.name = std::move(name);
  p.tensor.dtype = dtype;
  p.tensor.shape = std::move(shape);
  p.tensor.bytes = std::move(bytes);
  p.lod = std::move(lod);
  return p;
}

std::string ParseError(const std::string& bytes, const std::vector<std::string>* names = nullptr) {
  StatusOr<std::vector<ParamTensor>> result = ParseParams(bytes, "f.pdiparams", names);
  if (result.ok()) return "parsed";
  EXPECT_EQ(result.status().code(), StatusCode::kParseError);
  return result.status().ToString();
}

// ---- the hand-assembled file ----------------------------------------------------------------

TEST(ParamsFile, ReadsTheHandAssembledFile) {
  std::string file = TwoTensorFile();
  ASSERT_EQ(file.size(), 106u);
  StatusOr<std::vector<ParamTensor>> params = ParseParams(file, "f.pdiparams");
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0], Param("", DType::kFloat32, {2, 3}, kFloatData));
  EXPECT_EQ((*params)[1], Param("", DType::kInt64, {4}, kInt64Data));
}

TEST(ParamsFile, ReadsNamesInOrder) {
  std::vector<std::string> names = {"fc.w_0", "idx"};
  StatusOr<std::vector<ParamTensor>> params = ParseParams(TwoTensorFile(), "f.pdiparams", &names);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0].name, "fc.w_0");
  EXPECT_EQ((*params)[1].name, "idx");
}

TEST(ParamsFile, WritesExactlyTheHandAssembledFile) {
  StatusOr<std::string> bytes =
      SerializeParams({Param("fc.w_0", DType::kFloat32, {2, 3}, kFloatData),
                       Param("idx", DType::kInt64, {4}, kInt64Data)});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, TwoTensorFile());
}

TEST(ParamsFile, EmptyFileHoldsNoTensors) {
  StatusOr<std::vector<ParamTensor>> params = ParseParams("", "f.pdiparams");
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  EXPECT_TRUE(params->empty());
  StatusOr<std::string> bytes = SerializeParams({});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "");
}

TEST(ParamsFile, ScalarAndPackedDims) {
  // A 0-D tensor has no dims at all; a reader must also take packed dims (field 2, wire type 2),
  // which other protobuf writers may produce.
  std::string file = TensorBytes("\x08\x06"s, "\x00\x00\x00\x00\x00\x00\xf8\x3f"s) +
                     TensorBytes("\x08\x02\x12\x02\x01\x02"s, "\x07\x00\x00\x00\x08\x00\x00\x00"s);
  StatusOr<std::vector<ParamTensor>> params = ParseParams(file, "f.pdiparams");
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0], Param("", DType::kFloat64, {}, "\x00\x00\x00\x00\x00\x00\xf8\x3f"s));
  EXPECT_EQ((*params)[1], Param("", DType::kInt32, {1, 2}, "\x07\x00\x00\x00\x08\x00\x00\x00"s));
}

TEST(ParamsFile, ReadsAndWritesLoD) {
  // lod_level 2: level 0 = {0, 2} (16 bytes), level 1 = {0, 1, 3} (24 bytes); int8 [3].
  std::string file = "\x00\x00\x00\x00"s + "\x02\x00\x00\x00\x00\x00\x00\x00"s +  //
                     "\x10\x00\x00\x00\x00\x00\x00\x00"s + U64(0) + U64(2) +      //
                     "\x18\x00\x00\x00\x00\x00\x00\x00"s + U64(0) + U64(1) + U64(3) +
                     "\x00\x00\x00\x00"s + "\x04\x00\x00\x00"s + "\x08\x15\x10\x03"s + "abc";
  ParamTensor expected = Param("seq", DType::kInt8, {3}, "abc", {{0, 2}, {0, 1, 3}});
  std::vector<std::string> names = {"seq"};
  StatusOr<std::vector<ParamTensor>> params = ParseParams(file, "f.pdiparams", &names);
  ASSERT_TRUE(params.ok()) << params.status().ToString();
  ASSERT_EQ(params->size(), 1u);
  EXPECT_EQ((*params)[0], expected);
  StatusOr<std::string> bytes = SerializeParams({expected});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, file);

  // An empty level is legal.
  ParamTensor empty_level = Param("", DType::kUInt8, {1}, "z", {{}});
  StatusOr<std::string> empty_bytes = SerializeParams({empty_level});
  ASSERT_TRUE(empty_bytes.ok());
  EXPECT_EQ(*empty_bytes, TensorBytes("\x08\x14\x10\x01"s, "z", {{}}));
  StatusOr<std::vector<ParamTensor>> back = ParseParams(*empty_bytes, "f.pdiparams");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)[0], empty_level);
}

// ---- dtypes and round trips -----------------------------------------------------------------

struct DTypeCode {
  DType dtype;
  int code;  // VarType.Type in framework.proto
};
const DTypeCode kCodes[] = {
    {DType::kBool, 0},    {DType::kInt16, 1},     {DType::kInt32, 2},      {DType::kInt64, 3},
    {DType::kFloat16, 4}, {DType::kFloat32, 5},   {DType::kFloat64, 6},    {DType::kUInt8, 20},
    {DType::kInt8, 21},   {DType::kBFloat16, 22}, {DType::kComplex64, 23}, {DType::kComplex128, 24},
};

TEST(ParamsDType, PaddleCodes) {
  for (const DTypeCode& c : kCodes) {
    auto type = static_cast<proto::VarType::Type>(c.code);
    EXPECT_EQ(DTypeFromVarType(type), c.dtype) << c.code;
    EXPECT_EQ(VarTypeFromDType(c.dtype), type) << DTypeName(c.dtype);
  }
  for (int code : {7, 8, 9, 10, 17, 19, 25, 32, 33, 37, 38}) {
    EXPECT_EQ(DTypeFromVarType(static_cast<proto::VarType::Type>(code)), std::nullopt) << code;
  }
}

TEST(ParamsDType, RoundTripEveryDType) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {3}, {2, 2}, {1, 0, 5}};
  for (const DTypeCode& c : kCodes) {
    std::vector<ParamTensor> params;
    for (const std::vector<int64_t>& shape : shapes) {
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      std::string data(numel * DTypeSize(c.dtype), '\0');
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13 + c.code);
      params.push_back(Param("", c.dtype, shape, data));
    }
    StatusOr<std::string> bytes = SerializeParams(params);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    // The first tensor is a scalar: its TensorDesc is exactly 08 <code>.
    EXPECT_EQ(bytes->substr(16, 6), I32(2) + "\x08"s + static_cast<char>(c.code))
        << DTypeName(c.dtype);
    StatusOr<std::vector<ParamTensor>> back = ParseParams(*bytes, "f.pdiparams");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, params) << DTypeName(c.dtype);
  }
}

TEST(ParamsFile, SaveAndLoad) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("irm_params_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "m.pdiparams").string();
  std::vector<ParamTensor> params = {Param("a", DType::kFloat32, {2, 3}, kFloatData),
                                     Param("b", DType::kInt64, {4}, kInt64Data)};
  ASSERT_TRUE(SaveParams(params, path).ok());
  StatusOr<std::string> raw = ReadFile(path);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, TwoTensorFile());
  std::vector<std::string> names = {"a", "b"};
  StatusOr<std::vector<ParamTensor>> back = LoadParams(path, &names);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, params);

  std::vector<std::string> three = {"a", "b", "c"};
  StatusOr<std::vector<ParamTensor>> wrong = LoadParams(path, &three);
  EXPECT_EQ(wrong.status().ToString(),
            path + ": error: the file holds 2 tensors but 3 names were given");
  EXPECT_EQ(LoadParams((dir / "none").string()).status().code(), StatusCode::kNotFound);

  Status bad = SaveParams({Param("w", DType::kInt32, {2}, "x")}, (dir / "bad").string());
  EXPECT_EQ(bad.ToString(), (dir / "bad").string() +
                                ": tensor 0 ('w'): error: cannot write .pdiparams: the dims [2] "
                                "of int32 need 8 bytes, the tensor has 1");
  EXPECT_FALSE(std::filesystem::exists(dir / "bad"));
  std::filesystem::remove_all(dir);
}

TEST(ParamsFile, SerializeRejectsInconsistentTensors) {
  StatusOr<std::string> negative =
      SerializeParams({Param("a", DType::kInt8, {1}, "x"), Param("b", DType::kInt8, {-2}, "")});
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(negative.status().ToString(),
            "tensor 1 ('b'): error: cannot write .pdiparams: the dims [-2] are negative or too "
            "large");
  StatusOr<std::string> dtype = SerializeParams({Param("", static_cast<DType>(50), {}, "")});
  EXPECT_EQ(dtype.status().ToString(),
            "tensor 0: error: cannot write .pdiparams: unknown dtype code 50");
  StatusOr<std::string> huge =
      SerializeParams({Param("h", DType::kInt8, {int64_t{1} << 40, int64_t{1} << 40}, "")});
  EXPECT_EQ(huge.status().ToString(),
            "tensor 0 ('h'): error: cannot write .pdiparams: the dims [1099511627776, "
            "1099511627776] are negative or too large");
}

// ---- names for a program --------------------------------------------------------------------

proto::VarDesc* AddVar(proto::BlockDesc* block, const std::string& name, proto::VarType::Type type,
                       bool persistable) {
  proto::VarDesc* var = block->add_vars();
  var->set_name(name);
  var->mutable_type()->set_type(type);
  if (type == proto::VarType::DENSE_TENSOR) {
    var->mutable_type()->mutable_dense_tensor()->mutable_tensor()->set_data_type(
        proto::VarType::FP32);
  }
  var->set_persistable(persistable);
  return var;
}

TEST(ParamNames, PersistableDenseTensorsOfTheRootBlockSorted) {
  proto::ProgramDesc desc;
  proto::BlockDesc* root = desc.add_blocks();
  root->set_idx(0);
  root->set_parent_idx(-1);
  AddVar(root, "feed", proto::VarType::FEED_MINIBATCH, true);
  AddVar(root, "fetch", proto::VarType::FETCH_LIST, true);
  AddVar(root, "fc_0.w_0", proto::VarType::DENSE_TENSOR, true);
  AddVar(root, "x", proto::VarType::DENSE_TENSOR, false);
  AddVar(root, "fc_0.b_0", proto::VarType::DENSE_TENSOR, true);
  AddVar(root, "conv2d_0.w_0", proto::VarType::DENSE_TENSOR, true);
  AddVar(root, "Fc.upper", proto::VarType::DENSE_TENSOR, true);  // 'F' sorts before 'c'
  AddVar(root, "reader", proto::VarType::READER, true);
  AddVar(root, "raw", proto::VarType::RAW, true);
  AddVar(root, "tmp_0", proto::VarType::DENSE_TENSOR, false);
  proto::BlockDesc* sub = desc.add_blocks();
  sub->set_idx(1);
  sub->set_parent_idx(0);
  AddVar(sub, "sub.w", proto::VarType::DENSE_TENSOR, true);
  Program program(std::move(desc));
  EXPECT_EQ(ParamNamesForProgram(program),
            (std::vector<std::string>{"Fc.upper", "conv2d_0.w_0", "fc_0.b_0", "fc_0.w_0"}));
  EXPECT_TRUE(ParamNamesForProgram(Program()).empty());
}

// ---- malformed input ------------------------------------------------------------------------

TEST(ParamsMalformed, Versions) {
  std::vector<std::string> names = {"fc.w_0", "idx"};
  std::string file = TwoTensorFile();
  file[0] = 1;
  EXPECT_EQ(ParseError(file, &names),
            "f.pdiparams: tensor 0 ('fc.w_0'), byte 0: error: unsupported DenseTensor version 1 "
            "(only 0 exists)");
  file = TwoTensorFile();
  file[50 + 12] = 2;  // tensor 1's tensor version
  EXPECT_EQ(ParseError(file, &names),
            "f.pdiparams: tensor 1 ('idx'), byte 62: error: unsupported tensor version 2 (only 0 "
            "exists)");
}

TEST(ParamsMalformed, Truncations) {
  std::string file = TwoTensorFile();
  EXPECT_EQ(ParseError(file.substr(0, 2)),
            "f.pdiparams: tensor 0, byte 0: error: truncated: the file ends inside the DenseTensor "
            "version (4 bytes needed, 2 left)");
  EXPECT_EQ(
      ParseError(file.substr(0, 7)),
      "f.pdiparams: tensor 0, byte 4: error: truncated: the file ends inside the lod_level (8 "
      "bytes needed, 3 left)");
  EXPECT_EQ(ParseError(file.substr(0, 13)),
            "f.pdiparams: tensor 0, byte 12: error: truncated: the file ends inside the tensor "
            "version (4 bytes needed, 1 left)");
  EXPECT_EQ(ParseError(file.substr(0, 18)),
            "f.pdiparams: tensor 0, byte 16: error: truncated: the file ends inside the TensorDesc "
            "size (4 bytes needed, 2 left)");
  EXPECT_EQ(ParseError(file.substr(0, 23)),
            "f.pdiparams: tensor 0, byte 16: error: desc_size 6 is beyond the file (3 bytes left)");
  EXPECT_EQ(ParseError(file.substr(0, 40)),
            "f.pdiparams: tensor 0, byte 26: error: the data is truncated: dims [2, 3] of float32 "
            "need 24 bytes, 14 left");
  std::vector<std::string> names = {"fc.w_0", "idx"};
  EXPECT_EQ(ParseError(file.substr(0, 105), &names),
            "f.pdiparams: tensor 1 ('idx'), byte 74: error: the data is truncated: dims [4] of "
            "int64 need 32 bytes, 31 left");
  EXPECT_EQ(ParseError(file + "\x00\x00"s),
            "f.pdiparams: tensor 2, byte 106: error: truncated: the file ends inside the "
            "DenseTensor version (4 bytes needed, 2 left)");
  // Every cut inside a tensor fails; a cut between tensors is a valid shorter file.
  for (size_t n = 1; n < file.size(); ++n) {
    StatusOr<std::vector<ParamTensor>> params = ParseParams(file.substr(0, n), "f.pdiparams");
    if (n == 50) {
      EXPECT_TRUE(params.ok());
      continue;
    }
    ASSERT_FALSE(params.ok()) << n;
    EXPECT_EQ(params.status().code(), StatusCode::kParseError) << n;
  }
}

TEST(ParamsMalformed, LoD) {
  // lod_level 2^63 in a file that has 16 bytes after it: refused before any allocation.
  std::string huge = U32(0) + U64(uint64_t{1} << 63) + U64(8) + U64(0);
  EXPECT_EQ(ParseError(huge),
            "f.pdiparams: tensor 0, byte 4: error: lod_level 9223372036854775808 is beyond the "
            "file: 16 bytes left cannot hold that many levels");
  std::string odd = U32(0) + U64(1) + U64(12) + std::string(12, '\0');
  EXPECT_EQ(ParseError(odd),
            "f.pdiparams: tensor 0, byte 12: error: LoD level 0 has 12 bytes, not a multiple of 8");
  std::string beyond = U32(0) + U64(2) + U64(8) + U64(1) + U64(800) + U64(2);
  EXPECT_EQ(ParseError(beyond),
            "f.pdiparams: tensor 0, byte 28: error: LoD level 1 has 800 bytes, beyond the file (8 "
            "bytes left)");
  // Two levels pass the count check (18 bytes left), but the first one's data leaves 2 bytes.
  std::string cut = U32(0) + U64(2) + U64(8) + U64(5) + "\x08\x00"s;
  EXPECT_EQ(ParseError(cut),
            "f.pdiparams: tensor 0, byte 28: error: truncated: the file ends inside the size of a "
            "LoD level (8 bytes needed, 2 left)");
  std::string one_cut = U32(0) + U64(1) + "\x08\x00"s;
  EXPECT_EQ(ParseError(one_cut),
            "f.pdiparams: tensor 0, byte 4: error: lod_level 1 is beyond the file: 2 bytes left "
            "cannot hold that many levels");
}

TEST(ParamsMalformed, TensorDesc) {
  const std::string head = U32(0) + U64(0) + U32(0);  // the desc_size is at byte 16
  EXPECT_EQ(ParseError(head + I32(-1)),
            "f.pdiparams: tensor 0, byte 16: error: desc_size -1 is negative");
  EXPECT_EQ(ParseError(head + I32(1000) + "\x08\x05"s),
            "f.pdiparams: tensor 0, byte 16: error: desc_size 1000 is beyond the file (2 bytes "
            "left)");
  EXPECT_EQ(ParseError(head + I32(2) + "\xff\xff"s),
            "f.pdiparams: tensor 0, byte 20: error: the TensorDesc (2 bytes) does not parse");
  EXPECT_EQ(ParseError(head + I32(0)),
            "f.pdiparams: tensor 0, byte 20: error: the TensorDesc has no data_type");
  EXPECT_EQ(ParseError(head + I32(2) + "\x10\x01"s + "x"),
            "f.pdiparams: tensor 0, byte 20: error: the TensorDesc has no data_type");
  EXPECT_EQ(ParseError(head + I32(2) + "\x08\x63"s),
            "f.pdiparams: tensor 0, byte 20: error: the TensorDesc has the unknown data type code "
            "99");
  std::vector<std::string> names = {"w_fp8"};
  EXPECT_EQ(ParseError(head + I32(4) + "\x08\x20\x10\x01"s + "x", &names),
            "f.pdiparams: tensor 0 ('w_fp8'), byte 20: error: data type FP8_E4M3FN (32) is not "
            "supported");
  EXPECT_EQ(ParseError(head + I32(2) + "\x08\x13"s),
            "f.pdiparams: tensor 0, byte 20: error: data type SIZE_T (19) is not supported");
  EXPECT_EQ(ParseError(head + I32(2) + "\x08\x07"s),
            "f.pdiparams: tensor 0, byte 20: error: data type DENSE_TENSOR (7) is not supported");
  // dims [3, -1]: -1 is a ten-byte varint.
  EXPECT_EQ(
      ParseError(head + I32(15) + "\x08\x05\x10\x03\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"s),
      "f.pdiparams: tensor 0, byte 20: error: dims [3, -1]: dimension 1 is negative");
  // dims [2^62, 4] of float32: 2^66 bytes.
  EXPECT_EQ(
      ParseError(head + I32(14) + "\x08\x05\x10\x80\x80\x80\x80\x80\x80\x80\x80\x40\x10\x04"s),
      "f.pdiparams: tensor 0, byte 20: error: dims [4611686018427387904, 4] of float32 are "
      "too large: the size overflows 64 bits");
  // Large without overflow: simply more than the file holds.
  EXPECT_EQ(ParseError(head + I32(8) + "\x08\x03\x10\x80\x80\x80\x80\x20"s + "12345678"),
            "f.pdiparams: tensor 0, byte 28: error: the data is truncated: dims [8589934592] of "
            "int64 need 68719476736 bytes, 8 left");
}

TEST(ParamsMalformed, NameCount) {
  std::vector<std::string> three = {"a", "b", "c"};
  EXPECT_EQ(ParseError(TwoTensorFile(), &three),
            "f.pdiparams: error: the file holds 2 tensors but 3 names were given");
  std::vector<std::string> one = {"a"};
  EXPECT_EQ(ParseError(TwoTensorFile(), &one),
            "f.pdiparams: error: the file holds 2 tensors but 1 name was given");
  std::vector<std::string> none;
  EXPECT_EQ(ParseError(TwoTensorFile().substr(0, 50), &none),
            "f.pdiparams: error: the file holds 1 tensor but 0 names were given");
}

}  // namespace
}  // namespace irm::oldir
