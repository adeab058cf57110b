// The Gloo backend under faults: the hang watch's decisions on published states, hangs reported
// with every rank's pending call well within 10 s (ranks as threads, and as one-rank worlds
// meeting through a file store, as processes do), mismatched collectives reported as the thread
// world reports them (never a Gloo abort), the backstop timeout naming every rank, and the
// buffered point-to-point model (as comm/p2p_test.cc pins it on the thread world).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm/gloo_watch.h"
#include "reference_runtime/comm/gloo_world.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using schedules::P2pModel;
using testing::ToDoubles;
using Clock = std::chrono::steady_clock;
using Phase = GlooCallState::Phase;

// ---- the watch's decision ----------------------------------------------------------------------

GlooCallState Waits(CommKind kind, int peer, std::string name, int64_t index = 0) {
  return GlooCallState{.phase = Phase::kBlocked,
                       .serial = 1,
                       .kind = kind,
                       .peer = peer,
                       .index = index,
                       .name = std::move(name),
                       .where = "ring 0, op 3"};
}

const std::map<int, std::vector<int>> kPair = {{0, {0, 1}}};

TEST(GlooWatchTest, TwoSendsWithoutReceivesCannotProgress) {
  EXPECT_EQ(
      FindGlooHang({Waits(CommKind::kSend, 1, "send_v2"), Waits(CommKind::kSend, 0, "send_v2")},
                   kPair, false),
      "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, op 3); rank 1 "
      "waits in send_v2 to rank 0 (ring 0, op 3)");
  // Only a finished rank proves a hang on its own.
  EXPECT_EQ(
      FindGlooHang({Waits(CommKind::kSend, 1, "send_v2"), Waits(CommKind::kSend, 0, "send_v2")},
                   kPair, true),
      std::nullopt);
}

TEST(GlooWatchTest, AMatchedPairOrABusyRankProvesNothing) {
  EXPECT_EQ(FindGlooHang({Waits(CommKind::kSend, 1, "send"), Waits(CommKind::kRecv, 0, "recv")},
                         kPair, false),
            std::nullopt);
  EXPECT_EQ(FindGlooHang({Waits(CommKind::kRecv, 1, "recv"), GlooCallState{}}, kPair, false),
            std::nullopt);
  EXPECT_EQ(FindGlooHang({Waits(CommKind::kRecv, 1, "recv"), std::nullopt}, kPair, false),
            std::nullopt);
  // A failed rank's closed connections end its peers' waits: no hang to report.
  EXPECT_EQ(
      FindGlooHang({Waits(CommKind::kRecv, 1, "recv"), GlooCallState{.phase = Phase::kFailed}},
                   kPair, false),
      std::nullopt);
}

TEST(GlooWatchTest, CollectivesMatchByRingAndIndex) {
  const std::map<int, std::vector<int>> groups = {{0, {0, 1, 2}}};
  const GlooCallState second = Waits(CommKind::kAllReduce, -1, "c_allreduce_sum", 1);
  EXPECT_EQ(FindGlooHang({second, second, second}, groups, false), std::nullopt);
  EXPECT_EQ(FindGlooHang({second, second, Waits(CommKind::kRecv, 0, "recv_v2")}, groups, false),
            "hang: no rank can progress: rank 0 waits in c_allreduce_sum for rank 2 (ring 0, op "
            "3); rank 1 waits in c_allreduce_sum for rank 2 (ring 0, op 3); rank 2 waits in "
            "recv_v2 from rank 0 (ring 0, op 3)");
  EXPECT_EQ(FindGlooHang({second, GlooCallState{.phase = Phase::kFinished}, GlooCallState{}},
                         groups, true),
            "hang: rank 1 finished while rank 0 waits in c_allreduce_sum for ranks 1, 2 (ring 0, "
            "op 3)");
}

TEST(GlooWatchTest, StatesRoundTripThroughTheBoardsText) {
  const GlooCallState state = Waits(CommKind::kRecv, 3, "pd_op.p_recv", 7);
  const std::optional<GlooCallState> back = DecodeCallState(EncodeCallState(state) + "\n");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(EncodeCallState(*back), EncodeCallState(state));
  EXPECT_EQ(DecodeCallState(""), std::nullopt);
  EXPECT_EQ(DecodeCallState("9 1 2 3 4 5\ta\tb"), std::nullopt);
  EXPECT_EQ(DecodeCallState("1 x 2 3 4 5\ta\tb"), std::nullopt);
}

// ---- hangs and mismatches in a world ------------------------------------------------------------

std::unique_ptr<GlooWorld> MakeGlooWorld(int n, GlooWorldOptions options = {}) {
  StatusOr<std::unique_ptr<GlooWorld>> world = GlooWorld::CreateThreads(n, {}, std::move(options));
  EXPECT_TRUE(world.ok()) << world.status().ToString();
  return world.ok() ? std::move(world).value() : nullptr;
}

Communicator& CommOf(GlooWorld& world, int rank) {
  StatusOr<Communicator*> comm = world.For(rank, 0);
  EXPECT_TRUE(comm.ok()) << comm.status().ToString();
  return **comm;
}

CallSite Site(const char* op, int op_index) {
  return {.op_type = op, .job = "main", .micro_batch = 0, .step = 1, .op_index = op_index};
}

// Both ranks send first: the thread world's report, within a few seconds of the default
// (one minute) timeout.
TEST(GlooHangTest, TwoRanksThatBothSendFirstAreReportedAtOnce) {
  auto world = MakeGlooWorld(2);
  ASSERT_NE(world, nullptr);
  const auto start = Clock::now();
  const Status status = world->RunRanks([&](int rank) -> Status {
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
    IRM_RETURN_IF_ERROR(CommOf(*world, rank).Send(t, 1 - rank, Site("send_v2", 1)));
    return CommOf(*world, rank).Recv(&t, 1 - rank, Site("recv_v2", 2));
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  const std::string expected =
      "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, job main, "
      "micro-batch 0, step 1, op 1); rank 1 waits in send_v2 to rank 0 (ring 0, job main, "
      "micro-batch 0, step 1, op 1)";
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), expected);
  EXPECT_EQ(world->rank_statuses()[1].message(), expected);
}

TEST(GlooHangTest, ACollectiveAgainstAReceiveNamesBothCalls) {
  auto world = MakeGlooWorld(2);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
    if (rank == 0) return CommOf(*world, rank).AllReduce(t, ReduceOp::kSum);
    return CommOf(*world, rank).Recv(&t, 0);
  });
  EXPECT_EQ(status.message(),
            "hang: no rank can progress: rank 0 waits in all_reduce for rank 1 (ring 0); rank 1 "
            "waits in recv from rank 0 (ring 0)");
}

// The backstop: a rank busy outside communication for longer than the timeout. The waiting
// rank's timeout names what every rank was doing.
TEST(GlooHangTest, ATimeoutNamesEveryRanksState) {
  auto world = MakeGlooWorld(2, {.timeout = std::chrono::milliseconds(300)});
  ASSERT_NE(world, nullptr);
  world
      ->RunRanks([&](int rank) -> Status {
        if (rank == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(600));
          return Status::Ok();
        }
        Tensor t;
        return CommOf(*world, rank).Recv(&t, 0, Site("recv_v2", 2));
      })
      .ok();
  EXPECT_EQ(world->rank_statuses()[1].message(),
            "gloo: recv on ring 0 timed out after 300 ms (rank 1 waits for rank 0 to send; at "
            "recv_v2, ring 0, job main, micro-batch 0, step 1, op 2); every rank: rank 0 is busy "
            "outside communication; rank 1 waits in recv_v2 from rank 0 (ring 0, job main, "
            "micro-batch 0, step 1, op 2)");
}

// Ranks calling different collectives fail alike, with every rank's call — as the thread world
// reports it (comm/collectives_test.cc) — and never end the process in Gloo (different sizes
// used to abort it from Gloo's I/O thread).
TEST(GlooMismatchTest, DifferentCollectivesAreReportedAsOnTheThreadWorld) {
  using Body = std::function<Status(Communicator&, int)>;
  const std::vector<Body> bodies = {
      [](Communicator& comm, int rank) {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {rank + 1});
        return comm.AllReduce(t, ReduceOp::kSum);
      },
      [](Communicator& comm, int rank) {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
        if (rank == 0) return comm.Broadcast(t, 0);
        return comm.AllReduce(
            t, ReduceOp::kSum,
            {.op_type = "c_allreduce_sum", .job = "", .micro_batch = 0, .step = 0, .op_index = 3});
      },
      [](Communicator& comm, int rank) {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
        return comm.AllReduce(t, rank == 0 ? ReduceOp::kSum : ReduceOp::kMax);
      },
      [](Communicator& comm, int rank) {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2 * (rank + 1)});
        Tensor out;
        return comm.AllGather(t, &out);
      },
      [](Communicator& comm, int rank) {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2});
        // (Rank 0 in the barrier crashes the thread world: its round sizes the split by rank
        // 0's tensor before checking the calls agree.)
        return rank == 1 ? comm.Barrier() : comm.AllReduce(t, ReduceOp::kSum);
      },
  };
  for (size_t i = 0; i < bodies.size(); ++i) {
    auto threads = testing::MakeWorld(2);
    auto gloo = MakeGlooWorld(2);
    ASSERT_NE(gloo, nullptr);
    threads->RunRanks([&](int rank) { return bodies[i](testing::CommOf(*threads, rank), rank); })
        .ok();
    const auto start = Clock::now();
    gloo->RunRanks([&](int rank) { return bodies[i](CommOf(*gloo, rank), rank); }).ok();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
    for (int rank = 0; rank < 2; ++rank) {
      EXPECT_EQ(gloo->rank_statuses()[rank].code(), StatusCode::kInvalid) << i;
      EXPECT_EQ(gloo->rank_statuses()[rank].message(), threads->rank_statuses()[rank].message())
          << i;
    }
  }
  // One pinned independently of the thread world.
  auto gloo = MakeGlooWorld(2);
  ASSERT_NE(gloo, nullptr);
  gloo->RunRanks([&](int rank) { return bodies[0](CommOf(*gloo, rank), rank); }).ok();
  EXPECT_EQ(gloo->rank_statuses()[1].message(),
            "mismatched collective calls in process group 0: rank 0 calls all_reduce sum "
            "float32[1] (ring 0); rank 1 calls all_reduce sum float32[2] (ring 0)");
}

// Ranks as processes: each world hosts one rank and meets the other through a file store; the
// watch's board is files beside it. Each rank reports the same hang.
TEST(GlooHangTest, RanksAsProcessesReportTheHangNamingEveryRank) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      fmt::format("irm_gloo_fault_{}", Clock::now().time_since_epoch().count());
  std::vector<Status> statuses(2);
  std::vector<std::thread> processes;
  const auto start = Clock::now();
  for (int rank = 0; rank < 2; ++rank) {
    processes.emplace_back([&, rank] {
      StatusOr<std::unique_ptr<GlooWorld>> world =
          GlooWorld::CreateProcessRank(2, rank, {}, dir.string());
      if (!world.ok()) {
        statuses[rank] = world.status();
        return;
      }
      statuses[rank] = (*world)->RunRanks([&](int r) -> Status {
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
        return (*world)->For(r, 0).value()->Send(t, 1 - r, Site("send_v2", 1));
      });
    });
  }
  for (std::thread& t : processes) t.join();
  std::filesystem::remove_all(dir);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  for (const Status& status : statuses) {
    EXPECT_EQ(status.message(),
              "hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, job main, "
              "micro-batch 0, step 1, op 1); rank 1 waits in send_v2 to rank 0 (ring 0, job "
              "main, micro-batch 0, step 1, op 1)");
  }
}

// ---- buffered point to point ------------------------------------------------------------------

std::unique_ptr<GlooWorld> MakeBufferedWorld(int n, int depth) {
  return MakeGlooWorld(n, {.p2p = P2pModel::Buffered(depth)});
}

// Each rank sends `sends` messages to the other, then receives them.
Status SendThenReceive(GlooWorld& world, int rank, int sends, std::vector<Tensor>* received) {
  Communicator& comm = CommOf(world, rank);
  for (int i = 0; i < sends; ++i) {
    Tensor t = Tensor::FromVector<float>({10.0f * rank + i}, {1});
    IRM_RETURN_IF_ERROR(comm.Send(t, 1 - rank));
    t.data<float>()[0] = -1;  // a buffered send copied the tensor: reusing it changes nothing
  }
  for (int i = 0; i < sends; ++i) {
    Tensor t;
    IRM_RETURN_IF_ERROR(comm.Recv(&t, 1 - rank));
    if (received != nullptr) received->push_back(std::move(t));
  }
  return Status::Ok();
}

TEST(GlooBufferedTest, BothRanksSendingFirstRunUnderBufferedAndHangUnderRendezvous) {
  auto buffered = MakeBufferedWorld(2, 1);
  ASSERT_NE(buffered, nullptr);
  std::vector<Tensor> received[2];
  const Status status = buffered->RunRanks(
      [&](int rank) { return SendThenReceive(*buffered, rank, 1, &received[rank]); });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ToDoubles(received[0][0]), std::vector<double>{10});
  EXPECT_EQ(ToDoubles(received[1][0]), std::vector<double>{0});

  auto rendezvous = MakeGlooWorld(2);
  ASSERT_NE(rendezvous, nullptr);
  EXPECT_EQ(
      rendezvous->RunRanks([&](int rank) { return SendThenReceive(*rendezvous, rank, 1, nullptr); })
          .message(),
      "hang: no rank can progress: rank 0 waits in send to rank 1 (ring 0); rank 1 waits "
      "in send to rank 0 (ring 0)");
}

TEST(GlooBufferedTest, TheDepthIsHowManyUnreceivedMessagesAChannelHolds) {
  // Two sends each before any receive: depth 1 hangs in the second send, depth 2 runs.
  auto shallow = MakeBufferedWorld(2, 1);
  ASSERT_NE(shallow, nullptr);
  EXPECT_EQ(shallow->RunRanks([&](int rank) { return SendThenReceive(*shallow, rank, 2, nullptr); })
                .message(),
            "hang: no rank can progress: rank 0 waits in send to rank 1 (ring 0); rank 1 waits "
            "in send to rank 0 (ring 0)");
  auto deep = MakeBufferedWorld(2, 2);
  ASSERT_NE(deep, nullptr);
  std::vector<Tensor> received[2];
  const Status status =
      deep->RunRanks([&](int rank) { return SendThenReceive(*deep, rank, 2, &received[rank]); });
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(received[1].size(), 2u);
  EXPECT_EQ(ToDoubles(received[1][0]), std::vector<double>{0});
  EXPECT_EQ(ToDoubles(received[1][1]), std::vector<double>{1});
}

TEST(GlooBufferedTest, ARankThatFinishesWithoutReceivingFailsItsSender) {
  auto world = MakeBufferedWorld(2, 4);
  ASSERT_NE(world, nullptr);
  const Status status = world->RunRanks([&](int rank) -> Status {
    if (rank == 1) return Status::Ok();
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {4});
    return CommOf(*world, rank).Send(t, 1, Site("send_v2", 4));
  });
  EXPECT_EQ(status.message(),
            "hang: rank 1 finished while rank 0 waits in send_v2 to rank 1 (ring 0, job main, "
            "micro-batch 0, step 1, op 4)");
}

TEST(GlooBufferedTest, AMismatchedReceiveFailsBothRanks) {
  auto world = MakeBufferedWorld(2, 1);
  ASSERT_NE(world, nullptr);
  world
      ->RunRanks([&](int rank) -> Status {
        if (rank == 0)
          return CommOf(*world, rank).Send(Tensor::ZerosUnchecked(DType::kFloat32, {4}), 1);
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {3});
        return CommOf(*world, rank).Recv(&t, 0);
      })
      .ok();
  EXPECT_EQ(world->rank_statuses()[1].message(),
            "recv on rank 1 expects float32[3] from rank 0 (ring 0), but rank 0 sends float32[4]");
  EXPECT_EQ(world->rank_statuses()[0].message(),
            "send on rank 0: rank 1 expects another dtype or shape than float32[4] (ring 0)");
}

}  // namespace
}  // namespace irm::rt
