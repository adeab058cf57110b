// DeviceBuffer: device memory for one communication call or message (cudaMalloc, freed with the
// buffer), apart from the caching allocator of device_allocator.h, whose blocks are ordered by the
// legacy default stream only: the communicators work on streams of their own, one per rank.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

#include <fmt/format.h>

#include "common/status.h"
#include "reference_runtime/cuda/cuda_status.h"

namespace irm::rt::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // `bytes` of device memory (none for 0); `op` names the call for an out-of-memory diagnostic.
  Status Allocate(size_t bytes, std::string_view op) {
    if (bytes == 0) return Status::Ok();
    bytes_ = bytes;
    return CudaStatus(cudaMalloc(&ptr_, bytes), op, fmt::format("allocating {} bytes", bytes));
  }
  void* get() const { return ptr_; }
  char* bytes() const { return static_cast<char*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace irm::rt::cuda
