// Philox-4x32-10 and the per-op stream of philox.h in device code: the same counter, key and word
// selection as philox.cc, so that a device random op draws the CPU's bits for every element. The
// uniform transforms are exact (integer shifts, a power-of-two scale); Normal uses the device's
// log, sqrt, cos and sin in float64, which may differ from the host's in the last bit of a double.
// Device code only (nvcc).
#pragma once

#include <cstdint>

#include "reference_runtime/cuda/device_numeric.cuh"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {

struct DevicePhilox {
  uint64_t seed;
  uint64_t identity;

  // The 32 bits of element `index`: word index % 4 of philox.cc's Philox4x32 of (index / 4,
  // identity) under the seed.
  __device__ __forceinline__ uint32_t Bits(uint64_t index) const {
    const uint64_t block = index / 4;
    uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
    uint32_t c2 = static_cast<uint32_t>(identity), c3 = static_cast<uint32_t>(identity >> 32);
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
#pragma unroll
    for (int round = 0; round < 10; ++round) {
      const uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
      const uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
      const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
      c0 = n0;
      c1 = lo1;
      c2 = n2;
      c3 = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    switch (index % 4) {
      case 0:
        return c0;
      case 1:
        return c1;
      case 2:
        return c2;
      default:
        return c3;
    }
  }

  __device__ __forceinline__ float UniformFloat(uint64_t index) const {
    return static_cast<float>(Bits(index) >> 8) * 0x1.0p-24f;
  }

  __device__ __forceinline__ double UniformDouble(uint64_t index) const {
    constexpr uint64_t kDoubleStream = uint64_t{1} << 62;
    const uint64_t hi = Bits(kDoubleStream + 2 * index) >> 5;
    const uint64_t lo = Bits(kDoubleStream + 2 * index + 1) >> 6;
    return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
  }

  __device__ __forceinline__ double Normal(uint64_t index) const {
    const double u1 = 1.0 - UniformDouble(2 * (index / 2));
    const double u2 = UniformDouble(2 * (index / 2) + 1);
    const double radius = sqrt(-2.0 * log(u1));
    const double angle = 2.0 * 3.141592653589793 * u2;
    return index % 2 == 0 ? radius * cos(angle) : radius * sin(angle);
  }
};

// The index element i of an output draws at (launch.h, RandomStream).
__device__ __forceinline__ uint64_t DrawIndex(const RandomStream& s, int64_t i) {
  return s.sharded ? static_cast<uint64_t>(s.base + WalkOffset(s.serial, i))
                   : static_cast<uint64_t>(i);
}

}  // namespace irm::rt::cuda
