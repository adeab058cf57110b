// matmul_with_flatten (the legacy mul) and its grad against a float64 product written here over
// the flattened dims, for several x_num_col_dims / y_num_col_dims; and bit-identity with the
// matmul kernel on the flattened operands (what the translated program runs).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;

struct MulCase {
  std::vector<int64_t> x, y;
  int64_t x_cols, y_cols;
  int64_t m, k, n;  // by hand: x2 [m, k], y2 [k, n]
  std::vector<int64_t> out;
};

TEST(MatmulWithFlattenTest, MatchesTheFlattenedProductAndItsGrads) {
  const std::vector<MulCase> cases = {
      {{4, 3, 1, 1}, {3, 5}, 1, 1, 4, 3, 5, {4, 5}},
      {{2, 3, 4}, {4, 6}, 2, 1, 6, 4, 6, {2, 3, 6}},
      {{2, 6}, {3, 2, 5}, 1, 2, 2, 6, 5, {2, 5}},
  };
  uint64_t seed = 3;
  for (const MulCase& c : cases) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      const Tensor x = RandomTensor(dtype, c.x, ++seed);
      const Tensor y = RandomTensor(dtype, c.y, ++seed);
      const Tensor dout = RandomTensor(dtype, c.out, ++seed);
      const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y), gv = ToDoubles(dout);
      std::vector<double> out(static_cast<size_t>(c.m * c.n)), dx(xv.size()), dy(yv.size());
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j)
          for (int64_t p = 0; p < c.k; ++p) {
            out[i * c.n + j] += xv[i * c.k + p] * yv[p * c.n + j];
            dx[i * c.k + p] += gv[i * c.n + j] * yv[p * c.n + j];
            dy[p * c.n + j] += xv[i * c.k + p] * gv[i * c.n + j];
          }
      KernelAttrs attrs;
      attrs.Set("x_num_col_dims", c.x_cols);
      attrs.Set("y_num_col_dims", c.y_cols);
      const double tol = testing::ToleranceFor(dtype);
      const std::vector<Tensor> o = RunKernel("matmul_with_flatten", dtype, {&x, &y}, attrs, 1);
      ExpectClose(o[0], out, c.out, tol, "out");
      const std::vector<Tensor> g =
          RunKernel("matmul_with_flatten_grad", dtype, {&x, &y, &dout}, attrs, 2);
      ExpectClose(g[0], dx, c.x, tol, "x_grad");
      ExpectClose(g[1], dy, c.y, tol, "y_grad");
      // The same bits as pd_op.matmul on the flattened operands.
      const Tensor x2 = x.Reshaped({c.m, c.k}).value(), y2 = y.Reshaped({c.k, c.n}).value();
      const Tensor m = RunKernel("matmul", dtype, {&x2, &y2}, {}, 1)[0];
      EXPECT_TRUE(m.Reshaped(c.out).value().BitwiseEqual(o[0]));
    }
  }
}

TEST(MatmulWithFlattenTest, ColDimsOutOfRangeAreAnError) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  KernelAttrs attrs;
  attrs.Set("x_num_col_dims", int64_t{2});
  auto r = testing::TryRunKernel("matmul_with_flatten", DType::kFloat32, {&x, &x}, attrs, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x_num_col_dims is 2, expected 1 to 1 for x of shape [2, 3]");
}

}  // namespace
}  // namespace irm::rt
