// The CUDA kernel registry's contents and contract checks; these need no GPU (nothing touches the
// device before a kernel runs), so they run everywhere.
#include <gtest/gtest.h>

#include <algorithm>

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
  // Integer divide waits for a device zero-divisor check.
  EXPECT_EQ(gpu.Find("divide", DType::kInt32), nullptr);
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

TEST(CudaRegistryTest, DuplicateRegistrationIsAnError) {
  CudaKernelRegistry registry;
  ASSERT_TRUE(registry.Register("k", DType::kFloat32, {}).ok());
  const Status status = registry.Register("k", DType::kFloat32, {});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "gpu kernel k for float32 is registered twice");
}

}  // namespace
}  // namespace irm::rt::cuda
