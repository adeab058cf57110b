// Benchmarks of the thread communicator and of parity runs:
//   all_reduce       float32 sum all-reduce on the thread backend (ThreadWorld), 2 and 4 ranks as
//                    threads of one world, 1 KiB to 64 MiB per rank. The world is created once per
//                    benchmark and every measured call runs inside one RunRanks: rank 0's thread
//                    drives the benchmark loop, one AllReduce per iteration, and the other ranks
//                    follow it (see BM_AllReduce). Counters as nccl-tests defines them:
//                    algbw = bytes / time, busbw = algbw * 2 (n - 1) / n, in GB/s (1e9 bytes).
//   memcpy           the baseline, same binary and run: single-thread std::memcpy of the same
//                    sizes between two buffers, bytes copied per second.
//   parity_overhead  the model zoo's MLP (default config) and GPT (2 layers), AdamW, 3 steps,
//                    batch 4: each iteration times two plain runs (the legacy programs on
//                    LegacyExecutor through RunTraining, then their translations on PirExecutor)
//                    and then diff::RunParity on the exact tier, translating on the fly. Both
//                    include translation and verification of main and startup, as RunParity does
//                    them; the counters also give the ratio without it.
// After the runs it prints each size's bus bandwidth next to memcpy's, and the ratios (no targets).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "diff_tests/parity_run.h"
#include "newir/verifier.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "reference_runtime/comm/thread_world.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/run.h"
#include "translator/translate.h"

namespace {

namespace oldir = irm::oldir;
namespace rt = irm::rt;
using Clock = std::chrono::steady_clock;

constexpr int64_t kMinBytes = int64_t{1} << 10;  // 1 KiB
constexpr int64_t kMaxBytes = int64_t{1} << 26;  // 64 MiB
constexpr int kParitySteps = 3;
constexpr int64_t kParityBatch = 4;
constexpr uint64_t kParitySeed = 7;

// A broken benchmark set-up is a bug here, not bad input: report it and stop.
void Check(const irm::Status& status, const char* what) {
  if (status.ok()) return;
  fmt::print(stderr, "{}: {}\n", what, status.ToString());
  std::exit(2);
}

template <typename T>
T Take(irm::StatusOr<T> value, const char* what) {
  Check(value.status(), what);
  return std::move(value).value();
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- all_reduce on the thread backend ----------------------------------------------------------

// Every rank's buffer holds the measured floats plus one control float at the end: before each
// call rank 0 puts 1 there while the benchmark goes on and the others 0, so after the call every
// rank reads from the sum whether to make another call. When the loop ends rank 0 makes one more
// call, untimed, with 0, and the others stop. The measured floats grow by a factor n per call and
// reach inf; float addition of inf costs the same on x86, and no value is checked after the first
// call (which is).
void BM_AllReduce(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const int64_t bytes = state.range(1);
  const int64_t numel = bytes / static_cast<int64_t>(sizeof(float));
  std::unique_ptr<rt::ThreadWorld> world = Take(rt::ThreadWorld::Create(ranks), "creating a world");
  std::vector<rt::Communicator*> comms;
  std::vector<rt::Tensor> buffers;
  for (int r = 0; r < ranks; ++r) {
    comms.push_back(Take(world->For(r, 0), "looking up a communicator"));
    buffers.push_back(rt::Tensor::ZerosUnchecked(irm::DType::kFloat32, {numel + 1}));
    float* data = buffers.back().data<float>();
    for (int64_t i = 0; i < numel; ++i) data[i] = static_cast<float>(r + 1 + i % 3);
  }

  // One untimed call, checked: element i is sum over r of (r + 1 + i % 3).
  Check(world->RunRanks([&](int r) { return comms[r]->AllReduce(buffers[r], rt::ReduceOp::kSum); }),
        "the checked all_reduce");
  for (int r = 0; r < ranks; ++r) {
    const float* data = buffers[r].data<float>();
    for (int64_t i = 0; i < numel; ++i) {
      const int64_t expected = int64_t{ranks} * (ranks + 1) / 2 + int64_t{ranks} * (i % 3);
      if (data[i] != static_cast<float>(expected)) {
        state.SkipWithError(
            fmt::format("rank {} element {}: {} != {}", r, i, data[i], expected).c_str());
        return;
      }
    }
  }

  double seconds = 0;  // rank 0's wall time over the timed loop
  const irm::Status status = world->RunRanks([&](int r) -> irm::Status {
    float* control = buffers[r].data<float>() + numel;
    IRM_RETURN_IF_ERROR(comms[r]->Barrier());
    if (r == 0) {
      const Clock::time_point start = Clock::now();
      for (auto _ : state) {
        *control = 1;
        IRM_RETURN_IF_ERROR(comms[0]->AllReduce(buffers[0], rt::ReduceOp::kSum));
      }
      seconds = SecondsSince(start);
      *control = 0;
      return comms[0]->AllReduce(buffers[0], rt::ReduceOp::kSum);
    }
    for (;;) {
      *control = 0;
      IRM_RETURN_IF_ERROR(comms[r]->AllReduce(buffers[r], rt::ReduceOp::kSum));
      if (*control == 0) return irm::Status::Ok();
    }
  });
  if (!status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return;
  }
  // Plain values from rank 0's wall clock over the loop, so that no rate depends on which time
  // (real or the driving thread's CPU time, which excludes its waits) the library divides by.
  const double algbw =
      static_cast<double>(bytes) * static_cast<double>(state.iterations()) / seconds * 1e-9;
  state.counters["algbw_GBps"] = algbw;
  state.counters["busbw_GBps"] = algbw * 2 * (ranks - 1) / ranks;
}
BENCHMARK(BM_AllReduce)
    ->ArgNames({"ranks", "bytes"})
    ->ArgsProduct({{2, 4}, benchmark::CreateRange(kMinBytes, kMaxBytes, /*multi=*/4)})
    ->UseRealTime();

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> src(bytes), dst(bytes);
  for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<char>(i * 131);
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  const double seconds = SecondsSince(start);
  // Bytes copied (not read + written) per second of wall time.
  state.counters["GBps"] =
      static_cast<double>(bytes) * static_cast<double>(state.iterations()) / seconds * 1e-9;
}
BENCHMARK(BM_Memcpy)
    ->ArgNames({"bytes"})
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->UseRealTime();

// ---- parity-run overhead -----------------------------------------------------------------------

struct Model {
  std::string name;
  oldir::Program startup, main;
};

const Model& SharedModel(int index) {
  static const std::vector<Model>* models = [] {
    oldir::OptimizerOptions adamw;
    adamw.kind = oldir::OptimizerKind::kAdamW;
    auto* all = new std::vector<Model>;
    {
      oldir::models::ModelPrograms mlp;
      Check(oldir::models::BuildMlp(oldir::models::MlpConfig{}, &mlp), "building the MLP");
      Check(oldir::models::AddTraining(&mlp, adamw), "adding the MLP's training step");
      all->push_back({"mlp", mlp.startup.Build(), mlp.main.Build()});
    }
    {
      oldir::models::ModelPrograms gpt;
      oldir::models::GptConfig config;
      config.layers = 2;
      Check(oldir::models::BuildGpt(config, &gpt), "building the GPT");
      Check(oldir::models::AddTraining(&gpt, adamw), "adding the GPT's training step");
      all->push_back({"gpt", gpt.startup.Build(), gpt.main.Build()});
    }
    return all;
  }();
  return models->at(static_cast<size_t>(index));
}

rt::ExecutorOptions PlainOptions(const std::string& file) {
  rt::ExecutorOptions options;
  options.gemm = rt::GemmMode::kBlas;  // ParityOptions' default
  options.seed = kParitySeed;
  options.file = file;
  return options;
}

rt::TrainingConfig PlainTraining() {
  rt::TrainingConfig config;
  config.steps = kParitySteps;
  config.random_feeds = true;
  config.seed = kParitySeed;
  config.batch_size = kParityBatch;
  return config;
}

irm::StatusOr<irm::translator::Translation> TranslateVerified(const oldir::Program& program,
                                                              const std::string& file) {
  IRM_ASSIGN_OR_RETURN(irm::translator::Translation t,
                       irm::translator::TranslateProgram(program, {.file = file}));
  IRM_RETURN_IF_ERROR(irm::newir::VerifyProgram(t.program, {.file = file + " (translated)"}));
  return t;
}

struct PlainTimes {
  double translate = 0;  // translation and verification of main and startup
  double total = 0;      // that and both runs
};

// The two plain runs with what RunParity does besides them: translate and verify both programs,
// then run startup + N steps on each side, each in a fresh Scope with fresh executors.
irm::Status TwoPlainRuns(const Model& m, PlainTimes* times) {
  const Clock::time_point start = Clock::now();
  IRM_ASSIGN_OR_RETURN(irm::translator::Translation main, TranslateVerified(m.main, m.name));
  IRM_ASSIGN_OR_RETURN(irm::translator::Translation startup,
                       TranslateVerified(m.startup, m.name + " (startup)"));
  times->translate = SecondsSince(start);
  {
    rt::LegacyExecutor legacy_startup(m.startup, PlainOptions(m.name));
    rt::LegacyExecutor legacy_main(m.main, PlainOptions(m.name));
    rt::Scope scope;
    IRM_ASSIGN_OR_RETURN(std::vector<rt::StepResult> steps,
                         rt::RunTraining(&legacy_startup, legacy_main, scope, PlainTraining()));
    benchmark::DoNotOptimize(steps);
  }
  {
    rt::PirExecutor pir_startup(startup.program, PlainOptions(m.name));
    rt::PirExecutor pir_main(main.program, PlainOptions(m.name));
    rt::Scope scope;
    IRM_ASSIGN_OR_RETURN(std::vector<rt::StepResult> steps,
                         rt::RunTraining(&pir_startup, pir_main, scope, PlainTraining()));
    benchmark::DoNotOptimize(steps);
  }
  times->total = SecondsSince(start);
  return irm::Status::Ok();
}

irm::StatusOr<irm::diff::ParityResult> Parity(const Model& m) {
  irm::diff::ParityPrograms programs;
  programs.legacy_main = &m.main;
  programs.legacy_startup = &m.startup;
  programs.legacy_file = m.name;
  irm::diff::ParityOptions options;
  options.steps = kParitySteps;
  options.seed = kParitySeed;
  options.batch_size = kParityBatch;
  options.tier = irm::diff::Tier::kExact;
  return irm::diff::RunParity(programs, options);
}

// Each iteration: the two plain runs, then the parity run; the benchmark's time is the parity
// run's (manual time), the counters the means of both and their ratios.
void BM_ParityOverhead(benchmark::State& state) {
  const Model& m = SharedModel(static_cast<int>(state.range(0)));
  state.SetLabel(m.name);
  double plain = 0, translate = 0, parity = 0;
  for (auto _ : state) {
    PlainTimes times;
    const irm::Status plain_status = TwoPlainRuns(m, &times);
    if (!plain_status.ok()) {
      state.SkipWithError(plain_status.ToString().c_str());
      return;
    }
    const Clock::time_point start = Clock::now();
    irm::StatusOr<irm::diff::ParityResult> result = Parity(m);
    const double seconds = SecondsSince(start);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    if (!result->report.parity()) {
      state.SkipWithError(fmt::format("{}: the parity run found a mismatch", m.name).c_str());
      return;
    }
    state.SetIterationTime(seconds);
    plain += times.total;
    translate += times.translate;
    parity += seconds;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["parity_ms"] = parity / n * 1e3;
  state.counters["two_plain_ms"] = plain / n * 1e3;
  state.counters["translate_ms"] = translate / n * 1e3;
  state.counters["x_two_plain"] = parity / plain;
  state.counters["x_two_plain_excl_translate"] = (parity - translate) / (plain - translate);
}
BENCHMARK(BM_ParityOverhead)
    ->ArgNames({"model"})
    ->DenseRange(0, 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  rt::SetBlasThreads(1);
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  auto& s = run.seconds;
  bool any = false;
  for (int64_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
    const std::string copy = fmt::format("BM_Memcpy/bytes:{}", bytes);
    if (!run.Has(copy)) continue;
    if (!any) fmt::print("all_reduce busbw (thread backend) / memcpy bandwidth (1 thread):\n");
    any = true;
    const double memcpy_bw = static_cast<double>(bytes) / s[copy] * 1e-9;
    std::string line = fmt::format("  {:>9} bytes: memcpy {:.2f} GB/s", bytes, memcpy_bw);
    for (int ranks : {2, 4}) {
      const std::string ar = fmt::format("BM_AllReduce/ranks:{}/bytes:{}", ranks, bytes);
      if (!run.Has(ar)) continue;
      const double busbw = static_cast<double>(bytes) / s[ar] * 1e-9 * 2 * (ranks - 1) / ranks;
      line +=
          fmt::format("; {} ranks busbw {:.3g} GB/s ({:.3g}x)", ranks, busbw, busbw / memcpy_bw);
    }
    fmt::print("{}\n", line);
  }
  const std::string big = fmt::format("BM_AllReduce/ranks:4/bytes:{}", kMaxBytes);
  const std::string big_copy = fmt::format("BM_Memcpy/bytes:{}", kMaxBytes);
  if (run.Has(big) && run.Has(big_copy)) {
    const double busbw = static_cast<double>(kMaxBytes) / s[big] * 1.5;
    const double memcpy_bw = static_cast<double>(kMaxBytes) / s[big_copy];
    fmt::print("  4 ranks, 64 MiB: busbw / memcpy bandwidth: {:.3f}x\n", busbw / memcpy_bw);
  }
  benchmark::Shutdown();
  return 0;
}
