// The Gloo backend's all_reduce overhead: a float32 sum over 2 and 4 ranks (threads of this
// process, in-memory rendezvous, TCP on loopback) for 1 KiB ... 16 MiB per rank:
//   BM_BareGlooAllReduce  gloo::allreduce called directly on the world's contexts, gloo::sum — the
//                         baseline
//   BM_GlooAllReduce      the same reduction through GlooWorld's Communicator::AllReduce (argument
//                         checks, the element-wise reduce function of the reference reduction)
// Each iteration runs every rank's calls at once (CallsFor(bytes) back-to-back calls per rank, so
// that starting the rank threads is spread over several calls); the time column is per iteration,
// the summary per call. After the runs it prints, per size, the bare call's time over the
// communicator's (target >= 0.9) — medians when run with repetitions, since on a shared machine a
// few descheduled repetitions move a mean by more than the overhead measured — and exits 1 on a
// miss when run with --irm_check_targets. Run the two with --benchmark_enable_random_interleaving
// so that neither always runs first on a warmer or quieter machine.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <gloo/allreduce.h>
#include <gloo/context.h>
#include <gloo/math.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "bench/bench_runner.h"
#include "reference_runtime/comm/gloo_world.h"
#include "reference_runtime/tensor.h"

namespace {

using irm::rt::GlooWorld;
using irm::rt::Tensor;
using Clock = std::chrono::steady_clock;

constexpr double kTarget = 0.9;  // communicator throughput / bare gloo::allreduce throughput
constexpr int64_t kSizes[] = {1 << 10, 1 << 16, 1 << 20, 1 << 24};  // bytes per rank

// Calls per rank and iteration: about 16 MiB moved per rank, between 2 and 20 calls.
int CallsFor(int64_t bytes) {
  return static_cast<int>(std::clamp<int64_t>((int64_t{16} << 20) / bytes, 2, 20));
}

// One world per rank count, connected once for every benchmark.
GlooWorld& WorldOf(int ranks) {
  static std::map<int, std::unique_ptr<GlooWorld>> worlds;
  std::unique_ptr<GlooWorld>& world = worlds[ranks];
  if (world == nullptr) {
    irm::StatusOr<std::unique_ptr<GlooWorld>> made = GlooWorld::CreateThreads(ranks);
    if (!made.ok()) {
      fmt::print(stderr, "{}\n", made.status().ToString());
      std::exit(2);
    }
    world = std::move(made).value();
  }
  return *world;
}

// Every rank's input: rank r holds r + 1 everywhere (sums stay exact and finite).
std::vector<Tensor> Inputs(int ranks, int64_t bytes) {
  std::vector<Tensor> tensors;
  for (int r = 0; r < ranks; ++r) {
    tensors.push_back(Tensor::FromVector(
        std::vector<float>(static_cast<size_t>(bytes / 4), static_cast<float>(r + 1)),
        {bytes / 4}));
  }
  return tensors;
}

// Runs `call(world, rank, tensor)` CallsFor(bytes) times on every rank at once per iteration.
template <typename F>
void RunCalls(benchmark::State& state, F&& call) {
  const int ranks = static_cast<int>(state.range(0));
  const int64_t bytes = state.range(1);
  const int calls = CallsFor(bytes);
  GlooWorld& world = WorldOf(ranks);
  std::vector<Tensor> tensors = Inputs(ranks, bytes);
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    const irm::Status status = world.RunRanks([&](int rank) -> irm::Status {
      for (int i = 0; i < calls; ++i) {
        IRM_RETURN_IF_ERROR(call(world, rank, tensors[static_cast<size_t>(rank)]));
      }
      return irm::Status::Ok();
    });
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
  state.SetBytesProcessed(state.iterations() * calls * bytes);
  state.counters["calls"] = calls;
}

void BM_BareGlooAllReduce(benchmark::State& state) {
  // Tags far above the communicator's, counted alike on every rank (one counter per rank thread).
  std::vector<uint32_t> tags(8, 0);
  RunCalls(state, [&tags](GlooWorld& world, int rank, Tensor& t) -> irm::Status {
    IRM_ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context, world.GlooContext(rank, 0));
    gloo::AllreduceOptions options(context);
    options.setOutput(t.data<float>(), static_cast<size_t>(t.numel()));
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag((uint32_t{1} << 30) + tags[static_cast<size_t>(rank)]++);
    gloo::allreduce(options);
    return irm::Status::Ok();
  });
}

void BM_GlooAllReduce(benchmark::State& state) {
  RunCalls(state, [](GlooWorld& world, int rank, Tensor& t) -> irm::Status {
    IRM_ASSIGN_OR_RETURN(irm::rt::Communicator * comm, world.For(rank, 0));
    return comm->AllReduce(t, irm::rt::ReduceOp::kSum);
  });
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"ranks", "bytes"});
  for (int ranks : {2, 4}) {
    for (int64_t bytes : kSizes) b->Args({ranks, bytes});
  }
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_BareGlooAllReduce)->Apply(Sizes);
BENCHMARK(BM_GlooAllReduce)->Apply(Sizes);

}  // namespace

int main(int argc, char** argv) {
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  bool ok = true;
  fmt::print(
      "float32 sum all_reduce, ranks as threads, TCP on loopback: bare gloo::allreduce "
      "time / communicator time (target >= {})\n",
      kTarget);
  for (int ranks : {2, 4}) {
    for (int64_t bytes : kSizes) {
      const std::string args = fmt::format("ranks:{}/bytes:{}", ranks, bytes);
      const std::string bare = "BM_BareGlooAllReduce/" + args;
      const std::string ours = "BM_GlooAllReduce/" + args;
      if (!run.Has(bare) || !run.Has(ours)) continue;
      const double calls = CallsFor(bytes);
      const double ratio = run.Robust(bare) / run.Robust(ours);
      const bool pass = ratio >= kTarget;
      ok &= pass;
      fmt::print(
          "  {} ranks, {:>8} bytes: bare {:9.1f} us, communicator {:9.1f} us, ratio {:.3f} "
          "{}\n",
          ranks, bytes, run.Robust(bare) / calls * 1e6, run.Robust(ours) / calls * 1e6, ratio,
          pass ? "PASS" : "MISS");
    }
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
