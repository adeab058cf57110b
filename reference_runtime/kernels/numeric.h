// Element types and the type kernels compute in: float16 and bfloat16 are storage only and
// compute (and accumulate) in float32; float32 in float32; float64 in float64; integers in
// themselves. Load/Store convert between the two.
#pragma once

#include <cstdint>
#include <type_traits>

#include "reference_runtime/half.h"

namespace irm::rt {

template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Float16> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeTypeOf<T>::type;

template <typename T>
Compute<T> Load(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return ToFloat(v);
  } else {
    return v;
  }
}

template <typename T>
T Store(Compute<T> v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return ToFloat16(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace irm::rt
