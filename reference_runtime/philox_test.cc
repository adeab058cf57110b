// Philox-4x32-10 against the known-answer vectors of the Random123 distribution (kat_vectors),
// and the per-op stream's determinism and ranges.
#include "reference_runtime/philox.h"

#include <gtest/gtest.h>

#include <cmath>

namespace irm::rt {
namespace {

TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(PhiloxTest, StreamsDependOnSeedIdentityAndIndexOnly) {
  const PhiloxStream a(7, OpIdentity("dropout_0.tmp_0"));
  const PhiloxStream b(7, OpIdentity("dropout_0.tmp_0"));
  const PhiloxStream other_op(7, OpIdentity("dropout_1.tmp_0"));
  const PhiloxStream other_seed(8, OpIdentity("dropout_0.tmp_0"));
  int same_op = 0, same_seed = 0;
  for (uint64_t i = 1000; i-- > 0;) {  // any order gives the same numbers
    EXPECT_EQ(a.Bits(i), b.Bits(i));
    same_op += a.Bits(i) == other_op.Bits(i);
    same_seed += a.Bits(i) == other_seed.Bits(i);
  }
  EXPECT_LT(same_op, 3);
  EXPECT_LT(same_seed, 3);
  EXPECT_NE(OpIdentity("a"), OpIdentity("b"));
}

TEST(PhiloxTest, UniformAndNormalRanges) {
  const PhiloxStream s(1, 2);
  double sum = 0, sum_sq = 0;
  constexpr int kN = 20000;
  for (int i = 0; i < kN; ++i) {
    const float f = s.UniformFloat(i);
    const double d = s.UniformDouble(i);
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    const double n = s.Normal(i);
    ASSERT_TRUE(std::isfinite(n));
    sum += n;
    sum_sq += n * n;
  }
  EXPECT_NEAR(sum / kN, 0.0, 0.05);
  EXPECT_NEAR(sum_sq / kN, 1.0, 0.05);
}

}  // namespace
}  // namespace irm::rt
