// Hash mixing shared by the new IR's value objects (types and attributes cache a structural hash
// so that equality checks between different objects usually stop at the hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace irm::newir {

inline size_t HashCombine(size_t seed, size_t value) {
  // boost::hash_combine's mixing, widened to 64 bits.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

template <typename T>
size_t HashOf(const T& value) {
  return std::hash<T>{}(value);
}

template <typename Range>
size_t HashRange(size_t seed, const Range& range) {
  for (const auto& item : range) seed = HashCombine(seed, HashOf(item));
  return HashCombine(seed, range.size());
}

}  // namespace irm::newir
