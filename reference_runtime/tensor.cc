// Tensor storage, views and conversion to and from the file form (tensor.h).
#include "reference_runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace irm::rt {

const char* DeviceName(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }

bool IsRuntimeDType(DType dtype) {
  return dtype != DType::kComplex64 && dtype != DType::kComplex128;
}

bool IsFloatingDType(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

// 64-byte aligned bytes (a cache line; what vectorised loops and BLAS like).
struct Tensor::Storage {
  static constexpr std::align_val_t kAlignment{64};
  explicit Storage(size_t n) : size(n) {
    bytes = static_cast<std::byte*>(::operator new(n == 0 ? 1 : n, kAlignment));
    std::memset(bytes, 0, n);
  }
  ~Storage() { ::operator delete(bytes, kAlignment); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* bytes;
  size_t size;
};

namespace {
Status Invalid(std::string message) {
  return Status(StatusCode::kInvalid, Location{}, std::move(message));
}
}  // namespace

std::string ShapeToString(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

StatusOr<Tensor> Tensor::Zeros(DType dtype, std::vector<int64_t> shape, Device device) {
  if (!IsRuntimeDType(dtype)) {
    return Invalid(fmt::format("dtype {} is not supported by the runtime", DTypeName(dtype)));
  }
  if (device != Device::kCpu) {
    return Invalid(fmt::format("tensors on {} need the CUDA backend", DeviceName(device)));
  }
  if (!CheckedByteSize(shape, DTypeSize(dtype)).has_value()) {
    return Invalid(
        fmt::format("shape {} is not a valid tensor shape (a negative dim, or too large)",
                    ShapeToString(shape)));
  }
  return ZerosUnchecked(dtype, std::move(shape));
}

Tensor Tensor::ZerosUnchecked(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.numel_ = 1;
  for (int64_t d : shape) {
    if (d < 0) std::abort();  // a kernel computed a negative dim from valid inputs: a bug
    t.numel_ *= d;
  }
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<Storage>(t.nbytes());
  return t;
}

StatusOr<Tensor> Tensor::FromHost(const HostTensor& host) {
  IRM_ASSIGN_OR_RETURN(Tensor t, Zeros(host.dtype, host.shape));
  if (host.bytes.size() != t.nbytes()) {
    return Invalid(fmt::format("a {} {} tensor needs {} bytes but {} were given",
                               DTypeName(host.dtype), ShapeToString(host.shape), t.nbytes(),
                               host.bytes.size()));
  }
  std::memcpy(t.raw(), host.bytes.data(), host.bytes.size());
  return t;
}

HostTensor Tensor::ToHost() const {
  HostTensor host{.dtype = dtype_, .shape = shape_, .bytes = {}};
  if (defined()) host.bytes.assign(static_cast<const char*>(raw()), nbytes());
  return host;
}

const void* Tensor::raw() const {
  return storage_ != nullptr ? storage_->bytes + offset_ : nullptr;
}
void* Tensor::raw() { return storage_ != nullptr ? storage_->bytes + offset_ : nullptr; }

StatusOr<Tensor> Tensor::Slice(int64_t begin, int64_t end) const {
  if (rank() == 0) return Invalid("a 0-D tensor has no rows to slice");
  if (begin < 0 || end < begin || end > shape_[0]) {
    return Invalid(fmt::format("rows [{}, {}) are outside {} {}", begin, end, DTypeName(dtype_),
                               ShapeToString(shape_)));
  }
  Tensor t = *this;
  const int64_t row = shape_[0] == 0 ? 0 : numel_ / shape_[0];
  t.shape_[0] = end - begin;
  t.numel_ = row * (end - begin);
  t.offset_ += static_cast<size_t>(row * begin) * DTypeSize(dtype_);
  return t;
}

StatusOr<Tensor> Tensor::Reshaped(std::vector<int64_t> shape) const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return Invalid("a reshape target has a negative dim");
    n *= d;
  }
  if (n != numel_) {
    return Invalid(fmt::format("cannot view {} ({} elements) as {} ({} elements)",
                               ShapeToString(shape_), numel_, ShapeToString(shape), n));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  if (!defined()) return {};
  Tensor t = ZerosUnchecked(dtype_, shape_);
  std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

bool Tensor::BitwiseEqual(const Tensor& other) const {
  if (defined() != other.defined()) return false;
  if (!defined()) return true;
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         std::memcmp(raw(), other.raw(), nbytes()) == 0;
}

std::string Tensor::Describe() const {
  if (!defined()) return "undefined";
  return fmt::format("{}{}", DTypeName(dtype_), ShapeToString(shape_));
}

}  // namespace irm::rt
