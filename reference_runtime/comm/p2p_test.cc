// Point-to-point in the thread world: synchronous sends matched in order per pair, receives into a
// declared tensor or a fresh one, peers as group ranks of sub-groups, and the errors of a receive
// that does not fit the message and of bad peers.
#include <gtest/gtest.h>

#include <vector>

#include "reference_runtime/comm/comm_testing.h"
#include "reference_runtime/kernels/kernel_testing.h"

namespace irm::rt {
namespace {

using testing::CommOf;
using testing::MakeWorld;
using testing::ToDoubles;

TEST(P2PTest, MessagesBetweenAPairMatchInOrder) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> received(3);
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    Communicator& comm = CommOf(*world, rank);
                    for (int i = 0; i < 3; ++i) {
                      if (rank == 0) {
                        IRM_RETURN_IF_ERROR(
                            comm.Send(Tensor::FromVector<float>({i + 0.5f, -1.0f * i}, {2}), 1));
                      } else {
                        received[static_cast<size_t>(i)] =
                            Tensor::ZerosUnchecked(DType::kFloat32, {2});
                        IRM_RETURN_IF_ERROR(comm.Recv(&received[static_cast<size_t>(i)], 0));
                      }
                    }
                    return Status::Ok();
                  })
                  .ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ToDoubles(received[static_cast<size_t>(i)]),
              (std::vector<double>{i + 0.5, -1.0 * i}));
  }
}

TEST(P2PTest, ARingOfExchangesWithSendRecvOrderedByParity) {
  // Even ranks send first, odd ranks receive first: the classic way around the synchronous send.
  for (int n : {2, 3, 4}) {
    auto world = MakeWorld(n);
    ASSERT_NE(world, nullptr);
    std::vector<Tensor> got(static_cast<size_t>(n));
    const Status status = world->RunRanks([&](int rank) -> Status {
      Communicator& comm = CommOf(*world, rank);
      const Tensor mine = Tensor::FromVector<int64_t>({rank * 10}, {1});
      const int next = (rank + 1) % n;
      const int prev = (rank + n - 1) % n;
      Tensor& in = got[static_cast<size_t>(rank)];
      if (rank % 2 == 0) {
        IRM_RETURN_IF_ERROR(comm.Send(mine, next));
        return comm.Recv(&in, prev);
      }
      IRM_RETURN_IF_ERROR(comm.Recv(&in, prev));
      return comm.Send(mine, next);
    });
    // With an odd n, rank n-1 (even) and rank 0 both send first: 0 -> 1 completes, so no hang.
    ASSERT_TRUE(status.ok()) << status.ToString();
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(got[static_cast<size_t>(r)].data<int64_t>()[0], ((r + n - 1) % n) * 10);
    }
  }
}

TEST(P2PTest, PeersAreGroupRanks) {
  // Ring 3 = {2, 0}: group rank 0 is global 2.
  auto world = MakeWorld(3, {{3, {2, 0}}});
  ASSERT_NE(world, nullptr);
  Tensor got;
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    if (rank == 2) {
                      return CommOf(*world, 2, 3).Send(Tensor::FromVector<double>({7.0}, {1}), 1);
                    }
                    if (rank == 0) return CommOf(*world, 0, 3).Recv(&got, 0);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(ToDoubles(got), (std::vector<double>{7.0}));
}

TEST(P2PTest, AReceiveThatDoesNotFitFailsOnBothRanks) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(*world, rank);
    if (rank == 0) {
      return comm.Send(Tensor::ZerosUnchecked(DType::kFloat32, {3}), 1,
                       {"send_v2", "forward", 1, 0, 5});
    }
    Tensor out = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
    return comm.Recv(&out, 0, {"recv_v2", "forward", 1, 0, 2});
  });
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  const std::string message =
      "recv_v2 on rank 1 expects float32[2, 3] from rank 0 (ring 0, job forward, micro-batch 1, "
      "step 0, op 2), but rank 0 sends float32[3] (send_v2, ring 0, job forward, micro-batch 1, "
      "step 0, op 5)";
  EXPECT_EQ(status.message(), message);
  EXPECT_EQ(world->rank_statuses()[1].message(), message);
}

TEST(P2PTest, BadPeers) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  Communicator& comm = CommOf(*world, 0);
  const Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {1});
  EXPECT_EQ(comm.Send(t, 0).message(), "send: peer 0 is this rank (ring 0)");
  EXPECT_EQ(comm.Send(t, 2, {"p_send", "", 0, 0, 1}).message(),
            "p_send: peer 2 is not a rank of the group (2 ranks) (ring 0, op 1)");
  Tensor out;
  EXPECT_EQ(comm.Recv(&out, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(comm.Recv(&out, -1).message(),
            "recv: peer -1 is not a rank of the group (2 ranks) (ring 0)");
}

}  // namespace
}  // namespace irm::rt
