// tree_sitter_allocator.h: per-thread lists of freed small blocks behind tree-sitter's malloc.
#include "tools/deadcode/tree_sitter_allocator.h"

#include <malloc.h>
#include <tree_sitter/api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace irm::deadcode::python {

namespace {

// Tree-sitter allocates and frees a block for nearly every syntax node, and deleting a tree frees
// them all at once, more than malloc's per-thread cache holds, so malloc's slower paths showed in
// profiles. These hooks keep freed small blocks on per-thread lists for the next parse. Every
// block is still malloc's own (the hooks only delay free), so blocks allocated before the hooks
// were installed, or on another thread, are handled alike.
constexpr size_t kGranule = 16;
constexpr size_t kClasses = 32;                       // lists for blocks of 16 to 496 bytes
constexpr size_t kMaxCachedBytes = size_t{16} << 20;  // what one thread keeps at most

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible, so that it stays usable while other thread-local objects (the parser,
// the node table) free their blocks at thread exit; `closed` then sends blocks back to malloc.
struct BlockCache {
  FreeBlock* heads[kClasses];
  size_t cached_bytes;
  bool registered;
  bool closed;
};
thread_local BlockCache cache;

void Release() {
  cache.closed = true;
  for (FreeBlock*& head : cache.heads) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
  cache.cached_bytes = 0;
}

// Returns the cached blocks to malloc when the thread ends.
struct BlockCacheReleaser {
  ~BlockCacheReleaser() { Release(); }
};

[[noreturn]] void OutOfMemory(size_t size) {
  std::fprintf(stderr, "tree-sitter: out of memory allocating %zu bytes\n", size);
  std::abort();  // as tree-sitter's own allocator does
}

void* CachedMalloc(size_t size) {
  size_t cls = std::max<size_t>(1, (size + kGranule - 1) / kGranule);
  if (cls < kClasses && cache.heads[cls] != nullptr) {
    FreeBlock* block = cache.heads[cls];
    cache.heads[cls] = block->next;
    cache.cached_bytes -= cls * kGranule;
    return block;
  }
  void* block = std::malloc(cls < kClasses ? cls * kGranule : size);
  if (block == nullptr) OutOfMemory(size);
  return block;
}

void CachedFree(void* pointer) {
  if (pointer == nullptr) return;
  // The largest class whose every request fits the block.
  size_t cls = malloc_usable_size(pointer) / kGranule;
  if (cls == 0 || cls >= kClasses || cache.closed ||
      cache.cached_bytes + cls * kGranule > kMaxCachedBytes) {
    std::free(pointer);
    return;
  }
  if (!cache.registered) {
    cache.registered = true;
    thread_local BlockCacheReleaser releaser;
    (void)releaser;
  }
  auto* block = static_cast<FreeBlock*>(pointer);
  block->next = cache.heads[cls];
  cache.heads[cls] = block;
  cache.cached_bytes += cls * kGranule;
}

void* CachedCalloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) OutOfMemory(SIZE_MAX);
  void* block = CachedMalloc(count * size);
  std::memset(block, 0, count * size);
  return block;
}

void* CachedRealloc(void* pointer, size_t size) {
  if (pointer == nullptr) return CachedMalloc(size);
  if (size <= malloc_usable_size(pointer)) return pointer;
  void* block = std::realloc(pointer, size);  // a malloc block: realloc may grow it in place
  if (block == nullptr) OutOfMemory(size);
  return block;
}

}  // namespace

void InstallCachedAllocator() {
  ts_set_allocator(CachedMalloc, CachedCalloc, CachedRealloc, CachedFree);
}

}  // namespace irm::deadcode::python
