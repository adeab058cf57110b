// Reshard lowering: the op sequence of every kind, per rank, against the sequences Paddle's PIR
// reshard tests pin (test/auto_parallel/pir/pir_reshard_s_to_r.py, pir_reshard_p_to_s.py; their
// prefix builtin.parameter / pd_op.data / dist_op.shard_tensor is left out: here the tensor comes
// from dtensor_from_local) or, where no test pins one, the reshard function's own op order
// (python/paddle/distributed/auto_parallel/static/reshard_funcs/*.py); the rings every rank agrees
// on; and the located refusals.
#include "newir/auto_parallel/reshard_lowering.h"

#include <gtest/gtest.h>

#include "newir/auto_parallel/reshard_test_support.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

using testing::Layout;
using testing::LoweredOps;
using testing::ReshardProgram;
using Names = std::vector<std::string>;

const std::vector<int64_t> kLine = {0, 1};

TensorDistAttr Line(std::vector<int64_t> dims_mapping, std::map<int64_t, ReduceType> partial = {}) {
  return Layout({2}, kLine, std::move(dims_mapping), std::move(partial));
}
TensorDistAttr Partial1D(size_t rank) {
  return Line(std::vector<int64_t>(rank, -1), {{0, ReduceType::kSum}});
}

// Lowers the reshard of global dims `dims` from src to dst for `rank`; the program verifies.
Names Lower(const std::vector<int64_t>& dims, const TensorDistAttr& src, const TensorDistAttr& dst,
            int64_t rank, int64_t world = 2) {
  Program program = ReshardProgram(dims, src, dst, rank);
  ProcessGroupTable groups(world);
  EXPECT_TRUE(PlanProcessGroups(program, groups).ok());
  StatusOr<size_t> lowered = LowerReshards(program, rank, groups);
  EXPECT_TRUE(lowered.ok()) << lowered.status().ToString();
  const Status verified = VerifyProgram(program);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  return LoweredOps(program);
}

TEST(ReshardLoweringTest, ShardToReplicatedOnDim0IsOneAllGather) {
  // pir_reshard_s_to_r.py run_pir_test_case, shard 0.
  for (int64_t rank : {0, 1}) {
    EXPECT_EQ(Lower({8, 8}, Line({0, -1}), Line({-1, -1}), rank), (Names{"pd_op.all_gather"}));
  }
}

TEST(ReshardLoweringTest, ShardToReplicatedOnDim1SplitsAndConcatenates) {
  // pir_reshard_s_to_r.py run_pir_test_case, shard 1: the split's vector feeds the concat.
  for (int64_t rank : {0, 1}) {
    EXPECT_EQ(Lower({8, 8}, Line({-1, 0}), Line({-1, -1}), rank),
              (Names{"pd_op.all_gather", "pd_op.full", "pd_op.split_with_num", "pd_op.full",
                     "pd_op.concat"}));
  }
}

TEST(ReshardLoweringTest, UnevenShardToReplicatedPadsOnTheLastRank) {
  // pir_reshard_s_to_r.py run_pir_unbalanced_split_test_case (9 over 2 ranks: 5 and 4).
  const Names tail = {"pd_op.all_gather", "pd_op.full",           "pd_op.split_with_num",
                      "builtin.split",    "pd_op.full_int_array", "pd_op.full",
                      "pd_op.split",      "builtin.split",        "pd_op.full",
                      "builtin.combine",  "pd_op.concat"};
  Names padded = {"pd_op.full", "pd_op.full", "builtin.combine", "pd_op.concat"};
  padded.insert(padded.end(), tail.begin(), tail.end());
  for (const std::vector<int64_t>& mapping : {std::vector<int64_t>{0, -1}, {-1, 0}}) {
    EXPECT_EQ(Lower({9, 9}, Line(mapping), Line({-1, -1}), 0), tail);
    EXPECT_EQ(Lower({9, 9}, Line(mapping), Line({-1, -1}), 1), padded);
  }
}

TEST(ReshardLoweringTest, UnevenShardToReplicatedBesideADynamicDimPadsWithFullLike) {
  // No Paddle test pins this: the last rank's padding along the uneven dim cannot be a full of
  // static dims when another dim is dynamic, so it is made like the rank's piece (full_like of
  // [-1, 4], sliced to the 1 column of padding), then the s->r sequence of the static case.
  const Names tail = {"pd_op.all_gather", "pd_op.full",           "pd_op.split_with_num",
                      "builtin.split",    "pd_op.full_int_array", "pd_op.full",
                      "pd_op.split",      "builtin.split",        "pd_op.full",
                      "builtin.combine",  "pd_op.concat"};
  Names padded = {"pd_op.full",  "pd_op.full_like", "pd_op.full_int_array", "pd_op.full_int_array",
                  "pd_op.slice", "pd_op.full",      "builtin.combine",      "pd_op.concat"};
  padded.insert(padded.end(), tail.begin(), tail.end());
  EXPECT_EQ(Lower({-1, 9}, Line({-1, 0}), Line({-1, -1}), 0), tail);
  EXPECT_EQ(Lower({-1, 9}, Line({-1, 0}), Line({-1, -1}), 1), padded);
}

TEST(ReshardLoweringTest, PartialToShardIsReduceScatterTransposedOffDim0) {
  // pir_reshard_p_to_s.py run_pir_test_case ([4, 6]).
  for (int64_t rank : {0, 1}) {
    EXPECT_EQ(Lower({4, 6}, Partial1D(2), Line({0, -1}), rank), (Names{"pd_op.reduce_scatter"}));
    EXPECT_EQ(Lower({4, 6}, Partial1D(2), Line({-1, 0}), rank),
              (Names{"pd_op.transpose", "pd_op.reduce_scatter", "pd_op.transpose"}));
  }
}

TEST(ReshardLoweringTest, UnevenPartialToShardPadsEveryRankAndTheLastSplits) {
  // pir_reshard_p_to_s.py run_pir_unbalanced_split_test_case ([3, 7]).
  const Names pad = {"pd_op.full", "pd_op.full", "builtin.combine", "pd_op.concat",
                     "pd_op.reduce_scatter"};
  Names last = pad;
  for (const char* op : {"pd_op.full_int_array", "pd_op.full", "pd_op.split", "builtin.split"}) {
    last.push_back(op);
  }
  EXPECT_EQ(Lower({3, 7}, Partial1D(2), Line({0, -1}), 0), pad);
  EXPECT_EQ(Lower({3, 7}, Partial1D(2), Line({0, -1}), 1), last);
  Names transposed_pad = {"pd_op.transpose"};
  transposed_pad.insert(transposed_pad.end(), pad.begin(), pad.end());
  transposed_pad.push_back("pd_op.transpose");
  Names transposed_last = {"pd_op.transpose"};
  transposed_last.insert(transposed_last.end(), last.begin(), last.end());
  transposed_last.push_back("pd_op.transpose");
  EXPECT_EQ(Lower({3, 7}, Partial1D(2), Line({-1, 0}), 0), transposed_pad);
  EXPECT_EQ(Lower({3, 7}, Partial1D(2), Line({-1, 0}), 1), transposed_last);
}

TEST(ReshardLoweringTest, PartialToReplicatedIsOneAllReduce) {
  // p_to_r_reshard_func.py: all_reduce with the partial status's reduce type.
  EXPECT_EQ(Lower({3, 5}, Partial1D(2), Line({-1, -1}), 0), (Names{"pd_op.all_reduce"}));
}

TEST(ReshardLoweringTest, ReplicatedToShardSlicesTheRanksPiece) {
  // r_to_s_reshard_func.py: paddle.slice, whose list bounds become two full_int_array.
  for (int64_t rank : {0, 1}) {
    EXPECT_EQ(Lower({5, 3}, Line({-1, -1}), Line({0, -1}), rank),
              (Names{"pd_op.full_int_array", "pd_op.full_int_array", "pd_op.slice"}));
  }
}

TEST(ReshardLoweringTest, ShardToShardIsAllToAllWithBlockMoves) {
  // s_to_s_reshard_func.py: the new shard axis is cut into blocks moved to dim 0 (reshape,
  // transpose, reshape) before all_to_all; blocks come back to the old axis after it.
  const Names to_front = {"pd_op.full_int_array", "pd_op.reshape", "pd_op.transpose",
                          "pd_op.full_int_array", "pd_op.reshape"};
  Names zero_to_one = to_front;
  zero_to_one.push_back("pd_op.all_to_all");
  EXPECT_EQ(Lower({4, 6, 2}, Line({0, -1, -1}), Line({-1, 0, -1}), 0), zero_to_one);
  Names one_to_zero = {"pd_op.share_data_", "pd_op.all_to_all"};
  one_to_zero.insert(one_to_zero.end(), to_front.begin(), to_front.end());
  EXPECT_EQ(Lower({4, 6, 2}, Line({-1, 0, -1}), Line({0, -1, -1}), 1), one_to_zero);
}

TEST(ReshardLoweringTest, CrossMeshSendsFromTheSourceAndReceivesOnTheDestination) {
  // same_status_reshard_func.py: send_v2 / recv_v2 between the ranks at one mesh position; the
  // destination then reshards on its own mesh (s_to_r_reshard_func.py's CrossMesh variant).
  const TensorDistAttr from = Layout({2}, {0, 1}, {0, -1});
  const TensorDistAttr to = Layout({2}, {2, 3}, {0, -1});
  const TensorDistAttr to_replicated = Layout({2}, {2, 3}, {-1, -1});
  EXPECT_EQ(Lower({4, 3}, from, to, 0, 4), (Names{"pd_op.send_v2", "pd_op.full"}));
  EXPECT_EQ(Lower({4, 3}, from, to, 3, 4), (Names{"pd_op.recv_v2"}));
  EXPECT_EQ(Lower({4, 3}, from, to_replicated, 2, 4), (Names{"pd_op.recv_v2", "pd_op.all_gather"}));
}

// A pipeline's cross-mesh reshard carries its reader's op_role and chunk_id
// (spmd_completion.h): its send_v2 and recv_v2 run in the reader's role, the recv in the reader's
// chunk and the send in the chunk of the op that made the value (same_status_reshard_func.py:
// the send's dist_attr takes src_value's defining op's chunk_id, the recv its user's), as a
// pipeline's job split needs them (pipeline_split.h).
TEST(ReshardLoweringTest, CrossMeshSendAndRecvTakeTheRoleAndTheirStagesChunk) {
  const TensorDistAttr from = Layout({1}, {0}, {-1, -1});
  const TensorDistAttr to = Layout({1}, {1}, {-1, -1});
  for (int64_t rank : {0, 1}) {
    Program program = ReshardProgram({4, 3}, from, to, rank);
    Operation* made = nullptr;
    Operation* reshard = nullptr;
    for (Operation* op = program.block().front(); op != nullptr; op = op->next()) {
      if (op->name() == "dist_op.dtensor_from_local") made = op;
      if (op->name() == "dist_op.reshard") reshard = op;
    }
    ASSERT_NE(made, nullptr);
    ASSERT_NE(reshard, nullptr);
    made->SetAttribute("chunk_id", Attribute::Int32(0));
    reshard->SetAttribute("op_role", Attribute::Int32(1));
    reshard->SetAttribute("chunk_id", Attribute::Int32(1));
    ProcessGroupTable groups(2);
    ASSERT_TRUE(PlanProcessGroups(program, groups).ok());
    ASSERT_TRUE(LowerReshards(program, rank, groups).ok());
    const std::string comm = rank == 0 ? "pd_op.send_v2" : "pd_op.recv_v2";
    int found = 0;
    for (Operation* op = program.block().front(); op != nullptr; op = op->next()) {
      if (op->name() != comm) continue;
      ++found;
      ASSERT_NE(op->attribute("op_role").AsInt32(), nullptr) << comm;
      EXPECT_EQ(*op->attribute("op_role").AsInt32(), 1) << comm;
      ASSERT_NE(op->attribute("chunk_id").AsInt32(), nullptr) << comm;
      EXPECT_EQ(*op->attribute("chunk_id").AsInt32(), rank == 0 ? 0 : 1) << comm;
      // One two-rank group [src, dst]: peer 1 on the sender, 0 on the receiver.
      EXPECT_EQ(*op->attribute("peer").AsInt32(), rank == 0 ? 1 : 0) << comm;
      const int32_t ring = *op->attribute("ring_id").AsInt32();
      EXPECT_EQ(groups.groups().at(ring), (std::vector<int64_t>{0, 1})) << comm;
    }
    EXPECT_EQ(found, 1) << comm;
  }
}

TEST(ReshardLoweringTest, TwoDimMeshGoesDimByDim) {
  // nd_mesh_reshard_func.py: partial mesh dims to replicated first, then shards to replicated
  // from the last differing tensor dim down, then slices.
  const TensorDistAttr both = Layout({2, 2}, {0, 1, 2, 3}, {0, 1});
  const TensorDistAttr replicated = Layout({2, 2}, {0, 1, 2, 3}, {-1, -1});
  EXPECT_EQ(Lower({4, 6}, both, replicated, 0, 4),
            (Names{"pd_op.all_gather", "pd_op.full", "pd_op.split_with_num", "pd_op.full",
                   "pd_op.concat", "pd_op.all_gather"}));
  const TensorDistAttr partial_rows =
      Layout({2, 2}, {0, 1, 2, 3}, {1, -1}, {{0, ReduceType::kSum}});
  const TensorDistAttr cols = Layout({2, 2}, {0, 1, 2, 3}, {-1, 0});
  EXPECT_EQ(Lower({4, 6}, partial_rows, cols, 3, 4),
            (Names{"pd_op.all_reduce", "pd_op.all_gather", "pd_op.full_int_array",
                   "pd_op.full_int_array", "pd_op.slice"}));
}

TEST(ReshardLoweringTest, EveryRankGetsTheSameRings) {
  Program program = ReshardProgram({4, 6}, Layout({2, 2}, {0, 1, 2, 3}, {0, 1}),
                                   Layout({2, 2}, {0, 1, 2, 3}, {-1, -1}), 0);
  ProcessGroupTable groups(4);
  ASSERT_TRUE(PlanProcessGroups(program, groups).ok());
  // Rank 0 gathers over mesh dim 1 ([0, 1]) then 0 ([0, 2]); rank 1 adds [1, 3]; rank 2 [2, 3].
  const std::map<int64_t, std::vector<int64_t>> want = {
      {0, {0, 1, 2, 3}}, {1, {0, 1}}, {2, {0, 2}}, {3, {1, 3}}, {4, {2, 3}}};
  EXPECT_EQ(groups.groups(), want);
  ProcessGroupTable copy = groups;
  ASSERT_TRUE(LowerReshards(program, 0, copy).ok());
  EXPECT_EQ(copy.groups(), want);
  std::vector<int32_t> rings;
  for (Operation* op = program.block().front(); op != nullptr; op = op->next()) {
    if (op->name() == "pd_op.all_gather") rings.push_back(*op->attribute("ring_id").AsInt32());
  }
  EXPECT_EQ(rings, (std::vector<int32_t>{1, 2}));
}

// ---- refusals --------------------------------------------------------------------------------

Status LowerError(const std::vector<int64_t>& dims, const TensorDistAttr& src,
                  const TensorDistAttr& dst, int64_t rank) {
  Program program = ReshardProgram(dims, src, dst, rank);
  ProcessGroupTable groups(4);
  return PlanProcessGroups(program, groups);
}

TEST(ReshardLoweringTest, DynamicBatchIsTakenAsEvenlySplit) {
  // A translated program's batch is -1. The runtime gives every data-parallel replica as many
  // rows, so s->r on it is the even case of pir_reshard_s_to_r.py (one all_gather on dim 0, no
  // padding), and r->s, whose slice bounds are not known, takes the rank's piece of an even
  // split_with_num.
  for (int64_t rank : {0, 1}) {
    EXPECT_EQ(Lower({-1, 4}, Line({0, -1}), Line({-1, -1}), rank), (Names{"pd_op.all_gather"}));
    EXPECT_EQ(Lower({-1, 4}, Line({-1, -1}), Line({0, -1}), rank),
              (Names{"pd_op.full", "pd_op.split_with_num", "builtin.split"}));
  }
  // p->s on a dynamic dim still needs its size.
  Program program = ReshardProgram({-1, 4}, Partial1D(2), Line({0, -1}), 0);
  ProcessGroupTable groups(2);
  EXPECT_FALSE(PlanProcessGroups(program, groups).ok());
}

TEST(ReshardLoweringTest, RefusalsNameTheReshardAndItsValue) {
  Status status = LowerError({4, 6}, Line({-1, -1}), Partial1D(2), 0);
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "op 2 (dist_op.reshard), var 'result 0 of dist_op.dtensor_from_local': error: r->p is "
            "not supported (from dims_mapping [-1,-1] to dims_mapping [-1,-1], partial(0,SUM))");
  status = LowerError({3, 6}, Line({0, -1}), Line({-1, 0}), 0);
  EXPECT_NE(status.message().find("s->s needs dim 0 (3) divisible by the 2 ranks"),
            std::string::npos)
      << status.ToString();
  status = LowerError({4, 6}, Layout({2}, {0, 1}, {0, -1}), Layout({2}, {1, 2}, {0, -1}), 1);
  EXPECT_NE(status.message().find("rank 1 sits at position 1 of the source mesh and 0 of the "
                                  "destination mesh"),
            std::string::npos)
      << status.ToString();
  status = LowerError({4, 6}, Layout({2}, {0, 1}, {0, -1}), Layout({1}, {2}, {-1, -1}), 0);
  EXPECT_NE(status.message().find("no reshard between meshes of shapes [2] and [1]"),
            std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace irm::newir
