// Communication traces: what a rank records, in order, with its call sites; nothing when off; and
// the comparison the parity engine uses, blind to call sites.
#include <gtest/gtest.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm/comm_trace.h"

namespace irm::rt {
namespace {

using testing::CommOf;
using testing::MakeWorld;

TEST(CommTraceTest, RecordsEveryCallInOrder) {
  ThreadWorldOptions options;
  options.trace = true;
  auto world = MakeWorld(2, {{1, {1, 0}}}, options);
  ASSERT_NE(world, nullptr);
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    Communicator& comm = CommOf(*world, rank);
                    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
                    IRM_RETURN_IF_ERROR(comm.AllReduce(t, ReduceOp::kAvg,
                                                       {"c_allreduce_sum", "backward", 1, 2, 9}));
                    IRM_RETURN_IF_ERROR(CommOf(*world, rank, 1).Broadcast(t, 1));
                    if (rank == 0) return comm.Send(t, 1);
                    Tensor in;
                    IRM_RETURN_IF_ERROR(comm.Recv(&in, 0));
                    return comm.Barrier();
                  })
                  .ok() == false);  // rank 1's barrier has no partner: a hang, traced all the same
  ASSERT_NE(world->trace(1), nullptr);
  const std::vector<CommRecord>& records = world->trace(1)->records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(DescribeRecord(records[0]),
            "all_reduce avg float32 x6 (ring 0, job backward, micro-batch 1, step 2, op 9)");
  EXPECT_EQ(DescribeRecord(records[1]), "broadcast float32 x6 from root 1 (ring 1)");
  EXPECT_EQ(DescribeRecord(records[2]), "recv float32 x6 from 0 (ring 0)");
  EXPECT_EQ(DescribeRecord(records[3]), "barrier (ring 0)");
  EXPECT_EQ(world->trace(0)->records().size(), 3u);
  EXPECT_EQ(DescribeRecord(world->trace(0)->records()[2]), "send float32 x6 to 1 (ring 0)");
}

TEST(CommTraceTest, OffRecordsNothing) {
  auto world = MakeWorld(1);
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(world->trace(0), nullptr);
  EXPECT_EQ(CommOf(*world, 0).trace(), nullptr);
}

TEST(CommTraceTest, FirstDifferenceIgnoresCallSites) {
  CommTrace a, b;
  CommRecord r;
  r.kind = CommKind::kAllReduce;
  r.count = 6;
  r.reduce = ReduceOp::kSum;
  r.site.op_type = "c_allreduce_sum";
  a.Add(r);
  r.site.op_type = "pd_op.all_reduce";
  r.site.op_index = 4;
  b.Add(r);
  EXPECT_EQ(FirstCommDifference(a, b), std::nullopt);
  r.dtype = DType::kFloat16;
  b.Add(r);
  EXPECT_EQ(FirstCommDifference(a, b), 1u);  // a ends first
  a.Add(r);
  a.mutable_records()[1].peer = 1;
  EXPECT_EQ(FirstCommDifference(a, b), 1u);
  a.mutable_records()[1].peer = -1;
  a.mutable_records()[1].reduce = ReduceOp::kMax;
  EXPECT_EQ(FirstCommDifference(a, b), 1u);
}

}  // namespace
}  // namespace irm::rt
