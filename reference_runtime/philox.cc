// Philox-4x32-10 and the per-op stream built on it (philox.h).
#include "reference_runtime/philox.h"

#include <cmath>
#include <numbers>

namespace irm::rt {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

void MulHiLo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

}  // namespace

PhiloxBlock Philox4x32(PhiloxBlock c, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kMul0, c[0], hi0, lo0);
    MulHiLo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return c;
}

uint64_t Fnv1a(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : bytes) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

uint32_t PhiloxStream::Bits(uint64_t index) const {
  const uint64_t block = index / 4;
  const PhiloxBlock counter = {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                               static_cast<uint32_t>(identity_),
                               static_cast<uint32_t>(identity_ >> 32)};
  const PhiloxBlock out =
      Philox4x32(counter, {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
  return out[index % 4];
}

float PhiloxStream::UniformFloat(uint64_t index) const {
  return static_cast<float>(Bits(index) >> 8) * 0x1.0p-24f;
}

double PhiloxStream::UniformDouble(uint64_t index) const {
  constexpr uint64_t kDoubleStream = uint64_t{1} << 62;
  const uint64_t hi = Bits(kDoubleStream + 2 * index) >> 5;      // 27 bits
  const uint64_t lo = Bits(kDoubleStream + 2 * index + 1) >> 6;  // 26 bits
  return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
}

double PhiloxStream::Normal(uint64_t index) const {
  // 1 - u keeps the logarithm's argument in (0, 1].
  const double u1 = 1.0 - UniformDouble(2 * (index / 2));
  const double u2 = UniformDouble(2 * (index / 2) + 1);
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  return index % 2 == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
}

}  // namespace irm::rt
