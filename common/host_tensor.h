// HostTensor: a dense tensor in host memory as files hold it (dtype, shape, raw little-endian
// bytes). It is the exchange type of the tensor file formats (.npy, .pdiparams); the runtime has
// its own compute tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irm {

// Element types ir-migrate moves through files. Names follow NumPy/Paddle ("float32", "bfloat16").
enum class DType : uint8_t {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
std::optional<DType> DTypeFromName(std::string_view name);

// numel * item_size in bytes, or nullopt when a dim is negative or the byte size of the non-zero
// dims overflows int64. Like NumPy, it refuses such shapes even when another dim is 0, so that
// callers can do size arithmetic in int64 freely. Readers check every shape with it before
// allocating.
std::optional<uint64_t> CheckedByteSize(const std::vector<int64_t>& shape, size_t item_size);

struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // empty = a 0-D scalar
  std::string bytes;           // numel() * DTypeSize(dtype) bytes, C order, little-endian

  // Product of the dims. Readers check shapes for overflow before building a tensor; code that
  // builds one by hand must keep it in range.
  int64_t numel() const;
  bool operator==(const HostTensor&) const = default;
};

}  // namespace irm
