// Broadcasting as NumPy and Paddle define it: shapes are aligned on their last dims, a missing
// dim counts as 1, and two dims agree when they are equal or one of them is 1. This file holds
// what every broadcasting kernel needs: the output shape (or the error naming both operands),
// each operand's strides as seen from the output, a walk over the output that hands out every
// operand's element offset, and the reduction of an output-shaped gradient back to an operand's
// shape — summed in a fixed order (increasing output index) so that gradients are the same bits
// whatever runs them.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// The broadcast shape of x and y, or KernelError "x [2, 3] and y [4] do not broadcast" (with the
// operand names given).
StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& y,
                                               std::string_view x_name = "x",
                                               std::string_view y_name = "y");

// Whether `shape` broadcasts to `target` (and target is the broadcast shape of the two).
bool BroadcastsTo(const std::vector<int64_t>& shape, const std::vector<int64_t>& target);

// Element strides of a C-order tensor of `shape` as seen from `out_shape` (which `shape`
// broadcasts to): one per output dim, 0 for a dim the operand lacks or has as 1.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out_shape);

// The output shape and per-operand strides of a broadcast walk, with adjacent dims merged where
// every operand is contiguous across them (two same-shape operands become one flat loop).
template <size_t N>
struct BroadcastWalk {
  std::vector<int64_t> dims;                      // collapsed output dims (at least one)
  std::array<std::vector<int64_t>, N> strides{};  // per operand, per collapsed dim
};

// Plans a walk over `out_shape` for operands of the given shapes (each broadcasts to it).
template <size_t N>
BroadcastWalk<N> PlanBroadcast(const std::vector<int64_t>& out_shape,
                               const std::array<const std::vector<int64_t>*, N>& shapes);

// Calls f(out_index, offsets) for every output element in C order, offsets[i] being operand i's
// element offset. The innermost dim runs as a plain loop so that f inlines into it.
template <size_t N, typename F>
void ForEachBroadcast(const BroadcastWalk<N>& walk, F&& f);

// Reduces an output-shaped gradient to the shape of an operand: returns a new tensor of
// *shapes[0] (which broadcasts to out_shape) whose element j is the sum, over the outputs i that
// read element j, of term(i, offsets) — offsets[k] being operand k's element offset for output i
// (shapes[1..] are further operands the term reads, such as y in out_grad * y). Sums are taken
// in Compute<T>, each in increasing output index i, and stored as T once.
template <typename T, size_t N, typename Term>
Tensor SumToShape(const std::vector<int64_t>& out_shape,
                  const std::array<const std::vector<int64_t>*, N>& shapes, Term&& term);

// ---- implementation ----------------------------------------------------------------------------

template <size_t N>
BroadcastWalk<N> PlanBroadcast(const std::vector<int64_t>& out_shape,
                               const std::array<const std::vector<int64_t>*, N>& shapes) {
  std::array<std::vector<int64_t>, N> full;
  for (size_t i = 0; i < N; ++i) full[i] = BroadcastStrides(*shapes[i], out_shape);
  BroadcastWalk<N> walk;
  // Walk the dims from the innermost outwards, merging dim d into the current innermost
  // collapsed dim when every operand steps through d exactly as it would continue the inner one.
  for (size_t d = out_shape.size(); d-- > 0;) {
    const int64_t size = out_shape[d];
    if (size == 1) continue;  // contributes nothing to offsets
    bool merge = !walk.dims.empty();
    for (size_t i = 0; i < N && merge; ++i) {
      merge = full[i][d] == walk.strides[i].back() * walk.dims.back();
    }
    if (merge) {
      walk.dims.back() *= size;
    } else {
      walk.dims.push_back(size);
      for (size_t i = 0; i < N; ++i) walk.strides[i].push_back(full[i][d]);
    }
  }
  if (walk.dims.empty()) {  // a scalar output or all dims 1: one element
    walk.dims.push_back(1);
    for (size_t i = 0; i < N; ++i) walk.strides[i].push_back(0);
  }
  // Built innermost first; store outermost first.
  std::reverse(walk.dims.begin(), walk.dims.end());
  for (size_t i = 0; i < N; ++i) std::reverse(walk.strides[i].begin(), walk.strides[i].end());
  return walk;
}

template <size_t N, typename F>
void ForEachBroadcast(const BroadcastWalk<N>& walk, F&& f) {
  const size_t rank = walk.dims.size();
  const int64_t inner = walk.dims[rank - 1];
  for (int64_t d : walk.dims) {
    if (d == 0) return;
  }
  std::array<int64_t, N> inner_stride;
  for (size_t i = 0; i < N; ++i) inner_stride[i] = walk.strides[i][rank - 1];
  std::vector<int64_t> counter(rank, 0);  // index over the outer dims (all but the last)
  std::array<int64_t, N> base{};          // operand offsets of the current outer index
  int64_t out_index = 0;
  while (true) {
    std::array<int64_t, N> offsets = base;
    for (int64_t j = 0; j < inner; ++j) {
      f(out_index + j, offsets);
      for (size_t i = 0; i < N; ++i) offsets[i] += inner_stride[i];
    }
    out_index += inner;
    // Advance the outer counter like an odometer.
    size_t d = rank - 1;
    while (d-- > 0) {
      ++counter[d];
      for (size_t i = 0; i < N; ++i) base[i] += walk.strides[i][d];
      if (counter[d] < walk.dims[d]) break;
      for (size_t i = 0; i < N; ++i) base[i] -= walk.strides[i][d] * walk.dims[d];
      counter[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;  // every outer dim wrapped: done
  }
}

template <typename T, size_t N, typename Term>
Tensor SumToShape(const std::vector<int64_t>& out_shape,
                  const std::array<const std::vector<int64_t>*, N>& shapes, Term&& term) {
  Tensor result = Tensor::ZerosUnchecked(DTypeOf<T>(), *shapes[0]);
  std::vector<Compute<T>> sums(static_cast<size_t>(result.numel()), Compute<T>(0));
  const BroadcastWalk<N> walk = PlanBroadcast<N>(out_shape, shapes);
  // One pass over the output in C order: each sum receives its terms in increasing output index.
  ForEachBroadcast(walk, [&](int64_t i, const std::array<int64_t, N>& offsets) {
    sums[static_cast<size_t>(offsets[0])] += term(i, offsets);
  });
  T* out = result.data<T>();
  for (size_t j = 0; j < sums.size(); ++j) out[j] = Store<T>(sums[j]);
  return result;
}

}  // namespace irm::rt
