// The IR's recycling pools (ir_pool.h): per-thread free lists per size class
// over shared slabs.
#include "newir/ir_pool.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

namespace irm::newir::detail {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPassThrough = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPassThrough = true;
#else
constexpr bool kPassThrough = false;
#endif
#else
constexpr bool kPassThrough = false;
#endif

constexpr size_t kGranule = 16;
constexpr size_t kClasses = kMaxPooledBytes / kGranule;
constexpr size_t kSlabBytes = size_t{64} << 10;

struct FreeBlock {
  FreeBlock* next;
};

size_t ClassOf(size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }

// What outlives threads: every slab (kept reachable, never freed) and the free
// lists of threads that exited.
struct Shared {
  std::mutex mu;
  std::vector<void*> slabs;
  std::array<FreeBlock*, kClasses> reserve{};

  static Shared& Get() {
    static Shared* shared = new Shared;  // immortal: threads may exit after static destruction
    return *shared;
  }
};

// Trivially destructible, so that frees running after the thread's flush (other
// thread-local or static destructors) still find valid lists.
struct ThreadPools {
  std::array<FreeBlock*, kClasses> free;
  std::array<FreeBlock*, kClasses> tail;  // the last block of each list, to hand it on in O(1)
  char* cursor;                           // the unused rest of this thread's current slab
  char* end;
};

constinit thread_local ThreadPools pools{};

// Hands a thread's free lists to the shared reserve when the thread exits.
struct Flusher {
  ~Flusher() {
    Shared& shared = Shared::Get();
    std::lock_guard<std::mutex> lock(shared.mu);
    for (size_t c = 0; c < kClasses; ++c) {
      if (pools.free[c] == nullptr) continue;
      pools.tail[c]->next = shared.reserve[c];
      shared.reserve[c] = pools.free[c];
      pools.free[c] = nullptr;
    }
  }
};

thread_local Flusher flusher;

void* Refill(size_t c) {
  [[maybe_unused]] Flusher* registered = &flusher;  // first use on this thread registers it
  const size_t size = (c + 1) * kGranule;
  Shared& shared = Shared::Get();
  std::lock_guard<std::mutex> lock(shared.mu);
  if (FreeBlock* b = shared.reserve[c]) {
    // The whole reserve list becomes this thread's; its tail is found once, here.
    shared.reserve[c] = nullptr;
    pools.free[c] = b->next;
    if (b->next != nullptr) {
      FreeBlock* tail = b->next;
      while (tail->next != nullptr) tail = tail->next;
      pools.tail[c] = tail;
    }
    return b;
  }
  if (pools.cursor == nullptr || static_cast<size_t>(pools.end - pools.cursor) < size) {
    pools.cursor = static_cast<char*>(::operator new(kSlabBytes));
    pools.end = pools.cursor + kSlabBytes;
    shared.slabs.push_back(pools.cursor);
  }
  void* p = pools.cursor;
  pools.cursor += size;
  return p;
}

}  // namespace

void* PoolAllocate(size_t bytes) {
  if (kPassThrough || bytes > kMaxPooledBytes) return ::operator new(bytes);
  const size_t c = ClassOf(bytes);
  if (FreeBlock* b = pools.free[c]) {
    pools.free[c] = b->next;
    return b;
  }
  if (pools.cursor != nullptr &&
      static_cast<size_t>(pools.end - pools.cursor) >= (c + 1) * kGranule) {
    void* p = pools.cursor;
    pools.cursor += (c + 1) * kGranule;
    return p;
  }
  return Refill(c);
}

void PoolFree(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (kPassThrough || bytes > kMaxPooledBytes) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  const size_t c = ClassOf(bytes);
  if (pools.free[c] == nullptr) {
    [[maybe_unused]] Flusher* registered = &flusher;  // a thread that only frees flushes too
    pools.tail[c] = b;
  }
  b->next = pools.free[c];
  pools.free[c] = b;
}

}  // namespace irm::newir::detail
