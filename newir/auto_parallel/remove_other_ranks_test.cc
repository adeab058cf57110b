// Other ranks' ops: a program on a mesh that leaves out some ranks of the world, and a program that
// moves a value from one mesh to another (a pipeline's stage boundary). Without
// remove-other-ranks, dist-to-dense keeps every op in every rank's program (each typed with the
// local dims of its mesh's first process), so a rank outside a mesh would compute that mesh's work
// and fetch its results; Paddle's remove_other_rank_op_pass
// (python/paddle/distributed/auto_parallel/static/pir_pass.py) erases them, as here.
#include "newir/auto_parallel/remove_other_ranks.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/remove_other_ranks_test_support.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/auto_parallel/spmd_test_support.h"
#include "newir/printer.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using testing::Layout;
using Names = std::vector<std::string>;

Names OpNames(const Program& program) {
  Names names;
  for (Operation* op : program.block().ops()) names.emplace_back(op->name());
  return names;
}

// The two-layer forward with every input on mesh [2, 3] of a world of 4 (w1 by columns).
Program OnRanksTwoAndThree() {
  Program program = testing::TwoLayerForward(4);
  const TensorDistAttr replicated1 = Layout({2}, {2, 3}, {-1});
  const TensorDistAttr replicated2 = Layout({2}, {2, 3}, {-1, -1});
  testing::ShardInputs(program, {{"x", replicated2},
                                 {"w1", Layout({2}, {2, 3}, {-1, 0})},
                                 {"b1", Layout({2}, {2, 3}, {0})},
                                 {"w2", Layout({2}, {2, 3}, {0, -1})},
                                 {"b2", replicated1}});
  StatusOr<SpmdCompletionResult> done = CompleteSpmd(program);
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return program;
}

Status Lower(Program& program, int64_t rank, int64_t world) {
  ProcessGroupTable groups(world);
  IRM_RETURN_IF_ERROR(PlanProcessGroups(program, groups));
  return LowerReshards(program, rank, groups).status();
}

TEST(RemoveOtherRanksTest, OpsOfAMeshWithoutTheRankSurviveDistToDenseAlone) {
  // What the pass is for: rank 0 is not in the mesh, yet dist-to-dense alone leaves it the whole
  // forward, matmuls and the fetch included.
  Program program = OnRanksTwoAndThree();
  ASSERT_TRUE(Lower(program, 0, 4).ok());
  ASSERT_TRUE(DistToDense(program, 0).ok());
  const std::string text = PrintProgram(program);
  EXPECT_NE(text.find("pd_op.matmul"), std::string::npos) << text;
  EXPECT_NE(text.find("pd_op.fetch"), std::string::npos) << text;
}

TEST(RemoveOtherRanksTest, ARankOutsideTheMeshKeepsNothingOfIt) {
  for (int64_t rank : {0, 1}) {
    SCOPED_TRACE(rank);
    Program program = OnRanksTwoAndThree();
    ASSERT_TRUE(Lower(program, rank, 4).ok());
    const size_t before = OpNames(program).size();
    StatusOr<size_t> erased = RemoveOtherRankOps(program, rank);
    ASSERT_TRUE(erased.ok()) << erased.status().ToString();
    // Every op goes: the data ops with the shard_tensor ops they fed, the layers, the fetch.
    EXPECT_EQ(*erased, before);
    EXPECT_EQ(OpNames(program), Names{}) << PrintProgram(program);
    ASSERT_TRUE(DistToDense(program, rank).ok());
    EXPECT_TRUE(VerifyProgram(program).ok());
  }
  for (int64_t rank : {2, 3}) {
    SCOPED_TRACE(rank);
    Program program = OnRanksTwoAndThree();
    ASSERT_TRUE(Lower(program, rank, 4).ok());
    const Names lowered = OpNames(program);
    StatusOr<size_t> erased = RemoveOtherRankOps(program, rank);
    ASSERT_TRUE(erased.ok()) << erased.status().ToString();
    EXPECT_EQ(*erased, 0u);
    EXPECT_EQ(OpNames(program), lowered);
  }
}

TEST(RemoveOtherRanksTest, EachSideOfACrossMeshReshardKeepsItsOwnOps) {
  for (int64_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    Program program = testing::AcrossMeshes();
    ASSERT_TRUE(Lower(program, rank, 4).ok()) << PrintProgram(program);
    StatusOr<size_t> erased = RemoveOtherRankOps(program, rank);
    ASSERT_TRUE(erased.ok()) << erased.status().ToString();
    ASSERT_TRUE(DistToDense(program, rank).ok());
    const Status verified = VerifyProgram(program);
    EXPECT_TRUE(verified.ok()) << verified.ToString();
    const Names names = OpNames(program);
    const std::string text = PrintProgram(program);
    const auto count = [&](const std::string& name) {
      return std::count(names.begin(), names.end(), name);
    };
    if (rank < 2) {
      // The sender: its feed, its relu and the send; nothing of the receiving side.
      EXPECT_EQ(count("pd_op.data"), 1) << text;
      EXPECT_EQ(count("pd_op.relu"), 1) << text;
      EXPECT_EQ(count("pd_op.send_v2"), 1) << text;
      EXPECT_EQ(count("pd_op.recv_v2"), 0) << text;
      EXPECT_EQ(count("pd_op.fetch"), 0) << text;
    } else {
      // The receiver: no feed and no first relu (their values come by recv_v2).
      EXPECT_EQ(count("pd_op.data"), 0) << text;
      EXPECT_EQ(count("pd_op.relu"), 1) << text;
      EXPECT_EQ(count("pd_op.send_v2"), 0) << text;
      EXPECT_EQ(count("pd_op.recv_v2"), 1) << text;
      EXPECT_EQ(count("pd_op.fetch"), 1) << text;
    }
  }
}

TEST(RemoveOtherRanksTest, RefusesAKeptOpReadingAnotherRanksValue) {
  // A dense fetch (no op_dist_attr) of a value made on mesh [2, 3]: rank 0 would keep the fetch
  // and lose what it reads.
  Program program = OnRanksTwoAndThree();
  ASSERT_TRUE(Lower(program, 0, 4).ok());
  for (Operation* op : program.block().ops()) {
    if (op->name() == "pd_op.fetch") op->RemoveAttribute("op_dist_attr");
  }
  const size_t before = OpNames(program).size();
  StatusOr<size_t> erased = RemoveOtherRankOps(program, 0);
  ASSERT_FALSE(erased.ok());
  EXPECT_NE(erased.status().ToString().find("(pd_op.fetch): error: rank 0 runs this op, whose "
                                            "operand 0 is made by"),
            std::string::npos)
      << erased.status().ToString();
  EXPECT_NE(erased.status().ToString().find("only on ranks [2, 3]"), std::string::npos)
      << erased.status().ToString();
  EXPECT_EQ(OpNames(program).size(), before);  // nothing erased
}

}  // namespace
}  // namespace irm::newir
