// Tests of dense tensor types built through the per-thread cache of shared storages (types.cc):
// whatever the cache holds or evicts, a type answers its own dtype, dims and layout, equal
// contents compare and hash equal, and different contents differ — also across threads.
#include "newir/types.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace irm::newir {
namespace {

// Type i of a family larger than the cache: dtype, dims and layout all vary with i.
struct Spec {
  Type dtype;
  std::vector<int64_t> dims;
  DataLayout layout;
};

Spec SpecOf(int i) {
  return {i % 2 == 0 ? Type::F32() : Type::I64(),
          i % 3 == 0 ? std::vector<int64_t>{i} : std::vector<int64_t>{i / 3, -1, 7},
          i % 5 == 0 ? DataLayout::kNHWC : DataLayout::kNCHW};
}

Type Make(const Spec& s) { return Type::DenseTensor(s.dtype, s.dims, s.layout); }

TEST(TypeCacheTest, EveryTypeKeepsItsContentThroughCacheEvictions) {
  constexpr int kTypes = 5000;
  std::vector<Type> first;
  for (int i = 0; i < kTypes; ++i) first.push_back(Make(SpecOf(i)));
  for (int i = kTypes - 1; i >= 0; --i) {
    const Spec s = SpecOf(i);
    const Type again = Make(s);
    ASSERT_EQ(first[i].kind(), TypeKind::kDenseTensor);
    EXPECT_EQ(first[i].dtype(), s.dtype) << i;
    EXPECT_EQ(first[i].dims(), s.dims) << i;
    EXPECT_EQ(first[i].layout(), s.layout) << i;
    EXPECT_EQ(again, first[i]) << i;
    EXPECT_EQ(again.Hash(), first[i].Hash()) << i;
    // Dims viewed in place make the same type.
    const Type viewed = Type::DenseTensorOfDims(s.dtype, s.dims, s.layout);
    EXPECT_EQ(viewed, first[i]) << i;
    EXPECT_EQ(viewed.Hash(), first[i].Hash()) << i;
    EXPECT_EQ(viewed.dims(), s.dims) << i;
    if (i > 0) {
      EXPECT_NE(first[i], first[i - 1]) << i;
    }
  }
}

TEST(TypeCacheTest, ContentsThatDifferInOneFieldDiffer) {
  const Type base = Type::DenseTensor(Type::F32(), {2, 3});
  EXPECT_EQ(Type::DenseTensor(Type::F32(), {2, 3}), base);
  EXPECT_NE(Type::DenseTensor(Type::F64(), {2, 3}), base);
  EXPECT_NE(Type::DenseTensor(Type::F32(), {3, 2}), base);
  EXPECT_NE(Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNHWC), base);
  EXPECT_NE(Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNCHW, {{0, 2}}), base);
  EXPECT_NE(Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNCHW, {}, 4), base);
  EXPECT_NE(Type::SelectedRows(Type::F32(), {2, 3}), base);
  EXPECT_EQ(Type::DenseTensor(Type::F32(), {2, 3}, DataLayout::kNCHW, {{0, 2}}).lod(),
            (LoD{{0, 2}}));
}

TEST(TypeCacheTest, TypesMadeOnAnotherThreadCompareByContent) {
  std::vector<Type> theirs;
  std::thread([&] {
    for (int i = 0; i < 100; ++i) theirs.push_back(Make(SpecOf(i)));
  }).join();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(Make(SpecOf(i)), theirs[i]) << i;
    EXPECT_EQ(theirs[i].dims(), SpecOf(i).dims) << i;
  }
}

}  // namespace
}  // namespace irm::newir
