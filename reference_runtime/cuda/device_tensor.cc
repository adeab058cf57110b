// Device tensors: storage from the caching allocator, zero-fill and host copies (device_tensor.h).
#include "reference_runtime/cuda/device_tensor.h"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <utility>

#include "common/host_tensor.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_allocator.h"

namespace irm::rt::cuda {

cudaStream_t Stream() { return nullptr; }  // the legacy default stream (header comment)

StatusOr<Elem> ElemOf(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return Elem::kBool;
    case DType::kInt8:
      return Elem::kInt8;
    case DType::kUInt8:
      return Elem::kUInt8;
    case DType::kInt16:
      return Elem::kInt16;
    case DType::kInt32:
      return Elem::kInt32;
    case DType::kInt64:
      return Elem::kInt64;
    case DType::kFloat16:
      return Elem::kFloat16;
    case DType::kBFloat16:
      return Elem::kBFloat16;
    case DType::kFloat32:
      return Elem::kFloat32;
    case DType::kFloat64:
      return Elem::kFloat64;
    default:
      return Status(StatusCode::kInvalid, Location{},
                    fmt::format("dtype {} has no GPU kernels", DTypeName(dtype)));
  }
}

namespace {
std::atomic<uint64_t> copies_to_device{0};
std::atomic<uint64_t> bytes_to_device{0};
std::atomic<uint64_t> copies_to_host{0};
std::atomic<uint64_t> bytes_to_host{0};

void CountToDevice(size_t bytes) {
  copies_to_device.fetch_add(1, std::memory_order_relaxed);
  bytes_to_device.fetch_add(bytes, std::memory_order_relaxed);
}
void CountToHost(size_t bytes) {
  copies_to_host.fetch_add(1, std::memory_order_relaxed);
  bytes_to_host.fetch_add(bytes, std::memory_order_relaxed);
}

// Host <-> device copies on the backend's stream, waited for (the host buffer may go right after).
Status CopyAndWait(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                   std::string_view op) {
  const char* what = kind == cudaMemcpyHostToDevice ? "copying to the gpu" : "copying from the gpu";
  IRM_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(dst, src, bytes, kind, Stream()), op, what));
  IRM_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(Stream()), op, what));
  if (kind == cudaMemcpyHostToDevice) {
    CountToDevice(bytes);
  } else {
    CountToHost(bytes);
  }
  return Status::Ok();
}
}  // namespace

// Owns its block (freed to the cache) unless `owner` is set: then it is a view kept valid by it.
struct DeviceTensor::Storage {
  explicit Storage(void* b) : bytes(static_cast<std::byte*>(b)) {}
  Storage(const void* b, std::shared_ptr<const void> o)
      : bytes(static_cast<std::byte*>(const_cast<void*>(b))), owner(std::move(o)) {}
  ~Storage() {
    if (owner == nullptr) DeviceAllocator::Global().Free(bytes);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* bytes;
  std::shared_ptr<const void> owner;
};

StatusOr<DeviceTensor> DeviceTensor::Uninitialized(DType dtype, std::vector<int64_t> shape,
                                                   std::string_view op) {
  IRM_RETURN_IF_ERROR(ElemOf(dtype).status());
  const std::optional<uint64_t> bytes = CheckedByteSize(shape, DTypeSize(dtype));
  if (!bytes.has_value()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("gpu: {}: shape {} is not a valid tensor shape (a negative dim, or "
                              "too large)",
                              op, ShapeToString(shape)));
  }
  IRM_ASSIGN_OR_RETURN(void* block,
                       DeviceAllocator::Global().Allocate(static_cast<size_t>(*bytes), op));
  DeviceTensor t;
  t.dtype_ = dtype;
  t.numel_ = 1;
  for (int64_t d : shape) t.numel_ *= d;
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<Storage>(block);
  return t;
}

StatusOr<DeviceTensor> DeviceTensor::Zeros(DType dtype, std::vector<int64_t> shape,
                                           std::string_view op) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor t, Uninitialized(dtype, std::move(shape), op));
  IRM_RETURN_IF_ERROR(
      CudaStatus(cudaMemsetAsync(t.raw(), 0, t.nbytes(), Stream()), op, "zero-filling"));
  return t;
}

StatusOr<DeviceTensor> DeviceTensor::FromHost(const Tensor& host, std::string_view op) {
  if (!host.defined()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("gpu: {}: the host tensor is undefined", op));
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor t, Uninitialized(host.dtype(), host.shape(), op));
  IRM_RETURN_IF_ERROR(CopyAndWait(t.raw(), host.raw(), t.nbytes(), cudaMemcpyHostToDevice, op));
  return t;
}

StatusOr<Tensor> DeviceTensor::ToHost(std::string_view op) const {
  if (!defined()) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("gpu: {}: the device tensor is undefined", op));
  }
  IRM_ASSIGN_OR_RETURN(Tensor host, Tensor::Zeros(dtype_, shape_));
  IRM_RETURN_IF_ERROR(CopyAndWait(host.raw(), raw(), nbytes(), cudaMemcpyDeviceToHost, op));
  return host;
}

DeviceTensor DeviceTensor::View(DType dtype, std::vector<int64_t> shape, const void* data,
                                std::shared_ptr<const void> owner) {
  DeviceTensor t;
  t.dtype_ = dtype;
  t.numel_ = 1;
  for (int64_t d : shape) t.numel_ *= d;
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<Storage>(data, std::move(owner));
  return t;
}

const void* DeviceTensor::raw() const {
  return storage_ != nullptr ? storage_->bytes + offset_ : nullptr;
}
void* DeviceTensor::raw() { return storage_ != nullptr ? storage_->bytes + offset_ : nullptr; }

StatusOr<DeviceTensor> DeviceTensor::Reshaped(std::vector<int64_t> shape) const {
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return Status(StatusCode::kInvalid, Location{},
                    fmt::format("cannot reshape {} to {}", Describe(), ShapeToString(shape)));
    }
    numel *= d;
  }
  if (numel != numel_) {
    return Status(StatusCode::kInvalid, Location{},
                  fmt::format("cannot reshape {} to {}: {} elements, not {}", Describe(),
                              ShapeToString(shape), numel_, numel));
  }
  DeviceTensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

std::string DeviceTensor::Describe() const {
  return fmt::format("{}{} on gpu", DTypeName(dtype_), ShapeToString(shape_));
}

Status DeviceTensorMirror::CopyToHost(void* dst, size_t bytes) const {
  if (bytes == 0) return Status::Ok();
  return CopyAndWait(dst, tensor_.raw(), bytes, cudaMemcpyDeviceToHost, "to_cpu");
}

Status DeviceTensorMirror::CopyFromHost(const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  return CopyAndWait(tensor_.raw(), src, bytes, cudaMemcpyHostToDevice, "to_gpu");
}

StatusOr<std::unique_ptr<DeviceMirror>> MakeDeviceMirror(size_t bytes, std::string_view op) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor block, DeviceTensor::Uninitialized(
                                               DType::kUInt8, {static_cast<int64_t>(bytes)}, op));
  return std::unique_ptr<DeviceMirror>(std::make_unique<DeviceTensorMirror>(std::move(block)));
}

HostDeviceCopies CountedHostDeviceCopies() {
  HostDeviceCopies c;
  c.to_device = copies_to_device.load(std::memory_order_relaxed);
  c.to_device_bytes = bytes_to_device.load(std::memory_order_relaxed);
  c.to_host = copies_to_host.load(std::memory_order_relaxed);
  c.to_host_bytes = bytes_to_host.load(std::memory_order_relaxed);
  return c;
}

}  // namespace irm::rt::cuda
