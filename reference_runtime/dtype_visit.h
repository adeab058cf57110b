// Visiting a runtime dtype with its C++ element type, and reading one element of any tensor as a
// number: what kernels, executors and tools do whenever they must handle every dtype alike.
#pragma once

#include <array>
#include <cstdint>

#include "reference_runtime/half.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

inline constexpr std::array<DType, 10> kEveryDType = {
    DType::kBool,  DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kInt32,
    DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// Calls f(T{}) with the element type of a runtime dtype; returns false (calling nothing) for a
// dtype the runtime does not compute with.
template <typename F>
bool VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool:
      f(bool{});
      return true;
    case DType::kInt8:
      f(int8_t{});
      return true;
    case DType::kUInt8:
      f(uint8_t{});
      return true;
    case DType::kInt16:
      f(int16_t{});
      return true;
    case DType::kInt32:
      f(int32_t{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    case DType::kFloat16:
      f(Float16{});
      return true;
    case DType::kBFloat16:
      f(BFloat16{});
      return true;
    case DType::kFloat32:
      f(float{});
      return true;
    case DType::kFloat64:
      f(double{});
      return true;
    default:
      return false;
  }
}

// Element i of `t` as a double: bools 0 or 1, 16-bit floats converted, int64 beyond 2^53 rounded
// (as Paddle reads a scalar tensor into a double Scalar); 0 for a dtype the runtime lacks.
inline double ElementAsDouble(const Tensor& t, int64_t i) {
  double value = 0.0;
  VisitDType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = t.data<T>()[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      value = ToFloat(v);
    } else {
      value = static_cast<double>(v);
    }
  });
  return value;
}

// Element i of an integer or bool tensor as an int64 (floats truncate toward zero).
inline int64_t ElementAsInt64(const Tensor& t, int64_t i) {
  int64_t value = 0;
  VisitDType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>)
      value = static_cast<int64_t>(t.data<T>()[i]);
    else
      value = static_cast<int64_t>(ElementAsDouble(t, i));
  });
  return value;
}

}  // namespace irm::rt
