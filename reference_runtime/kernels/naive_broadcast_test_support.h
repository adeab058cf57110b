// Test-only float64 references for broadcasting kernels, written by multi-index arithmetic and
// independent of broadcast.h: the operand element an output element reads, a binary op over two
// broadcast operands, and the sum of output terms back to an operand's shape (in increasing
// output index, the order the kernels promise).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace irm::rt::testing {

using Shape = std::vector<int64_t>;

inline int64_t NumelOf(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The flat index into `operand` (right-aligned to `out`, size-1 dims repeated) that output
// element `out_index` reads.
inline int64_t NaiveOperandIndex(int64_t out_index, const Shape& out, const Shape& operand) {
  // Multi-index of out_index, then the operand's flat index from the dims it has.
  std::vector<int64_t> multi(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    multi[d] = out_index % out[d];
    out_index /= out[d];
  }
  const size_t lead = out.size() - operand.size();
  int64_t index = 0;
  for (size_t d = 0; d < operand.size(); ++d) {
    index = index * operand[d] + (operand[d] == 1 ? 0 : multi[lead + d]);
  }
  return index;
}

inline std::vector<double> NaiveBinary(const std::vector<double>& x, const Shape& x_shape,
                                       const std::vector<double>& y, const Shape& y_shape,
                                       const Shape& out,
                                       const std::function<double(double, double)>& f) {
  std::vector<double> result(static_cast<size_t>(NumelOf(out)));
  for (int64_t i = 0; i < NumelOf(out); ++i) {
    result[static_cast<size_t>(i)] = f(x[static_cast<size_t>(NaiveOperandIndex(i, out, x_shape))],
                                       y[static_cast<size_t>(NaiveOperandIndex(i, out, y_shape))]);
  }
  return result;
}

// result[j] = sum of term(i) over the outputs i that read operand element j, in increasing i.
inline std::vector<double> NaiveSumTo(const Shape& out, const Shape& operand,
                                      const std::function<double(int64_t)>& term) {
  std::vector<double> result(static_cast<size_t>(NumelOf(operand)), 0.0);
  for (int64_t i = 0; i < NumelOf(out); ++i) {
    result[static_cast<size_t>(NaiveOperandIndex(i, out, operand))] += term(i);
  }
  return result;
}

}  // namespace irm::rt::testing
