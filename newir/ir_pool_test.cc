// Tests of the IR's recycling pools (ir_pool.h): blocks are distinct, aligned and reused; blocks
// freed by an exited thread are reused; the allocator works in standard containers.
#include "newir/ir_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace irm::newir::detail {
namespace {

TEST(IrPoolTest, BlocksAreDistinctAlignedAndWritable) {
  std::vector<std::pair<void*, size_t>> blocks;
  std::set<void*> seen;
  for (size_t bytes = 1; bytes <= kMaxPooledBytes + 64; bytes += 7) {
    void* p = PoolAllocate(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << bytes;
    std::memset(p, 0xab, bytes);
    EXPECT_TRUE(seen.insert(p).second) << bytes;
    blocks.emplace_back(p, bytes);
  }
  for (const auto& [p, bytes] : blocks) PoolFree(p, bytes);
}

TEST(IrPoolTest, FreedBlocksOfAClassAreReused) {
  // Sizes 33..48 share a class; without sanitizers the last freed block comes back first.
  void* a = PoolAllocate(40);
  PoolFree(a, 40);
  void* b = PoolAllocate(48);
  void* c = PoolAllocate(33);
  EXPECT_NE(b, c);
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(b, a);
#endif
  PoolFree(b, 48);
  PoolFree(c, 33);
}

TEST(IrPoolTest, BlocksFreedByAnExitedThreadAreReusedElsewhere) {
  constexpr int kBlocks = 1000;
  std::vector<void*> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(PoolAllocate(200));
  std::thread([&] {
    for (void* p : blocks) PoolFree(p, 200);
  }).join();
  // Another thread takes over the exited thread's list: everything it gets is distinct.
  std::set<void*> got;
  std::thread([&] {
    std::vector<void*> mine;
    for (int i = 0; i < 2 * kBlocks; ++i) {
      void* p = PoolAllocate(200);
      std::memset(p, 0xcd, 200);
      got.insert(p);
      mine.push_back(p);
    }
    for (void* p : mine) PoolFree(p, 200);
  }).join();
  EXPECT_EQ(got.size(), 2u * kBlocks);
#if !defined(__SANITIZE_ADDRESS__)
  size_t reused = 0;
  for (void* p : blocks) reused += got.count(p);
  EXPECT_EQ(reused, static_cast<size_t>(kBlocks));
#endif
}

TEST(IrPoolTest, AllocatorWorksInAMap) {
  std::map<int, std::string, std::less<>, PoolAllocator<std::pair<const int, std::string>>> m;
  for (int i = 0; i < 1000; ++i) m.emplace(i, std::string(static_cast<size_t>(i % 40), 'x'));
  for (int i = 0; i < 1000; i += 2) m.erase(i);
  ASSERT_EQ(m.size(), 500u);
  int expected = 1;
  for (const auto& [k, v] : m) {
    EXPECT_EQ(k, expected);
    EXPECT_EQ(v.size(), static_cast<size_t>(k % 40));
    expected += 2;
  }
}

}  // namespace
}  // namespace irm::newir::detail
