// GEMM in both modes: against a float64 product; the reference mode bit for bit against the plain
// sequential triple loop written here and against golden hashes of that loop's output; the BLAS
// mode bit for bit at one and two OpenBLAS threads; degenerate sizes and the dim errors.
#include "reference_runtime/kernels/gemm.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::RandomTensor;
using testing::ToDoubles;

struct Dims {
  int64_t m, n, k;
};

std::string Describe(const Dims& d, bool ta, bool tb) {
  return "m=" + std::to_string(d.m) + " n=" + std::to_string(d.n) + " k=" + std::to_string(d.k) +
         (ta ? " trans_a" : "") + (tb ? " trans_b" : "");
}

// The operands of a product: op(a) is m x k, op(b) is k x n, stored transposed when asked.
struct Operands {
  Tensor a, b;
};

Operands MakeOperands(DType dtype, const Dims& d, bool ta, bool tb, uint64_t seed) {
  return {RandomTensor(dtype, ta ? std::vector<int64_t>{d.k, d.m} : std::vector<int64_t>{d.m, d.k},
                       seed),
          RandomTensor(dtype, tb ? std::vector<int64_t>{d.n, d.k} : std::vector<int64_t>{d.k, d.n},
                       seed + 1)};
}

// The plain loop: for each output element, the products summed in k order in T. This file is
// compiled without FMA contraction (reference_runtime/CMakeLists.txt), like gemm.cc.
template <typename T>
std::vector<T> PlainGemm(bool ta, bool tb, const Dims& d, const T* a, const T* b) {
  std::vector<T> c(static_cast<size_t>(d.m * d.n));
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < d.k; ++p) {
        const T av = ta ? a[p * d.m + i] : a[i * d.k + p];
        const T bv = tb ? b[j * d.k + p] : b[p * d.n + j];
        acc += av * bv;
      }
      c[static_cast<size_t>(i * d.n + j)] = acc;
    }
  }
  return c;
}

std::vector<double> Float64Gemm(bool ta, bool tb, const Dims& d, const Operands& ops) {
  const std::vector<double> a = ToDoubles(ops.a);
  const std::vector<double> b = ToDoubles(ops.b);
  return PlainGemm<double>(ta, tb, d, a.data(), b.data());
}

template <typename T>
std::vector<T> RunGemm(GemmMode mode, bool ta, bool tb, const Dims& d, const Operands& ops) {
  // Pre-filled with garbage: Gemm must overwrite every element.
  std::vector<T> c(static_cast<size_t>(d.m * d.n), T(12345));
  const Status s = Gemm<T>(mode, ta, tb, d.m, d.n, d.k, ops.a.data<T>(), ops.b.data<T>(), c.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

template <typename T>
bool SameBits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// FNV-1a (64-bit) of the bytes.
template <typename T>
uint64_t Fnv1a(const std::vector<T>& values) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(T); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Shapes that cross every blocking boundary of the reference loops (register tile, k block,
// packed row and column blocks) and sizes 1.
const std::vector<Dims> kShapes = {{1, 1, 1},     {1, 7, 1},     {5, 1, 3},     {4, 16, 8},
                                   {33, 65, 129}, {70, 17, 300}, {3, 530, 260}, {67, 9, 513}};

template <typename T>
void ExpectReferenceIsPlainLoop() {
  uint64_t seed = 10;
  for (const Dims& d : kShapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const Operands ops = MakeOperands(DTypeOf<T>(), d, ta, tb, seed += 2);
        const std::vector<T> plain = PlainGemm<T>(ta, tb, d, ops.a.data<T>(), ops.b.data<T>());
        EXPECT_TRUE(SameBits(RunGemm<T>(GemmMode::kReference, ta, tb, d, ops), plain))
            << Describe(d, ta, tb);
      }
    }
  }
}

TEST(GemmTest, ReferenceHasTheBitsOfThePlainLoopFloat) { ExpectReferenceIsPlainLoop<float>(); }
TEST(GemmTest, ReferenceHasTheBitsOfThePlainLoopDouble) { ExpectReferenceIsPlainLoop<double>(); }

// Golden hashes of the plain loop's output for fixed Philox-seeded inputs (seed 7, RandomTensor
// in [-1, 1)). The constants were computed once from PlainGemm above, never from Gemm: they pin
// the reference bits so that a change that makes them depend on the CPU or the compiler fails
// here even when the plain loop moves with it.
struct Golden {
  Dims dims;
  bool ta, tb;
  uint64_t float_hash, double_hash;
};
const std::vector<Golden> kGolden = {
    {{33, 65, 129}, false, false, 0xb5ec72acf3b52b0bull, 0x1660fc21b6873225ull},
    {{33, 65, 129}, true, true, 0xa8982c00a928c00cull, 0xa63c196b85a4dd01ull},
    {{64, 64, 64}, false, true, 0x5b7fe29892b25eaaull, 0xe6b9dc54f3c97f28ull},
    {{7, 300, 1}, true, false, 0xcb7f9097eaeedc45ull, 0x888b476e4e34f6f8ull},
    {{130, 31, 257}, false, false, 0x0a55ab1839de9e42ull, 0xe50cf1790141e98aull},
};

TEST(GemmTest, ReferenceMatchesGoldenHashes) {
  for (const Golden& g : kGolden) {
    const Operands f = MakeOperands(DType::kFloat32, g.dims, g.ta, g.tb, 7);
    const std::vector<float> plain_f =
        PlainGemm<float>(g.ta, g.tb, g.dims, f.a.data<float>(), f.b.data<float>());
    EXPECT_EQ(Fnv1a(plain_f), g.float_hash) << "plain float " << Describe(g.dims, g.ta, g.tb);
    EXPECT_EQ(Fnv1a(RunGemm<float>(GemmMode::kReference, g.ta, g.tb, g.dims, f)), g.float_hash)
        << "float " << Describe(g.dims, g.ta, g.tb);
    const Operands d = MakeOperands(DType::kFloat64, g.dims, g.ta, g.tb, 7);
    const std::vector<double> plain_d =
        PlainGemm<double>(g.ta, g.tb, g.dims, d.a.data<double>(), d.b.data<double>());
    EXPECT_EQ(Fnv1a(plain_d), g.double_hash) << "plain double " << Describe(g.dims, g.ta, g.tb);
    EXPECT_EQ(Fnv1a(RunGemm<double>(GemmMode::kReference, g.ta, g.tb, g.dims, d)), g.double_hash)
        << "double " << Describe(g.dims, g.ta, g.tb);
  }
}

template <typename T>
void ExpectCloseToFloat64(GemmMode mode) {
  const DType dtype = DTypeOf<T>();
  uint64_t seed = 100;
  for (const Dims& d : kShapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const Operands ops = MakeOperands(dtype, d, ta, tb, seed += 2);
        const std::vector<T> c = RunGemm<T>(mode, ta, tb, d, ops);
        const std::vector<double> expected = Float64Gemm(ta, tb, d, ops);
        // A sum of k rounded products: the error grows with k.
        const double tol = testing::ToleranceFor(dtype) * static_cast<double>(d.k);
        testing::ExpectClose(Tensor::FromVector(c, {d.m, d.n}), expected, {d.m, d.n}, tol,
                             std::string(GemmModeName(mode)) + " " + Describe(d, ta, tb));
      }
    }
  }
}

TEST(GemmTest, BlasIsCloseToFloat64) {
  ExpectCloseToFloat64<float>(GemmMode::kBlas);
  ExpectCloseToFloat64<double>(GemmMode::kBlas);
}

TEST(GemmTest, ReferenceIsCloseToFloat64) {
  ExpectCloseToFloat64<float>(GemmMode::kReference);
  ExpectCloseToFloat64<double>(GemmMode::kReference);
}

template <typename T>
void ExpectBlasBitsIndependentOfThreads() {
  // Two and three row blocks (of 1024 rows), with sizes at which OpenBLAS's own threading
  // changes bits.
  for (const Dims& d : std::vector<Dims>{{1025, 129, 300}, {2048, 64, 1000}, {2100, 333, 450}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const Operands ops = MakeOperands(DTypeOf<T>(), d, ta, tb, 55);
        SetBlasThreads(1);
        const std::vector<T> one = RunGemm<T>(GemmMode::kBlas, ta, tb, d, ops);
        SetBlasThreads(2);
        ASSERT_EQ(BlasThreads(), 2);
        const std::vector<T> two = RunGemm<T>(GemmMode::kBlas, ta, tb, d, ops);
        SetBlasThreads(1);
        EXPECT_TRUE(SameBits(one, two)) << Describe(d, ta, tb);
      }
    }
  }
}

TEST(GemmTest, BlasBitsDoNotDependOnTheThreadCount) {
  ExpectBlasBitsIndependentOfThreads<float>();
  ExpectBlasBitsIndependentOfThreads<double>();
  EXPECT_EQ(BlasThreads(), 1);
}

TEST(GemmTest, EmptyInnerDimWritesZerosAndEmptyOutputWritesNothing) {
  for (GemmMode mode : {GemmMode::kBlas, GemmMode::kReference}) {
    std::vector<float> c(6, 5.0f);
    ASSERT_TRUE(Gemm<float>(mode, false, false, 2, 3, 0, nullptr, nullptr, c.data()).ok());
    EXPECT_EQ(c, std::vector<float>(6, 0.0f)) << GemmModeName(mode);
    std::vector<double> untouched(1, 5.0);
    ASSERT_TRUE(Gemm<double>(mode, true, true, 0, 3, 4, nullptr, nullptr, untouched.data()).ok());
    ASSERT_TRUE(Gemm<double>(mode, false, true, 3, 0, 4, nullptr, nullptr, untouched.data()).ok());
    EXPECT_EQ(untouched[0], 5.0) << GemmModeName(mode);
  }
}

TEST(GemmTest, RejectsNegativeAndTooLargeDims) {
  float c = 0;
  EXPECT_EQ(
      Gemm<float>(GemmMode::kReference, false, false, -1, 2, 3, nullptr, nullptr, &c).message(),
      "GEMM dims must not be negative (m=-1, n=2, k=3)");
  EXPECT_EQ(
      Gemm<double>(GemmMode::kBlas, false, false, 1, 2, -3, nullptr, nullptr, nullptr).message(),
      "GEMM dims must not be negative (m=1, n=2, k=-3)");
  EXPECT_EQ(
      Gemm<float>(GemmMode::kBlas, false, false, 1, int64_t{INT_MAX} + 1, 3, nullptr, nullptr, &c)
          .message(),
      "GEMM dims (m=1, n=2147483648, k=3) exceed the BLAS's 32-bit index range");
}

}  // namespace
}  // namespace irm::rt
