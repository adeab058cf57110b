// The CUDA kernel registry's contents and contract checks; these need no GPU (nothing touches the
// device before a kernel runs), so they run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/kernel.h"

namespace irm::rt::cuda {
namespace {

TEST(CudaRegistryTest, HasTheFirstKernelsUnderTheCpuNames) {
  const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
  const KernelRegistry& cpu = KernelRegistry::Global();
  for (const char* name :
       {"add", "subtract", "multiply", "divide", "add_grad", "subtract_grad", "multiply_grad",
        "divide_grad", "scale", "full", "full_like", "cast", "sum", "mean", "softmax", "matmul"}) {
    SCOPED_TRACE(name);
    const std::vector<DType> gpu_dtypes = gpu.DTypesOf(name);
    ASSERT_FALSE(gpu_dtypes.empty());
    // Every GPU kernel has a CPU twin of the same name and dtype (the same contract).
    for (DType dtype : gpu_dtypes) {
      EXPECT_NE(cpu.Find(name, dtype, Device::kCpu), nullptr) << DTypeName(dtype);
      EXPECT_EQ(gpu.Find(name, dtype)->signature.num_outputs,
                cpu.Find(name, dtype, Device::kCpu)->signature.num_outputs);
    }
  }
  // Integer divide too (elementwise_more_kernels.cc: zero divisors found on the device).
  EXPECT_EQ(gpu.DTypesOf("divide"), cpu.DTypesOf("divide", Device::kCpu));
  EXPECT_NE(gpu.Find("add", DType::kInt64), nullptr);
  EXPECT_EQ(gpu.DTypesOf("cast").size(), 10u);
}

TEST(CudaRegistryTest, UnknownKernelAndDTypeAreErrors) {
  CudaKernelCall call;
  Status status = CudaKernelRegistry::Global().Run("no_such_kernel", DType::kFloat32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "no gpu kernel 'no_such_kernel'");
  status = CudaKernelRegistry::Global().Run("softmax", DType::kInt32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "gpu kernel 'softmax' has no int32 version (it has float16, bfloat16, float32, "
            "float64)");
  // A twin registered for some dtypes only (none of the real ones is, since integer divide
  // joined): the dtypes it has.
  CudaKernelRegistry partial;
  CudaKernelFn ok = [](CudaKernelCall&) { return Status::Ok(); };
  ASSERT_TRUE(partial.Register("k", DType::kInt64, {ok, {0, 0, 0}}).ok());
  ASSERT_TRUE(partial.Register("k", DType::kFloat32, {ok, {0, 0, 0}}).ok());
  EXPECT_TRUE(partial.Run("k", DType::kFloat32, call).ok());
  status = partial.Run("k", DType::kInt32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel 'k' has no int32 version (it has int64, float32)");
}

TEST(CudaRegistryTest, SignatureIsCheckedBeforeTheKernelRuns) {
  CudaKernelCall call;  // no inputs, no outputs: add needs 2 and 1
  Status status = CudaKernelRegistry::Global().Run("add", DType::kFloat32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel 'add' takes 2 to 2 inputs, got 0");
  DeviceTensor undefined;
  call.inputs = {&undefined, &undefined};
  status = CudaKernelRegistry::Global().Run("add", DType::kFloat32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel 'add': input 0 is missing");
}

TEST(CudaRegistryTest, OnlyDeclaredInputsBelowTheMinimumMayBeAbsent) {
  // As the CPU registry: an optional operand in the middle (adam's moment2_max, layer_norm_grad's
  // scale and bias) may be null; any other absent input below min_inputs is missing.
  CudaKernelRegistry registry;
  CudaKernelFn ok = [](CudaKernelCall&) { return Status::Ok(); };
  ASSERT_TRUE(registry.Register("k", DType::kFloat32, {ok, {2, 2, 1}}).ok());
  CudaKernelCall call;
  call.inputs = {nullptr, nullptr};
  call.outputs = {nullptr};
  Status status = registry.Run("k", DType::kFloat32, call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel 'k': input 0 is missing");
  registry.AllowAbsentInputs("k", {0, 1});
  EXPECT_TRUE(registry.Run("k", DType::kFloat32, call).ok());
}

TEST(CudaRegistryTest, DuplicateRegistrationIsAnError) {
  CudaKernelRegistry registry;
  ASSERT_TRUE(registry.Register("k", DType::kFloat32, {}).ok());
  const Status status = registry.Register("k", DType::kFloat32, {});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel k for float32 is registered twice");
}

// The kernels the zoo gpt's training programs bind (oldir/models/gpt.cc with AdamW, SGD or
// momentum; the legacy and PIR binding tables, legacy_bindings.cc and pir_bindings.cc, name them):
// startup (full, uniform, assign_value), forward, backward and the optimizers.
constexpr const char* kGptTrainingKernels[] = {
    "full",
    "full_int_array",
    "assign_value",
    "uniform",
    "embedding",
    "embedding_grad",
    "add",
    "add_grad",
    "add_n",
    "scale",
    "triu",
    "layer_norm",
    "layer_norm_grad",
    "matmul",
    "matmul_grad",
    "reshape",
    "reshape_grad",
    "transpose",
    "transpose_grad",
    "softmax",
    "softmax_grad",
    "gelu",
    "gelu_grad",
    "dropout",
    "dropout_grad",
    "cross_entropy_with_softmax",
    "cross_entropy_with_softmax_grad",
    "mean_all",
    "mean_all_grad",
    "sgd",
    "momentum",
    "adamw",
    "adam",
};

TEST(CudaRegistryTest, EveryGptTrainingKernelHasADeviceTwinWithTheCpuContract) {
  const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
  const KernelRegistry& cpu = KernelRegistry::Global();
  for (const char* name : kGptTrainingKernels) {
    SCOPED_TRACE(name);
    const std::vector<DType> cpu_dtypes = cpu.DTypesOf(name, Device::kCpu);
    ASSERT_FALSE(cpu_dtypes.empty()) << "no CPU kernel";
    for (DType dtype : cpu_dtypes) {
      if (dtype == DType::kComplex64 || dtype == DType::kComplex128) continue;  // no device dtype
      const CudaKernelEntry* g = gpu.Find(name, dtype);
      ASSERT_NE(g, nullptr) << "no gpu kernel for " << DTypeName(dtype);
      const KernelSignature& c = cpu.Find(name, dtype, Device::kCpu)->signature;
      EXPECT_EQ(g->signature.min_inputs, c.min_inputs) << DTypeName(dtype);
      EXPECT_EQ(g->signature.max_inputs, c.max_inputs) << DTypeName(dtype);
      EXPECT_EQ(g->signature.num_outputs, c.num_outputs) << DTypeName(dtype);
    }
    // No device kernel the CPU lacks.
    for (DType dtype : gpu.DTypesOf(name)) {
      EXPECT_NE(cpu.Find(name, dtype, Device::kCpu), nullptr) << DTypeName(dtype);
    }
  }
}

TEST(CudaRegistryTest, EveryDeviceKernelHasACpuTwin) {
  const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
  const KernelRegistry& cpu = KernelRegistry::Global();
  for (const std::string& name : gpu.Names()) {
    for (DType dtype : gpu.DTypesOf(name)) {
      const KernelEntry* twin = cpu.Find(name, dtype, Device::kCpu);
      ASSERT_NE(twin, nullptr) << name << " " << DTypeName(dtype);
      EXPECT_EQ(gpu.Find(name, dtype)->signature.num_outputs, twin->signature.num_outputs) << name;
    }
  }
}

// Coverage made visible, never failing: the CPU kernels with no device twin yet, and those whose
// twin lacks some of the CPU's dtypes.
TEST(CudaRegistryTest, PrintsTheCpuKernelsWithoutADeviceTwin) {
  const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
  const KernelRegistry& cpu = KernelRegistry::Global();
  std::vector<std::string> missing, partial;
  size_t covered = 0;
  for (const std::string& name : cpu.Names()) {
    const std::vector<DType> cpu_dtypes = cpu.DTypesOf(name, Device::kCpu);
    if (cpu_dtypes.empty()) continue;  // a kernel of another device only
    const std::vector<DType> gpu_dtypes = gpu.DTypesOf(name);
    if (gpu_dtypes.empty()) {
      missing.push_back(name);
      continue;
    }
    ++covered;
    std::vector<std::string> lacking;
    for (DType dtype : cpu_dtypes) {
      if (dtype == DType::kComplex64 || dtype == DType::kComplex128) continue;
      if (gpu.Find(name, dtype) == nullptr) lacking.emplace_back(DTypeName(dtype));
    }
    if (!lacking.empty()) {
      std::string line = name + " (not ";
      for (size_t i = 0; i < lacking.size(); ++i) line += (i > 0 ? ", " : "") + lacking[i];
      partial.push_back(line + ")");
    }
  }
  std::cout << "[ coverage ] " << covered << " of " << covered + missing.size()
            << " CPU kernels have a device twin\n[ coverage ] no device twin yet ("
            << missing.size() << "):";
  for (const std::string& name : missing) std::cout << " " << name;
  std::cout << "\n[ coverage ] device twin lacks dtypes (" << partial.size() << "):";
  for (const std::string& line : partial) std::cout << " " << line << ";";
  std::cout << "\n";
  EXPECT_GT(covered, 0u);
}

}  // namespace
}  // namespace irm::rt::cuda
