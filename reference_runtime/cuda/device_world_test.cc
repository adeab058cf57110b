// The device world (N ranks on one GPU) against the thread backend: every collective, on 1 to 4
// ranks, every reducing dtype and every reduction, gives the thread backend's bits (the rank-order
// kernel repeats the reference reduction's operations; the rest is data movement); sends and
// receives under rendezvous and buffered; the thread backend's hang and mismatch reports. Then
// the corpus's 4-rank data-parallel and 2-rank tensor-parallel bundles on the device world: bit
// for bit the thread backend's on the CPU kernels, within the reordered tier on the GPU kernels.
// Skipped, with the reason, where no GPU is visible.
#include "reference_runtime/cuda/device_world.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/tensor_compare.h"
#include "reference_runtime/cuda/gpu_kernel_registry.h"
#include "reference_runtime/cuda/gpu_test_support.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/half.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::rt::cuda {
namespace {

namespace fs = std::filesystem;

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Rank `rank`'s input: values of either sign, a NaN in float tensors (max and min propagate it).
Tensor Input(DType dtype, int rank, std::vector<int64_t> shape) {
  Tensor t = Tensor::ZerosUnchecked(dtype, std::move(shape));
  VisitDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* data = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double x = 7.0 * std::sin(0.61 * static_cast<double>(i) + 1.3 * rank);
      if constexpr (std::is_same_v<T, Float16>) {
        data[i] = ToFloat16(static_cast<float>(x));
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        data[i] = ToBFloat16(static_cast<float>(x));
      } else if constexpr (std::is_floating_point_v<T>) {
        data[i] = static_cast<T>(x);
      } else if constexpr (!std::is_same_v<T, bool>) {
        data[i] = static_cast<T>(std::lround(x));
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (rank == 1 && t.numel() > 5) data[5] = std::numeric_limits<T>::quiet_NaN();
    }
  });
  return t;
}

// What every collective gives rank `rank` on `world`'s communicators, in call order.
template <typename World>
std::vector<Tensor> EveryCollective(World& world, int n, DType dtype) {
  std::vector<std::vector<Tensor>> results(static_cast<size_t>(n));
  const Status ran = world.RunRanks([&](int rank) -> Status {
    IRM_ASSIGN_OR_RETURN(Communicator * comm, world.For(rank, 0));
    std::vector<Tensor>& out = results[static_cast<size_t>(rank)];
    const Tensor in = Input(dtype, rank, {4 * n, 3});
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kAvg}) {
      Tensor t = in.Clone();
      IRM_RETURN_IF_ERROR(comm->AllReduce(t, op));
      out.push_back(std::move(t));
      Tensor part;
      IRM_RETURN_IF_ERROR(comm->ReduceScatter(in, &part, op));
      out.push_back(std::move(part));
    }
    Tensor b = in.Clone();
    IRM_RETURN_IF_ERROR(comm->Broadcast(b, n - 1));
    out.push_back(std::move(b));
    Tensor gathered, exchanged;
    IRM_RETURN_IF_ERROR(comm->AllGather(in, &gathered));
    out.push_back(std::move(gathered));
    IRM_RETURN_IF_ERROR(comm->AllToAll(in, &exchanged));
    out.push_back(std::move(exchanged));
    return comm->Barrier();
  });
  EXPECT_TRUE(ran.ok()) << ran.message();
  std::vector<Tensor> flat;
  for (std::vector<Tensor>& rank : results) {
    for (Tensor& t : rank) flat.push_back(std::move(t));
  }
  return flat;
}

std::unique_ptr<DeviceWorld> MakeDeviceWorld(int n, DeviceWorldOptions options = {}) {
  StatusOr<std::unique_ptr<DeviceWorld>> world = DeviceWorld::Create(n, {}, options);
  EXPECT_TRUE(world.ok()) << world.status().message();
  return world.ok() ? std::move(world).value() : nullptr;
}

TEST(DeviceWorldTest, RefusesWithoutAGpu) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible";
  StatusOr<std::unique_ptr<DeviceWorld>> world = DeviceWorld::Create(2);
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.status().code(), StatusCode::kInternal);
  EXPECT_NE(world.status().message().find("device world: no GPU can be used"), std::string::npos)
      << world.status().message();
}

TEST(GpuDeviceWorld, EveryCollectiveGivesTheThreadBackendsBits) {
  IRM_REQUIRE_GPU();
  for (int n = 1; n <= 4; ++n) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                        DType::kInt32, DType::kInt64}) {
      SCOPED_TRACE(fmt::format("{} ranks, {}", n, DTypeName(dtype)));
      StatusOr<std::unique_ptr<ThreadWorld>> threads = ThreadWorld::Create(n);
      ASSERT_TRUE(threads.ok());
      std::unique_ptr<DeviceWorld> device = MakeDeviceWorld(n);
      ASSERT_NE(device, nullptr);
      const std::vector<Tensor> want = EveryCollective(**threads, n, dtype);
      const std::vector<Tensor> got = EveryCollective(*device, n, dtype);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_TRUE(SameBits(got[i], want[i])) << "result " << i << ": " << got[i].Describe();
      }
    }
  }
}

TEST(GpuDeviceWorld, SendsAndReceivesUnderBothP2pModels) {
  IRM_REQUIRE_GPU();
  for (const char* model : {"rendezvous", "buffered=2"}) {
    SCOPED_TRACE(model);
    DeviceWorldOptions options;
    options.p2p = *schedules::ParseP2pModel(model);
    std::unique_ptr<DeviceWorld> world = MakeDeviceWorld(3, options);
    ASSERT_NE(world, nullptr);
    const Status ran = world->RunRanks([&](int rank) -> Status {
      IRM_ASSIGN_OR_RETURN(Communicator * comm, world->For(rank, 0));
      const int next = (rank + 1) % 3;
      const int previous = (rank + 2) % 3;
      const Tensor mine = Input(DType::kFloat32, rank, {5, 2});
      Tensor received;
      if (rank == 0) {
        IRM_RETURN_IF_ERROR(comm->Send(mine, next));
        IRM_RETURN_IF_ERROR(comm->Recv(&received, previous));
      } else {
        IRM_RETURN_IF_ERROR(comm->Recv(&received, previous));
        IRM_RETURN_IF_ERROR(comm->Send(mine, next));
      }
      EXPECT_TRUE(SameBits(received, Input(DType::kFloat32, previous, {5, 2})));
      // A defined tensor takes the message in place.
      Tensor into = Tensor::ZerosUnchecked(DType::kInt64, {3});
      if (rank == 0) {
        IRM_RETURN_IF_ERROR(comm->Send(Input(DType::kInt64, 0, {3}), 1));
      } else if (rank == 1) {
        IRM_RETURN_IF_ERROR(comm->Recv(&into, 0));
        EXPECT_TRUE(SameBits(into, Input(DType::kInt64, 0, {3})));
      }
      return Status::Ok();
    });
    EXPECT_TRUE(ran.ok()) << ran.message();
  }
}

TEST(GpuDeviceWorld, BothRanksSendingFirstHangUnderRendezvousOnly) {
  IRM_REQUIRE_GPU();
  auto both_send_first = [](DeviceWorld& world) {
    return world.RunRanks([&](int rank) -> Status {
      IRM_ASSIGN_OR_RETURN(Communicator * comm, world.For(rank, 0));
      IRM_RETURN_IF_ERROR(
          comm->Send(Input(DType::kFloat32, rank, {2}), 1 - rank, CallSite{"send_v2", "main"}));
      Tensor received;
      return comm->Recv(&received, 1 - rank, CallSite{"recv_v2", "main"});
    });
  };
  std::unique_ptr<DeviceWorld> rendezvous = MakeDeviceWorld(2);
  ASSERT_NE(rendezvous, nullptr);
  const Status hang = both_send_first(*rendezvous);
  ASSERT_FALSE(hang.ok());
  EXPECT_NE(hang.message().find("hang: no rank can progress"), std::string::npos) << hang.message();
  EXPECT_NE(hang.message().find("rank 0 waits in send_v2 to rank 1"), std::string::npos)
      << hang.message();
  EXPECT_NE(hang.message().find("rank 1 waits in send_v2 to rank 0"), std::string::npos)
      << hang.message();

  DeviceWorldOptions buffered;
  buffered.p2p = *schedules::ParseP2pModel("buffered=1");
  std::unique_ptr<DeviceWorld> world = MakeDeviceWorld(2, buffered);
  ASSERT_NE(world, nullptr);
  const Status ran = both_send_first(*world);
  EXPECT_TRUE(ran.ok()) << ran.message();
}

TEST(GpuDeviceWorld, MismatchedCollectivesFailInTheThreadBackendsWords) {
  IRM_REQUIRE_GPU();
  auto mismatched = [](auto& world) {
    return world.RunRanks([&](int rank) -> Status {
      IRM_ASSIGN_OR_RETURN(Communicator * comm, world.For(rank, 0));
      Tensor t = Input(DType::kFloat32, rank, {4, 8});
      return comm->AllReduce(t, rank == 0 ? ReduceOp::kSum : ReduceOp::kMax,
                             CallSite{"c_allreduce_sum", "main", 0, 1, 7});
    });
  };
  StatusOr<std::unique_ptr<ThreadWorld>> threads = ThreadWorld::Create(2);
  ASSERT_TRUE(threads.ok());
  const Status want = mismatched(**threads);
  std::unique_ptr<DeviceWorld> device = MakeDeviceWorld(2);
  ASSERT_NE(device, nullptr);
  const Status got = mismatched(*device);
  ASSERT_FALSE(want.ok());
  EXPECT_NE(want.message().find("mismatched collective calls in process group 0"),
            std::string::npos);
  EXPECT_EQ(got.code(), want.code());
  EXPECT_EQ(got.message(), want.message());
}

// ---- bundles -----------------------------------------------------------------------------------

StatusOr<MultiRankResult> RunCase(const std::string& dir, const RankWorldFactory& factory,
                                  const KernelRegistry* kernels) {
  MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = 4;
  config.rank_config.options.kernels = kernels;
  config.make_world = factory;
  return RunBundleRanks(dir, config);
}

::testing::AssertionResult Agree(const Tensor& a, const Tensor& b, bool exact) {
  const diff::Comparison c =
      diff::CompareTensors(a, b, exact ? diff::Tier::kExact : diff::Tier::kReordered);
  if (c.pass) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.reason;
}

// Every fetch of every step and every persistable var of every rank.
void ExpectSameRun(const MultiRankResult& got, const MultiRankResult& want, bool exact) {
  ASSERT_EQ(got.ranks.size(), want.ranks.size());
  for (size_t r = 0; r < want.ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankOutcome& a = want.ranks[r];
    const RankOutcome& b = got.ranks[r];
    ASSERT_EQ(b.steps.size(), a.steps.size());
    for (size_t s = 0; s < a.steps.size(); ++s) {
      ASSERT_EQ(b.steps[s].merged.size(), a.steps[s].merged.size());
      for (size_t f = 0; f < a.steps[s].merged.size(); ++f) {
        EXPECT_TRUE(Agree(b.steps[s].merged[f].tensor, a.steps[s].merged[f].tensor, exact))
            << "step " << s + 1 << ", fetch " << a.steps[s].merged[f].name;
      }
    }
    const std::vector<std::string> names = a.scope->LocalNames();
    EXPECT_FALSE(names.empty());
    for (const std::string& name : names) {
      const Tensor* expected = a.scope->FindLocal(name);
      const Tensor* actual = b.scope->FindLocal(name);
      ASSERT_NE(actual, nullptr) << name;
      if (expected->defined()) {
        EXPECT_TRUE(Agree(*actual, *expected, exact)) << name;
      }
    }
  }
}

class GpuDeviceWorldBundles : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuDeviceWorldBundles, MatchTheCpuThreadBackend) {
  IRM_REQUIRE_GPU();
  StatusOr<corpus::BundleCase> c = corpus::CaseNamed(GetParam());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("irm_device_world_" + std::to_string(::getpid()) + "_" + GetParam());
  fs::remove_all(dir);
  ASSERT_TRUE(corpus::WriteBundleCase(*c, dir.string()).ok());
  StatusOr<std::unique_ptr<KernelRegistry>> gpu = MakeGpuKernelRegistry();
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();

  StatusOr<MultiRankResult> cpu_threads = RunCase(dir.string(), {}, nullptr);
  const RankWorldFactory device = DeviceWorld::Factory({});
  StatusOr<MultiRankResult> cpu_device = RunCase(dir.string(), device, nullptr);
  StatusOr<MultiRankResult> gpu_device = RunCase(dir.string(), device, gpu->get());
  fs::remove_all(dir);
  ASSERT_TRUE(cpu_threads.ok()) << cpu_threads.status().ToString();
  ASSERT_TRUE(cpu_device.ok()) << cpu_device.status().ToString();
  ASSERT_TRUE(gpu_device.ok()) << gpu_device.status().ToString();
  {
    // Only the communication differs, and it sums in rank order: the same bits.
    SCOPED_TRACE("CPU kernels on the device world");
    ExpectSameRun(*cpu_device, *cpu_threads, /*exact=*/true);
  }
  {
    SCOPED_TRACE("GPU kernels on the device world");
    ExpectSameRun(*gpu_device, *cpu_threads, /*exact=*/false);
  }
}

INSTANTIATE_TEST_SUITE_P(GpuCorpus, GpuDeviceWorldBundles, ::testing::Values("dp4_mlp", "tp2_mlp"));

}  // namespace
}  // namespace irm::rt::cuda
