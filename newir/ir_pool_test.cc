// Tests of the IR's recycling pools (ir_pool.h): blocks are distinct, aligned and reused; blocks
// freed on another thread than the one that allocated them come back to it, so the pools stop
// growing; an exited thread's blocks are reused elsewhere; under AddressSanitizer freed blocks are
// poisoned; the allocator works in standard containers.
#include "newir/ir_pool.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define IRM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IRM_TEST_ASAN 1
#endif
#endif
#if defined(IRM_TEST_ASAN)
#include <sanitizer/asan_interface.h>
#endif

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

TEST(IrPoolTest, AFreshThreadGetsItsFreedBlockBack) {
  // Sizes 33..48 share a class. A fresh thread's list of it holds only the block it freed.
  std::thread([] {
    void* a = PoolAllocate(40);
    PoolFree(a, 40);
    void* b = PoolAllocate(48);
    void* c = PoolAllocate(33);
    EXPECT_EQ(b, a);
    EXPECT_NE(c, b);
    PoolFree(b, 48);
    PoolFree(c, 33);
  }).join();
}

TEST(IrPoolTest, BlocksFreedByAnExitedThreadAreReusedElsewhere) {
  constexpr int kBlocks = 1000;
  std::vector<void*> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(PoolAllocate(200));
  std::thread([&] {
    for (void* p : blocks) PoolFree(p, 200);
  }).join();
  // Another thread takes the exited thread's blocks from the reserve: everything it gets is
  // distinct, and the 1000 blocks freed last are among what it gets.
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
  size_t reused = 0;
  for (void* p : blocks) reused += got.count(p);
  EXPECT_EQ(reused, static_cast<size_t>(kBlocks));
}

// One thread builds, another checks and frees, round after round, both alive throughout (as
// when ranks run as threads). The freeing thread keeps at most kMaxCachedBlocks and hands the
// rest back, so after the first rounds the builder is served from reused blocks only.
TEST(IrPoolTest, AllocateOnOneThreadFreeOnAnotherReusesAndStopsGrowing) {
  constexpr size_t kBlocks = 20000;
  constexpr size_t kBytes = 96;
  constexpr int kRounds = 12;
  std::vector<unsigned char*> handed(kBlocks);
  std::vector<size_t> slab_bytes_after(kRounds);
  std::barrier sync(2);
  bool intact = true;
  std::thread builder([&] {
    for (int round = 0; round < kRounds; ++round) {
      for (size_t i = 0; i < kBlocks; ++i) {
        auto* p = static_cast<unsigned char*>(PoolAllocate(kBytes));
        std::memset(p, static_cast<int>((i + static_cast<size_t>(round)) & 0xff), kBytes);
        handed[i] = p;
      }
      sync.arrive_and_wait();  // the freer takes them
      sync.arrive_and_wait();  // the freer is done
      slab_bytes_after[static_cast<size_t>(round)] = PoolSlabBytes();
    }
  });
  std::thread freer([&] {
    for (int round = 0; round < kRounds; ++round) {
      sync.arrive_and_wait();
      std::set<unsigned char*> distinct(handed.begin(), handed.end());
      if (distinct.size() != kBlocks) intact = false;
      for (size_t i = 0; i < kBlocks; ++i) {
        const auto expected = static_cast<unsigned char>((i + static_cast<size_t>(round)) & 0xff);
        if (handed[i][0] != expected || handed[i][kBytes - 1] != expected) intact = false;
        PoolFree(handed[i], kBytes);
      }
      sync.arrive_and_wait();
    }
  });
  builder.join();
  freer.join();
  EXPECT_TRUE(intact);
  // The freer keeps fewer than kMaxCachedBlocks blocks of 96 bytes, so after the first round the
  // pools grow by at most that cache (whose size varies from round to round) and a slab end in
  // all; without the hand-back they would grow by kBlocks * kBytes every round.
  EXPECT_LE(slab_bytes_after[kRounds - 1] - slab_bytes_after[0],
            kMaxCachedBlocks * kBytes + 2 * (64u << 10));
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

#if defined(IRM_TEST_ASAN)
TEST(IrPoolAsanTest, FreedBlocksArePoisonedAndReusedBlocksAreNot) {
  ASSERT_TRUE(PoolPoisonsFreedBlocks());
  // 232 bytes: a class that no exited thread of the tests before has left blocks of, so that the
  // fresh thread's only free block of it is the one it freed.
  std::thread([] {
    auto* a = static_cast<char*>(PoolAllocate(232));
    EXPECT_FALSE(__asan_address_is_poisoned(a));
    EXPECT_FALSE(__asan_address_is_poisoned(a + 231));
    EXPECT_TRUE(__asan_address_is_poisoned(a + 232));  // the block's padding
    PoolFree(a, 232);
    EXPECT_TRUE(__asan_address_is_poisoned(a));
    EXPECT_TRUE(__asan_address_is_poisoned(a + 8));
    EXPECT_TRUE(__asan_address_is_poisoned(a + 231));
    auto* b = static_cast<char*>(PoolAllocate(232));
    ASSERT_EQ(b, a);
    EXPECT_EQ(__asan_region_is_poisoned(b, 232), nullptr);
    PoolFree(b, 232);
  }).join();
}

TEST(IrPoolAsanDeathTest, WritingAFreedBlockIsReported) {
  auto* p = static_cast<volatile char*>(PoolAllocate(64));
  p[0] = 1;
  PoolFree(const_cast<char*>(p), 64);
  EXPECT_DEATH(p[16] = 2, "use-after-poison");
}

TEST(IrPoolAsanDeathTest, AFreedBlockCrossingThreadsIsStillPoisoned) {
  auto* p = static_cast<volatile char*>(PoolAllocate(64));
  std::thread([p] { PoolFree(const_cast<char*>(p), 64); }).join();
  EXPECT_DEATH(static_cast<void>(p[8] + 1), "use-after-poison");
}
#else
TEST(IrPoolTest, PoisoningIsOffWithoutAddressSanitizer) { EXPECT_FALSE(PoolPoisonsFreedBlocks()); }
#endif

}  // namespace
}  // namespace irm::newir::detail
