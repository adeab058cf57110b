// The 16-bit float storage types: IEEE binary16 (float16) and bfloat16. Kernels keep them as
// storage only and compute in float32 (docs/runtime.md, "Kernels"); conversions round to nearest,
// ties to even, as Paddle's phi::dtype::float16/bfloat16 and NumPy do, and keep NaN a NaN.
#pragma once

#include <bit>
#include <cstdint>

namespace irm::rt {

struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

inline BFloat16 ToBFloat16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((u >> 16) | 0x40u)};  // NaN
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return {static_cast<uint16_t>((u + rounding) >> 16)};
}

inline float ToFloat(BFloat16 h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16);
}

Float16 ToFloat16(float f);
float ToFloat(Float16 h);

}  // namespace irm::rt
