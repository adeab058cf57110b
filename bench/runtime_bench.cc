// Reference-runtime kernel benchmarks, one BLAS thread throughout (the runtime's setting):
//   cblas_sgemm       OpenBLAS called directly on a 1024 x 1024 x 1024 float32 product — the
//                     baseline
//   matmul_kernel     the same product through the runtime's `matmul` kernel (registry look-up,
//                     output allocation, Gemm in kBlas mode)
//   reference_gemm    the same product through the fixed-order reference GEMM
// All report GFLOP/s (2 m n k per iteration) as the counter `flops`; matmul_kernel also reports
// `vs_cblas`, the direct call's time over its own (its throughput as a fraction of OpenBLAS's).
// After the runs it prints the ratio of the means against the target (>= 0.9) and the reference
// GEMM's GFLOP/s, and exits 1 on a miss when run with --irm_check_targets.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "bench/bench_runner.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/tensor.h"

namespace {

using irm::rt::GemmMode;
using irm::rt::Tensor;
using Clock = std::chrono::steady_clock;

constexpr int64_t kSize = 1024;  // m = n = k
constexpr double kFlops = 2.0 * kSize * kSize * kSize;
constexpr double kTarget = 0.9;  // matmul kernel throughput / direct cblas_sgemm throughput

struct Operands {
  Tensor x, y;
};

// Uniform [-1, 1) inputs from the runtime's own generator.
const Operands& Shared() {
  static const Operands* operands = [] {
    auto* o = new Operands;
    o->x = Tensor::ZerosUnchecked(irm::DType::kFloat32, {kSize, kSize});
    o->y = Tensor::ZerosUnchecked(irm::DType::kFloat32, {kSize, kSize});
    const irm::rt::PhiloxStream stream(1, irm::rt::OpIdentity("runtime_bench"));
    for (int64_t i = 0; i < kSize * kSize; ++i) {
      o->x.data<float>()[i] = 2 * stream.UniformFloat(static_cast<uint64_t>(i)) - 1;
      o->y.data<float>()[i] = 2 * stream.UniformFloat(static_cast<uint64_t>(kSize * kSize + i)) - 1;
    }
    return o;
  }();
  return *operands;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void SetFlops(benchmark::State& state) {
  state.counters["flops"] = benchmark::Counter(
      kFlops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void DirectSgemm(float* c) {
  const Operands& o = Shared();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kSize, kSize, kSize, 1.0f,
              o.x.data<float>(), kSize, o.y.data<float>(), kSize, 0.0f, c, kSize);
}

// Seconds per direct cblas_sgemm: the latest BM_CblasSgemm run in this process, or, when it was
// filtered out, a few calls timed here.
double cblas_seconds = 0;

double CblasSeconds() {
  if (cblas_seconds > 0) return cblas_seconds;
  std::vector<float> c(static_cast<size_t>(kSize * kSize));
  DirectSgemm(c.data());  // warm up
  constexpr int kRuns = 3;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kRuns; ++i) DirectSgemm(c.data());
  return SecondsSince(start) / kRuns;
}

void BM_CblasSgemm(benchmark::State& state) {
  std::vector<float> c(static_cast<size_t>(kSize * kSize));
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    DirectSgemm(c.data());
    benchmark::DoNotOptimize(c.data());
  }
  cblas_seconds = SecondsSince(start) / static_cast<double>(state.iterations());
  SetFlops(state);
}
BENCHMARK(BM_CblasSgemm)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MatmulKernel(benchmark::State& state) {
  const Operands& o = Shared();
  const irm::rt::KernelRegistry& registry = irm::rt::KernelRegistry::Global();
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    Tensor out;
    irm::rt::KernelCall call{.inputs = {&o.x, &o.y},
                             .outputs = {&out},
                             .attrs = {},
                             .context = {.gemm = GemmMode::kBlas}};
    const irm::Status status = registry.Run("matmul", irm::DType::kFloat32, call);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  const double seconds = SecondsSince(start) / static_cast<double>(state.iterations());
  SetFlops(state);
  state.counters["vs_cblas"] = CblasSeconds() / seconds;
}
BENCHMARK(BM_MatmulKernel)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReferenceGemm(benchmark::State& state) {
  const Operands& o = Shared();
  std::vector<float> c(static_cast<size_t>(kSize * kSize));
  for (auto _ : state) {
    const irm::Status status =
        irm::rt::Gemm<float>(GemmMode::kReference, false, false, kSize, kSize, kSize,
                             o.x.data<float>(), o.y.data<float>(), c.data());
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_ReferenceGemm)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  // One BLAS thread, for the direct calls as for the runtime's.
  openblas_set_num_threads(1);
  irm::rt::SetBlasThreads(1);
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  auto& s = run.seconds;
  bool ok = true;
  fmt::print("float32 {0} x {0} x {0}, one BLAS thread ({1})\n", kSize, openblas_get_config());
  for (const char* bm : {"BM_CblasSgemm", "BM_MatmulKernel", "BM_ReferenceGemm"}) {
    if (run.Has(bm)) fmt::print("  {}: {:.1f} GFLOP/s\n", bm, kFlops / s[bm] / 1e9);
  }
  if (run.Has("BM_CblasSgemm") && run.Has("BM_MatmulKernel")) {
    const double ratio = s["BM_CblasSgemm"] / s["BM_MatmulKernel"];
    const bool pass = ratio >= kTarget;
    ok &= pass;
    fmt::print("  matmul kernel / cblas_sgemm throughput: {:.3f} (target >= {}) {}\n", ratio,
               kTarget, pass ? "PASS" : "MISS");
  }
  if (run.Has("BM_ReferenceGemm") && run.Has("BM_CblasSgemm")) {
    fmt::print("  reference GEMM / cblas_sgemm throughput: {:.3f}\n",
               s["BM_CblasSgemm"] / s["BM_ReferenceGemm"]);
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
