// Tensor: the runtime's compute tensor — a dtype, a shape and a view (byte offset) into shared,
// contiguous, 64-byte aligned storage on a device. Views share storage: a micro-batch slice along
// dim 0 or a reshape costs no copy. New tensors are zero-filled, so that no uninitialised byte can
// ever reach an output and break determinism. HostTensor (common/) is the file-exchange form.
//
// Device residency (`--device gpu`): a storage may also hold a DeviceMirror (device_mirror.h), a
// copy of its bytes in device memory, so that tensors stay on the device between kernels while
// every host reader still sees the right bytes. A storage is in one of three states: host only,
// both current, device only (a kernel output: no host bytes until something reads them). raw() and
// data() first make the host bytes current (allocated lazily, one copy back, under the storage's
// mutex: ranks run on threads); the non-const ones then drop the mirror, since the host may write.
// On the CPU path the cost is one well-predicted branch per access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/host_tensor.h"
#include "common/status.h"
#include "reference_runtime/device_mirror.h"
#include "reference_runtime/half.h"

namespace irm::rt {

enum class Device : uint8_t { kCpu, kCuda };
const char* DeviceName(Device device);

// The C++ element type of a dtype, and back.
template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<bool>() {
  return DType::kBool;
}
template <>
constexpr DType DTypeOf<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType DTypeOf<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType DTypeOf<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType DTypeOf<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType DTypeOf<Float16>() {
  return DType::kFloat16;
}
template <>
constexpr DType DTypeOf<BFloat16>() {
  return DType::kBFloat16;
}
template <>
constexpr DType DTypeOf<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kFloat64;
}

// The dtypes the runtime computes with (complex ones are file formats only).
bool IsRuntimeDType(DType dtype);
bool IsFloatingDType(DType dtype);  // float16, bfloat16, float32, float64

class Tensor {
 public:
  Tensor() = default;  // undefined: no dtype, no storage

  // A zero-filled tensor. Shapes are checked (no negative dim, no overflow).
  static StatusOr<Tensor> Zeros(DType dtype, std::vector<int64_t> shape,
                                Device device = Device::kCpu);
  // For shapes a kernel computed from valid inputs: aborts on a negative dim (a kernel bug).
  static Tensor ZerosUnchecked(DType dtype, std::vector<int64_t> shape);
  static StatusOr<Tensor> FromHost(const HostTensor& host);
  // A tensor of T holding values in C order (tests and small constants; values.size() should be
  // the shape's numel: extra values are ignored, missing ones are zero).
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, std::vector<int64_t> shape);

  HostTensor ToHost() const;

  // A tensor whose bytes are on the device only (a device kernel's output): `mirror` holds at least
  // the shape's bytes; the host bytes are allocated and copied back when first read.
  static StatusOr<Tensor> OnDevice(DType dtype, std::vector<int64_t> shape,
                                   std::unique_ptr<DeviceMirror> mirror);
  // The storage's device copy, null when there is none. A mirror is always current: a host write
  // drops it (device_mirror.h); the returned reference keeps it alive for a kernel reading it.
  std::shared_ptr<const DeviceMirror> device_mirror() const;
  bool device_current() const;
  // Whether the host bytes are current (reading them costs no copy); for tests and counters.
  bool host_current() const;
  // Where this view starts in its storage (and so in the storage's device mirror).
  size_t byte_offset() const { return offset_; }
  // Makes the device copy current: the whole storage is uploaded once into a mirror `make`
  // allocates, so the other views of the storage (micro-batch slices) reuse that upload. Nothing
  // to do when the device copy is current.
  Status UploadToDevice(const DeviceMirrorMaker& make) const;
  // Makes the host bytes current, returning a failed copy back as a Status (raw(), which cannot,
  // gives zeros and leaves it as the pending device fault: device_fault.h).
  Status SyncToHost() const;
  // Overwrites this view's bytes with `src`'s (same nbytes; the views may overlap): the executors'
  // in-place writes. When both views span their whole storage and `src` has a device copy, this
  // storage takes that (immutable) mirror instead: no copy on either side.
  void CopyBytesFrom(const Tensor& src);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_[static_cast<size_t>(axis)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }

  const void* raw() const;
  void* raw();
  // The elements as T; T must be the dtype's element type (checked in debug builds only: the
  // kernel registry already dispatched on the dtype).
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw());
  }

  // Rows [begin, end) of dim 0, sharing storage (micro-batch slices).
  StatusOr<Tensor> Slice(int64_t begin, int64_t end) const;
  // The same elements under another shape (same numel), sharing storage.
  StatusOr<Tensor> Reshaped(std::vector<int64_t> shape) const;
  // A copy with its own storage (a device-only tensor spanning its storage shares its immutable
  // mirror instead of copying back).
  Tensor Clone() const;
  bool SharesStorageWith(const Tensor& other) const { return storage_ == other.storage_; }
  // Same dtype, shape and bytes.
  bool BitwiseEqual(const Tensor& other) const;

  // "float32[2, 3]".
  std::string Describe() const;

 private:
  struct Storage;
  bool SpansStorage() const;
  DType dtype_ = DType::kFloat32;
  Device device_ = Device::kCpu;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  size_t offset_ = 0;  // bytes into the storage
  std::shared_ptr<Storage> storage_;
};

// "[2, 3]".
std::string ShapeToString(const std::vector<int64_t>& shape);

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, std::vector<int64_t> shape) {
  static_assert(std::is_trivially_copyable_v<T>);
  Tensor t = ZerosUnchecked(DTypeOf<T>(), std::move(shape));
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    out[i] = values[i];
  return t;
}

}  // namespace irm::rt
