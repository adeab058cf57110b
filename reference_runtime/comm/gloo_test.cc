// The Gloo backend on 2 and 3 ranks as threads (and as one-rank worlds meeting through a file
// store, as processes do): every call against the thread backend's results on the same inputs —
// bit for bit where the result does not depend on the order of a floating-point reduction (every
// 2-rank call, data movement, integers, max and min), within the dtype's rounding of the float64
// reduction otherwise — point to point in order with the header's shapes, and the failures: a
// mismatched recv, a timeout, a peer that fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm/gloo_world.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::CommOf;
using testing::MakeWorld;
using testing::RandomTensor;
using testing::ToDoubles;

constexpr DType kReducingDTypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                     DType::kBFloat16, DType::kInt32,   DType::kInt64};
constexpr ReduceOp kReduceOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd,
                                   ReduceOp::kAvg};

std::unique_ptr<GlooWorld> MakeGlooWorld(int n, std::vector<CommGroup> groups = {},
                                         GlooWorldOptions options = {}) {
  StatusOr<std::unique_ptr<GlooWorld>> world =
      GlooWorld::CreateThreads(n, std::move(groups), std::move(options));
  EXPECT_TRUE(world.ok()) << world.status().ToString();
  return world.ok() ? std::move(world).value() : nullptr;
}

Communicator& GlooCommOf(GlooWorld& world, int rank, int ring = 0) {
  StatusOr<Communicator*> comm = world.For(rank, ring);
  EXPECT_TRUE(comm.ok()) << comm.status().ToString();
  return **comm;
}

Tensor Input(DType dtype, std::vector<int64_t> shape, int rank, ReduceOp op) {
  // Small integers keep products exact; floats in [0.5, 1.5) keep products in range.
  const bool integer = !IsFloatingDType(dtype);
  const double lo = op == ReduceOp::kProd ? (integer ? -3.0 : 0.5) : (integer ? -100.0 : -2.0);
  const double hi = op == ReduceOp::kProd ? (integer ? 4.0 : 1.5) : (integer ? 100.0 : 2.0);
  return RandomTensor(dtype, std::move(shape), 2000 + static_cast<uint64_t>(rank), lo, hi);
}

// Runs `call(comm, rank)` on every rank of a thread world and of a Gloo world of `n` ranks.
using Call = std::function<Status(Communicator& comm, int rank)>;
void RunBoth(int n, const Call& on_thread, const Call& on_gloo) {
  auto threads = MakeWorld(n);
  auto gloo = MakeGlooWorld(n);
  ASSERT_NE(threads, nullptr);
  ASSERT_NE(gloo, nullptr);
  Status status =
      threads->RunRanks([&](int rank) { return on_thread(CommOf(*threads, rank), rank); });
  ASSERT_TRUE(status.ok()) << status.ToString();
  status = gloo->RunRanks([&](int rank) { return on_gloo(GlooCommOf(*gloo, rank), rank); });
  ASSERT_TRUE(status.ok()) << status.ToString();
}

void ExpectBitwise(const Tensor& actual, const Tensor& expected, const std::string& what) {
  EXPECT_TRUE(actual.BitwiseEqual(expected))
      << what << ": " << actual.Describe() << " vs " << expected.Describe();
}

// Whether the result of `op` on `dtype` may depend on the order Gloo reduces in.
bool OrderDependent(DType dtype, ReduceOp op) {
  return IsFloatingDType(dtype) &&
         (op == ReduceOp::kSum || op == ReduceOp::kAvg || op == ReduceOp::kProd);
}

class GlooCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(GlooCollectivesTest, AllReduceMatchesTheThreadBackend) {
  const int n = GetParam();
  const std::vector<int64_t> shape = {3, 5};
  auto threads = MakeWorld(n);
  auto gloo = MakeGlooWorld(n);
  ASSERT_NE(gloo, nullptr);
  for (DType dtype : kReducingDTypes) {
    for (ReduceOp op : kReduceOps) {
      std::vector<Tensor> by_thread, by_gloo;
      std::vector<std::vector<double>> per_rank;
      for (int r = 0; r < n; ++r) {
        by_thread.push_back(Input(dtype, shape, r, op));
        by_gloo.push_back(by_thread.back().Clone());
        per_rank.push_back(ToDoubles(by_thread.back()));
      }
      ASSERT_TRUE(threads
                      ->RunRanks([&](int rank) {
                        return CommOf(*threads, rank).AllReduce(by_thread[rank], op);
                      })
                      .ok());
      const Status status = gloo->RunRanks(
          [&](int rank) { return GlooCommOf(*gloo, rank).AllReduce(by_gloo[rank], op); });
      ASSERT_TRUE(status.ok()) << status.ToString();
      const std::string what =
          fmt::format("{} {} on {} ranks", ReduceOpName(op), DTypeName(dtype), n);
      for (int r = 0; r < n; ++r) {
        if (n == 2 || !OrderDependent(dtype, op)) {
          ExpectBitwise(by_gloo[r], by_thread[r], what);
          continue;
        }
        // Another summation order: within the dtype's rounding of the float64 reduction.
        std::vector<double> expected(per_rank[0].size());
        for (size_t i = 0; i < expected.size(); ++i) {
          double acc = op == ReduceOp::kProd ? 1.0 : 0.0;
          for (int k = 0; k < n; ++k) {
            acc = op == ReduceOp::kProd ? acc * per_rank[k][i] : acc + per_rank[k][i];
          }
          expected[i] = op == ReduceOp::kAvg ? acc / n : acc;
        }
        testing::ExpectClose(by_gloo[r], expected, shape, 4 * n * testing::ToleranceFor(dtype),
                             what);
      }
    }
  }
}

TEST_P(GlooCollectivesTest, BroadcastFromEveryRoot) {
  const int n = GetParam();
  auto gloo = MakeGlooWorld(n);
  ASSERT_NE(gloo, nullptr);
  for (int root = 0; root < n; ++root) {
    std::vector<Tensor> tensors;
    for (int r = 0; r < n; ++r) tensors.push_back(Input(DType::kFloat16, {4}, r, ReduceOp::kSum));
    const Tensor sent = tensors[root].Clone();
    ASSERT_TRUE(gloo->RunRanks([&](int rank) {
                      return GlooCommOf(*gloo, rank).Broadcast(tensors[rank], root);
                    })
                    .ok());
    for (const Tensor& t : tensors) ExpectBitwise(t, sent, fmt::format("root {}", root));
  }
}

TEST_P(GlooCollectivesTest, AllGatherReduceScatterAllToAllMatchTheThreadBackend) {
  const int n = GetParam();
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBFloat16}) {
    std::vector<Tensor> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(Input(dtype, {2 * n, 3}, r, ReduceOp::kMax));
    const size_t size = static_cast<size_t>(n);
    std::vector<Tensor> gathered[2], scattered[2], exchanged[2];
    for (int w = 0; w < 2; ++w) {
      gathered[w].resize(size);
      scattered[w].resize(size);
      exchanged[w].resize(size);
    }
    const auto call = [&](int w) {
      return [&, w](Communicator& comm, int rank) -> Status {
        IRM_RETURN_IF_ERROR(comm.AllGather(inputs[rank], &gathered[w][rank]));
        IRM_RETURN_IF_ERROR(comm.ReduceScatter(inputs[rank], &scattered[w][rank], ReduceOp::kMax));
        return comm.AllToAll(inputs[rank], &exchanged[w][rank]);
      };
    };
    RunBoth(n, call(0), call(1));
    for (size_t r = 0; r < size; ++r) {
      const std::string what = fmt::format("{} rank {} of {}", DTypeName(dtype), r, n);
      ExpectBitwise(gathered[1][r], gathered[0][r], "all_gather " + what);
      ExpectBitwise(scattered[1][r], scattered[0][r], "reduce_scatter " + what);
      ExpectBitwise(exchanged[1][r], exchanged[0][r], "all_to_all " + what);
    }
    // Independently of the thread backend: rank 0's gathered rows n..2n-1 are rank 1's rows.
    EXPECT_EQ(ToDoubles(gathered[1][0])[2 * n * 3], ToDoubles(inputs[1])[0]);
  }
}

TEST_P(GlooCollectivesTest, ReduceScatterSumsEachRanksPart) {
  const int n = GetParam();
  auto gloo = MakeGlooWorld(n);
  ASSERT_NE(gloo, nullptr);
  // Rank r holds r + 1 everywhere: every part sums to n (n + 1) / 2.
  std::vector<Tensor> inputs, outputs(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    inputs.push_back(Tensor::FromVector(std::vector<int64_t>(2 * n, r + 1), {2 * n}));
  }
  ASSERT_TRUE(gloo->RunRanks([&](int rank) {
                    return GlooCommOf(*gloo, rank)
                        .ReduceScatter(inputs[rank], &outputs[rank], ReduceOp::kSum);
                  })
                  .ok());
  for (const Tensor& out : outputs) {
    EXPECT_EQ(ToDoubles(out), std::vector<double>(2, n * (n + 1) / 2));
  }
}

TEST_P(GlooCollectivesTest, BarrierAndSubGroups) {
  const int n = GetParam();
  // Ring 1 holds the even ranks, ring 2 the odd ones (a lone rank in a 3-rank world).
  std::vector<CommGroup> groups = {{1, {}}, {2, {}}};
  for (int r = 0; r < 2 * n; ++r) groups[r % 2].ranks.push_back(r);
  auto gloo = MakeGlooWorld(2 * n, groups);
  ASSERT_NE(gloo, nullptr);
  std::vector<Tensor> tensors;
  for (int r = 0; r < 2 * n; ++r) tensors.push_back(Tensor::FromVector<int32_t>({r, 10 * r}, {2}));
  const Status status = gloo->RunRanks([&](int rank) -> Status {
    IRM_RETURN_IF_ERROR(GlooCommOf(*gloo, rank).Barrier());
    return GlooCommOf(*gloo, rank, 1 + rank % 2).AllReduce(tensors[rank], ReduceOp::kSum);
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  int even = 0, odd = 0;
  for (int r = 0; r < 2 * n; ++r) (r % 2 == 0 ? even : odd) += r;
  for (int r = 0; r < 2 * n; ++r) {
    const int sum = r % 2 == 0 ? even : odd;
    EXPECT_EQ(ToDoubles(tensors[r]), (std::vector<double>{1.0 * sum, 10.0 * sum})) << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, GlooCollectivesTest, ::testing::Values(2, 3));

TEST(GlooPointToPointTest, MessagesArriveInOrderWithTheirShapes) {
  auto gloo = MakeGlooWorld(3);
  ASSERT_NE(gloo, nullptr);
  const std::vector<Tensor> sent = {
      RandomTensor(DType::kFloat32, {2, 3}, 1), RandomTensor(DType::kInt64, {5}, 2),
      RandomTensor(DType::kFloat16, {1, 1, 4}, 3), Tensor::ZerosUnchecked(DType::kFloat64, {0, 2}),
      RandomTensor(DType::kBFloat16, {}, 4)};
  std::vector<Tensor> received(sent.size());
  // The third message lands in a defined tensor of its shape, the others in undefined ones.
  received[2] = Tensor::ZerosUnchecked(DType::kFloat16, {1, 1, 4});
  const Status status = gloo->RunRanks([&](int rank) -> Status {
    Communicator& comm = GlooCommOf(*gloo, rank);
    if (rank == 0) {
      for (const Tensor& t : sent) IRM_RETURN_IF_ERROR(comm.Send(t, 2));
    } else if (rank == 2) {
      for (Tensor& t : received) IRM_RETURN_IF_ERROR(comm.Recv(&t, 0));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (size_t i = 0; i < sent.size(); ++i)
    ExpectBitwise(received[i], sent[i], fmt::format("{}", i));
}

TEST(GlooPointToPointTest, ARecvOfAnotherShapeFailsOnBothRanks) {
  auto gloo = MakeGlooWorld(2);
  ASSERT_NE(gloo, nullptr);
  const Tensor sent = Tensor::ZerosUnchecked(DType::kFloat32, {4});
  Tensor expected = Tensor::ZerosUnchecked(DType::kFloat32, {3});
  gloo->RunRanks([&](int rank) {
        Communicator& comm = GlooCommOf(*gloo, rank);
        return rank == 0 ? comm.Send(sent, 1) : comm.Recv(&expected, 0);
      })
      .ok();
  EXPECT_EQ(gloo->rank_statuses()[1].message(),
            "recv on rank 1 expects float32[3] from rank 0 (ring 0), but rank 0 sends "
            "float32[4]");
  EXPECT_EQ(gloo->rank_statuses()[0].message(),
            "send on rank 0: rank 1 expects another dtype or shape than float32[4] (ring 0)");
}

TEST(GlooPointToPointTest, ATensorOfMoreThanSixteenDimsIsRefused) {
  auto gloo = MakeGlooWorld(2);
  ASSERT_NE(gloo, nullptr);
  const Tensor t = Tensor::ZerosUnchecked(DType::kInt8, std::vector<int64_t>(17, 1));
  const Status status = GlooCommOf(*gloo, 0).Send(t, 1);
  EXPECT_EQ(status.message(),
            "send: int8[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] has 17 dims; the gloo "
            "backend sends at most 16 (ring 0)");
}

// The peer finished: the watch reports the hang at once, naming the pending call (before the
// timeout, or in its place when the timeout fires first).
TEST(GlooFailureTest, ARecvThatNothingSendsIsAHang) {
  auto gloo = MakeGlooWorld(2, {}, {.timeout = std::chrono::milliseconds(300)});
  ASSERT_NE(gloo, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const Status status = gloo->RunRanks([&](int rank) -> Status {
    if (rank == 0) return Status::Ok();
    Tensor t;
    return GlooCommOf(*gloo, rank).Recv(&t, 0, {.op_type = "recv_v2", .job = "forward"});
  });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "hang: rank 0 finished while rank 1 waits in recv_v2 from rank 0 (ring 0, job forward, "
            "micro-batch 0, step 0)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(GlooFailureTest, ACollectiveThatOneRankSkipsIsAHang) {
  auto gloo = MakeGlooWorld(3, {}, {.timeout = std::chrono::milliseconds(300)});
  ASSERT_NE(gloo, nullptr);
  gloo->RunRanks([&](int rank) -> Status {
        if (rank == 2) return Status::Ok();
        Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {8});
        return GlooCommOf(*gloo, rank).AllReduce(t, ReduceOp::kSum);
      })
      .ok();
  EXPECT_EQ(gloo->rank_statuses()[0].message(),
            "hang: rank 2 finished while rank 0 waits in all_reduce for rank 2 (ring 0)");
}

TEST(GlooFailureTest, APeerThatFailsEndsTheWaitAtOnce) {
  auto gloo = MakeGlooWorld(2);  // the default timeout: a minute
  ASSERT_NE(gloo, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const Status status = gloo->RunRanks([&](int rank) -> Status {
    if (rank == 0) return Status(StatusCode::kInvalid, Location{}, "rank 0's own failure");
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {8});
    return GlooCommOf(*gloo, rank).AllReduce(t, ReduceOp::kSum);
  });
  EXPECT_EQ(status.message(), "rank 0's own failure");
  EXPECT_EQ(gloo->rank_statuses()[1].code(), StatusCode::kInternal);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// A rank that writes to a peer which has gone (its world failed) must get EPIPE back as a
// status, not be killed by SIGPIPE: a world ignores the signal unless the program handles it.
TEST(GlooWorldTest, AWorldIgnoresBrokenPipes) {
  auto gloo = MakeGlooWorld(2);
  ASSERT_NE(gloo, nullptr);
  struct sigaction current {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &current), 0);
  EXPECT_EQ(current.sa_handler, SIG_IGN);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  const char byte = 0;
  EXPECT_EQ(write(fds[1], &byte, 1), -1);  // would end the test process under SIG_DFL
  EXPECT_EQ(errno, EPIPE);
  close(fds[1]);
}

TEST(GlooWorldTest, GroupsAreCheckedAsOnTheThreadWorld) {
  EXPECT_EQ(GlooWorld::CreateThreads(2, {{1, {0}}, {1, {1}}}).status().message(),
            "process group 1 is declared twice");
  EXPECT_EQ(GlooWorld::CreateThreads(2, {{1, {0, 2}}}).status().message(),
            "process group 1 names rank 2, outside the world of 2");
  auto gloo = MakeGlooWorld(2, {{1, {1}}});
  ASSERT_NE(gloo, nullptr);
  EXPECT_EQ(gloo->For(0, 1).status().message(), "process group 1 (ranks [1]) does not hold rank 0");
  EXPECT_EQ(gloo->For(0, 7).status().code(), StatusCode::kNotFound);
}

TEST(GlooWorldTest, AProcessRankOutsideTheWorldIsRefused) {
  EXPECT_EQ(GlooWorld::CreateProcessRank(2, 2, {}, ::testing::TempDir()).status().message(),
            "rank 2 is outside the world of 2");
}

TEST(GlooWorldTest, OneRankPerWorldMeetsThroughAFileStore) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      fmt::format("irm_gloo_store_{}", std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<Tensor> tensors = {Tensor::FromVector<double>({1.5, -2}, {2}),
                                 Tensor::FromVector<double>({0.25, 8}, {2})};
  std::vector<Status> statuses(2);
  std::vector<std::thread> processes;
  for (int rank = 0; rank < 2; ++rank) {
    processes.emplace_back([&, rank] {
      StatusOr<std::unique_ptr<GlooWorld>> world =
          GlooWorld::CreateProcessRank(2, rank, {}, dir.string());
      if (!world.ok()) {
        statuses[rank] = world.status();
        return;
      }
      EXPECT_EQ((*world)->hosted_ranks(), std::vector<int>{rank});
      EXPECT_EQ((*world)->For(1 - rank, 0).status().message(),
                fmt::format("rank {} is not hosted by this process", 1 - rank));
      statuses[rank] = (*world)->RunRanks(
          [&](int r) { return GlooCommOf(**world, r).AllReduce(tensors[r], ReduceOp::kSum); });
    });
  }
  for (std::thread& t : processes) t.join();
  std::filesystem::remove_all(dir);
  for (const Status& status : statuses) ASSERT_TRUE(status.ok()) << status.ToString();
  for (const Tensor& t : tensors) EXPECT_EQ(ToDoubles(t), (std::vector<double>{1.75, 6}));
}

}  // namespace
}  // namespace irm::rt
