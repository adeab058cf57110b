// Device tensors: host round trips, zero fill, views, and CUDA errors as Status (out of memory
// names the op). Skipped where no GPU is visible, except the test of that case itself.
#include "reference_runtime/cuda/device_tensor.h"

#include <gtest/gtest.h>

#include "reference_runtime/cuda/device_allocator.h"
#include "reference_runtime/cuda/gpu_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt::cuda {
namespace {

TEST(CudaNoGpuTest, AllocationWithoutAGpuIsAStatusNamingTheOp) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible: this checks the case of none";
  StatusOr<DeviceTensor> t = DeviceTensor::Zeros(DType::kFloat32, {4}, "my_op");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("gpu: my_op:"), std::string::npos) << t.status().message();
  EXPECT_FALSE(NoGpuReason().empty());
}

TEST(GpuDeviceTensorTest, RoundTripsEveryDType) {
  IRM_REQUIRE_GPU();
  for (DType dtype :
       {DType::kBool, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32, DType::kInt64,
        DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor host = rt::testing::RandomTensor(dtype, {3, 5}, 7, -100, 100);
    StatusOr<DeviceTensor> device = DeviceTensor::FromHost(host);
    ASSERT_TRUE(device.ok()) << device.status().message();
    EXPECT_EQ(device->shape(), host.shape());
    StatusOr<Tensor> back = device->ToHost();
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(back->BitwiseEqual(host));
  }
}

TEST(GpuDeviceTensorTest, ZerosAreZeroAndReshapeSharesStorage) {
  IRM_REQUIRE_GPU();
  // A block from the cache held other bytes before: Zeros must clear them.
  {
    StatusOr<DeviceTensor> dirty =
        DeviceTensor::FromHost(rt::testing::RandomTensor(DType::kFloat32, {64}, 1, 1, 2));
    ASSERT_TRUE(dirty.ok());
  }
  StatusOr<DeviceTensor> zeros = DeviceTensor::Zeros(DType::kFloat32, {8, 8}, "test");
  ASSERT_TRUE(zeros.ok()) << zeros.status().message();
  StatusOr<Tensor> host = zeros->ToHost();
  ASSERT_TRUE(host.ok());
  for (double v : rt::testing::ToDoubles(*host)) ASSERT_EQ(v, 0.0);
  StatusOr<DeviceTensor> flat = zeros->Reshaped({64});
  ASSERT_TRUE(flat.ok());
  EXPECT_TRUE(flat->SharesStorageWith(*zeros));
  EXPECT_FALSE(zeros->Reshaped({63}).ok());
}

TEST(GpuDeviceTensorTest, OutOfMemoryIsAStatusNamingTheOp) {
  IRM_REQUIRE_GPU();
  // 2^50 bytes (1 PiB): more than any GPU holds.
  StatusOr<DeviceTensor> huge = DeviceTensor::Zeros(DType::kFloat32, {int64_t{1} << 48}, "my_op");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInternal);
  EXPECT_NE(huge.status().message().find("gpu: my_op: out of memory"), std::string::npos)
      << huge.status().message();
  // The device is still usable afterwards.
  EXPECT_TRUE(DeviceTensor::Zeros(DType::kFloat32, {16}, "after").ok());
}

TEST(GpuDeviceTensorTest, FreedBlocksAreReused) {
  IRM_REQUIRE_GPU();
  DeviceAllocator& allocator = DeviceAllocator::Global();
  const void* first = nullptr;
  {
    StatusOr<DeviceTensor> t = DeviceTensor::Zeros(DType::kFloat32, {1000}, "test");
    ASSERT_TRUE(t.ok());
    first = t->raw();
  }
  EXPECT_GE(allocator.cached_bytes(), DeviceAllocator::RoundedSize(4000));
  StatusOr<DeviceTensor> again = DeviceTensor::Zeros(DType::kFloat32, {1000}, "test");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->raw(), first);
}

}  // namespace
}  // namespace irm::rt::cuda
