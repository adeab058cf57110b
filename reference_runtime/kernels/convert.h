// Element conversion between the runtime dtypes: the one set of rules that `cast` applies to every
// element and that the creation kernels (full, full_like, full_int_array, assign_value) apply to
// their attribute values, so that a constant and a cast constant agree bit for bit.
//
// The rules (From -> To):
//   * same type: the value itself.
//   * bool -> any: false = 0, true = 1.
//   * any -> bool: x != 0; a NaN is true (as C++ and NumPy).
//   * integer -> integer: modulo 2^bits of To, two's complement (C++20 conversion; NumPy's wrap).
//   * integer -> float32/float64: round to nearest, ties to even (one IEEE rounding).
//   * float -> integer: truncated toward zero (C++, Paddle). Where C++ leaves the result undefined,
//     this runtime defines it: NaN -> 0, and a value outside To's range (infinities included)
//     saturates to To's minimum or maximum (so -1.5 -> uint8 is 0 and 300.0 -> int8 is 127).
//   * float -> float: round to nearest, ties to even, once. float16/bfloat16 targets go through
//     half.h's float32 -> 16-bit conversions; from float64 or an integer, the value is first
//     narrowed to float32 rounding to odd (truncate, then set the last bit when inexact), which
//     makes the two roundings round like one. Paddle rounds float64 -> float32 -> float16 to
//     nearest twice, which differs from this in rare ties; NumPy rounds once, as here.
//     Overflow gives an infinity and NaN stays NaN, as IEEE.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference_runtime/half.h"

namespace irm::rt {

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool kIsRuntimeFloat = kIsHalf<T> || std::is_floating_point_v<T>;

template <typename T>
inline constexpr bool kIsRuntimeInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// float64 -> float32 rounding to odd: exact values stay, inexact ones are truncated toward zero
// and get their last mantissa bit set (an infinity from overflow becomes the largest float).
inline float RoundToOddFloat(double d) {
  if (!std::isfinite(d)) return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::abs(static_cast<double>(f)) > std::abs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// int64 -> float32 rounding to odd: the 24 leading bits, the last one set when any bit below them
// is (every such value fits a float exactly).
inline float RoundToOddFloat(int64_t v) {
  const bool negative = v < 0;
  const uint64_t magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(v)  // INT64_MIN too
                                      : static_cast<uint64_t>(v);
  const int width = std::bit_width(magnitude);
  float f;
  if (width <= 24) {
    f = static_cast<float>(magnitude);
  } else {
    const int shift = width - 24;
    uint64_t top = magnitude >> shift;
    if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) top |= 1u;
    f = std::ldexp(static_cast<float>(top), shift);
  }
  return negative ? -f : f;
}

// A float value (already exact in double) to an integer type: truncate, NaN -> 0, saturate.
template <typename To>
To FloatToInteger(double d) {
  static_assert(kIsRuntimeInteger<To>);
  if (std::isnan(d)) return To{0};
  const double t = std::trunc(d);
  // 2^digits is To's maximum + 1, exactly representable in double for every integer width.
  const double upper = std::ldexp(1.0, std::numeric_limits<To>::digits);
  if (t >= upper) return std::numeric_limits<To>::max();
  if (std::is_signed_v<To> ? t < -upper : t < 0.0) return std::numeric_limits<To>::min();
  return static_cast<To>(t);
}

// Converts one element by the rules above.
template <typename To, typename From>
To ConvertElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsHalf<From>) {
    // float16/bfloat16 widen to float32 exactly, then convert as a float32.
    return ConvertElement<To, float>(ToFloat(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0} || (std::is_floating_point_v<From> && std::isnan(v));
  } else if constexpr (std::is_same_v<From, bool>) {
    return ConvertElement<To, int32_t>(v ? 1 : 0);
  } else if constexpr (kIsRuntimeInteger<To>) {
    if constexpr (kIsRuntimeInteger<From>) {
      return static_cast<To>(v);  // modular since C++20
    } else {
      return FloatToInteger<To>(static_cast<double>(v));
    }
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);  // int -> float and float -> float: one IEEE rounding (or exact)
  } else {
    // To is float16 or bfloat16.
    float narrowed;
    if constexpr (std::is_same_v<From, float>) {
      narrowed = v;
    } else if constexpr (std::is_same_v<From, double>) {
      narrowed = RoundToOddFloat(v);
    } else {
      narrowed = RoundToOddFloat(static_cast<int64_t>(v));
    }
    if constexpr (std::is_same_v<To, Float16>) {
      return ToFloat16(narrowed);
    } else {
      return ToBFloat16(narrowed);
    }
  }
}

}  // namespace irm::rt
