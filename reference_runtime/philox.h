// Counter-based random numbers: Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11; the generator of Paddle's and PyTorch's CUDA random ops). A draw is a pure
// function of (key, counter), so a legacy op and its translated twin draw the same numbers
// without sharing any state, in any order, on any thread count:
//   key     = the seed (the op's seed attribute, or the program's when that is 0);
//   counter = (element block index, op identity), the op identity being a hash of the op's first
//             output's logical name (OpIdentity) — the legacy var name on both sides.
// Element i uses word i % 4 of the block i / 4. The element index is the element's index in the
// serial tensor: a shard's initialiser draws at the serial indices of its elements
// (kernels/random.cc), and a sharded parameter keeps the serial name, hence the same identity.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace irm::rt {

using PhiloxBlock = std::array<uint32_t, 4>;

// The ten-round Philox-4x32 bijection of `counter` under `key`.
PhiloxBlock Philox4x32(PhiloxBlock counter, std::array<uint32_t, 2> key);

// 64-bit FNV-1a of the bytes: op identities here, and the content hashes of tensors that runs
// report (equal hashes, equal bits with overwhelming likelihood).
uint64_t Fnv1a(std::string_view bytes);

// A stable 64-bit identity for an op from its first output's logical name.
inline uint64_t OpIdentity(std::string_view logical_name) { return Fnv1a(logical_name); }

// The random stream of one op.
class PhiloxStream {
 public:
  PhiloxStream(uint64_t seed, uint64_t op_identity) : seed_(seed), identity_(op_identity) {}
  // The 32 random bits of element `index`.
  uint32_t Bits(uint64_t index) const;
  // Uniform in [0, 1): float from 24 bits, double from 53 bits (two elements' words: index and
  // index + 2^62, so the float and double streams never overlap).
  float UniformFloat(uint64_t index) const;
  double UniformDouble(uint64_t index) const;
  // Standard normal by Box-Muller from two uniforms of the double stream (elements 2i, 2i+1).
  double Normal(uint64_t index) const;

 private:
  uint64_t seed_;
  uint64_t identity_;
};

}  // namespace irm::rt
