// Tests of sharded random initialisation (random.cc, KernelContext::shard): a uniform or gaussian
// output that is a shard of a serial tensor equals, bit for bit, the box of the serial draw it
// covers — row and column shards of a [4, 6] tensor, a 3-D tensor, every dtype — and a few of its
// elements equal the stream's value at the serial index worked out by hand; dropout keys its mask
// by the local index whatever the context says; and an output that does not fit its shard is an
// error naming the var.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/kernels/shard_test_support.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

using testing::BoxOf;
using testing::RunKernel;
using testing::TryRunKernel;

const DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

KernelAttrs InitAttrs(const std::string& kernel, std::vector<int64_t> shape, DType dtype) {
  KernelAttrs attrs;
  attrs.Set("shape", std::move(shape));
  attrs.Set("dtype", dtype);
  attrs.Set("seed", int64_t{0});
  if (kernel == "uniform") {
    attrs.Set("min", -0.5);
    attrs.Set("max", 0.75);
  } else {
    attrs.Set("mean", 0.25);
    attrs.Set("std", 0.02);
  }
  return attrs;
}

KernelContext Context(const OutputShard* shard) {
  KernelContext context;
  context.program_seed = 2024;
  context.op_identity = OpIdentity("linear_0.w_0");
  context.shard = shard;
  context.shard_var = "linear_0.w_0";
  return context;
}

struct ShardCase {
  std::vector<int64_t> serial;
  std::vector<int64_t> offsets;
  std::vector<int64_t> local;
};

// Column halves and row halves of [4, 6] (Megatron's column- and row-parallel weights), a 3-D
// box in the middle of [3, 4, 5], a 0-d tensor, and a shard that is the whole tensor.
const std::vector<ShardCase> kShardCases = {
    {{4, 6}, {0, 3}, {4, 3}},
    {{4, 6}, {0, 0}, {4, 3}},
    {{4, 6}, {2, 0}, {2, 6}},
    {{4, 6}, {0, 0}, {2, 6}},
    {{3, 4, 5}, {1, 2, 1}, {2, 2, 3}},
    {{3, 4, 5}, {0, 0, 4}, {3, 4, 1}},
    {{}, {}, {}},
    {{4, 6}, {0, 0}, {4, 6}},
};

TEST(ShardedRandomInitTest, ShardEqualsTheBoxOfTheSerialDrawBitForBit) {
  for (const char* kernel : {"uniform", "gaussian"}) {
    for (DType dtype : kFloatTypes) {
      for (const ShardCase& c : kShardCases) {
        SCOPED_TRACE(std::string(kernel) + " " + DTypeName(dtype) + " serial " +
                     ShapeToString(c.serial) + " at " + ShapeToString(c.offsets));
        const auto serial =
            RunKernel(kernel, dtype, {}, InitAttrs(kernel, c.serial, dtype), 1, Context(nullptr));
        const OutputShard shard{c.serial, c.offsets};
        const auto local =
            RunKernel(kernel, dtype, {}, InitAttrs(kernel, c.local, dtype), 1, Context(&shard));
        ASSERT_EQ(local[0].shape(), c.local);
        EXPECT_TRUE(local[0].BitwiseEqual(BoxOf(serial[0], c.offsets, c.local)));
      }
    }
  }
}

// The shards of a 2 x 2 grid of [4, 6] together hold every serial element once: no two draw the
// same numbers, and none draws what the unsharded local tensor would.
TEST(ShardedRandomInitTest, TheShardsOfAGridDifferFromEachOtherAndFromAnUnshardedDraw) {
  const std::vector<int64_t> serial = {4, 6};
  const std::vector<int64_t> local = {2, 3};
  const auto unsharded =
      RunKernel("uniform", DType::kFloat32, {}, InitAttrs("uniform", local, DType::kFloat32), 1,
                Context(nullptr));
  std::vector<Tensor> shards;
  for (int64_t row : {0, 2}) {
    for (int64_t col : {0, 3}) {
      const OutputShard shard{serial, {row, col}};
      shards.push_back(RunKernel("uniform", DType::kFloat32, {},
                                 InitAttrs("uniform", local, DType::kFloat32), 1,
                                 Context(&shard))[0]);
    }
  }
  // Even the shard at [0, 0] differs from the unsharded [2, 3] draw: its second row is drawn at
  // serial indices 6..8, not 3..5.
  for (size_t a = 0; a < shards.size(); ++a) {
    EXPECT_FALSE(shards[a].BitwiseEqual(unsharded[0])) << a;
    for (size_t b = a + 1; b < shards.size(); ++b) EXPECT_FALSE(shards[a].BitwiseEqual(shards[b]));
  }
  const Tensor first_row = *unsharded[0].Slice(0, 1);
  EXPECT_TRUE(first_row.BitwiseEqual(*shards[0].Slice(0, 1)));
}

// Element values at serial indices worked out by hand: [4, 3] at [0, 3] of [4, 6] holds element
// (r, c) at serial index 6r + 3 + c; [2, 6] at [2, 0] holds (r, c) at 12 + 6r + c; [2, 2, 3] at
// [1, 2, 1] of [3, 4, 5] holds (i, j, k) at 20(1 + i) + 5(2 + j) + 1 + k.
TEST(ShardedRandomInitTest, ElementsAreDrawnAtTheirSerialIndex) {
  const PhiloxStream stream(2024, OpIdentity("linear_0.w_0"));
  {
    const OutputShard shard{{4, 6}, {0, 3}};
    const auto out = RunKernel("uniform", DType::kFloat64, {},
                               InitAttrs("uniform", {4, 3}, DType::kFloat64), 1, Context(&shard));
    const double* o = out[0].data<double>();
    for (int64_t r = 0; r < 4; ++r) {
      for (int64_t c = 0; c < 3; ++c) {
        EXPECT_EQ(o[r * 3 + c], -0.5 + 1.25 * stream.UniformDouble(6 * r + 3 + c)) << r << c;
      }
    }
  }
  {
    const OutputShard shard{{4, 6}, {2, 0}};
    const auto out = RunKernel("gaussian", DType::kFloat64, {},
                               InitAttrs("gaussian", {2, 6}, DType::kFloat64), 1, Context(&shard));
    const double* o = out[0].data<double>();
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 6; ++c) {
        EXPECT_EQ(o[r * 6 + c], 0.25 + 0.02 * stream.Normal(12 + 6 * r + c)) << r << c;
      }
    }
  }
  {
    const OutputShard shard{{3, 4, 5}, {1, 2, 1}};
    const auto out =
        RunKernel("uniform", DType::kFloat32, {}, InitAttrs("uniform", {2, 2, 3}, DType::kFloat32),
                  1, Context(&shard));
    const float* o = out[0].data<float>();
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        for (int64_t k = 0; k < 3; ++k) {
          const float u =
              stream.UniformFloat(static_cast<uint64_t>(20 * (1 + i) + 5 * (2 + j) + 1 + k));
          EXPECT_EQ(o[(i * 2 + j) * 3 + k], -0.5f + (0.75f - -0.5f) * u) << i << j << k;
        }
      }
    }
  }
}

// dropout draws activations' masks: the shard context does not move its stream.
TEST(ShardedRandomInitTest, DropoutIgnoresTheShard) {
  const Tensor x = testing::RandomTensor(DType::kFloat32, {2, 3}, 5);
  KernelAttrs attrs;
  attrs.Set("p", 0.5);
  attrs.Set("is_test", false);
  attrs.Set("mode", std::string("upscale_in_train"));
  const OutputShard shard{{4, 6}, {2, 3}};
  const auto plain = RunKernel("dropout", DType::kFloat32, {&x}, attrs, 2, Context(nullptr));
  const auto sharded = RunKernel("dropout", DType::kFloat32, {&x}, attrs, 2, Context(&shard));
  EXPECT_TRUE(plain[1].BitwiseEqual(sharded[1]));
  EXPECT_TRUE(plain[0].BitwiseEqual(sharded[0]));
}

TEST(ShardedRandomInitTest, AnOutputThatDoesNotFitItsShardIsAnErrorNamingTheVar) {
  struct Case {
    const char* kernel;
    std::vector<int64_t> local;
    OutputShard shard;
    std::string want;
  };
  const std::string head = "output 'linear_0.w_0' ";
  const std::vector<Case> cases = {
      {"uniform",
       {4, 3},
       {{4, 6, 1}, {0, 3, 0}},
       "uniform: " + head +
           "[4, 3] is a shard of the serial tensor [4, 6, 1] at offsets [0, 3, 0], but it has 2 "
           "dims, the serial tensor 3 and the offsets 3"},
      {"gaussian",
       {4, 3},
       {{4, 6}, {0}},
       "gaussian: " + head +
           "[4, 3] is a shard of the serial tensor [4, 6] at offsets [0], but it has 2 dims, the "
           "serial tensor 2 and the offsets 1"},
      {"uniform",
       {4, 3},
       {{4, 6}, {0, 4}},
       "uniform: " + head +
           "[4, 3] is a shard of the serial tensor [4, 6] at offsets [0, 4], but dim 1 reaches 4 + "
           "3 = 7, past the serial dim 6"},
      {"gaussian",
       {2, 6},
       {{4, 6}, {3, 0}},
       "gaussian: " + head +
           "[2, 6] is a shard of the serial tensor [4, 6] at offsets [3, 0], but dim 0 reaches 3 + "
           "2 = 5, past the serial dim 4"},
      {"uniform",
       {2, 3},
       {{4, 6}, {-1, 0}},
       "uniform: " + head +
           "[2, 3] is a shard of the serial tensor [4, 6] at offsets [-1, 0], but offset -1 of dim "
           "0 is outside [0, 4)"},
      {"uniform",
       {2, 3},
       {{4, 6}, {0, 6}},
       "uniform: " + head +
           "[2, 3] is a shard of the serial tensor [4, 6] at offsets [0, 6], but offset 6 of dim 1 "
           "is outside [0, 6)"},
      {"uniform",
       {0, 3},
       {{0, 6}, {0, 0}},
       "uniform: " + head +
           "[0, 3] is a shard of the serial tensor [0, 6] at offsets [0, 0], but serial dim 0 is "
           "0, not positive"},
      {"gaussian",
       {1, 1},
       {{int64_t{1} << 31, int64_t{1} << 30}, {0, 0}},
       "gaussian: " + head +
           "[1, 1] is a shard of the serial tensor [2147483648, 1073741824] at offsets [0, 0], but "
           "the serial tensor has more than 2^60 elements, more than the random streams tell "
           "apart"},
  };
  for (const Case& c : cases) {
    const auto r =
        TryRunKernel(c.kernel, DType::kFloat32, {}, InitAttrs(c.kernel, c.local, DType::kFloat32),
                     1, Context(&c.shard));
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(r.status().message(), c.want);
  }
  // 2^60 elements exactly are still told apart.
  const OutputShard largest{{int64_t{1} << 30, int64_t{1} << 30}, {5, 7}};
  const auto fits =
      TryRunKernel("uniform", DType::kFloat32, {}, InitAttrs("uniform", {1, 2}, DType::kFloat32), 1,
                   Context(&largest));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  const PhiloxStream stream(2024, OpIdentity("linear_0.w_0"));
  const uint64_t index = (uint64_t{5} << 30) + 7;
  EXPECT_EQ(fits->at(0).data<float>()[1], -0.5f + 1.25f * stream.UniformFloat(index + 1));
}

}  // namespace
}  // namespace irm::rt
