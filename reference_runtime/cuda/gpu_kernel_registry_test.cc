// The `--device gpu` kernel registry's contents and refusals. These need no GPU: the entries and
// the refusals touch no device, and where no GPU is visible a staged kernel's first copy to the
// device is a CUDA error, which must come back as a Status naming the kernel (never an abort).
#include "reference_runtime/cuda/gpu_kernel_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/program_file.h"

namespace irm::rt::cuda {
namespace {

TEST(CudaStagedRegistryTest, EveryCpuKernelIsStagedOrRefused) {
  const KernelRegistry& cpu = KernelRegistry::Global();
  const GpuKernelCoverage& coverage = GpuCoverage();
  size_t cpu_kernels = 0;
  for (const std::string& name : cpu.Names())
    cpu_kernels += cpu.DTypesOf(name, Device::kCpu).size();
  EXPECT_EQ(coverage.staged.size() + coverage.refused.size(), cpu_kernels);
  // Staged exactly where the CUDA registry has the twin.
  for (const auto& [name, dtype] : coverage.staged) {
    EXPECT_NE(CudaKernelRegistry::Global().Find(name, dtype), nullptr) << name;
  }
  for (const auto& [name, dtype] : coverage.refused) {
    EXPECT_EQ(CudaKernelRegistry::Global().Find(name, dtype), nullptr) << name;
  }
  std::cout << coverage.staged.size() << " CPU kernels (name, dtype) staged on the GPU, "
            << coverage.refused.size() << " refused\n";
}

TEST(CudaStagedRegistryTest, EntriesHaveTheCpuNamesDTypesAndSignatures) {
  StatusOr<std::unique_ptr<KernelRegistry>> gpu = MakeGpuKernelRegistryUnchecked();
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  const KernelRegistry& cpu = KernelRegistry::Global();
  EXPECT_EQ((*gpu)->Names(), cpu.Names());
  for (const std::string& name : cpu.Names()) {
    ASSERT_EQ((*gpu)->DTypesOf(name, Device::kCpu), cpu.DTypesOf(name, Device::kCpu)) << name;
    for (DType dtype : cpu.DTypesOf(name, Device::kCpu)) {
      const KernelSignature& want = cpu.Find(name, dtype, Device::kCpu)->signature;
      const KernelSignature& got = (*gpu)->Find(name, dtype, Device::kCpu)->signature;
      EXPECT_EQ(got.min_inputs, want.min_inputs) << name;
      EXPECT_EQ(got.max_inputs, want.max_inputs) << name;
      EXPECT_EQ(got.num_outputs, want.num_outputs) << name;
      // Not the CPU's function: nothing runs on the CPU behind the device's back.
      EXPECT_NE((*gpu)->Find(name, dtype, Device::kCpu)->fn,
                cpu.Find(name, dtype, Device::kCpu)->fn)
          << name;
    }
  }
}

TEST(CudaStagedRegistryTest, AKernelWithoutADeviceTwinIsRefusedByName) {
  StatusOr<std::unique_ptr<KernelRegistry>> gpu = MakeGpuKernelRegistryUnchecked();
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  // rpn_target_assign has no twin: both runtimes refuse to run it (kernels/detection.cc).
  ASSERT_EQ(CudaKernelRegistry::Global().Find("rpn_target_assign", DType::kFloat32), nullptr);
  Tensor anchor = Tensor::ZerosUnchecked(DType::kFloat32, {8, 4});
  Tensor out;
  KernelCall call;
  call.inputs = {&anchor, &anchor, &anchor, &anchor};
  call.outputs = {&out, nullptr, nullptr, nullptr, nullptr};
  Status status = (*gpu)->Run("rpn_target_assign", DType::kFloat32, call);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), "no GPU kernel for 'rpn_target_assign' yet");
  EXPECT_FALSE(out.defined());
  // coalesce_tensor has none either (its outputs are views of one buffer, which staging cannot
  // hand back): refused by name, for each of its dtypes.
  ASSERT_TRUE(CudaKernelRegistry::Global().DTypesOf("coalesce_tensor").empty());
  Tensor a = Tensor::ZerosUnchecked(DType::kFloat32, {2});
  call.inputs = {&a};
  call.outputs = {&out, nullptr};
  for (DType dtype : KernelRegistry::Global().DTypesOf("coalesce_tensor", Device::kCpu)) {
    status = (*gpu)->Run("coalesce_tensor", dtype, call);
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << DTypeName(dtype);
    EXPECT_EQ(status.message(), "no GPU kernel for 'coalesce_tensor' yet") << DTypeName(dtype);
  }
  EXPECT_FALSE(out.defined());
}

// No twin lacks a dtype its CPU kernel has any more (integer divide was the last): each kernel is
// staged for every CPU dtype or refused for all, so the refusal that names the dtypes the GPU has
// ("no GPU kernel for 'k' on int32 yet (the GPU has it for ...)") has no real example left.
TEST(CudaStagedRegistryTest, EveryTwinHasEveryCpuDType) {
  const GpuKernelCoverage& coverage = GpuCoverage();
  for (const auto& [name, dtype] : coverage.refused) {
    EXPECT_TRUE(CudaKernelRegistry::Global().DTypesOf(name).empty())
        << name << " is staged for some dtypes but not " << DTypeName(dtype);
  }
  for (const auto& kernel : {std::pair<std::string, DType>{"divide", DType::kInt32},
                             {"divide", DType::kInt64},
                             {"generate_proposals", DType::kFloat32},
                             {"generate_proposals", DType::kFloat64}}) {
    EXPECT_NE(std::find(coverage.staged.begin(), coverage.staged.end(), kernel),
              coverage.staged.end())
        << kernel.first << " " << DTypeName(kernel.second);
  }
}

TEST(CudaStagedRegistryTest, TheExecutorLocatesARefusalAtTheOp) {
  StatusOr<std::unique_ptr<KernelRegistry>> gpu = MakeGpuKernelRegistryUnchecked();
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ExecutorOptions options;
  options.kernels = gpu->get();
  // A feed, then rpn_target_assign (no device twin: both runtimes refuse to run it).
  const std::string path = ::testing::TempDir() + "gpu_refusal_rpn_target_assign.prototxt";
  {
    std::ofstream file(path);
    file << R"(blocks {
  idx: 0
  parent_idx: -1
  vars { name: "feed" type { type: FEED_MINIBATCH } persistable: true }
  vars { name: "anchor" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 8 dims: 4 } } } need_check_feed: true }
  vars { name: "gt" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 2 dims: 4 } } } persistable: true }
  vars { name: "crowd" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: INT32 dims: 2 } } } persistable: true }
  vars { name: "im_info" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 1 dims: 3 } } } persistable: true }
  vars { name: "loc" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: INT32 dims: -1 } } } }
  vars { name: "score" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: INT32 dims: -1 } } } }
  vars { name: "tbox" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: -1 dims: 4 } } } }
  vars { name: "tlabel" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: INT32 dims: -1 dims: 1 } } } }
  vars { name: "inw" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: -1 dims: 4 } } } }
  ops { type: "feed" inputs { parameter: "X" arguments: "feed" } outputs { parameter: "Out" arguments: "anchor" } attrs { name: "col" type: INT i: 0 } }
  ops {
    type: "rpn_target_assign"
    inputs { parameter: "Anchor" arguments: "anchor" }
    inputs { parameter: "GtBoxes" arguments: "gt" }
    inputs { parameter: "IsCrowd" arguments: "crowd" }
    inputs { parameter: "ImInfo" arguments: "im_info" }
    outputs { parameter: "LocationIndex" arguments: "loc" }
    outputs { parameter: "ScoreIndex" arguments: "score" }
    outputs { parameter: "TargetBBox" arguments: "tbox" }
    outputs { parameter: "TargetLabel" arguments: "tlabel" }
    outputs { parameter: "BBoxInsideWeight" arguments: "inw" }
    attrs { name: "use_random" type: BOOLEAN b: true }
  }
}
)";
  }
  StatusOr<LoadedProgram> program = LoadProgramForRun(path, options);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  Scope scope;
  scope.Set("gt", Tensor::ZerosUnchecked(DType::kFloat32, {2, 4}));
  scope.Set("crowd", Tensor::ZerosUnchecked(DType::kInt32, {2}));
  scope.Set("im_info", Tensor::ZerosUnchecked(DType::kFloat32, {1, 3}));
  FeedMap feeds;
  feeds.emplace("anchor", Tensor::ZerosUnchecked(DType::kFloat32, {8, 4}));
  StatusOr<std::vector<Fetch>> ran = program->executor->Run(scope, feeds);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), StatusCode::kUnimplemented);
  const std::string rendered = ran.status().ToString();
  EXPECT_NE(rendered.find("op 1 (rpn_target_assign)"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("no GPU kernel for 'rpn_target_assign' yet"), std::string::npos)
      << rendered;
  EXPECT_EQ(scope.Find("loc"), nullptr);
}

// Where no GPU is visible the registry is refused up front, and a staged kernel reached anyway
// fails at its first device copy with a Status naming it (kInternal: the CLI's exit 3).
TEST(CudaStagedRegistryTest, WithoutAGpuTheRegistryIsRefusedAndCudaErrorsAreStatuses) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible: this checks the GPU-less path";
  StatusOr<std::unique_ptr<KernelRegistry>> refused = MakeGpuKernelRegistry();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInternal);
  EXPECT_EQ(refused.status().message(), "no GPU can be used: " + NoGpuReason());

  StatusOr<std::unique_ptr<KernelRegistry>> gpu = MakeGpuKernelRegistryUnchecked();
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Tensor x = Tensor::FromVector<float>({1, 2}, {2});
  Tensor out;
  KernelCall call;
  call.inputs = {&x, &x};
  call.outputs = {&out};
  Status status = (*gpu)->Run("add", DType::kFloat32, call);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message().rfind("gpu: add: ", 0), 0u) << status.message();
  EXPECT_FALSE(out.defined());
}

}  // namespace
}  // namespace irm::rt::cuda
