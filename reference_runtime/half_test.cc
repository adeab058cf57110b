// float16/bfloat16 conversions against values whose bits are known (IEEE 754 binary16 tables and
// bfloat16 truncation with round-to-nearest-even), and an exhaustive round trip of every half.
#include "reference_runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace irm::rt {
namespace {

TEST(HalfTest, Float16KnownBits) {
  EXPECT_EQ(ToFloat16(0.0f).bits, 0x0000);
  EXPECT_EQ(ToFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(ToFloat16(1.0f).bits, 0x3c00);
  EXPECT_EQ(ToFloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(ToFloat16(65504.0f).bits, 0x7bff);               // largest finite
  EXPECT_EQ(ToFloat16(65520.0f).bits, 0x7c00);               // rounds to infinity
  EXPECT_EQ(ToFloat16(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(ToFloat16(std::ldexp(1.0f, -25)).bits, 0x0000);  // a tie rounds to even (0)
  EXPECT_EQ(ToFloat16(std::ldexp(3.0f, -25)).bits, 0x0002);  // a tie rounds to even (2)
  EXPECT_EQ(ToFloat16(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1); 1 + 3*2^-11 to 1 + 2*2^-10.
  EXPECT_EQ(ToFloat16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(ToFloat16(1.0f + std::ldexp(3.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(ToFloat16(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(ToFloat(ToFloat16(std::nanf("")))));
}

TEST(HalfTest, EveryFloat16RoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Float16 h{static_cast<uint16_t>(bits)};
    const float f = ToFloat(h);
    if (std::isnan(f)) {
      EXPECT_EQ(bits & 0x7c00u, 0x7c00u);
      continue;
    }
    EXPECT_EQ(ToFloat16(f).bits, bits) << std::hex << bits;
  }
  EXPECT_EQ(ToFloat(Float16{0x0001}), std::ldexp(1.0f, -24));
  EXPECT_EQ(ToFloat(Float16{0x3555}), 0.33325195f);
}

TEST(HalfTest, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(ToBFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(ToBFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);  // tie -> even
  EXPECT_EQ(ToBFloat16(1.0f + std::ldexp(3.0f, -8)).bits, 0x3f82);  // tie -> even
  EXPECT_EQ(ToBFloat16(1.0f + std::ldexp(1.0f, -7)).bits, 0x3f81);
  EXPECT_EQ(ToFloat(BFloat16{0x4049}), 3.140625f);
  EXPECT_TRUE(std::isnan(ToFloat(ToBFloat16(std::nanf("")))));
  EXPECT_EQ(ToBFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds to infinity
}

}  // namespace
}  // namespace irm::rt
