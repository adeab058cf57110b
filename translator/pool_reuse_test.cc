// What a long-running process holds after translating many programs: the new IR's objects come
// from recycling pools (newir/ir_pool.h) that never return memory to the system, so they must
// reuse it. Translating the same program again and again carves no new pool memory after the
// first translation — also when each translation is dropped on another thread than the one that
// made it (ranks run as threads), where the growth is bounded by the freeing thread's caches.
#include <barrier>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "newir/ir_pool.h"
#include "oldir/models/gpt.h"
#include "oldir/models/training.h"
#include "translator/translate.h"

namespace irm::translator {
namespace {

using newir::detail::PoolSlabBytes;

oldir::Program Gpt(int layers) {
  oldir::models::ModelPrograms model;
  oldir::models::GptConfig config;
  config.layers = layers;
  oldir::OptimizerOptions optimizer;
  optimizer.kind = oldir::OptimizerKind::kAdamW;
  EXPECT_TRUE(oldir::models::BuildGpt(config, &model).ok());
  EXPECT_TRUE(oldir::models::AddTraining(&model, optimizer).ok());
  return model.main.Build();
}

std::optional<Translation> Translate(const oldir::Program& program) {
  StatusOr<Translation> t = TranslateProgram(program, {});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return std::nullopt;
  return std::move(t).value();
}

TEST(PoolReuseTest, TranslatingTheSameProgramAgainCarvesNothingNew) {
  const oldir::Program program = Gpt(4);
  size_t ops = 0;
  {
    std::optional<Translation> first = Translate(program);  // also builds the lazy registries
    ASSERT_TRUE(first.has_value());
    ops = first->program.CountOps();
  }
  const size_t after_first = PoolSlabBytes();
  for (int i = 0; i < 5; ++i) {
    std::optional<Translation> again = Translate(program);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->program.CountOps(), ops);
  }
  EXPECT_EQ(PoolSlabBytes(), after_first);
}

TEST(PoolReuseTest, TranslatingOnOneThreadAndDroppingOnAnotherStopsGrowing) {
  const oldir::Program program = Gpt(16);
  constexpr int kRounds = 8;
  std::optional<Translation> handed;
  std::vector<size_t> slab_bytes_after(kRounds + 1);
  std::vector<size_t> ops(kRounds);
  std::barrier sync(2);
  slab_bytes_after[0] = PoolSlabBytes();
  std::thread translator([&] {
    for (int round = 0; round < kRounds; ++round) {
      handed = Translate(program);
      sync.arrive_and_wait();  // the other thread takes the translation
      sync.arrive_and_wait();  // and has dropped it
      slab_bytes_after[static_cast<size_t>(round) + 1] = PoolSlabBytes();
    }
  });
  std::thread dropper([&] {
    for (int round = 0; round < kRounds; ++round) {
      sync.arrive_and_wait();
      ops[static_cast<size_t>(round)] = handed.has_value() ? handed->program.CountOps() : 0;
      handed.reset();
      sync.arrive_and_wait();
    }
  });
  translator.join();
  dropper.join();
  for (size_t n : ops) EXPECT_EQ(n, ops[0]);
  const size_t first = slab_bytes_after[1] - slab_bytes_after[0];
  const size_t later = slab_bytes_after[kRounds] - slab_bytes_after[1];
  // The dropping thread keeps fewer than kMaxCachedBlocks blocks per size class (16-byte classes
  // up to kMaxPooledBytes) and each class may leave a slab end: that bounds the later growth, and
  // it is well under one translation's worth, which each round would add without reuse.
  size_t cache_bound = 0;
  for (size_t size = 16; size <= newir::detail::kMaxPooledBytes; size += 16) {
    cache_bound += newir::detail::kMaxCachedBlocks * size + (size_t{64} << 10);
  }
  EXPECT_LE(later, cache_bound) << "first translation carved " << first;
  EXPECT_LT(later, first);
}

}  // namespace
}  // namespace irm::translator
