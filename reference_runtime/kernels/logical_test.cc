// logical_or and logical_xor (kernels/elementwise.cc) against their truth tables in float64
// (a value is true when it is not zero, paddle/phi/kernels/funcs/logical_functor.h), with
// broadcasting, for numbers and bools.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::RunKernel;
using testing::ToDoubles;

TEST(LogicalTest, OrAndXorFollowTheirTruthTablesWithBroadcasting) {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kBool}) {
    const Tensor x = testing::FromDoubles({0, 1, 2, 0, 0, -3}, {2, 3}, dtype);
    const Tensor y = testing::FromDoubles({0, 0, 5}, {3}, dtype);
    const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y);
    std::vector<double> want_or, want_xor;
    for (size_t i = 0; i < xv.size(); ++i) {
      const bool a = xv[i] != 0, b = yv[i % 3] != 0;
      want_or.push_back(a || b);
      want_xor.push_back(a != b);
    }
    const std::string where = DTypeName(dtype);
    const std::vector<Tensor> o = RunKernel("logical_or", dtype, {&x, &y}, {}, 1);
    ExpectClose(o[0], want_or, {2, 3}, 0, where + " or");
    EXPECT_EQ(o[0].dtype(), DType::kBool);
    ExpectClose(RunKernel("logical_xor", dtype, {&x, &y}, {}, 1)[0], want_xor, {2, 3}, 0,
                where + " xor");
  }
}

}  // namespace
}  // namespace irm::rt
