// The plans the CPU and CUDA kernels of pool2d, batch_norm, set_value, matmul_with_flatten, topk
// and accuracy share (<family>_plan.h, conv_net_plan.h), on their own: what each resolves from
// the attributes and shapes, and the errors both devices word alike. The expected values follow
// the Paddle rules the kernel files cite (pool.cc: paddle/phi/kernels/funcs/pooling.h and
// Pool2DInferMeta; batch_norm.cc: paddle/phi/kernels/cpu/batch_norm_kernel.cc; set_value.cc: phi's
// CheckAndUpdateSliceAttrs and GetSliceDims; matmul_with_flatten.cc: mul_op.cc; metrics.cc:
// top_k_kernel.cc, accuracy_kernel.cc). The kernels' results are tested with each family.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/batch_norm_plan.h"
#include "reference_runtime/kernels/conv_net_plan.h"
#include "reference_runtime/kernels/matmul_with_flatten_plan.h"
#include "reference_runtime/kernels/metrics_plan.h"
#include "reference_runtime/kernels/pool_plan.h"
#include "reference_runtime/kernels/set_value_plan.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {
namespace {

KernelAttrs Attrs(std::initializer_list<std::pair<std::string, AttrValue>> values) {
  KernelAttrs attrs;
  for (const auto& [name, value] : values) attrs.Set(name, value);
  return attrs;
}

Tensor Zeros(DType dtype, std::vector<int64_t> shape) {
  return Tensor::Zeros(dtype, std::move(shape)).value();
}

// ---- data_format

TEST(ConvNetPlansTest, DataFormatAnyLayoutIsChannelFirst) {
  EXPECT_TRUE(plan::ReadChannelLast(Attrs({{"data_format", std::string("NHWC")}})).value());
  EXPECT_FALSE(plan::ReadChannelLast(Attrs({{"data_format", std::string("AnyLayout")}})).value());
  EXPECT_FALSE(plan::ReadChannelLast(Attrs({})).value());
  const StatusOr<bool> bad = plan::ReadChannelLast(Attrs({{"data_format", std::string("NDHWC")}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "data_format 'NDHWC' is not one of NCHW, NHWC, AnyLayout (NCHW)");
}

// ---- pool2d

TEST(ConvNetPlansTest, PoolSamePaddingGivesTheSmallerHalfToTheLowSide) {
  // 5 wide, kernel 4, stride 2: out = ceil(5 / 2) = 3, padding (3 - 1) * 2 + 4 - 5 = 3 split
  // 1 before and 2 after.
  const Tensor x = Zeros(DType::kFloat32, {1, 5, 5, 2});
  const plan::PoolPlan p = plan::PlanPool(x, Attrs({{"pooling_type", std::string("avg")},
                                                    {"data_format", std::string("NHWC")},
                                                    {"kernel_size", std::vector<int64_t>{4, 4}},
                                                    {"strides", std::vector<int64_t>{2, 2}},
                                                    {"padding_algorithm", std::string("SAME")}}))
                               .value();
  EXPECT_TRUE(p.channel_last);
  EXPECT_EQ(p.c, 2);
  EXPECT_EQ(p.pad_top, 1);
  EXPECT_EQ(p.pad_left, 1);
  EXPECT_EQ(p.oh, 3);
  EXPECT_EQ(p.ow, 3);
  EXPECT_EQ(p.out_shape(), (std::vector<int64_t>{1, 3, 3, 2}));
}

TEST(ConvNetPlansTest, PoolCeilModeKeepsTheLastPartialWindow) {
  // 5 high, kernel 2, stride 2: (5 - 2) / 2 + 1 = 2 windows, 3 with ceil_mode.
  const Tensor x = Zeros(DType::kFloat64, {2, 3, 5, 4});
  KernelAttrs attrs = Attrs({{"pooling_type", std::string("max")},
                             {"kernel_size", std::vector<int64_t>{2, 2}},
                             {"strides", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(plan::PlanPool(x, attrs).value().out_shape(), (std::vector<int64_t>{2, 3, 2, 2}));
  attrs.Set("ceil_mode", true);
  EXPECT_EQ(plan::PlanPool(x, attrs).value().out_shape(), (std::vector<int64_t>{2, 3, 3, 2}));
}

TEST(ConvNetPlansTest, PoolGradChecksOutAgainstThePlannedShape) {
  const Tensor x = Zeros(DType::kFloat32, {1, 1, 4, 4});
  const Tensor out = Zeros(DType::kFloat32, {1, 1, 3, 3});
  KernelCall call{.inputs = {&x, &out, &out},
                  .outputs = {},
                  .attrs = Attrs({{"pooling_type", std::string("avg")},
                                  {"kernel_size", std::vector<int64_t>{2, 2}},
                                  {"strides", std::vector<int64_t>{2, 2}}}),
                  .context = {}};
  const plan::PoolPlan p = plan::PlanPoolCall(call, DType::kFloat32).value();
  const Status status = plan::CheckPoolGradOperands(call, DType::kFloat32, p);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "out has shape [1, 1, 3, 3], expected [1, 1, 2, 2] (the shape of pool2d's output)");
}

// ---- batch_norm

TEST(ConvNetPlansTest, BatchNormSeesXAsSamplesChannelsPositions) {
  const Tensor x = Zeros(DType::kFloat32, {2, 3, 4, 5});
  const plan::BatchNormPlan first = plan::PlanBatchNorm(x, Attrs({})).value();
  EXPECT_EQ(first.c, 3);
  EXPECT_EQ(first.s, 20);
  EXPECT_EQ(first.m(), 40);
  EXPECT_EQ(first.At(1, 2, 3), (1 * 3 + 2) * 20 + 3);
  const plan::BatchNormPlan last =
      plan::PlanBatchNorm(x, Attrs({{"data_format", std::string("NHWC")}})).value();
  EXPECT_EQ(last.c, 5);
  EXPECT_EQ(last.s, 12);
  EXPECT_EQ(last.At(1, 2, 3), (1 * 12 + 3) * 5 + 2);
}

TEST(ConvNetPlansTest, BatchNormTrainableStatisticsKeepATestProgramTraining) {
  // batch_norm_kernel.cc: test_mode = is_test && !trainable_statistics; use_global_stats wins.
  EXPECT_TRUE(plan::ReadBatchNormMode(Attrs({{"is_test", true}})).value().global_stats);
  EXPECT_FALSE(plan::ReadBatchNormMode(Attrs({{"is_test", true}, {"trainable_statistics", true}}))
                   .value()
                   .global_stats);
  EXPECT_TRUE(plan::ReadBatchNormMode(Attrs({{"use_global_stats", true}})).value().global_stats);
}

TEST(ConvNetPlansTest, BatchNormGradNeedsOnlyTheStatisticsOfItsMode) {
  const Tensor x = Zeros(DType::kFloat32, {2, 3});
  const Tensor channels = Zeros(DType::kFloat32, {3});
  // Global statistics: mean_out and variance_out, no saved ones.
  KernelCall global{
      .inputs = {&x, nullptr, nullptr, &channels, &channels, nullptr, nullptr, nullptr, &x},
      .outputs = {},
      .attrs = Attrs({{"use_global_stats", true}}),
      .context = {}};
  const plan::BatchNormPlan p = plan::PlanBatchNormCall(global, DType::kFloat32).value();
  const plan::BatchNormMode global_mode = plan::ReadBatchNormMode(global.attrs).value();
  EXPECT_TRUE(plan::CheckBatchNormGradOperands(global, DType::kFloat32, p, global_mode).ok());
  // Training reads saved_mean, which is missing.
  KernelCall training = global;
  training.attrs = Attrs({});
  const Status status = plan::CheckBatchNormGradOperands(
      training, DType::kFloat32, p, plan::ReadBatchNormMode(training.attrs).value());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "input 'saved_mean' (operand 5) is missing");
}

// ---- set_value

TEST(ConvNetPlansTest, SetValueWalksBackwardThroughIndexZeroAndInsertsNoneAxes) {
  // a[-1:-5:-1, 1:5:2] on [4, 5]: rows 3, 2, 1, 0 and columns 1, 3; none_axes [0] puts a 1 first.
  const Tensor x = Zeros(DType::kInt32, {4, 5});
  const plan::SetValuePlan p = plan::PlanSetValue(x, "x",
                                                  Attrs({{"axes", std::vector<int64_t>{0, 1}},
                                                         {"starts", std::vector<int64_t>{-1, 1}},
                                                         {"ends", std::vector<int64_t>{-5, 5}},
                                                         {"steps", std::vector<int64_t>{-1, 2}},
                                                         {"none_axes", std::vector<int64_t>{0}}}),
                                                  "set_value")
                                   .value();
  EXPECT_EQ(p.slice_shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(p.value_shape, (std::vector<int64_t>{1, 4, 2}));
  EXPECT_EQ(p.first, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(p.step, (std::vector<int64_t>{-1, 2}));
}

TEST(ConvNetPlansTest, SetValueRefusesToDecreaseAnAxisWithMoreThanOneElement) {
  const Tensor x = Zeros(DType::kFloat32, {4, 5});
  const StatusOr<plan::SetValuePlan> p =
      plan::PlanSetValue(x, "x",
                         Attrs({{"axes", std::vector<int64_t>{1}},
                                {"starts", std::vector<int64_t>{0}},
                                {"ends", std::vector<int64_t>{2}},
                                {"steps", std::vector<int64_t>{1}},
                                {"decrease_axes", std::vector<int64_t>{1}}}),
                         "set_value");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "set_value: decrease_axes 1 cannot be removed: the slice has 2 elements there, not 1");
}

TEST(ConvNetPlansTest, SetValueAttributeValuesKeepIntsExactAndCastFloats) {
  const Tensor ints =
      plan::SetValueAttrValues(Attrs({{"shape", std::vector<int64_t>{2}},
                                      {"values", std::vector<int64_t>{9007199254740993, -2}}}),
                               DType::kInt64)
          .value();
  EXPECT_EQ(ints.data<int64_t>()[0], 9007199254740993);  // 2^53 + 1: no trip through double
  EXPECT_EQ(ints.data<int64_t>()[1], -2);
  const Tensor floats =
      plan::SetValueAttrValues(
          Attrs({{"shape", std::vector<int64_t>{2}}, {"values", std::vector<double>{2.75, -1.5}}}),
          DType::kInt32)
          .value();
  EXPECT_EQ(floats.data<int32_t>()[0], 2);  // cast truncates toward zero
  EXPECT_EQ(floats.data<int32_t>()[1], -1);
  const StatusOr<Tensor> short_of_one = plan::SetValueAttrValues(
      Attrs({{"shape", std::vector<int64_t>{3}}, {"values", std::vector<double>{1, 2}}}),
      DType::kFloat32);
  ASSERT_FALSE(short_of_one.ok());
  EXPECT_EQ(short_of_one.status().message(), "set_value: 2 values for shape [3] (3 elements)");
}

// ---- matmul_with_flatten

TEST(ConvNetPlansTest, MatmulWithFlattenSplitsEachOperandAfterItsColDims) {
  const Tensor x = Zeros(DType::kFloat32, {2, 3, 4});
  const Tensor y = Zeros(DType::kFloat32, {4, 5, 6});
  const plan::MatmulWithFlattenPlan p =
      plan::PlanMatmulWithFlatten(x, y, Attrs({{"x_num_col_dims", int64_t{2}}})).value();
  EXPECT_EQ(p.x_matrix, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(p.y_matrix, (std::vector<int64_t>{4, 30}));
  EXPECT_EQ(p.out_dims, (std::vector<int64_t>{2, 3, 5, 6}));
  const StatusOr<plan::MatmulWithFlattenPlan> bad =
      plan::PlanMatmulWithFlatten(x, y, Attrs({{"x_num_col_dims", int64_t{3}}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "x_num_col_dims is 3, expected 1 to 2 for x of shape [2, 3, 4]");
}

// ---- topk, accuracy

TEST(ConvNetPlansTest, TopkV1ReadsOnlyK) {
  const KernelAttrs attrs = Attrs({{"k", int64_t{3}}, {"axis", int64_t{0}}, {"largest", false}});
  const plan::TopkAttrs v2 = plan::ReadTopkAttrs(attrs).value();
  EXPECT_EQ(v2.axis, 0);
  EXPECT_FALSE(v2.largest);
  const plan::TopkAttrs v1 = plan::ReadTopkV1Attrs(attrs).value();
  EXPECT_EQ(v1.k, 3);
  EXPECT_EQ(v1.axis, -1);
  EXPECT_TRUE(v1.largest);
}

TEST(ConvNetPlansTest, TopkReplacesTheAxisByK) {
  const Tensor x = Zeros(DType::kFloat32, {2, 7, 3});
  const plan::TopkPlan p = plan::PlanTopk(x, {.k = 4, .axis = -2, .largest = true}).value();
  EXPECT_EQ(p.axis, 1);
  EXPECT_EQ(p.split.outer, 2);
  EXPECT_EQ(p.split.size, 7);
  EXPECT_EQ(p.split.inner, 3);
  EXPECT_EQ(p.out_shape, (std::vector<int64_t>{2, 4, 3}));
  const StatusOr<plan::TopkPlan> too_many = plan::PlanTopk(x, {.k = 8, .axis = 1, .largest = true});
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().message(), "k is 8, expected 1 to 7 (the size of axis 1)");
}

TEST(ConvNetPlansTest, AccuracyReadsOneLabelPerSampleRow) {
  const Tensor x = Zeros(DType::kFloat32, {4, 2});
  const Tensor indices = Zeros(DType::kInt64, {4, 2});
  const Tensor label = Zeros(DType::kInt64, {5, 1});
  KernelCall call{.inputs = {&x, &indices, &label}, .outputs = {}, .attrs = {}, .context = {}};
  const plan::AccuracyPlan p = plan::PlanAccuracy(call).value();
  EXPECT_EQ(p.samples, 4);
  EXPECT_EQ(p.k, 2);
  EXPECT_EQ(p.label_stride, 1);
  const Tensor short_label = Zeros(DType::kInt64, {3});
  call.inputs[2] = &short_label;
  const StatusOr<plan::AccuracyPlan> bad = plan::PlanAccuracy(call);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "label has shape [3], expected at least 4 samples");
}

}  // namespace
}  // namespace irm::rt
