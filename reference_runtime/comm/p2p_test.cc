// Point-to-point in the thread world: synchronous sends matched in order per pair, receives into a
// declared tensor or a fresh one, peers as group ranks of sub-groups, and the errors of a receive
// that does not fit the message and of bad peers; the buffered model (a send returns at once while
// its channel holds fewer than K unreceived messages), its depth, and the same bits under both
// models.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using schedules::P2pModel;
using testing::CommOf;
using testing::MakeWorld;
using testing::ToDoubles;

using Clock = std::chrono::steady_clock;

std::unique_ptr<ThreadWorld> MakeBufferedWorld(int n, int depth) {
  ThreadWorldOptions options;
  options.p2p = P2pModel::Buffered(depth);
  return MakeWorld(n, {}, options);
}

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

// ---- the buffered model ----------------------------------------------------------------------

TEST(P2PBufferedTest, BothRanksSendFirstAndComplete) {
  // The exchange that hangs under rendezvous (hang_test.cc, BothRanksSendFirst).
  auto world = MakeBufferedWorld(2, 1);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> got(2);
  const Status status = world->RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(*world, rank);
    IRM_RETURN_IF_ERROR(comm.Send(Tensor::FromVector<float>({rank + 1.5f}, {1}), 1 - rank,
                                  {"send_v2", "forward", 0, 0, 7}));
    return comm.Recv(&got[static_cast<size_t>(rank)], 1 - rank, {"recv_v2", "forward", 0, 0, 8});
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ToDoubles(got[0]), (std::vector<double>{2.5}));
  EXPECT_EQ(ToDoubles(got[1]), (std::vector<double>{1.5}));
}

TEST(P2PBufferedTest, TheSenderMayReuseItsTensorAtOnce) {
  auto world = MakeBufferedWorld(2, 3);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> got(3);
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    Communicator& comm = CommOf(*world, rank);
                    if (rank == 0) {
                      Tensor t = Tensor::FromVector<int32_t>({0, 0}, {2});
                      for (int i = 0; i < 3; ++i) {
                        t.data<int32_t>()[0] = i;
                        t.data<int32_t>()[1] = 10 * i;
                        IRM_RETURN_IF_ERROR(comm.Send(t, 1));
                      }
                      return Status::Ok();
                    }
                    for (Tensor& g : got) IRM_RETURN_IF_ERROR(comm.Recv(&g, 0));
                    return Status::Ok();
                  })
                  .ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ToDoubles(got[static_cast<size_t>(i)]), (std::vector<double>{1.0 * i, 10.0 * i}));
  }
}

// Both ranks send `sends` messages to each other, then receive them all: it completes when a
// channel holds `sends` unreceived messages, and hangs in the last send otherwise.
Status SendManyThenReceive(ThreadWorld& world, int sends) {
  return world.RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(world, rank);
    for (int i = 0; i < sends; ++i) {
      IRM_RETURN_IF_ERROR(comm.Send(Tensor::FromVector<float>({1.0f * i}, {1}), 1 - rank,
                                    {"send_v2", "forward", i, 0, 3}));
    }
    for (int i = 0; i < sends; ++i) {
      Tensor in;
      IRM_RETURN_IF_ERROR(comm.Recv(&in, 1 - rank, {"recv_v2", "forward", i, 0, 1}));
      if (in.data<float>()[0] != 1.0f * i) {
        return Status(StatusCode::kInternal, Location{}, "messages out of order");
      }
    }
    return Status::Ok();
  });
}

TEST(P2PBufferedTest, AChannelHoldsDepthUnreceivedMessages) {
  for (int depth : {1, 2, 3}) {
    auto world = MakeBufferedWorld(2, depth);
    ASSERT_NE(world, nullptr);
    EXPECT_TRUE(SendManyThenReceive(*world, depth).ok()) << depth;
    const auto start = Clock::now();
    const Status status = SendManyThenReceive(*world, depth + 1);
    // A full channel is a structural hang: reported at once (slack for a loaded machine).
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(status.message(),
              fmt::format("hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, "
                          "job forward, micro-batch {0}, step 0, op 3); rank 1 waits in send_v2 "
                          "to rank 0 (ring 0, job forward, micro-batch {0}, step 0, op 3)",
                          depth))
        << depth;
  }
}

TEST(P2PBufferedTest, ReceivesOnEmptyChannelsHangAtOnce) {
  auto world = MakeBufferedWorld(2, 4);
  ASSERT_NE(world, nullptr);
  const auto start = Clock::now();
  const Status status = world->RunRanks([&](int rank) -> Status {
    Tensor in;
    return CommOf(*world, rank).Recv(&in, 1 - rank, {"recv_v2", "backward", 1, 0, 0});
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.message(),
            "hang: no rank can progress: rank 0 waits in recv_v2 from rank 1 (ring 0, job "
            "backward, micro-batch 1, step 0, op 0); rank 1 waits in recv_v2 from rank 0 (ring 0, "
            "job backward, micro-batch 1, step 0, op 0)");
}

TEST(P2PBufferedTest, MessagesToAFinishedRankFailItsReceiver) {
  // Rank 1 finishes at once: before rank 0's first send, between the two, or while the second
  // waits on the full channel. Every order names the one message rank 1 left unreceived (the
  // second is not yet sent, or its sender still waits on it).
  for (int run = 0; run < 5; ++run) {
    auto world = MakeBufferedWorld(2, 1);
    ASSERT_NE(world, nullptr);
    const Status status = world->RunRanks([&](int rank) -> Status {
      if (rank == 1) return Status::Ok();
      Communicator& comm = CommOf(*world, 0);
      const Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {1});
      IRM_RETURN_IF_ERROR(comm.Send(t, 1, {"send_v2", "", 0, 0, 1}));
      return comm.Send(t, 1, {"send_v2", "", 0, 0, 2});
    });
    EXPECT_EQ(status.code(), StatusCode::kInternal);
    EXPECT_EQ(status.message(),
              "rank 1 finished without receiving 1 buffered message: send_v2 from rank 0 (ring "
              "0, op 1)");
  }
}

TEST(P2PBufferedTest, EveryUnreceivedMessageIsNamed) {
  auto world = MakeBufferedWorld(3, 2);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(*world, rank);
    if (rank == 0) {
      for (int op : {4, 9}) {
        IRM_RETURN_IF_ERROR(comm.Send(Tensor::ZerosUnchecked(DType::kFloat32, {2}), 2,
                                      {"send_v2", "backward", 1, 0, op}));
      }
    }
    return comm.Barrier();  // rank 2 finishes after both sends
  });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "rank 2 finished without receiving 2 buffered messages: send_v2 from rank 0 (ring 0, "
            "job backward, micro-batch 1, step 0, op 4); send_v2 from rank 0 (ring 0, job "
            "backward, micro-batch 1, step 0, op 9)");
}

// A 3-stage pipeline's exchanges: activations forward, gradients back, each stage adding its
// rank; the received values must not depend on the model where both complete.
std::vector<Tensor> PipelineExchange(ThreadWorld& world) {
  std::vector<Tensor> last(3);
  const Status status = world.RunRanks([&](int rank) -> Status {
    Communicator& comm = CommOf(world, rank);
    Tensor x = Tensor::FromVector<float>({0.1f, 0.2f, 0.3f}, {3});
    for (int mb = 0; mb < 2; ++mb) {
      if (rank > 0) IRM_RETURN_IF_ERROR(comm.Recv(&x, rank - 1));
      for (int i = 0; i < 3; ++i) x.data<float>()[i] += 0.7f * static_cast<float>(rank + mb);
      if (rank < 2) IRM_RETURN_IF_ERROR(comm.Send(x, rank + 1));
    }
    for (int mb = 0; mb < 2; ++mb) {
      if (rank < 2) IRM_RETURN_IF_ERROR(comm.Recv(&x, rank + 1));
      for (int i = 0; i < 3; ++i) x.data<float>()[i] *= 1.3f;
      if (rank > 0) IRM_RETURN_IF_ERROR(comm.Send(x, rank - 1));
    }
    last[static_cast<size_t>(rank)] = x.Clone();
    return Status::Ok();
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return last;
}

TEST(P2PBufferedTest, TheModelDoesNotChangeTheBits) {
  auto rendezvous = MakeWorld(3);
  auto buffered = MakeBufferedWorld(3, 2);
  ASSERT_NE(rendezvous, nullptr);
  ASSERT_NE(buffered, nullptr);
  const std::vector<Tensor> a = PipelineExchange(*rendezvous);
  const std::vector<Tensor> b = PipelineExchange(*buffered);
  for (size_t r = 0; r < 3; ++r) EXPECT_TRUE(a[r].BitwiseEqual(b[r])) << r;
}

}  // namespace
}  // namespace irm::rt
