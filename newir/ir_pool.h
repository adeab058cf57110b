// Recycling memory pools for the IR's small, frequent objects (operations,
// values, operand slots, attribute map nodes, attribute storage). A translated
// program holds millions of them; through the general-purpose heap, freeing a
// whole program spent a third of its time coalescing chunks. Here a block is
// taken from a per-thread free list of its size class (16-byte steps up to
// kMaxPooledBytes) or carved from a 64 KiB slab, and freeing pushes it back on
// the list: O(1), no coalescing. Slabs are never returned to the system; their
// blocks are reused by later IR. A block may be freed on another thread than
// the one that allocated it (it joins that thread's list); a thread's lists go
// to a shared reserve when it exits. Under AddressSanitizer the pools pass
// through to operator new/delete, so use-after-free stays detectable.
#pragma once

#include <cstddef>
#include <new>

namespace irm::newir::detail {

inline constexpr size_t kMaxPooledBytes = 256;

// `bytes` may be anything; blocks above kMaxPooledBytes come from operator new.
void* PoolAllocate(size_t bytes);
// `bytes` must be what the block was allocated with.
void PoolFree(void* p, size_t bytes) noexcept;

// A standard allocator over the pools, for node-based containers and shared
// storage.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding must be implicit
  T* allocate(size_t n) { return static_cast<T*>(PoolAllocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { PoolFree(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

// Class-level operator new/delete over the pools, for the IR's own object
// types.
#define IRM_POOLED_NEW_DELETE                                                                     \
  static void* operator new(size_t bytes) { return ::irm::newir::detail::PoolAllocate(bytes); }   \
  static void operator delete(void* p, size_t bytes) noexcept {                                   \
    ::irm::newir::detail::PoolFree(p, bytes);                                                     \
  }                                                                                               \
  static void* operator new[](size_t bytes) { return ::irm::newir::detail::PoolAllocate(bytes); } \
  static void operator delete[](void* p, size_t bytes) noexcept {                                 \
    ::irm::newir::detail::PoolFree(p, bytes);                                                     \
  }

}  // namespace irm::newir::detail
