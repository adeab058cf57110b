// DeviceTensor: a tensor in GPU memory — a dtype, a shape and a view (byte offset) into shared
// device storage from the caching allocator (device_allocator.h), or a view of a host Tensor's
// device mirror (tensor.h, device_mirror.h) that a kernel reads. DeviceTensorMirror is the mirror
// the CUDA backend gives a Tensor: kernel outputs stay on the device as Tensors that way
// (gpu_kernel_registry.h). Copies to and from host Tensors are synchronous and counted. All
// device work of the backend runs on one stream (Stream()): the legacy default stream, which
// orders every launch and copy of every thread, so a block the cache hands out again is never
// still read by an earlier kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/device_mirror.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::cuda {

// The stream every launch and copy of the backend uses.
cudaStream_t Stream();

// The launch.h element type of a runtime dtype (complex dtypes have none: an error).
StatusOr<Elem> ElemOf(DType dtype);

class DeviceTensor {
 public:
  DeviceTensor() = default;  // undefined

  // A zero-filled tensor; `op` names who asks, for an out-of-memory diagnostic.
  static StatusOr<DeviceTensor> Zeros(DType dtype, std::vector<int64_t> shape, std::string_view op);
  // A tensor whose every element the caller (a kernel) writes before anyone reads it.
  static StatusOr<DeviceTensor> Uninitialized(DType dtype, std::vector<int64_t> shape,
                                              std::string_view op);
  // A device copy of a host tensor.
  static StatusOr<DeviceTensor> FromHost(const Tensor& host, std::string_view op = "to_gpu");
  // A host copy (waits for the device work that writes this tensor).
  StatusOr<Tensor> ToHost(std::string_view op = "to_cpu") const;
  // A view of device memory this tensor does not own: `data` stays valid while `owner` lives, and
  // the view (and every tensor sharing its storage: a kernel's reshaped output) keeps `owner`
  // alive. Kernels never write their inputs, so a view of a Tensor's immutable mirror is safe.
  static DeviceTensor View(DType dtype, std::vector<int64_t> shape, const void* data,
                           std::shared_ptr<const void> owner);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }

  const void* raw() const;
  void* raw();

  // The same elements under another shape (same numel), sharing storage.
  StatusOr<DeviceTensor> Reshaped(std::vector<int64_t> shape) const;
  bool SharesStorageWith(const DeviceTensor& other) const { return storage_ == other.storage_; }
  // "float32[2, 3] on gpu".
  std::string Describe() const;

 private:
  struct Storage;
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  size_t offset_ = 0;
  std::shared_ptr<Storage> storage_;
};

// The device copy of a Tensor's storage (device_mirror.h): a DeviceTensor whose bytes are the
// storage's, freed (back to the cache) with the last tensor sharing them.
class DeviceTensorMirror final : public DeviceMirror {
 public:
  explicit DeviceTensorMirror(DeviceTensor tensor) : tensor_(std::move(tensor)) {}
  const void* data() const override { return tensor_.raw(); }
  size_t size() const override { return tensor_.nbytes(); }
  Status CopyToHost(void* dst, size_t bytes) const override;
  Status CopyFromHost(const void* src, size_t bytes) override;

 private:
  DeviceTensor tensor_;
};

// An uninitialised mirror of `bytes` bytes from the caching allocator, for
// Tensor::UploadToDevice; `op` names who asks, for an out-of-memory diagnostic.
StatusOr<std::unique_ptr<DeviceMirror>> MakeDeviceMirror(size_t bytes, std::string_view op);

// Host <-> device copies of whole tensors since the process started (DeviceTensor::FromHost and
// ToHost, mirror uploads and copies back): what residency saves, counted for tests and benchmarks.
struct HostDeviceCopies {
  uint64_t to_device = 0;
  uint64_t to_device_bytes = 0;
  uint64_t to_host = 0;
  uint64_t to_host_bytes = 0;
};
HostDeviceCopies CountedHostDeviceCopies();

}  // namespace irm::rt::cuda
