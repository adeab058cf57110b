// The IR's recycling pools (ir_pool.h): per-thread free lists per size class,
// a shared reserve of batches that bounds them, and slabs (or, under
// AddressSanitizer, one heap chunk per block) to carve new blocks from.
#include "newir/ir_pool.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define IRM_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IRM_POOL_ASAN 1
#endif
#endif

#if defined(IRM_POOL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace irm::newir::detail {
namespace {

#if defined(IRM_POOL_ASAN)
// Free blocks are poisoned and reused oldest first. New blocks are separate heap chunks rather
// than slab slices, so that LeakSanitizer still reports leaked IR objects one by one and ASan's
// redzones still surround each block. A free block's link lives in an extra word after the block,
// never poisoned: LeakSanitizer ignores pointers held in poisoned memory, so a link inside the
// poisoned block would make every free block look leaked.
constexpr bool kAsan = true;
void Poison(const void* p, size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
void Unpoison(const void* p, size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
constexpr bool kAsan = false;
void Poison(const void*, size_t) {}
void Unpoison(const void*, size_t) {}
#endif

constexpr size_t kGranule = 16;
constexpr size_t kClasses = kMaxPooledBytes / kGranule;
constexpr size_t kSlabBytes = size_t{64} << 10;

struct FreeBlock;

size_t ClassOf(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }
size_t SizeOf(size_t c) { return (c + 1) * kGranule; }

// Where a free block of class `c` keeps its link: its first word, or under ASan the word after it.
FreeBlock*& LinkOf(FreeBlock* b, size_t c) {
  const size_t offset = kAsan ? SizeOf(c) : 0;
  return *reinterpret_cast<FreeBlock**>(reinterpret_cast<char*>(b) + offset);
}

// A run of free blocks of one class, linked head to tail.
struct FreeList {
  FreeBlock* head = nullptr;
  FreeBlock* tail = nullptr;
  size_t count = 0;
};

// What outlives threads: the reserve of free batches, the unused rest of exited threads' slabs,
// and every slab (reachable, never freed).
struct Shared {
  std::mutex mu;
  std::array<std::vector<FreeList>, kClasses> reserve;
  // reserve[c].size(), readable without the lock: carving must not start while the reserve holds
  // blocks of the class, and checking it must not cost a lock per carved block.
  std::array<std::atomic<size_t>, kClasses> reserved{};
  std::vector<std::pair<char*, char*>> spare_ranges;
  std::vector<void*> slabs;
  size_t slab_bytes = 0;

  static Shared& Get() {
    static Shared* shared = new Shared;  // immortal: threads may exit after static destruction
    return *shared;
  }
};

// Trivially destructible, so that frees running after the thread's flush (other thread-local or
// static destructors) still find valid lists; those go straight to the reserve (`exited`).
struct ThreadPools {
  std::array<FreeList, kClasses> lists;
  char* cursor;  // the unused rest of this thread's current slab
  char* end;
  bool exited;
};

constinit thread_local ThreadPools pools{};

void ToReserve(size_t c, FreeList batch) {
  Shared& shared = Shared::Get();
  std::lock_guard<std::mutex> lock(shared.mu);
  shared.reserve[c].push_back(batch);
  shared.reserved[c].store(shared.reserve[c].size(), std::memory_order_relaxed);
}

// Hands a thread's free lists and the rest of its slab to the shared reserve when it exits.
struct Flusher {
  ~Flusher() {
    for (size_t c = 0; c < kClasses; ++c) {
      if (pools.lists[c].count != 0) ToReserve(c, std::exchange(pools.lists[c], FreeList{}));
    }
    if (pools.cursor != pools.end) {
      Shared& shared = Shared::Get();
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.spare_ranges.emplace_back(pools.cursor, pools.end);
    }
    pools.cursor = pools.end = nullptr;
    pools.exited = true;
  }
};

thread_local Flusher flusher;

// Slow path of PoolAllocate, when the thread's list is empty: a batch from the reserve, else a
// new block carved from this thread's slab (or a fresh one).
void* Refill(size_t c) {
  const size_t size = SizeOf(c);
  Shared& shared = Shared::Get();
  if (shared.reserved[c].load(std::memory_order_relaxed) != 0) {
    [[maybe_unused]] Flusher* registered = &flusher;  // first use on this thread registers it
    std::lock_guard<std::mutex> lock(shared.mu);
    std::vector<FreeList>& reserve = shared.reserve[c];
    if (!reserve.empty()) {
      const FreeList batch = reserve.back();
      reserve.pop_back();
      shared.reserved[c].store(reserve.size(), std::memory_order_relaxed);
      FreeBlock* b = batch.head;
      FreeList& list = pools.lists[c];
      list.head = std::exchange(LinkOf(b, c), nullptr);
      list.tail = list.head != nullptr ? batch.tail : nullptr;
      list.count = batch.count - 1;
      return b;
    }
  }
  if constexpr (kAsan) {
    std::lock_guard<std::mutex> lock(shared.mu);
    shared.slab_bytes += size;
    void* p = ::operator new(size + sizeof(FreeBlock*));
    LinkOf(static_cast<FreeBlock*>(p), c) = nullptr;
    return p;
  }
  if (static_cast<size_t>(pools.end - pools.cursor) < size) {
    [[maybe_unused]] Flusher* registered = &flusher;
    std::lock_guard<std::mutex> lock(shared.mu);
    std::vector<std::pair<char*, char*>>& spares = shared.spare_ranges;
    if (!spares.empty() &&
        static_cast<size_t>(spares.back().second - spares.back().first) >= size) {
      std::tie(pools.cursor, pools.end) = spares.back();
      spares.pop_back();
    } else {
      pools.cursor = static_cast<char*>(::operator new(kSlabBytes));
      pools.end = pools.cursor + kSlabBytes;
      shared.slabs.push_back(pools.cursor);
      shared.slab_bytes += kSlabBytes;
    }
  }
  void* p = pools.cursor;
  pools.cursor += size;
  return p;
}

}  // namespace

void* PoolAllocate(size_t bytes) {
  if (bytes > kMaxPooledBytes) return ::operator new(bytes);
  const size_t c = ClassOf(bytes);
  FreeList& list = pools.lists[c];
  void* p;
  if (FreeBlock* b = list.head) {
    // Under ASan no stale link may keep a block reachable for LeakSanitizer.
    list.head = kAsan ? std::exchange(LinkOf(b, c), nullptr) : LinkOf(b, c);
    // Reused blocks are cold (freed with a whole program, long ago): loading the next one now
    // overlaps its cache miss with the caller's work instead of stalling the next allocation.
    __builtin_prefetch(list.head, 1);
    --list.count;
    p = b;
  } else {
    p = Refill(c);
  }
  Unpoison(p, bytes);
  Poison(static_cast<char*>(p) + bytes, SizeOf(c) - bytes);  // the padding catches overruns
  return p;
}

void PoolFree(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes > kMaxPooledBytes) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  const size_t c = ClassOf(bytes);
  Poison(b, SizeOf(c));
  FreeList& list = pools.lists[c];
  if (list.count == 0) {
    [[maybe_unused]] Flusher* registered = &flusher;  // a thread that only frees flushes too
    LinkOf(b, c) = nullptr;
    list.head = list.tail = b;
  } else if constexpr (kAsan) {
    LinkOf(b, c) = nullptr;  // oldest first: append
    LinkOf(list.tail, c) = b;
    list.tail = b;
  } else {
    LinkOf(b, c) = list.head;  // newest first: the block is likely still in cache
    list.head = b;
  }
  ++list.count;
  // A full list goes to the reserve whole (its head and tail are known: no walk), so that blocks
  // freed here but allocated elsewhere flow back to where they are needed.
  if (pools.exited || list.count >= kMaxCachedBlocks) ToReserve(c, std::exchange(list, FreeList{}));
}

size_t PoolSlabBytes() {
  Shared& shared = Shared::Get();
  std::lock_guard<std::mutex> lock(shared.mu);
  return shared.slab_bytes;
}

bool PoolPoisonsFreedBlocks() { return kAsan; }

}  // namespace irm::newir::detail
