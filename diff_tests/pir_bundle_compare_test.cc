// The op-sequence alignment of the three-way check (pir_bundle_compare.h): equal sequences, ops on
// one side only, and the same op at another place (moved), with their positions.
#include "diff_tests/pir_bundle_compare.h"

#include <gtest/gtest.h>

namespace irm::diff {
namespace {

using Kind = AlignedOp::Kind;
using Ops = std::vector<std::string>;

std::vector<AlignedOp> Differences(const Ops& a, const Ops& b) {
  std::vector<AlignedOp> out;
  for (const AlignedOp& op : AlignOpSequences(a, b)) {
    if (op.kind != Kind::kSame) out.push_back(op);
  }
  return out;
}

TEST(PirBundleCompareTest, EqualSequencesAlignOneToOne) {
  const Ops ops = {"pd_op.data", "pd_op.matmul", "pd_op.add", "pd_op.fetch"};
  const std::vector<AlignedOp> aligned = AlignOpSequences(ops, ops);
  ASSERT_EQ(aligned.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(aligned[i], (AlignedOp{Kind::kSame, ops[i], i, i}));
  }
}

TEST(PirBundleCompareTest, OpsOnOneSideOnly) {
  // B has an all_reduce after the matmul and lacks A's c_identity.
  const Ops a = {"pd_op.data", "pd_op.c_identity", "pd_op.matmul", "pd_op.add"};
  const Ops b = {"pd_op.data", "pd_op.matmul", "pd_op.all_reduce", "pd_op.add"};
  EXPECT_EQ(Differences(a, b), (std::vector<AlignedOp>{{Kind::kOnlyA, "pd_op.c_identity", 1, -1},
                                                       {Kind::kOnlyB, "pd_op.all_reduce", -1, 2}}));
}

TEST(PirBundleCompareTest, TheSameOpElsewhereIsMoved) {
  // The all_reduce of a grad runs right after its producer in A, before the optimizer in B.
  const Ops a = {"pd_op.matmul_grad", "pd_op.all_reduce", "pd_op.add_grad", "pd_op.sgd_"};
  const Ops b = {"pd_op.matmul_grad", "pd_op.add_grad", "pd_op.all_reduce", "pd_op.sgd_"};
  const std::vector<AlignedOp> differences = Differences(a, b);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].kind, Kind::kMoved);
  EXPECT_EQ(differences[0].name,
            differences[0].index_a == 1 ? "pd_op.all_reduce" : "pd_op.add_grad");
  EXPECT_NE(differences[0].index_a, differences[0].index_b);
}

TEST(PirBundleCompareTest, ReportsEveryDifferingProgram) {
  PirBundleComparison comparison;
  comparison.same_op_order = false;
  comparison.programs.push_back({0, "startup", true, 3, 3, {}});
  comparison.programs.push_back(
      {1,
       "main",
       false,
       4,
       4,
       {{Kind::kOnlyA, "pd_op.c_identity", 1, -1}, {Kind::kMoved, "pd_op.all_reduce", 5, 7}}});
  EXPECT_EQ(DescribeOpDifferences(comparison),
            "rank 1 main: 4 ops in A, 4 in B\n"
            "  only in A: #1 pd_op.c_identity\n"
            "  moved: pd_op.all_reduce A#5 B#7\n");
  comparison.same_op_order = true;
  EXPECT_EQ(DescribeOpDifferences(comparison),
            "every rank's programs have the same ops in the same order\n");
}

TEST(PirBundleCompareTest, RefusesWhatIsNotAPirBundle) {
  StatusOr<PirBundleComparison> compared = ComparePirBundles("/nonexistent/a", "/nonexistent/b");
  EXPECT_FALSE(compared.ok());
}

}  // namespace
}  // namespace irm::diff
