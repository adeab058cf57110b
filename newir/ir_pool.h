// Recycling memory pools for the IR's small, frequent objects (operations,
// values, operand slots, attribute map nodes, attribute storage). A translated
// program holds millions of them; through the general-purpose heap, freeing a
// whole program spent a third of its time coalescing chunks. Here a block is
// taken from a per-thread free list of its size class (16-byte steps up to
// kMaxPooledBytes) or carved from a 64 KiB slab, and freeing pushes it back on
// the freeing thread's list: O(1), no coalescing.
//
// Bounded reuse: slabs are never returned to the system, but a thread keeps at
// fewer than kMaxCachedBlocks blocks of a class; a full list goes, as one batch,
// to a shared reserve, which every thread draws from before it carves a new slab.
// A block freed on another thread than the one that allocated it therefore
// comes back to the allocating side (as when one thread builds programs and
// another drops them), and a thread's lists go to the reserve when it exits. So
// the pools hold no more than the peak of live IR per size class plus bounded
// per-thread caches: translating and dropping the same program again and again
// carves nothing after the first time.
//
// Under AddressSanitizer the pools stay in use, but each block is its own heap
// chunk (so LeakSanitizer still reports leaked IR objects), free blocks are
// poisoned, so touching freed IR is reported ("use-after-poison"), and freed
// blocks are reused oldest first, so that the window in which a stale pointer
// still hits poisoned memory is as long as the pool's contents allow.
#pragma once

#include <cstddef>
#include <new>

namespace irm::newir::detail {

inline constexpr size_t kMaxPooledBytes = 1024;
// Per thread and size class: a list this long goes to the reserve.
inline constexpr size_t kMaxCachedBlocks = 512;

// `bytes` may be anything; blocks above kMaxPooledBytes come from operator new.
void* PoolAllocate(size_t bytes);
// `bytes` must be what the block was allocated with.
void PoolFree(void* p, size_t bytes) noexcept;

// The bytes of all slabs carved so far, by every thread: what the pools hold
// from the system. It only grows; tests use it to check that reuse bounds it.
size_t PoolSlabBytes();

// Whether freed blocks are poisoned for AddressSanitizer in this build.
bool PoolPoisonsFreedBlocks();

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
