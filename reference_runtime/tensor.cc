// Tensor storage, views and conversion to and from the file form (tensor.h).
#include "reference_runtime/tensor.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_runtime/device_fault.h"
#include "reference_runtime/tensor_limits.h"

namespace irm::rt {

const char* DeviceName(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }

bool IsRuntimeDType(DType dtype) {
  return dtype != DType::kComplex64 && dtype != DType::kComplex128;
}

bool IsFloatingDType(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

namespace {
thread_local size_t failed_allocation_bytes = 0;
}  // namespace

size_t MaxTensorBytes() {
  static const size_t kMax = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return size_t{1} << 40;  // unknown: 1 TiB
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  }();
  return kMax;
}

Status CheckTensorBytes(uint64_t bytes, const std::string& what) {
  if (bytes <= MaxTensorBytes()) return Status::Ok();
  return Status(StatusCode::kInternal, Location{},
                fmt::format("{} needs {} bytes, more than this machine's memory ({} bytes)", what,
                            bytes, MaxTensorBytes()));
}

size_t TakeFailedAllocationBytes() { return std::exchange(failed_allocation_bytes, 0); }

// 64-byte aligned bytes (a cache line; what vectorised loops and BLAS like). Storage past
// MaxTensorBytes() is refused before allocating (the memset would otherwise touch every page of
// a huge overcommitted allocation); a refused or failed allocation records its size for the
// executor's diagnostic and throws std::bad_alloc, which KernelRegistry::Run and the executors
// turn into a status.
//
// Residency (tensor.h): `state` says which copies are current. It is read without the mutex on
// every access (an acquire load: a plain load on x86); every change happens under the mutex, and
// `mirror` is set before `state` leaves kHost, so a reader that sees a device state sees the
// mirror.
struct Tensor::Storage {
  enum State : uint8_t { kHost, kBoth, kDevice };
  static constexpr std::align_val_t kAlignment{64};

  explicit Storage(size_t n) : bytes(Allocate(n)), size(n) { std::memset(bytes, 0, n); }
  Storage(size_t n, std::shared_ptr<const DeviceMirror> device)
      : bytes(nullptr), size(n), state(kDevice), mirror(std::move(device)) {}
  ~Storage() {
    if (bytes != nullptr) ::operator delete(bytes, kAlignment);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  static std::byte* Allocate(size_t n) {
    void* p =
        n > MaxTensorBytes() ? nullptr : ::operator new(n == 0 ? 1 : n, kAlignment, std::nothrow);
    if (p == nullptr) {
      failed_allocation_bytes = n;
      throw std::bad_alloc();
    }
    return static_cast<std::byte*>(p);
  }

  State Load() const { return static_cast<State>(state.load(std::memory_order_acquire)); }
  void Store(State s) { state.store(s, std::memory_order_release); }

  // Makes the host bytes current (called with `mutex` held).
  Status SyncHostLocked() {
    if (Load() != kDevice) return Status::Ok();
    if (bytes == nullptr) bytes = Allocate(size);
    IRM_RETURN_IF_ERROR(mirror->CopyToHost(bytes, size));
    Store(kBoth);
    return Status::Ok();
  }
  Status SyncHost() {
    std::lock_guard<std::mutex> lock(mutex);
    return SyncHostLocked();
  }
  // The host bytes are about to be read: make them current.
  void PrepareHostRead() {
    std::lock_guard<std::mutex> lock(mutex);
    FallBackToZeros(SyncHostLocked());
  }
  // The host bytes are about to be written: make them current, then drop the device copy.
  void PrepareHostWrite() {
    std::lock_guard<std::mutex> lock(mutex);
    FallBackToZeros(SyncHostLocked());
    mirror.reset();
    Store(kHost);
  }
  // raw() cannot return a Status; a failed copy back is a device failure (the kernel that wrote
  // the tensor has already reported any error it could see), never bad input: the host gets
  // zeros, the device copy goes, and the failure waits as the pending device fault
  // (device_fault.h) for the next GPU op or the end of the command to report it (called with
  // `mutex` held).
  void FallBackToZeros(Status status) {
    if (status.ok()) return;
    status.AddNote("copying a device-resident tensor back for a host read");
    RecordDeviceFault(std::move(status));
    if (bytes == nullptr) bytes = Allocate(size);
    std::memset(bytes, 0, size);
    mirror.reset();
    Store(kHost);
  }

  std::byte* bytes;  // null until a device-only storage is first read on the host
  size_t size;
  std::atomic<uint8_t> state{kHost};
  std::mutex mutex;
  std::shared_ptr<const DeviceMirror> mirror;  // set while `state` is not kHost
};

namespace {
std::mutex pending_fault_mutex;
Status& PendingFault() {
  static Status* const pending = new Status();
  return *pending;
}
}  // namespace

void RecordDeviceFault(Status status) {
  std::lock_guard<std::mutex> lock(pending_fault_mutex);
  if (PendingFault().ok()) PendingFault() = std::move(status);
}

Status TakeDeviceFault() {
  std::lock_guard<std::mutex> lock(pending_fault_mutex);
  return std::exchange(PendingFault(), Status());
}

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
  const std::optional<uint64_t> bytes = CheckedByteSize(shape, DTypeSize(dtype));
  if (!bytes.has_value()) {
    return Invalid(
        fmt::format("shape {} is not a valid tensor shape (a negative dim, or too large)",
                    ShapeToString(shape)));
  }
  // The description is formatted only for a refusal: Zeros runs for most kernel outputs.
  if (*bytes > MaxTensorBytes()) {
    return CheckTensorBytes(
        *bytes, fmt::format("a {} tensor of shape {}", DTypeName(dtype), ShapeToString(shape)));
  }
  try {
    return ZerosUnchecked(dtype, std::move(shape));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("out of memory: a {} tensor of shape {} ({} bytes) could not be "
                              "allocated",
                              DTypeName(dtype), ShapeToString(shape), TakeFailedAllocationBytes()));
  }
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

StatusOr<Tensor> Tensor::OnDevice(DType dtype, std::vector<int64_t> shape,
                                  std::unique_ptr<DeviceMirror> mirror) {
  if (!IsRuntimeDType(dtype)) {
    return Invalid(fmt::format("dtype {} is not supported by the runtime", DTypeName(dtype)));
  }
  const std::optional<uint64_t> bytes = CheckedByteSize(shape, DTypeSize(dtype));
  if (!bytes.has_value()) {
    return Invalid(
        fmt::format("shape {} is not a valid tensor shape (a negative dim, or too large)",
                    ShapeToString(shape)));
  }
  if (mirror == nullptr || mirror->size() < *bytes) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("a device copy of {} bytes cannot hold a {} tensor of shape {} ({} "
                              "bytes)",
                              mirror == nullptr ? 0 : mirror->size(), DTypeName(dtype),
                              ShapeToString(shape), *bytes));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.numel_ = 1;
  for (int64_t d : shape) t.numel_ *= d;
  t.shape_ = std::move(shape);
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(*bytes), std::move(mirror));
  return t;
}

std::shared_ptr<const DeviceMirror> Tensor::device_mirror() const {
  if (storage_ == nullptr || storage_->Load() == Storage::kHost) return nullptr;
  std::lock_guard<std::mutex> lock(storage_->mutex);
  return storage_->mirror;
}

bool Tensor::device_current() const {
  return storage_ != nullptr && storage_->Load() != Storage::kHost;
}

bool Tensor::host_current() const {
  return storage_ != nullptr && storage_->Load() != Storage::kDevice;
}

Status Tensor::UploadToDevice(const DeviceMirrorMaker& make) const {
  if (storage_ == nullptr) return Invalid("an undefined tensor cannot be copied to the device");
  Storage& s = *storage_;
  if (s.Load() != Storage::kHost) return Status::Ok();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.Load() != Storage::kHost) return Status::Ok();  // another thread uploaded it meanwhile
  IRM_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMirror> mirror, make(s.size));
  if (mirror == nullptr || mirror->size() < s.size) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("the device copy made for {} bytes holds {}", s.size,
                              mirror == nullptr ? 0 : mirror->size()));
  }
  IRM_RETURN_IF_ERROR(mirror->CopyFromHost(s.bytes, s.size));
  s.mirror = std::move(mirror);
  s.Store(Storage::kBoth);
  return Status::Ok();
}

Status Tensor::SyncToHost() const {
  if (storage_ == nullptr || storage_->Load() != Storage::kDevice) return Status::Ok();
  return storage_->SyncHost();
}

// One branch on the CPU path: a host-only storage is never device-only.
const void* Tensor::raw() const {
  if (storage_ == nullptr) return nullptr;
  if (storage_->Load() == Storage::kDevice) [[unlikely]] {
    storage_->PrepareHostRead();
  }
  return storage_->bytes + offset_;
}

void* Tensor::raw() {
  if (storage_ == nullptr) return nullptr;
  if (storage_->Load() != Storage::kHost) [[unlikely]]
    storage_->PrepareHostWrite();
  return storage_->bytes + offset_;
}

bool Tensor::SpansStorage() const { return offset_ == 0 && nbytes() == storage_->size; }

void Tensor::CopyBytesFrom(const Tensor& src) {
  if (!defined() || !src.defined() || nbytes() != src.nbytes() || nbytes() == 0) return;
  if (storage_ == src.storage_) {
    if (offset_ != src.offset_) std::memmove(raw(), src.raw(), nbytes());
    return;
  }
  std::shared_ptr<const DeviceMirror> mirror = src.device_mirror();
  if (mirror == nullptr || !SpansStorage() || !src.SpansStorage()) {
    std::memmove(raw(), src.raw(), nbytes());
    return;
  }
  // Both views are whole storages and src is on the device: share its immutable mirror, and copy
  // the host bytes only where src has them current already (no copy back for it).
  const bool host_too = src.host_current();
  std::lock_guard<std::mutex> lock(storage_->mutex);
  Storage& s = *storage_;
  if (host_too) {
    if (s.bytes == nullptr) s.bytes = Storage::Allocate(s.size);
    std::memcpy(s.bytes, src.storage_->bytes, s.size);
  }
  s.mirror = std::move(mirror);
  s.Store(host_too ? Storage::kBoth : Storage::kDevice);
}

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
  if (storage_->Load() == Storage::kDevice && SpansStorage()) {
    std::shared_ptr<const DeviceMirror> mirror = device_mirror();
    if (mirror != nullptr) {
      Tensor t = *this;
      t.storage_ = std::make_shared<Storage>(storage_->size, std::move(mirror));
      return t;
    }
  }
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
