// Sizes and names of the element types.
#include "common/host_tensor.h"

#include <array>

namespace irm {
namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  const char* name;
};

constexpr std::array<DTypeInfo, 12> kDTypes = {{
    {DType::kBool, 1, "bool"},
    {DType::kInt8, 1, "int8"},
    {DType::kUInt8, 1, "uint8"},
    {DType::kInt16, 2, "int16"},
    {DType::kInt32, 4, "int32"},
    {DType::kInt64, 8, "int64"},
    {DType::kFloat16, 2, "float16"},
    {DType::kBFloat16, 2, "bfloat16"},
    {DType::kFloat32, 4, "float32"},
    {DType::kFloat64, 8, "float64"},
    {DType::kComplex64, 8, "complex64"},
    {DType::kComplex128, 16, "complex128"},
}};

}  // namespace

// A DType cast from a bad integer gets size 0 and name "invalid", never an out-of-bounds read.
size_t DTypeSize(DType dtype) {
  const auto i = static_cast<size_t>(dtype);
  return i < kDTypes.size() ? kDTypes[i].size : 0;
}

const char* DTypeName(DType dtype) {
  const auto i = static_cast<size_t>(dtype);
  return i < kDTypes.size() ? kDTypes[i].name : "invalid";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (name == info.name) return info.dtype;
  }
  return std::nullopt;
}

std::optional<uint64_t> CheckedByteSize(const std::vector<int64_t>& shape, size_t item_size) {
  int64_t nonzero = static_cast<int64_t>(item_size);
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, d, &nonzero)) return std::nullopt;
  }
  return empty ? 0 : static_cast<uint64_t>(nonzero);
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace irm
