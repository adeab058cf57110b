// The thread world's collectives on 1 to 4 ranks and on sub-groups, every reducing dtype, against
// references the test computes itself: the exact rank-order result (float32 summed in float32 in
// rank order, 16-bit floats in float32 rounded once, integers exactly) compared bit for bit, and a
// float64 reduction compared within the dtype's rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::CommOf;
using testing::FromDoubles;
using testing::MakeWorld;
using testing::RandomTensor;
using testing::ToDoubles;

constexpr DType kReducingDTypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                     DType::kBFloat16, DType::kInt32,   DType::kInt64};

// The exact result of reducing per_rank[0..n) in rank order as the dtype's accumulator does.
std::vector<double> RankOrderReference(const std::vector<std::vector<double>>& per_rank,
                                       ReduceOp op, DType dtype) {
  const size_t n = per_rank.size();
  std::vector<double> out(per_rank[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == DType::kFloat64 || !IsFloatingDType(dtype)) {
      double acc = per_rank[0][i];
      for (size_t r = 1; r < n; ++r) {
        const double x = per_rank[r][i];
        if (op == ReduceOp::kSum || op == ReduceOp::kAvg) acc += x;
        if (op == ReduceOp::kProd) acc *= x;
        if (op == ReduceOp::kMax) acc = std::max(acc, x);
        if (op == ReduceOp::kMin) acc = std::min(acc, x);
      }
      if (op == ReduceOp::kAvg) {
        acc = IsFloatingDType(dtype) ? acc / static_cast<double>(n)
                                     : std::trunc(acc / static_cast<double>(n));
      }
      out[i] = acc;
      continue;
    }
    float acc = static_cast<float>(per_rank[0][i]);  // float32, float16 and bfloat16
    for (size_t r = 1; r < n; ++r) {
      const float x = static_cast<float>(per_rank[r][i]);
      if (op == ReduceOp::kSum || op == ReduceOp::kAvg) acc += x;
      if (op == ReduceOp::kProd) acc *= x;
      if (op == ReduceOp::kMax) acc = std::max(acc, x);
      if (op == ReduceOp::kMin) acc = std::min(acc, x);
    }
    if (op == ReduceOp::kAvg) acc /= static_cast<float>(n);
    out[i] = acc;
  }
  return out;
}

// The float64 reduction, for the closeness check.
std::vector<double> Float64Reference(const std::vector<std::vector<double>>& per_rank,
                                     ReduceOp op) {
  return RankOrderReference(per_rank, op, DType::kFloat64);
}

Tensor Input(DType dtype, std::vector<int64_t> shape, int rank, ReduceOp op) {
  // Small integers keep products exact; floats in [-2, 2) make products interesting.
  const bool integer = !IsFloatingDType(dtype);
  const double lo = op == ReduceOp::kProd ? (integer ? -3.0 : 0.5) : (integer ? -100.0 : -2.0);
  const double hi = op == ReduceOp::kProd ? (integer ? 4.0 : 1.5) : (integer ? 100.0 : 2.0);
  return RandomTensor(dtype, std::move(shape), 1000 + static_cast<uint64_t>(rank), lo, hi);
}

void ExpectBitwise(const Tensor& actual, const Tensor& expected, const std::string& what) {
  EXPECT_TRUE(actual.BitwiseEqual(expected))
      << what << ": " << actual.Describe() << " vs " << expected.Describe();
}

class AllReduceTest : public ::testing::TestWithParam<int> {};

// All-reduces of `shape` on n ranks, every dtype and op, against the rank-order reference.
void CheckEveryOpAndDType(int n, const std::vector<int64_t>& shape) {
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  for (DType dtype : kReducingDTypes) {
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kAvg}) {
      std::vector<Tensor> tensors;
      std::vector<std::vector<double>> per_rank;
      for (int r = 0; r < n; ++r) {
        tensors.push_back(Input(dtype, shape, r, op));
        per_rank.push_back(ToDoubles(tensors.back()));
      }
      ASSERT_TRUE(
          world
              ->RunRanks([&](int rank) {
                return CommOf(*world, rank).AllReduce(tensors[static_cast<size_t>(rank)], op);
              })
              .ok());
      const std::string what =
          fmt::format("{} {} on {} ranks", ReduceOpName(op), DTypeName(dtype), n);
      const Tensor expected = FromDoubles(RankOrderReference(per_rank, op, dtype), shape, dtype);
      for (int r = 0; r < n; ++r) ExpectBitwise(tensors[static_cast<size_t>(r)], expected, what);
      // Integers are exact above; floats must also be close to the float64 reduction.
      if (IsFloatingDType(dtype)) {
        testing::ExpectClose(tensors[0], Float64Reference(per_rank, op), shape,
                             4 * n * testing::ToleranceFor(dtype), what);
      }
    }
  }
}

TEST_P(AllReduceTest, EveryOpAndDTypeMatchesTheRankOrderReference) {
  CheckEveryOpAndDType(GetParam(), {3, 5});
}

TEST_P(AllReduceTest, LargeTensorsReducedInSharesKeepTheRankOrderBits) {
  // Each rank reduces a share of the elements, block by block: 3 x 8195 elements split unevenly
  // over 3 ranks and across the blocks' edges must still give every element's rank-order bits.
  CheckEveryOpAndDType(GetParam(), {3, 8195});
}

TEST_P(AllReduceTest, BroadcastFromEveryRoot) {
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  for (int root = 0; root < n; ++root) {
    std::vector<Tensor> tensors;
    for (int r = 0; r < n; ++r) tensors.push_back(Input(DType::kFloat16, {4}, r, ReduceOp::kSum));
    const Tensor sent = tensors[static_cast<size_t>(root)].Clone();
    ASSERT_TRUE(
        world
            ->RunRanks([&](int rank) {
              return CommOf(*world, rank).Broadcast(tensors[static_cast<size_t>(rank)], root);
            })
            .ok());
    for (const Tensor& t : tensors) ExpectBitwise(t, sent, fmt::format("root {}", root));
  }
}

TEST_P(AllReduceTest, AllGatherConcatenatesInRankOrder) {
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> in, out(static_cast<size_t>(n));
  std::vector<double> expected;
  for (int r = 0; r < n; ++r) {
    in.push_back(Input(DType::kInt64, {2, 3}, r, ReduceOp::kSum));
    for (double v : ToDoubles(in.back())) expected.push_back(v);
  }
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) {
                    const size_t r = static_cast<size_t>(rank);
                    return CommOf(*world, rank).AllGather(in[r], &out[r]);
                  })
                  .ok());
  const Tensor want = FromDoubles(expected, {2 * n, 3}, DType::kInt64);
  for (const Tensor& t : out) ExpectBitwise(t, want, "all_gather");
  // Each rank owns its result.
  if (n > 1) {
    EXPECT_FALSE(out[0].SharesStorageWith(out[1]));
  }
}

TEST_P(AllReduceTest, ReduceScatterReducesEachRanksPart) {
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  for (DType dtype : kReducingDTypes) {
    std::vector<Tensor> in, out(static_cast<size_t>(n));
    std::vector<std::vector<double>> per_rank;
    for (int r = 0; r < n; ++r) {
      in.push_back(Input(dtype, {2 * n, 3}, r, ReduceOp::kSum));
      per_rank.push_back(ToDoubles(in.back()));
    }
    ASSERT_TRUE(world
                    ->RunRanks([&](int rank) {
                      const size_t r = static_cast<size_t>(rank);
                      return CommOf(*world, rank).ReduceScatter(in[r], &out[r], ReduceOp::kSum);
                    })
                    .ok());
    const std::vector<double> full = RankOrderReference(per_rank, ReduceOp::kSum, dtype);
    for (int r = 0; r < n; ++r) {
      const std::vector<double> part(full.begin() + 6 * r, full.begin() + 6 * (r + 1));
      ExpectBitwise(out[static_cast<size_t>(r)], FromDoubles(part, {2, 3}, dtype),
                    fmt::format("reduce_scatter {} rank {}", DTypeName(dtype), r));
    }
  }
}

TEST_P(AllReduceTest, LargeReduceScatterAndAllGatherInShares) {
  // Large enough for every rank to compute its own result in a share of the round.
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  const int64_t width = 8200;
  std::vector<Tensor> in, scattered(static_cast<size_t>(n)), gathered(static_cast<size_t>(n));
  std::vector<std::vector<double>> per_rank;
  for (int r = 0; r < n; ++r) {
    in.push_back(Input(DType::kFloat32, {2 * n, width}, r, ReduceOp::kSum));
    per_rank.push_back(ToDoubles(in.back()));
  }
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    const size_t r = static_cast<size_t>(rank);
                    Communicator& comm = CommOf(*world, rank);
                    IRM_RETURN_IF_ERROR(comm.ReduceScatter(in[r], &scattered[r], ReduceOp::kSum));
                    return comm.AllGather(in[r], &gathered[r]);
                  })
                  .ok());
  const std::vector<double> full = RankOrderReference(per_rank, ReduceOp::kSum, DType::kFloat32);
  std::vector<double> concatenated;
  for (const std::vector<double>& part : per_rank) {
    concatenated.insert(concatenated.end(), part.begin(), part.end());
  }
  const Tensor expected_gather = FromDoubles(concatenated, {2 * n * n, width}, DType::kFloat32);
  for (int r = 0; r < n; ++r) {
    const int64_t part = 2 * width;
    const std::vector<double> mine(full.begin() + part * r, full.begin() + part * (r + 1));
    ExpectBitwise(scattered[static_cast<size_t>(r)], FromDoubles(mine, {2, width}, DType::kFloat32),
                  fmt::format("reduce_scatter rank {}", r));
    ExpectBitwise(gathered[static_cast<size_t>(r)], expected_gather,
                  fmt::format("all_gather rank {}", r));
  }
}

TEST_P(AllReduceTest, AllToAllExchangesParts) {
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  // Rank r's part j holds 100 r + 10 j + k: rank j's part r must hold it afterwards.
  std::vector<Tensor> in, out(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::vector<double> values;
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < 2; ++k) values.push_back(100 * r + 10 * j + k);
    }
    in.push_back(FromDoubles(values, {n, 2}, DType::kInt32));
  }
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) {
                    const size_t r = static_cast<size_t>(rank);
                    return CommOf(*world, rank).AllToAll(in[r], &out[r]);
                  })
                  .ok());
  for (int j = 0; j < n; ++j) {
    std::vector<double> want;
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < 2; ++k) want.push_back(100 * r + 10 * j + k);
    }
    ExpectBitwise(out[static_cast<size_t>(j)], FromDoubles(want, {n, 2}, DType::kInt32),
                  fmt::format("all_to_all rank {}", j));
  }
}

TEST_P(AllReduceTest, BarrierReturnsOnEveryRank) {
  const int n = GetParam();
  auto world = MakeWorld(n);
  ASSERT_NE(world, nullptr);
  EXPECT_TRUE(world->RunRanks([&](int rank) { return CommOf(*world, rank).Barrier(); }).ok());
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllReduceTest, ::testing::Values(1, 2, 3, 4));

// ---- sub-groups and order -------------------------------------------------------------------

TEST(CollectivesTest, FloatSumsFollowGroupRankOrder) {
  // In float32, (1e8 + 1) - 1e8 is 0 while (1e8 - 1e8) + 1 is 1: only the rank order gives 0.
  auto world = MakeWorld(4, {{1, {3, 1, 2}}});
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> tensors(4);
  tensors[3] = Tensor::FromVector<float>({1e8f}, {1});  // group rank 0
  tensors[1] = Tensor::FromVector<float>({1.0f}, {1});  // group rank 1
  tensors[2] = Tensor::FromVector<float>({-1e8f}, {1});
  tensors[0] = Tensor::FromVector<float>({5.0f}, {1});
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) {
                    if (rank == 0) return Status::Ok();  // not in ring 1
                    return CommOf(*world, rank, 1)
                        .AllReduce(tensors[static_cast<size_t>(rank)], ReduceOp::kSum);
                  })
                  .ok());
  for (int r : {1, 2, 3}) EXPECT_EQ(tensors[static_cast<size_t>(r)].data<float>()[0], 0.0f);
  EXPECT_EQ(tensors[0].data<float>()[0], 5.0f);
}

TEST(CollectivesTest, SubGroupsRunSideBySide) {
  // Ring 1 = {0, 2} reduces, ring 2 = {3, 1} gathers (group rank 0 is global 3), ring 0 syncs all.
  auto world = MakeWorld(4, {{1, {0, 2}}, {2, {3, 1}}});
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> t(4), gathered(4);
  for (int r = 0; r < 4; ++r)
    t[static_cast<size_t>(r)] = Tensor::FromVector<double>({r + 1.0}, {1});
  ASSERT_TRUE(world
                  ->RunRanks([&](int rank) -> Status {
                    const size_t r = static_cast<size_t>(rank);
                    if (rank == 0 || rank == 2) {
                      IRM_RETURN_IF_ERROR(CommOf(*world, rank, 1).AllReduce(t[r], ReduceOp::kSum));
                    } else {
                      IRM_RETURN_IF_ERROR(CommOf(*world, rank, 2).AllGather(t[r], &gathered[r]));
                    }
                    return CommOf(*world, rank).Barrier();
                  })
                  .ok());
  EXPECT_EQ(t[0].data<double>()[0], 4.0);
  EXPECT_EQ(t[2].data<double>()[0], 4.0);
  EXPECT_EQ(ToDoubles(gathered[3]), (std::vector<double>{4.0, 2.0}));
  EXPECT_EQ(ToDoubles(gathered[1]), (std::vector<double>{4.0, 2.0}));
  EXPECT_EQ(CommOf(*world, 3, 2).rank(), 0);
  EXPECT_EQ(CommOf(*world, 1, 2).GlobalRank(0), 3);
}

TEST(CollectivesTest, RepeatedRunsGiveTheSameBits) {
  auto world = MakeWorld(4);
  ASSERT_NE(world, nullptr);
  std::vector<Tensor> first;
  for (int run = 0; run < 20; ++run) {
    std::vector<Tensor> t;
    for (int r = 0; r < 4; ++r) {
      t.push_back(RandomTensor(DType::kFloat32, {257}, 7 + static_cast<uint64_t>(r), -1e3, 1e3));
    }
    ASSERT_TRUE(
        world
            ->RunRanks([&](int rank) {
              return CommOf(*world, rank).AllReduce(t[static_cast<size_t>(rank)], ReduceOp::kSum);
            })
            .ok());
    if (run == 0) {
      first = t;
      continue;
    }
    for (int r = 0; r < 4; ++r) {
      EXPECT_TRUE(t[static_cast<size_t>(r)].BitwiseEqual(first[static_cast<size_t>(r)]));
    }
  }
}

// ---- errors ---------------------------------------------------------------------------------

Status RunOnTwo(ThreadWorld& world, const std::function<Status(Communicator&, int)>& body) {
  return world.RunRanks([&](int rank) { return body(CommOf(world, rank), rank); });
}

TEST(CollectivesTest, MismatchedCallsNameEveryRanksCall) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  Status status = RunOnTwo(*world, [](Communicator& comm, int rank) {
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {2, 3});
    CallSite site{rank == 0 ? "c_allreduce_sum" : "c_allreduce_max", "forward", 0, 1, 4};
    return comm.AllReduce(t, rank == 0 ? ReduceOp::kSum : ReduceOp::kMax, site);
  });
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.message(),
            "mismatched collective calls in process group 0: rank 0 calls all_reduce sum "
            "float32[2, 3] (c_allreduce_sum, ring 0, job forward, micro-batch 0, step 1, op 4); "
            "rank 1 calls all_reduce max float32[2, 3] (c_allreduce_max, ring 0, job forward, "
            "micro-batch 0, step 1, op 4)");
  EXPECT_EQ(world->rank_statuses()[1].message(), status.message());

  status = RunOnTwo(*world, [](Communicator& comm, int rank) {
    Tensor t = Tensor::ZerosUnchecked(rank == 0 ? DType::kFloat32 : DType::kFloat64, {4});
    return rank == 0 ? comm.Broadcast(t, 0) : comm.AllReduce(t, ReduceOp::kSum);
  });
  EXPECT_EQ(status.message(),
            "mismatched collective calls in process group 0: rank 0 calls broadcast from root 0 "
            "float32[4] (ring 0); rank 1 calls all_reduce sum float64[4] (ring 0)");

  status = RunOnTwo(*world, [](Communicator& comm, int rank) {
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {rank + 1});
    return comm.AllReduce(t, ReduceOp::kSum);
  });
  EXPECT_EQ(status.message(),
            "mismatched collective calls in process group 0: rank 0 calls all_reduce sum "
            "float32[1] (ring 0); rank 1 calls all_reduce sum float32[2] (ring 0)");

  status = RunOnTwo(*world, [](Communicator& comm, int rank) {
    Tensor t = Tensor::ZerosUnchecked(DType::kInt32, {2});
    return comm.Broadcast(t, rank);
  });
  EXPECT_EQ(status.message(),
            "mismatched collective calls in process group 0: rank 0 calls broadcast from root 0 "
            "int32[2] (ring 0); rank 1 calls broadcast from root 1 int32[2] (ring 0)");
}

// A barrier against an all-reduce large enough for the split computation: the calls are
// compared before anything is sized from rank 0's tensor, which a barrier does not bring.
TEST(CollectivesTest, ABarrierAgainstALargeAllReduceIsAMismatch) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  Status status = RunOnTwo(*world, [](Communicator& comm, int rank) {
    if (rank == 0) return comm.Barrier();
    // Rank 1 arrives last, so its call is the one the round's completion looks at first.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Tensor t = Tensor::ZerosUnchecked(DType::kFloat32, {1 << 20});
    return comm.AllReduce(t, ReduceOp::kSum);
  });
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.message(),
            "mismatched collective calls in process group 0: rank 0 calls barrier (ring 0); "
            "rank 1 calls all_reduce sum float32[1048576] (ring 0)");
}

TEST(CollectivesTest, BadArgumentsFailBeforeAnyRendezvous) {
  auto world = MakeWorld(2);
  ASSERT_NE(world, nullptr);
  Communicator& comm = CommOf(*world, 0);
  Tensor odd = Tensor::ZerosUnchecked(DType::kFloat32, {3, 2});
  Tensor out;
  Status status = comm.ReduceScatter(odd, &out, ReduceOp::kSum, {"c_reducescatter", "", 0, 0, 2});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "c_reducescatter: float32[3, 2] has dim 0 of 3, which does not divide into 2 equal "
            "parts (ring 0, op 2)");
  Tensor scalar = Tensor::ZerosUnchecked(DType::kFloat32, {});
  EXPECT_EQ(comm.AllToAll(scalar, &out).message(), "all_to_all: float32[] has no dim 0 (ring 0)");
  EXPECT_EQ(comm.AllGather(scalar, &out).message(),
            "all_gather: float32[] has no dim 0 to gather along (ring 0)");
  EXPECT_EQ(comm.Broadcast(odd, 2).message(),
            "broadcast: root 2 is not a rank of the group (2 ranks) (ring 0)");
  Tensor flags = Tensor::ZerosUnchecked(DType::kBool, {2});
  EXPECT_EQ(comm.AllReduce(flags, ReduceOp::kMax).message(),
            "all_reduce: a max reduction does not take bool[2] (ring 0)");
  Tensor undefined;
  EXPECT_EQ(comm.AllReduce(undefined, ReduceOp::kSum).message(),
            "all_reduce: the tensor is undefined (ring 0)");
}

TEST(CollectivesTest, WorldAndGroupErrors) {
  EXPECT_EQ(ThreadWorld::Create(0).status().message(), "world size 0 is below 1");
  EXPECT_EQ(ThreadWorld::Create(2, {{1, {0}}, {1, {1}}}).status().message(),
            "process group 1 is declared twice");
  EXPECT_EQ(ThreadWorld::Create(2, {{1, {}}}).status().message(), "process group 1 has no ranks");
  EXPECT_EQ(ThreadWorld::Create(2, {{1, {0, 2}}}).status().message(),
            "process group 1 names rank 2, outside the world of 2");
  EXPECT_EQ(ThreadWorld::Create(2, {{1, {1, 1}}}).status().message(),
            "process group 1 holds rank 1 twice");
  auto world = MakeWorld(3, {{1, {0, 2}}});
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(world->For(0, 7).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(world->For(0, 7).status().message(), "ring_id 7 names no process group");
  EXPECT_EQ(world->For(1, 1).status().message(),
            "process group 1 (ranks [0, 2]) does not hold rank 1");
  // Ring 0 given explicitly replaces the default of every rank.
  auto partial = MakeWorld(3, {{0, {2, 0}}});
  ASSERT_NE(partial, nullptr);
  EXPECT_FALSE(partial->For(1, 0).ok());
  EXPECT_EQ(CommOf(*partial, 0).rank(), 1);
}

}  // namespace
}  // namespace irm::rt
