// The runtime's conv2d kernels against the same im2col + cblas_sgemm written directly, on a
// ResNet-50 layer shape (conv2_x's 3x3: batch 4, 64 -> 64 channels, 56 x 56, stride 1, padding
// 1), float32, one BLAS thread throughout (the runtime's setting):
//   direct_forward       per sample: im2col, then one cblas_sgemm W[64, 576] · col[576, 3136]
//   kernel_forward       the `conv2d` kernel (registry look-up, output allocation, GemmMode kBlas)
//   direct_input_grad    per sample: cblas_sgemm Wᵀ · dY into col, then col2im
//   kernel_input_grad    `conv2d_grad` asked for the input gradient only
//   direct_filter_grad   per sample: im2col, then cblas_sgemm dY · colᵀ accumulated (beta 1)
//   kernel_filter_grad   `conv2d_grad` asked for the filter gradient only
// All report GFLOP/s (2 · N · O · C · KH · KW · OH · OW per iteration) as `flops`. After the runs
// it prints each kernel's throughput over its direct twin's against the target (>= 0.8), and
// exits 1 on a miss when run with --irm_check_targets.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/tensor.h"

namespace {

using irm::rt::GemmMode;
using irm::rt::Tensor;

constexpr int64_t kN = 4, kC = 64, kO = 64, kH = 56, kW = 56, kK = 3, kPad = 1;
constexpr int64_t kPixels = kH * kW;     // stride 1, padding 1: the output is 56 x 56 too
constexpr int64_t kRows = kC * kK * kK;  // im2col rows
constexpr double kFlops = 2.0 * kN * kO * kRows * kPixels;
constexpr double kTarget = 0.8;  // kernel throughput / direct im2col + cblas_sgemm throughput

struct Operands {
  Tensor x, w, dy;
};

Tensor Uniform(std::vector<int64_t> shape, uint64_t offset) {
  Tensor t = Tensor::ZerosUnchecked(irm::DType::kFloat32, shape);
  const irm::rt::PhiloxStream stream(3, irm::rt::OpIdentity("conv_bench"));
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data<float>()[i] = 2 * stream.UniformFloat(offset + static_cast<uint64_t>(i)) - 1;
  }
  return t;
}

const Operands& Shared() {
  static const Operands* operands = [] {
    auto* o = new Operands;
    o->x = Uniform({kN, kC, kH, kW}, 0);
    o->w = Uniform({kO, kC, kK, kK}, 1u << 24);
    o->dy = Uniform({kN, kO, kH, kW}, 1u << 25);
    return o;
  }();
  return *operands;
}

void SetFlops(benchmark::State& state) {
  state.counters["flops"] = benchmark::Counter(
      kFlops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// The textbook im2col of one sample: row (c, ky, kx), column (oy, ox), zero outside the image.
void Im2Col(const float* x, float* col) {
  for (int64_t c = 0; c < kC; ++c) {
    for (int64_t ky = 0; ky < kK; ++ky) {
      for (int64_t kx = 0; kx < kK; ++kx) {
        float* row = col + ((c * kK + ky) * kK + kx) * kPixels;
        for (int64_t oy = 0; oy < kH; ++oy) {
          const int64_t iy = oy + ky - kPad;
          float* out = row + oy * kW;
          if (iy < 0 || iy >= kH) {
            std::fill(out, out + kW, 0.0f);
            continue;
          }
          const float* in = x + (c * kH + iy) * kW;
          for (int64_t ox = 0; ox < kW; ++ox) {
            const int64_t ix = ox + kx - kPad;
            out[ox] = ix >= 0 && ix < kW ? in[ix] : 0.0f;
          }
        }
      }
    }
  }
}

void Col2ImAdd(const float* col, float* dx) {
  for (int64_t c = 0; c < kC; ++c) {
    for (int64_t ky = 0; ky < kK; ++ky) {
      for (int64_t kx = 0; kx < kK; ++kx) {
        const float* row = col + ((c * kK + ky) * kK + kx) * kPixels;
        for (int64_t oy = 0; oy < kH; ++oy) {
          const int64_t iy = oy + ky - kPad;
          if (iy < 0 || iy >= kH) continue;
          float* out = dx + (c * kH + iy) * kW;
          for (int64_t ox = 0; ox < kW; ++ox) {
            const int64_t ix = ox + kx - kPad;
            if (ix >= 0 && ix < kW) out[ix] += row[oy * kW + ox];
          }
        }
      }
    }
  }
}

irm::rt::KernelAttrs ConvAttrs() {
  irm::rt::KernelAttrs attrs;
  attrs.Set("strides", std::vector<int64_t>{1, 1});
  attrs.Set("paddings", std::vector<int64_t>{kPad, kPad});
  attrs.Set("dilations", std::vector<int64_t>{1, 1});
  attrs.Set("groups", int64_t{1});
  attrs.Set("padding_algorithm", std::string("EXPLICIT"));
  attrs.Set("data_format", std::string("NCHW"));
  return attrs;
}

// Runs `type` with `inputs`, keeping the outputs whose flag is set.
bool RunKernel(benchmark::State& state, const char* type, std::vector<const Tensor*> inputs,
               std::vector<bool> wanted) {
  std::vector<Tensor> outs(wanted.size());
  std::vector<Tensor*> outputs;
  for (size_t i = 0; i < wanted.size(); ++i) outputs.push_back(wanted[i] ? &outs[i] : nullptr);
  irm::rt::KernelCall call{.inputs = std::move(inputs),
                           .outputs = std::move(outputs),
                           .attrs = ConvAttrs(),
                           .context = {.gemm = GemmMode::kBlas}};
  const irm::Status status =
      irm::rt::KernelRegistry::Global().Run(type, irm::DType::kFloat32, call);
  if (!status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return false;
  }
  benchmark::DoNotOptimize(outs);
  return true;
}

void BM_DirectForward(benchmark::State& state) {
  const Operands& o = Shared();
  std::vector<float> col(static_cast<size_t>(kRows * kPixels));
  std::vector<float> y(static_cast<size_t>(kN * kO * kPixels));
  for (auto _ : state) {
    for (int64_t i = 0; i < kN; ++i) {
      Im2Col(o.x.data<float>() + i * kC * kPixels, col.data());
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kO, kPixels, kRows, 1.0f,
                  o.w.data<float>(), kRows, col.data(), kPixels, 0.0f, y.data() + i * kO * kPixels,
                  kPixels);
    }
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_DirectForward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_KernelForward(benchmark::State& state) {
  const Operands& o = Shared();
  for (auto _ : state) {
    if (!RunKernel(state, "conv2d", {&o.x, &o.w}, {true})) break;
  }
  SetFlops(state);
}
BENCHMARK(BM_KernelForward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DirectInputGrad(benchmark::State& state) {
  const Operands& o = Shared();
  std::vector<float> col(static_cast<size_t>(kRows * kPixels));
  std::vector<float> dx(static_cast<size_t>(kN * kC * kPixels));
  for (auto _ : state) {
    std::fill(dx.begin(), dx.end(), 0.0f);
    for (int64_t i = 0; i < kN; ++i) {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kRows, kPixels, kO, 1.0f,
                  o.w.data<float>(), kRows, o.dy.data<float>() + i * kO * kPixels, kPixels, 0.0f,
                  col.data(), kPixels);
      Col2ImAdd(col.data(), dx.data() + i * kC * kPixels);
    }
    benchmark::DoNotOptimize(dx.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_DirectInputGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_KernelInputGrad(benchmark::State& state) {
  const Operands& o = Shared();
  for (auto _ : state) {
    if (!RunKernel(state, "conv2d_grad", {&o.x, &o.w, &o.dy}, {true, false})) break;
  }
  SetFlops(state);
}
BENCHMARK(BM_KernelInputGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DirectFilterGrad(benchmark::State& state) {
  const Operands& o = Shared();
  std::vector<float> col(static_cast<size_t>(kRows * kPixels));
  std::vector<float> dw(static_cast<size_t>(kO * kRows));
  for (auto _ : state) {
    std::fill(dw.begin(), dw.end(), 0.0f);
    for (int64_t i = 0; i < kN; ++i) {
      Im2Col(o.x.data<float>() + i * kC * kPixels, col.data());
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kO, kRows, kPixels, 1.0f,
                  o.dy.data<float>() + i * kO * kPixels, kPixels, col.data(), kPixels, 1.0f,
                  dw.data(), kRows);
    }
    benchmark::DoNotOptimize(dw.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_DirectFilterGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_KernelFilterGrad(benchmark::State& state) {
  const Operands& o = Shared();
  for (auto _ : state) {
    if (!RunKernel(state, "conv2d_grad", {&o.x, &o.w, &o.dy}, {false, true})) break;
  }
  SetFlops(state);
}
BENCHMARK(BM_KernelFilterGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);
  irm::rt::SetBlasThreads(1);
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  bool ok = true;
  fmt::print(
      "conv2d float32, input [{}, {}, {}, {}], filter [{}, {}, {}, {}], stride 1, padding {}, "
      "one BLAS thread ({})\n",
      kN, kC, kH, kW, kO, kC, kK, kK, kPad, openblas_get_config());
  const char* pairs[][3] = {{"forward", "BM_DirectForward", "BM_KernelForward"},
                            {"input grad", "BM_DirectInputGrad", "BM_KernelInputGrad"},
                            {"filter grad", "BM_DirectFilterGrad", "BM_KernelFilterGrad"}};
  for (const auto& pair : pairs) {
    if (!run.Has(pair[1]) || !run.Has(pair[2])) continue;
    const double direct = run.Robust(pair[1]);
    const double kernel = run.Robust(pair[2]);
    const double ratio = direct / kernel;
    const bool pass = ratio >= kTarget;
    ok &= pass;
    fmt::print(
        "  {}: direct {:.1f} GFLOP/s, kernel {:.1f} GFLOP/s, kernel / direct {:.3f} "
        "(target >= {}) {}\n",
        pair[0], kFlops / direct / 1e9, kFlops / kernel / 1e9, ratio, kTarget,
        pass ? "PASS" : "MISS");
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
