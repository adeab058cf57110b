// The NCCL communicator: every collective's contract at world size 1 on one GPU (the result is
// the rank's own tensor, bit for bit; send and recv to oneself are refused), and at N = the number
// of visible GPUs when there are two or more (integer sums exact, float sums within the dtype's
// rounding of the rank-order sum, a ring of sends, two ranks that both send first reported as a
// hang with both sends named). Skipped, with the reason, where the GPUs are too few; the refusal
// of more ranks than GPUs runs everywhere.
#include "reference_runtime/cuda/nccl_communicator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "reference_runtime/cuda/gpu_test_support.h"

namespace irm::rt::cuda {
namespace {

// Skips unless at least `n` GPUs are visible.
#define IRM_REQUIRE_GPUS(n)                                                                     \
  do {                                                                                          \
    IRM_REQUIRE_GPU();                                                                          \
    if (VisibleGpuCount() < (n)) {                                                              \
      GTEST_SKIP() << "needs " << (n) << " GPUs (one NCCL rank per GPU), " << VisibleGpuCount() \
                   << " visible";                                                               \
    }                                                                                           \
  } while (0)

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

Tensor Floats(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.0));
  }
  return Tensor::FromVector(v, {n / 4, 4});
}

std::unique_ptr<NcclWorld> MakeNcclWorld(int n, NcclWorldOptions options = {}) {
  StatusOr<std::unique_ptr<NcclWorld>> world = NcclWorld::Create(n, {}, options);
  EXPECT_TRUE(world.ok()) << world.status().message();
  return world.ok() ? std::move(world).value() : nullptr;
}

TEST(NcclWorldTest, RefusesMoreRanksThanVisibleGpus) {
  const int n = VisibleGpuCount() + 1;
  StatusOr<std::unique_ptr<NcclWorld>> world = NcclWorld::Create(n);
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.status().code(), StatusCode::kInternal);
  EXPECT_NE(world.status().message().find("one rank per GPU"), std::string::npos)
      << world.status().message();
}

TEST(NcclWorldTest, DeterministicEnvironmentPinsRingSimpleAndOneChannel) {
  // docs/runtime.md "GPU", from the reference's NCCL determinism notes.
  const auto& env = NcclDeterministicEnvironment();
  auto value = [&](const std::string& name) {
    for (const auto& [k, v] : env) {
      if (k == name) return v;
    }
    return std::string("(unset)");
  };
  EXPECT_EQ(value("NCCL_ALGO"), "Ring");
  EXPECT_EQ(value("NCCL_PROTO"), "Simple");
  EXPECT_EQ(value("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(value("NCCL_MIN_NCHANNELS"), value("NCCL_MAX_NCHANNELS"));
}

TEST(GpuNcclWorldOneRank, EveryCollectiveGivesTheRanksOwnTensor) {
  IRM_REQUIRE_GPUS(1);
  std::unique_ptr<NcclWorld> world = MakeNcclWorld(1);
  ASSERT_NE(world, nullptr);
  const Tensor input = Floats(64, 3.0f);
  const Status ran = world->RunRanks([&](int rank) -> Status {
    IRM_ASSIGN_OR_RETURN(Communicator * comm, world->For(rank, 0));
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kAvg}) {
      Tensor t = input.Clone();
      IRM_RETURN_IF_ERROR(comm->AllReduce(t, op));
      EXPECT_TRUE(SameBits(t, input)) << ReduceOpName(op);
    }
    Tensor b = input.Clone();
    IRM_RETURN_IF_ERROR(comm->Broadcast(b, 0));
    EXPECT_TRUE(SameBits(b, input));
    Tensor gathered;
    IRM_RETURN_IF_ERROR(comm->AllGather(input, &gathered));
    EXPECT_TRUE(SameBits(gathered, input));
    Tensor scattered;
    IRM_RETURN_IF_ERROR(comm->ReduceScatter(input, &scattered, ReduceOp::kSum));
    EXPECT_TRUE(SameBits(scattered, input));
    Tensor exchanged;
    IRM_RETURN_IF_ERROR(comm->AllToAll(input, &exchanged));
    EXPECT_TRUE(SameBits(exchanged, input));
    IRM_RETURN_IF_ERROR(comm->Barrier());
    // Point to point needs a peer: to oneself it is refused before NCCL sees it.
    EXPECT_EQ(comm->Send(input, 0).code(), StatusCode::kInvalidArgument);
    Tensor received;
    EXPECT_EQ(comm->Recv(&received, 0).code(), StatusCode::kInvalidArgument);
    return Status::Ok();
  });
  EXPECT_TRUE(ran.ok()) << ran.message();
}

TEST(GpuNcclWorldOneRank, EveryDTypeMovesUnchanged) {
  IRM_REQUIRE_GPUS(1);
  std::unique_ptr<NcclWorld> world = MakeNcclWorld(1);
  ASSERT_NE(world, nullptr);
  const Status ran = world->RunRanks([&](int rank) -> Status {
    IRM_ASSIGN_OR_RETURN(Communicator * comm, world->For(rank, 0));
    for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32,
                        DType::kInt64, DType::kInt8, DType::kUInt8}) {
      IRM_ASSIGN_OR_RETURN(Tensor input, Tensor::Zeros(dtype, {8, 3}));
      auto* bytes = static_cast<unsigned char*>(input.raw());
      for (size_t i = 0; i < input.nbytes(); ++i) bytes[i] = static_cast<unsigned char>(i % 7);
      Tensor t = input.Clone();
      IRM_RETURN_IF_ERROR(comm->AllReduce(t, ReduceOp::kSum));
      EXPECT_TRUE(SameBits(t, input)) << DTypeName(dtype);
      Tensor gathered;
      IRM_RETURN_IF_ERROR(comm->AllGather(input, &gathered));
      EXPECT_TRUE(SameBits(gathered, input)) << DTypeName(dtype);
    }
    return Status::Ok();
  });
  EXPECT_TRUE(ran.ok()) << ran.message();
}

TEST(GpuNcclWorldManyRanks, SumsGathersAndSendsAcrossEveryGpu) {
  IRM_REQUIRE_GPUS(2);
  const int n = VisibleGpuCount();
  std::unique_ptr<NcclWorld> world = MakeNcclWorld(n);
  ASSERT_NE(world, nullptr);
  const Status ran = world->RunRanks([&](int rank) -> Status {
    IRM_ASSIGN_OR_RETURN(Communicator * comm, world->For(rank, 0));
    // Integers: exact whatever the order.
    Tensor ints = Tensor::FromVector(std::vector<int64_t>(12, rank + 1), {12});
    IRM_RETURN_IF_ERROR(comm->AllReduce(ints, ReduceOp::kSum));
    for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(ints.data<int64_t>()[i], int64_t{n} * (n + 1) / 2);
    // Floats: the rank-order sum within float32's rounding of n terms.
    Tensor mine = Floats(256, static_cast<float>(rank + 1));
    Tensor sum = mine.Clone();
    IRM_RETURN_IF_ERROR(comm->AllReduce(sum, ReduceOp::kSum));
    for (int64_t i = 0; i < 256; ++i) {
      double expected = 0;
      for (int r = 0; r < n; ++r)
        expected += Floats(256, static_cast<float>(r + 1)).data<float>()[i];
      EXPECT_NEAR(sum.data<float>()[i], expected, 1e-5 * n * (std::abs(expected) + 1));
    }
    Tensor gathered;
    IRM_RETURN_IF_ERROR(comm->AllGather(mine, &gathered));
    EXPECT_EQ(gathered.shape()[0], 64 * n);
    EXPECT_EQ(std::memcmp(static_cast<const char*>(gathered.raw()) + mine.nbytes() * rank,
                          mine.raw(), mine.nbytes()),
              0);
    // A ring: each rank sends to the next; even ranks send first, so nothing waits in a cycle.
    const int next = (rank + 1) % n;
    const int previous = (rank + n - 1) % n;
    Tensor received;
    if (rank % 2 == 0) {
      IRM_RETURN_IF_ERROR(comm->Send(mine, next));
      IRM_RETURN_IF_ERROR(comm->Recv(&received, previous));
    } else {
      IRM_RETURN_IF_ERROR(comm->Recv(&received, previous));
      IRM_RETURN_IF_ERROR(comm->Send(mine, next));
    }
    EXPECT_TRUE(SameBits(received, Floats(256, static_cast<float>(previous + 1))));
    return Status::Ok();
  });
  EXPECT_TRUE(ran.ok()) << ran.message();
}

TEST(GpuNcclWorldManyRanks, TwoRanksThatBothSendFirstAreAHang) {
  IRM_REQUIRE_GPUS(2);
  std::unique_ptr<NcclWorld> world = MakeNcclWorld(2);
  ASSERT_NE(world, nullptr);
  // 64 MiB: far more than NCCL buffers, so each send waits for its recv.
  const Tensor big = Tensor::FromVector(std::vector<float>(16 << 20, 1.0f), {16 << 20});
  const Status ran = world->RunRanks([&](int rank) -> Status {
    IRM_ASSIGN_OR_RETURN(Communicator * comm, world->For(rank, 0));
    IRM_RETURN_IF_ERROR(comm->Send(big, 1 - rank, CallSite{"send_v2", "main", 0, 0, 3}));
    Tensor received;
    return comm->Recv(&received, 1 - rank);
  });
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.message().find("hang: no rank can progress"), std::string::npos) << ran.message();
  EXPECT_NE(ran.message().find("rank 0 waits in send_v2 to rank 1"), std::string::npos)
      << ran.message();
  EXPECT_NE(ran.message().find("rank 1 waits in send_v2 to rank 0"), std::string::npos)
      << ran.message();
}

}  // namespace
}  // namespace irm::rt::cuda
