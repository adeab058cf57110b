// The kernel plans (plan_operand.h, <family>_plan.h) on their own: an operand is described by its
// own tensor type (the CUDA kernels' "... on gpu" reaches their errors unchanged), only when an
// error is worded, and the boxes, strides and attributes the CPU and CUDA kernels both follow.
// The kernels' behaviour itself is tested with each family (manipulation_test.cc, ...).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/manipulation_plan.h"
#include "reference_runtime/kernels/optimizer_plan.h"
#include "reference_runtime/kernels/plan_operand.h"
#include "reference_runtime/kernels/random_plan.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {
namespace {

// A tensor type other than Tensor, describing itself as the device tensor does and counting how
// often it is asked to.
struct FakeDeviceTensor {
  DType dtype() const { return kind; }
  const std::vector<int64_t>& shape() const { return dims; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  std::string Describe() const {
    ++describes;
    return std::string(DTypeName(kind)) + ShapeToString(dims) + " on gpu";
  }

  DType kind = DType::kFloat32;
  std::vector<int64_t> dims;
  mutable int describes = 0;
};

KernelAttrs Attrs(std::initializer_list<std::pair<std::string, AttrValue>> values) {
  KernelAttrs attrs;
  for (const auto& [name, value] : values) attrs.Set(name, value);
  return attrs;
}

TEST(KernelPlansTest, AnErrorDescribesTheOperandByItsOwnType) {
  const FakeDeviceTensor x{DType::kFloat32, {2, 3}};
  const StatusOr<std::vector<int64_t>> target =
      plan::PlanReshape(x, Attrs({{"shape", std::vector<int64_t>{4, -1}}}));
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().message(),
            "reshape: cannot reshape x float32[2, 3] on gpu (6 elements) to [4, -1]: 6 is not a "
            "multiple of 4");
}

TEST(KernelPlansTest, APlanThatSucceedsDescribesNothing) {
  const FakeDeviceTensor x{DType::kFloat16, {2, 3, 4}};
  const StatusOr<std::vector<int64_t>> target =
      plan::PlanReshape(x, Attrs({{"shape", std::vector<int64_t>{0, -1}}}));
  ASSERT_TRUE(target.ok()) << target.status().message();
  EXPECT_EQ(*target, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(x.describes, 0);
}

TEST(KernelPlansTest, ConcatRefusesAnAbsentPieceByIndex) {
  const Tensor a = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
  const StatusOr<plan::ConcatPlan> p = plan::PlanConcat(
      {plan::Operand(a), plan::Operand(), plan::Operand(a)}, Attrs({{"axis", int64_t{0}}}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "concat: x[1] is missing");
}

TEST(KernelPlansTest, ConcatStartsEachPieceWhereThePreviousEnds) {
  const Tensor a = Tensor::ZerosUnchecked(DType::kInt32, {2, 1});
  const Tensor b = Tensor::ZerosUnchecked(DType::kInt32, {2, 3});
  const StatusOr<plan::ConcatPlan> p = plan::PlanConcat(
      {plan::Operand(a), plan::Operand(b), plan::Operand(a)}, Attrs({{"axis", int64_t{-1}}}));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->axis, 1);
  EXPECT_EQ(p->shape, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(p->starts, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {0, 4}}));
}

TEST(KernelPlansTest, SplitInfersTheRestAndCutsInOrder) {
  const FakeDeviceTensor x{DType::kFloat32, {2, 6}};
  const StatusOr<plan::CutPlan> p = plan::PlanSplit(
      x, Attrs({{"sections", std::vector<int64_t>{1, -1, 2}}, {"axis", int64_t{1}}}), 3);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->shapes, (std::vector<std::vector<int64_t>>{{2, 1}, {2, 3}, {2, 2}}));
  EXPECT_EQ(p->starts, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {0, 4}}));
}

TEST(KernelPlansTest, ASliceBoxClampsAndDropsDecreasedDims) {
  // Paddle's slice: negative starts count from the end, ends clamp to the dim
  // (paddle/phi/kernels/funcs/slice_utils.h, CheckAndUpdateSliceAttrs).
  const FakeDeviceTensor input{DType::kFloat32, {4, 5, 6}};
  const StatusOr<plan::SliceBox> box =
      plan::PlanSlice(input,
                      Attrs({{"axes", std::vector<int64_t>{0, 2}},
                             {"starts", std::vector<int64_t>{-1, 2}},
                             {"ends", std::vector<int64_t>{100, 4}},
                             {"decrease_axis", std::vector<int64_t>{0}}}),
                      "slice");
  ASSERT_TRUE(box.ok()) << box.status().message();
  EXPECT_EQ(box->start, (std::vector<int64_t>{3, 0, 2}));
  EXPECT_EQ(box->extent, (std::vector<int64_t>{1, 5, 2}));
  EXPECT_EQ(box->out_shape, (std::vector<int64_t>{5, 2}));
}

TEST(KernelPlansTest, AShardDrawsFromItsOffsetInTheSerialTensor) {
  const OutputShard shard{{4, 6}, {2, 3}};
  KernelContext context;
  context.shard = &shard;
  context.shard_var = "w";
  const StatusOr<plan::SerialIndexPlan> p = plan::PlanSerialIndex("uniform", {2, 3}, context);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->sharded);
  EXPECT_EQ(p->strides, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(p->base, 2 * 6 + 3);

  const StatusOr<plan::SerialIndexPlan> past = plan::PlanSerialIndex("uniform", {3, 3}, context);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message(),
            "uniform: output 'w' [3, 3] is a shard of the serial tensor [4, 6] at offsets [2, 3], "
            "but dim 0 reaches 2 + 3 = 5, past the serial dim 4");
}

TEST(KernelPlansTest, OnlyAdamwReadsTheDecayAttributes) {
  const Tensor param = Tensor::ZerosUnchecked(DType::kFloat32, {3});
  const Tensor scalar = Tensor::ZerosUnchecked(DType::kFloat32, {1});
  const std::vector<plan::Operand> in = {param, param,           scalar, param,
                                         param, plan::Operand(), scalar, scalar};
  const KernelAttrs attrs = Attrs({{"beta1", 0.5}, {"beta2", 0.25}, {"epsilon", 1e-6}});
  const StatusOr<plan::AdamPlan> adam = plan::PlanAdam(in, attrs, "adam", false);
  ASSERT_TRUE(adam.ok()) << adam.status().message();
  EXPECT_EQ(adam->coeff, 0.0);
  EXPECT_FALSE(adam->decay);
  // adamw's coeff defaults to 0.01 (paddle/phi/ops/yaml/ops.yaml, adamw_).
  const StatusOr<plan::AdamPlan> adamw = plan::PlanAdam(in, attrs, "adamw", true);
  ASSERT_TRUE(adamw.ok()) << adamw.status().message();
  EXPECT_EQ(adamw->coeff, 0.01);
  EXPECT_EQ(adamw->beta2, 0.25);
  EXPECT_EQ(adamw->compute, DType::kFloat32);
}

}  // namespace
}  // namespace irm::rt
