// Reassembly of a var from the ranks that hold it (shard_assembly.h) on hand-made tensors: halves
// along either dim land where their offsets say, whole replicas fill everything, and what does
// not add up — elements nobody holds, replicas with other bits, a box outside the var, another
// dtype — is a finding that says where.
#include "diff_tests/shard_assembly.h"

#include <gtest/gtest.h>

#include <vector>

namespace irm::diff {
namespace {

using rt::Tensor;

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(AssembleVarTest, ColumnHalvesLandAtTheirOffsets) {
  // The global [2, 4] is [[0 1 2 3] [4 5 6 7]]; rank 0 holds columns 0-1, rank 1 columns 2-3.
  const Tensor left = Tensor::FromVector(std::vector<float>{0, 1, 4, 5}, {2, 2});
  const Tensor right = Tensor::FromVector(std::vector<float>{2, 3, 6, 7}, {2, 2});
  const oldir::ShardSlice left_slice{{2, 4}, {0, 0}};
  const oldir::ShardSlice right_slice{{2, 4}, {0, 2}};
  const AssembledVar a = AssembleVar("w", {{1, &right, &right_slice}, {0, &left, &left_slice}});
  ASSERT_TRUE(a.tensor.defined());
  EXPECT_TRUE(a.findings.empty()) << a.findings.front().message;
  EXPECT_EQ(a.tensor.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Values(a.tensor), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(AssembleVarTest, RowHalvesAndAWholeReplicaAgree) {
  const Tensor top = Tensor::FromVector(std::vector<float>{1, 2}, {1, 2});
  const Tensor bottom = Tensor::FromVector(std::vector<float>{3, 4}, {1, 2});
  const Tensor whole = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const oldir::ShardSlice top_slice{{2, 2}, {0, 0}};
  const oldir::ShardSlice bottom_slice{{2, 2}, {1, 0}};
  const AssembledVar a =
      AssembleVar("w", {{0, &top, &top_slice}, {1, &bottom, &bottom_slice}, {2, &whole, nullptr}});
  EXPECT_TRUE(a.findings.empty()) << a.findings.front().message;
  EXPECT_EQ(Values(a.tensor), (std::vector<float>{1, 2, 3, 4}));
}

TEST(AssembleVarTest, ElementsNoRankHoldsAreReported) {
  // Rows 0 and 1 of a [4, 2] var; rows 2 and 3 (elements 4..7) are held by nobody.
  const Tensor top = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  const oldir::ShardSlice slice{{4, 2}, {0, 0}};
  const AssembledVar a = AssembleVar("w", {{0, &top, &slice}});
  ASSERT_EQ(a.findings.size(), 1u);
  EXPECT_EQ(a.findings[0].kind, AssemblyFinding::Kind::kUncovered);
  EXPECT_EQ(a.findings[0].message,
            "4 of 8 elements of 'w' [4,2] are held by no rank, first at index 4");
  EXPECT_EQ(Values(a.tensor), (std::vector<float>{1, 2, 3, 4, 0, 0, 0, 0}));
}

TEST(AssembleVarTest, ReplicasWithOtherBitsAreAFindingOfTheirOwn) {
  const Tensor a0 = Tensor::FromVector(std::vector<float>{1, 2, 3}, {3});
  const Tensor a1 = Tensor::FromVector(std::vector<float>{1, 2.5f, 3.5f}, {3});
  const Tensor a2 = Tensor::FromVector(std::vector<float>{1, 2, 3}, {3});
  const AssembledVar a =
      AssembleVar("b", {{0, &a0, nullptr}, {1, &a1, nullptr}, {2, &a2, nullptr}});
  ASSERT_EQ(a.findings.size(), 1u);
  EXPECT_EQ(a.findings[0].kind, AssemblyFinding::Kind::kDisagree);
  EXPECT_EQ(a.findings[0].rank, 1);
  EXPECT_EQ(a.findings[0].message,
            "ranks 0 and 1 hold different bits of 'b' at 2 elements, first at index 1 (2 vs 2.5)");
  // The first holder's values make the tensor.
  EXPECT_EQ(Values(a.tensor), (std::vector<float>{1, 2, 3}));
}

TEST(AssembleVarTest, PiecesThatDoNotFitAreLayoutFindings) {
  const Tensor half = Tensor::FromVector(std::vector<float>{1, 2}, {1, 2});
  const Tensor wide = Tensor::FromVector(std::vector<double>{3, 4}, {1, 2});
  const oldir::ShardSlice first{{2, 2}, {0, 0}};
  const oldir::ShardSlice outside{{2, 2}, {2, 0}};
  const oldir::ShardSlice other_global{{4, 2}, {1, 0}};
  const AssembledVar a = AssembleVar(
      "w",
      {{0, &half, &first}, {1, &half, &outside}, {2, &half, &other_global}, {3, &wide, &first}});
  ASSERT_EQ(a.findings.size(), 4u);
  EXPECT_EQ(a.findings[0].message,
            "rank 1's 'w' (float32[1,2] at offsets [2,0]) lies outside the var's shape [2,2] in "
            "dim 0");
  EXPECT_EQ(a.findings[1].message,
            "rank 2's 'w' (float32[1,2] at offsets [1,0]) says the var is [4,2], another rank "
            "[2,2]");
  EXPECT_EQ(a.findings[2].message,
            "rank 3's 'w' (float64[1,2] at offsets [0,0]) is float64, the var float32");
  EXPECT_EQ(a.findings[3].kind, AssemblyFinding::Kind::kUncovered);
}

TEST(AssembleVarTest, NoPieceNoTensor) { EXPECT_FALSE(AssembleVar("w", {}).tensor.defined()); }

}  // namespace
}  // namespace irm::diff
