// Device memory for the CUDA backend: a caching allocator. Blocks are rounded up to 512 bytes
// (sizes of 1 MiB and more to a multiple of 1 MiB) and, when freed, kept in a free list per rounded
// size for the next allocation of that size, so that a training step's allocations cost no
// cudaMalloc after the first step. When cudaMalloc runs out of memory the cached blocks are
// released and the allocation is tried once more; if it still fails the Status names the op, the
// bytes asked for and the device's free and total memory — never an abort.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace irm::rt::cuda {

class DeviceAllocator {
 public:
  // The process's allocator (one device: the current one).
  static DeviceAllocator& Global();

  // `bytes` of device memory (uninitialised); 0 bytes gives a valid 512-byte block.
  StatusOr<void*> Allocate(size_t bytes, std::string_view op);
  // Returns a block from Allocate to the cache.
  void Free(void* block);
  // Gives every cached block back to the device.
  void ReleaseCache();

  size_t cached_bytes() const;
  size_t allocated_bytes() const;  // blocks handed out and not freed

  static size_t RoundedSize(size_t bytes);

 private:
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // rounded size -> cached blocks
  std::map<void*, size_t> sizes_;              // every live or cached block -> rounded size
  size_t cached_bytes_ = 0;
  size_t allocated_bytes_ = 0;
};

}  // namespace irm::rt::cuda
