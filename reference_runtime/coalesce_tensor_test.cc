// coalesce_tensor on the real kernel and in both executors: the fused buffer holds the inputs in
// order, each part aligned as Paddle aligns it (the padding zero), and the outputs are views of
// their parts, so that writing the fused buffer (fuse-all-reduce's all-reduce and scale) changes
// the outputs. Pins paddle/phi/kernels/coalesce_tensor_kernel.cc (CoalesceTensorKernel: parts in
// input order, each `Alignment(len * size_of_dtype)` long with use_align, outputs
// ShareDataWith their slices) and phi::Alignment with the CPU's 4 KiB chunk
// (paddle/phi/backends/cpu/cpu_info.cc, CpuMinChunkSize), and the layout Paddle's
// test/legacy_test/test_coalesce_tensor_op.py checks (each input at its aligned offset).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newir/parser.h"
#include "newir/verifier.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt {
namespace {

using testing::ToDoubles;
using Doubles = std::vector<double>;

Tensor F32(const Doubles& values, std::vector<int64_t> shape) {
  return testing::FromDoubles(values, std::move(shape), DType::kFloat32);
}

// Runs the registered kernel on a [2, 3] and a [5] float32 tensor.
struct Coalesced {
  Status status;
  std::vector<Tensor> outputs;  // the two views, then the fused buffer
};
Coalesced RunKernel(KernelAttrs attrs) {
  const Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = F32({7, 8, 9, 10, 11}, {5});
  Coalesced result;
  result.outputs.resize(3);
  KernelCall call;
  call.inputs = {&a, &b};
  for (Tensor& t : result.outputs) call.outputs.push_back(&t);
  attrs.Set("dtype", DType::kFloat32);
  attrs.Set("copy_data", true);
  call.attrs = std::move(attrs);
  result.status = KernelRegistry::Global().Run("coalesce_tensor", DType::kFloat32, call);
  return result;
}

Doubles Range(const Tensor& t, int64_t begin, int64_t end) {
  const Doubles all = ToDoubles(t);
  return Doubles(all.begin() + begin, all.begin() + end);
}

TEST(CoalesceTensorKernelTest, PartsAlignToTheCpuChunkAndOutputsAreViews) {
  Coalesced r = RunKernel({});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  Tensor& fused = r.outputs[2];
  // 6 and 5 floats each round up to 4096 bytes: 1024 elements a part.
  ASSERT_EQ(fused.shape(), (std::vector<int64_t>{2048}));
  EXPECT_EQ(Range(fused, 0, 6), (Doubles{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Range(fused, 1024, 1029), (Doubles{7, 8, 9, 10, 11}));
  EXPECT_EQ(Range(fused, 6, 1024), Doubles(1018, 0.0));  // the padding is zero
  EXPECT_EQ(Range(fused, 1029, 2048), Doubles(1019, 0.0));
  EXPECT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs[1].shape(), (std::vector<int64_t>{5}));
  EXPECT_EQ(ToDoubles(r.outputs[0]), (Doubles{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ToDoubles(r.outputs[1]), (Doubles{7, 8, 9, 10, 11}));
  // Writing the fused buffer writes the outputs.
  EXPECT_TRUE(r.outputs[0].SharesStorageWith(fused));
  fused.data<float>()[5] = 60.0f;
  fused.data<float>()[1024] = 70.0f;
  EXPECT_EQ(ToDoubles(r.outputs[0]), (Doubles{1, 2, 3, 4, 5, 60}));
  EXPECT_EQ(ToDoubles(r.outputs[1]), (Doubles{70, 8, 9, 10, 11}));
}

TEST(CoalesceTensorKernelTest, AlignSizeAndUnalignedLayouts) {
  KernelAttrs aligned;
  aligned.Set("align_size", int64_t{16});
  Coalesced r = RunKernel(aligned);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  // 24 bytes round up to 32 (8 floats), 20 to 32.
  EXPECT_EQ(ToDoubles(r.outputs[2]), (Doubles{1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 0, 0, 0}));

  KernelAttrs packed;
  packed.Set("use_align", false);
  r = RunKernel(packed);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(ToDoubles(r.outputs[2]), (Doubles{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(ToDoubles(r.outputs[1]), (Doubles{7, 8, 9, 10, 11}));

  // set_constant fills the whole buffer.
  KernelAttrs constant;
  constant.Set("set_constant", true);
  constant.Set("constant", 0.5);
  constant.Set("use_align", false);
  const Tensor a = F32({1, 2}, {2});
  Tensor out0, fused;
  KernelCall call;
  call.inputs = {&a};
  call.outputs = {&out0, &fused};
  constant.Set("dtype", DType::kFloat32);
  call.attrs = constant;
  ASSERT_TRUE(KernelRegistry::Global().Run("coalesce_tensor", DType::kFloat32, call).ok());
  EXPECT_EQ(ToDoubles(out0), (Doubles{0.5, 0.5}));
}

TEST(CoalesceTensorKernelTest, MismatchedDTypeAndOutputCountAreErrors) {
  const Tensor a = F32({1, 2}, {2});
  Tensor out0, fused;
  KernelCall call;
  call.inputs = {&a};
  call.outputs = {&out0, &fused};
  call.attrs.Set("dtype", DType::kFloat64);
  EXPECT_EQ(KernelRegistry::Global().Run("coalesce_tensor", DType::kFloat64, call).message(),
            "coalesce_tensor: input[0] is float32[2], but dtype is float64");
  call.outputs = {&out0};
  call.attrs.Set("dtype", DType::kFloat32);
  EXPECT_EQ(KernelRegistry::Global().Run("coalesce_tensor", DType::kFloat32, call).message(),
            "coalesce_tensor: 1 inputs need 2 outputs (1 views and the fused buffer), 1 were "
            "given");
}

// The legacy executor: Output names Input's vars, which become views of FusedOutput; the in-place
// scale of the fused buffer (as the data-parallel pass emits it after the all-reduce) then
// doubles the gradients the fetches read.
TEST(CoalesceTensorLegacyTest, OutputsAliasTheFusedBuffer) {
  using testing::DenseVar;
  using testing::OpText;
  const std::string program = testing::OneBlock(
      DenseVar("a", "FP32", {2, 3}) + DenseVar("b", "FP32", {5}) + DenseVar("f", "FP32", {2048}) +
      testing::FeedOp("a", 0) + testing::FeedOp("b", 1) +
      OpText("coalesce_tensor", {{"Input", {"a", "b"}}},
             {{"Output", {"a", "b"}}, {"FusedOutput", {"f"}}},
             {testing::BoolAttr("copy_data", true), testing::BoolAttr("use_align", true),
              testing::IntAttr("dtype", 5), testing::IntsAttr("concated_shapes", {2, 3, 5}),
              testing::IntsAttr("concated_ranks", {2, 1})}) +
      OpText("scale", {{"X", {"f"}}}, {{"Out", {"f"}}}, {testing::FloatAttr("scale", 2.0f)}) +
      testing::FetchOp("a", 0) + testing::FetchOp("b", 1) + testing::FetchOp("f", 2));
  LegacyExecutor executor(testing::ParseTestProgram(program), {});
  ASSERT_TRUE(executor.plan_status().ok()) << executor.plan_status().ToString();
  Scope scope;
  StatusOr<std::vector<Fetch>> fetched = executor.Run(
      scope, {{"a", F32({1, 2, 3, 4, 5, 6}, {2, 3})}, {"b", F32({7, 8, 9, 10, 11}, {5})}});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->size(), 3u);
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (Doubles{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((*fetched)[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ToDoubles((*fetched)[1].tensor), (Doubles{14, 16, 18, 20, 22}));
  EXPECT_EQ(Range((*fetched)[2].tensor, 1024, 1026), (Doubles{14, 16}));
}

// The new-IR executor: pd_op.coalesce_tensor's output vector aliases fused_output, so the
// in-place scale_ of fused_output reaches the values builtin.split hands out.
TEST(CoalesceTensorPirTest, OutputsAliasTheFusedBuffer) {
  StatusOr<newir::Program> program = newir::ParseProgram(R"({
    (%0) = "builtin.parameter" () {parameter_name:"a"} : () -> tensor<2x3xf32>
    (%1) = "builtin.parameter" () {parameter_name:"b"} : () -> tensor<5xf32>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<2x3xf32>, tensor<5xf32>) -> vec[tensor<2x3xf32>,tensor<5xf32>]
    (%3, %4) = "pd_op.coalesce_tensor" (%2) {concated_ranks:[2,1],concated_shapes:[2,3,5],copy_data:true,dtype:float32,use_align:true} : (vec[tensor<2x3xf32>,tensor<5xf32>]) -> vec[tensor<2x3xf32>,tensor<5xf32>], tensor<2048xf32>
    (%5, %6) = "builtin.split" (%3) {} : (vec[tensor<2x3xf32>,tensor<5xf32>]) -> tensor<2x3xf32>, tensor<5xf32>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>
    (%8) = "pd_op.scale_" (%4, %7) {bias:0,bias_after_scale:true} : (tensor<2048xf32>, tensor<1xf32>) -> tensor<2048xf32>
    (%9) = "pd_op.fetch" (%5) {col:0,name:"a"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%10) = "pd_op.fetch" (%6) {col:1,name:"b"} : (tensor<5xf32>) -> tensor<5xf32>
})",
                                                         "t.pir");
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_TRUE(newir::VerifyProgram(*program, {.file = "t.pir"}).ok());
  Scope scope;
  scope.SetLocal("a", F32({1, 2, 3, 4, 5, 6}, {2, 3}));
  scope.SetLocal("b", F32({7, 8, 9, 10, 11}, {5}));
  PirExecutor executor(*program, {});
  StatusOr<std::vector<Fetch>> fetched = executor.Run(scope, {});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(fetched->size(), 2u);
  EXPECT_EQ(ToDoubles((*fetched)[0].tensor), (Doubles{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(ToDoubles((*fetched)[1].tensor), (Doubles{14, 16, 18, 20, 22}));
  // The parameters themselves were copied, not aliased.
  EXPECT_EQ(ToDoubles(*scope.Find("a")), (Doubles{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace irm::rt
