// ReduceInRankOrder (reduce.h).
#include "reference_runtime/comm/reduce.h"

#include <algorithm>
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

// `acc[i] = op(acc[i], x[i])` over one block: one loop per op, so that the compiler vectorises it
// (across elements; each element's own sequence of operations is unchanged).
template <typename T, typename A>
void Accumulate(ReduceOp op, A* acc, const T* x, int64_t count) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      for (int64_t i = 0; i < count; ++i) acc[i] = Add(acc[i], Load(x[i]));
      break;
    case ReduceOp::kProd:
      for (int64_t i = 0; i < count; ++i) acc[i] = Mul(acc[i], Load(x[i]));
      break;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < count; ++i) acc[i] = Max(acc[i], Load(x[i]));
      break;
    case ReduceOp::kMin:
      for (int64_t i = 0; i < count; ++i) acc[i] = Min(acc[i], Load(x[i]));
      break;
  }
}

// Block by block: every element starts from rank 0's value and takes ranks 1..N-1 in order, then
// kAvg divides once and the result is stored (rounded once for float16 / bfloat16) — the same
// operations per element as one element at a time, so the same bits.
template <typename T>
void ReduceTyped(const std::vector<const Tensor*>& inputs, ReduceOp op, int64_t in_begin,
                 int64_t count, Tensor& out, int64_t out_begin) {
  using A = Compute<T>;  // float16 / bfloat16 accumulate in float32 and round once
  constexpr int64_t kBlock = 512;
  const size_t n = inputs.size();
  std::vector<const T*> src(n);
  for (size_t r = 0; r < n; ++r) src[r] = inputs[r]->data<T>() + in_begin;
  T* dst = out.data<T>() + out_begin;
  A acc[kBlock];
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t len = std::min(kBlock, count - b);
    for (int64_t i = 0; i < len; ++i) acc[i] = Load(src[0][b + i]);
    for (size_t r = 1; r < n; ++r) Accumulate<T, A>(op, acc, src[r] + b, len);
    if (op == ReduceOp::kAvg) {
      for (int64_t i = 0; i < len; ++i) acc[i] = static_cast<A>(acc[i] / static_cast<A>(n));
    }
    // Every input element of the block is read before its output element is written, so `out`
    // may alias an input.
    for (int64_t i = 0; i < len; ++i) dst[b + i] = Store<T>(acc[i]);
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
