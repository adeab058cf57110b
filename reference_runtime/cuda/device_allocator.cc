// The caching device allocator (device_allocator.h).
#include "reference_runtime/cuda/device_allocator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "reference_runtime/cuda/cuda_status.h"

namespace irm::rt::cuda {

DeviceAllocator& DeviceAllocator::Global() {
  // Never destroyed: tensors held in static storage may free blocks after main returns.
  static DeviceAllocator* allocator = new DeviceAllocator();
  return *allocator;
}

size_t DeviceAllocator::RoundedSize(size_t bytes) {
  constexpr size_t kSmall = 512;
  constexpr size_t kLarge = size_t{1} << 20;
  if (bytes == 0) return kSmall;
  if (bytes >= kLarge) return (bytes + kLarge - 1) / kLarge * kLarge;
  return (bytes + kSmall - 1) / kSmall * kSmall;
}

StatusOr<void*> DeviceAllocator::Allocate(size_t bytes, std::string_view op) {
  const size_t rounded = RoundedSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = free_.find(rounded);
  if (it != free_.end() && !it->second.empty()) {
    void* block = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= rounded;
    allocated_bytes_ += rounded;
    return block;
  }
  void* block = nullptr;
  cudaError_t error = cudaMalloc(&block, rounded);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it and retry without the cache
    for (auto& [size, blocks] : free_) {
      for (void* cached : blocks) {
        cudaFree(cached);
        sizes_.erase(cached);
      }
      blocks.clear();
    }
    cached_bytes_ = 0;
    error = cudaMalloc(&block, rounded);
  }
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("gpu: {}: out of memory: {} bytes could not be allocated ({} of {} "
                              "bytes free, {} held by this runtime)",
                              op, bytes, free_bytes, total_bytes, allocated_bytes_));
  }
  IRM_RETURN_IF_ERROR(CudaStatus(error, op, fmt::format("cudaMalloc of {} bytes", rounded)));
  sizes_[block] = rounded;
  allocated_bytes_ += rounded;
  return block;
}

void DeviceAllocator::Free(void* block) {
  if (block == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.find(block);
  if (it == sizes_.end()) return;  // not ours: nothing to give back
  free_[it->second].push_back(block);
  cached_bytes_ += it->second;
  allocated_bytes_ -= it->second;
}

void DeviceAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, blocks] : free_) {
    for (void* block : blocks) {
      cudaFree(block);
      sizes_.erase(block);
    }
    blocks.clear();
  }
  cached_bytes_ = 0;
}

size_t DeviceAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}
size_t DeviceAllocator::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_bytes_;
}

}  // namespace irm::rt::cuda
