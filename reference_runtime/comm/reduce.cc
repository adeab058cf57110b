// ReduceInRankOrder (reduce.h).
#include "reference_runtime/comm/reduce.h"

#include <type_traits>

#include <fmt/format.h>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/numeric.h"

namespace irm::rt {
namespace {

// Integer sums and products wrap as the unsigned type does: defined, and the same bits as the
// two's-complement wrap of the signed type.
template <typename A>
A Add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename A>
A Mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // Promote to an unsigned type at least as wide as unsigned int: the product of two
    // uint16_t would otherwise be a signed int product, which can overflow.
    using U = std::common_type_t<std::make_unsigned_t<A>, unsigned int>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename A>
A Max(A acc, A x) {
  if constexpr (std::is_floating_point_v<A>) {
    if (acc != acc) return acc;  // NaN stays NaN
  }
  return acc > x ? acc : x;  // a NaN x is not smaller: it wins
}

template <typename A>
A Min(A acc, A x) {
  if constexpr (std::is_floating_point_v<A>) {
    if (acc != acc) return acc;
  }
  return acc < x ? acc : x;
}

template <typename T>
void ReduceTyped(const std::vector<const Tensor*>& inputs, ReduceOp op, int64_t in_begin,
                 int64_t count, Tensor& out, int64_t out_begin) {
  using A = Compute<T>;  // float16 / bfloat16 accumulate in float32 and round once
  const size_t n = inputs.size();
  std::vector<const T*> src(n);
  for (size_t r = 0; r < n; ++r) src[r] = inputs[r]->data<T>() + in_begin;
  T* dst = out.data<T>() + out_begin;
  for (int64_t i = 0; i < count; ++i) {
    A acc = Load(src[0][i]);
    for (size_t r = 1; r < n; ++r) {
      const A x = Load(src[r][i]);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
          acc = Add(acc, x);
          break;
        case ReduceOp::kProd:
          acc = Mul(acc, x);
          break;
        case ReduceOp::kMax:
          acc = Max(acc, x);
          break;
        case ReduceOp::kMin:
          acc = Min(acc, x);
          break;
      }
    }
    if (op == ReduceOp::kAvg) acc = static_cast<A>(acc / static_cast<A>(n));
    // Every input element is read before its output element is written, so `out` may alias.
    dst[i] = Store<T>(acc);
  }
}

}  // namespace

Status ReduceInRankOrder(const std::vector<const Tensor*>& inputs, ReduceOp op, int64_t in_begin,
                         int64_t count, Tensor& out, int64_t out_begin) {
  const DType dtype = out.dtype();
  if (dtype == DType::kBool || !IsRuntimeDType(dtype)) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("a {} reduction does not take {} tensors", ReduceOpName(op), DTypeName(dtype)));
  }
  if (inputs.empty() || count == 0) return Status::Ok();
  VisitDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      ReduceTyped<T>(inputs, op, in_begin, count, out, out_begin);
    }
  });
  return Status::Ok();
}

}  // namespace irm::rt
