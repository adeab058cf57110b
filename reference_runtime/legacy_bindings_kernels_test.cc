// Legacy programs using the ops whose bindings once named kernels the runtime did not have
// (elementwise_floordiv -> floor_divide, not_equal, greater_than), run on the real kernel registry
// rather than on recording kernels: a binding to a missing kernel plans and then fails when the op
// runs, which only a run on the real registry shows. The expected values are Python's (`//`, `!=`,
// `>`), which Paddle's functors follow (paddle/phi/kernels/funcs/elementwise_functor.h,
// compare_functors.h).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::DenseVar;
using testing::FeedOp;
using testing::FetchOp;
using testing::IntAttr;
using testing::MakeTensor;
using testing::OneBlock;
using testing::OpText;
using testing::ToDoubles;

// feed x, y -> `type`(X=x, Y=y, attrs) -> out, fetched; x is [2, 3], y [2] aligned at `axis` 0
// (the legacy broadcast) or y [3] at the trailing dim (axis -1, the default).
StatusOr<Tensor> RunBinary(const std::string& type, std::string_view dtype, std::string_view out,
                           const Tensor& x, const Tensor& y,
                           const std::vector<std::string>& attrs) {
  const oldir::Program program = testing::ParseTestProgram(OneBlock(
      DenseVar("x", dtype, {2, 3}) + DenseVar("y", dtype, y.shape()) +
      DenseVar("out", out, {2, 3}) + FeedOp("x", 0) + FeedOp("y", 1) +
      OpText(type, {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}}, attrs) + FetchOp("out", 0)));
  LegacyExecutor executor(program, {.file = "t.prototxt"});
  IRM_RETURN_IF_ERROR(executor.plan_status());
  Scope scope;
  IRM_ASSIGN_OR_RETURN(std::vector<Fetch> fetched, executor.Run(scope, {{"x", x}, {"y", y}}));
  if (fetched.size() != 1) return Status(StatusCode::kInternal, Location{}, "one fetch expected");
  return std::move(fetched[0].tensor);
}

TEST(LegacyBindingsOnRealKernelsTest, ElementwiseFloordivRunsAsFloorDivide) {
  const Tensor x = MakeTensor(DType::kInt64, {2, 3}, {7, -7, 6, 7, -7, 0});
  const Tensor y = MakeTensor(DType::kInt64, {2}, {2, -2});
  StatusOr<Tensor> out =
      RunBinary("elementwise_floordiv", "INT64", "INT64", x, y, {IntAttr("axis", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->dtype(), DType::kInt64);
  EXPECT_EQ(out->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ToDoubles(*out), (std::vector<double>{3, -4, 3, -4, 3, 0}));

  const Tensor xf = MakeTensor(DType::kFloat32, {2, 3}, {7.5, -7.5, 1, 0, -1, 3});
  const Tensor yf = MakeTensor(DType::kFloat32, {3}, {2, 2, 0.5});
  StatusOr<Tensor> outf = RunBinary("elementwise_floordiv", "FP32", "FP32", xf, yf, {});
  ASSERT_TRUE(outf.ok()) << outf.status().ToString();
  EXPECT_EQ(ToDoubles(*outf), (std::vector<double>{3, -4, 2, 0, -1, 6}));
}

TEST(LegacyBindingsOnRealKernelsTest, NotEqualAndGreaterThanRunAndGiveBool) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = MakeTensor(DType::kFloat32, {3}, {1, 5, 3});
  StatusOr<Tensor> ne = RunBinary("not_equal", "FP32", "BOOL", x, y, {});
  ASSERT_TRUE(ne.ok()) << ne.status().ToString();
  EXPECT_EQ(ne->dtype(), DType::kBool);
  EXPECT_EQ(ToDoubles(*ne), (std::vector<double>{0, 1, 0, 1, 0, 1}));

  StatusOr<Tensor> gt = RunBinary("greater_than", "FP32", "BOOL", x, y, {});
  ASSERT_TRUE(gt.ok()) << gt.status().ToString();
  EXPECT_EQ(gt->dtype(), DType::kBool);
  EXPECT_EQ(ToDoubles(*gt), (std::vector<double>{0, 0, 0, 1, 0, 1}));

  // axis 0 aligns a [2] operand with x's first dim, as compare_op.cc's axis does.
  const Tensor yi = MakeTensor(DType::kInt32, {2}, {2, 5});
  const Tensor xi = MakeTensor(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  StatusOr<Tensor> gti = RunBinary("greater_than", "INT32", "BOOL", xi, yi, {IntAttr("axis", 0)});
  ASSERT_TRUE(gti.ok()) << gti.status().ToString();
  EXPECT_EQ(ToDoubles(*gti), (std::vector<double>{0, 0, 1, 0, 0, 1}));
}

}  // namespace
}  // namespace irm::rt
