// Hangs and failures in the thread world: two ranks that both send first, a cycle of sends,
// mismatched calls that can never meet, a rank that finishes while its peer waits on it, a rank
// that fails while others wait, and the timeout for a rank stuck outside the world. Structural
// hangs must be reported at once (well under a second), never by the 60 s timeout.
#include <gtest/gtest.h>

#include <regex>

#include <chrono>
#include <thread>

#include "reference_runtime/comm/comm_test_support.h"

namespace irm::rt {
namespace {

using testing::CommOf;
using testing::MakeWorld;

using Clock = std::chrono::steady_clock;

TEST(HangTest, BothRanksSendFirst) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const auto start = Clock::now();
  const Status status = world->RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(*world, rank);
    const Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
    IRM_RETURN_IF_ERROR(comm.Send(t, 1 - rank, {"send_v2", "forward", 0, 0, 7}));
    Tensor in = Tensor::ZerosUnchecked(DType::kFloat32, {4});
    return comm.Recv(&in, 1 - rank, {"recv_v2", "forward", 0, 0, 8});
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));  // at once; slack for a loaded machine
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, job forward, "
            "micro-batch 0, step 0, op 7); rank 1 waits in send_v2 to rank 0 (ring 0, job "
            "forward, micro-batch 0, step 0, op 7)");
  EXPECT_EQ(world->rank_statuses()[0].message(), status.message());
  EXPECT_EQ(world->rank_statuses()[1].message(), status.message());
}

TEST(HangTest, ACycleOfSendsOnThreeRanks) {
  auto world = MakeWorld(3);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    return CommOf(*world, rank).Send(Tensor::ZerosUnchecked(DType::kInt32, {1}), (rank + 1) % 3);
  });
  EXPECT_EQ(status.message(),
            "hang: no rank can progress: rank 0 waits in send to rank 1 (ring 0); rank 1 waits "
            "in send to rank 2 (ring 0); rank 2 waits in send to rank 0 (ring 0)");
}

TEST(HangTest, ACollectiveAgainstASend) {
  auto world = MakeWorld(3, {{1, {1, 2}}});
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2});
    if (rank == 2) return CommOf(*world, 2, 1).Send(t, 0, {"send_v2", "", 0, 0, 3});
    if (rank == 1)
      return CommOf(*world, 1).AllReduce(t, ReduceOp::kSum, {"c_allreduce_sum", "", 0, 0, 3});
    return CommOf(*world, 0).AllReduce(t, ReduceOp::kSum, {"c_allreduce_sum", "", 0, 0, 3});
  });
  EXPECT_EQ(status.message(),
            "hang: no rank can progress: rank 0 waits in c_allreduce_sum for rank 2 (ring 0, op "
            "3); rank 1 waits in c_allreduce_sum for rank 2 (ring 0, op 3); rank 2 waits in "
            "send_v2 to rank 1 (ring 1, op 3)");
}

TEST(HangTest, ARankFinishesWhileItsPeerWaitsOnIt) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const auto start = Clock::now();
  const Status status = world->RunRanks([&](int rank) -> Status {
    if (rank == 1) return Status::Ok();
    Tensor in;
    return CommOf(*world, 0).Recv(&in, 1, {"recv_v2", "", 0, 0, 3});
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));  // at once; slack for a loaded machine
  EXPECT_EQ(status.message(),
            "hang: rank 1 finished while rank 0 waits in recv_v2 from rank 1 (ring 0, op 3)");
  EXPECT_TRUE(world->rank_statuses()[1].ok());
}

TEST(HangTest, ARankThatFinishedCannotJoinACollective) {
  auto world = MakeWorld(3);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    if (rank == 2) return Status::Ok();
    return CommOf(*world, rank).Barrier({"barrier", "", 0, 0, 0});
  });
  // Which ranks had reached the barrier when rank 2 finished depends on the threads' timing: the
  // report names a waiting rank and every rank it still waits for, rank 2 among them.
  EXPECT_TRUE(std::regex_match(status.message(),
                               std::regex("hang: rank 2 finished while rank [01] waits in barrier "
                                          "for (rank 2|ranks [01], 2) \\(ring 0, op 0\\)")))
      << status.message();
}

TEST(HangTest, AFailingRankWakesTheOthers) {
  auto world = MakeWorld(3);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    if (rank == 1) return Status(StatusCode::kInvalid, Location{}, "matmul: bad shapes");
    Tensor in;
    return CommOf(*world, rank).Recv(&in, 1);
  });
  // The cause, not its echo: rank 1's own failure.
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.message(), "matmul: bad shapes");
  for (int r : {0, 2}) {
    EXPECT_EQ(world->rank_statuses()[static_cast<size_t>(r)].code(), StatusCode::kInternal);
    EXPECT_EQ(world->rank_statuses()[static_cast<size_t>(r)].message(),
              "rank 1 failed: matmul: bad shapes");
  }
}

TEST(HangTest, ARankStuckOutsideTheWorldTimesOut) {
  ThreadWorldOptions options;
  options.timeout = std::chrono::milliseconds(100);
  auto world = MakeWorld(2, {}, options);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // well past the timeout
      return Status::Ok();
    }
    Tensor in;
    return CommOf(*world, 0).Recv(&in, 1);
  });
  EXPECT_EQ(status.message(),
            "hang: rank 0 waited 100 ms without progress: rank 0 waits in recv from rank 1 (ring "
            "0); rank 1 is busy outside communication");
}

TEST(HangTest, TheWorldRunsAgainAfterAHang) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  EXPECT_FALSE(
      world
          ->RunRanks([&](int rank) {
            return CommOf(*world, rank).Send(Tensor::ZerosUnchecked(DType::kInt8, {1}), 1 - rank);
          })
          .ok());
  std::vector<Tensor> t = {Tensor::FromVector<float>({1.0f}, {1}),
                           Tensor::FromVector<float>({2.0f}, {1})};
  ASSERT_TRUE(
      world
          ->RunRanks([&](int rank) {
            return CommOf(*world, rank).AllReduce(t[static_cast<size_t>(rank)], ReduceOp::kSum);
          })
          .ok());
  EXPECT_EQ(t[1].data<float>()[0], 3.0f);
}

}  // namespace
}  // namespace irm::rt
