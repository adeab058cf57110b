// Reference-runtime executor benchmarks, one BLAS thread, OpenBLAS GEMMs (GemmMode::kBlas):
//   Interpreter overhead per op, on a chain of 100,000 `scale` ops (x * 0.5 + 0.25) on a
//   1-element float32 tensor, fed once, the last one fetched:
//     direct_calls     the same 100,000 kernel calls made through KernelRegistry::Global().Run,
//                      one KernelCall built once and re-pointed per call — the baseline
//     legacy_executor  the legacy program (feed, 100,000 scale ops, fetch) run by LegacyExecutor,
//                      planned once outside the timing
//     pir_executor     its translation (translator::TranslateProgram, verified) run by PirExecutor
//   Each reports the counter `ns_per_op`: time per iteration over the 100,000 scale ops (the
//   translation also holds a pd_op.full per scale for its Scalar operand; those are counted as
//   part of the scale they feed, not as ops of their own).
//   GPT training steps, the model zoo's GPT with 2 layers and its default other sizes (hidden 64,
//   4 heads, vocab 128, seq 16, attention dropout 0.1), AdamW, batch 16: the startup program run
//   once outside the timing, then one training step (forward, backward, AdamW updates, the loss
//   fetched) per iteration on the same fixed random feeds (rt::RandomFeed):
//     gpt_legacy       LegacyExecutor on the legacy startup and main programs
//     gpt_pir          PirExecutor on their translations
//   Each reports steps/s as items/s.
// After the runs it prints ns per op for each path, each executor's overhead over the direct calls
// (per op and as a ratio), and the steps/s of both executors; then the targets: each executor's
// overhead (medians when repeated) at most 500 ns per op it interprets (per new-IR op for the
// PirExecutor), exiting 1 on a miss when run with --irm_check_targets.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "newir/verifier.h"
#include "oldir/builder.h"
#include "oldir/models/gpt.h"
#include "oldir/models/training.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/gemm.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"
#include "reference_runtime/run.h"
#include "translator/translate.h"

namespace {

namespace oldir = irm::oldir;
namespace rt = irm::rt;
using Clock = std::chrono::steady_clock;

constexpr int kChainOps = 100'000;
constexpr float kScale = 0.5f;
constexpr float kBias = 0.25f;  // x -> 0.5 x + 0.25 stays bounded (fixed point 0.5)
constexpr int kGptLayers = 2;
constexpr int64_t kGptBatch = 16;
constexpr uint64_t kFeedSeed = 7;
// Interpreter overhead per op over the direct kernel calls (--irm_check_targets).
constexpr double kOverheadTargetNs = 500;

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

rt::ExecutorOptions Options(uint64_t seed, std::string file) {
  rt::ExecutorOptions options;
  options.gemm = rt::GemmMode::kBlas;
  options.seed = seed;
  options.file = std::move(file);
  return options;
}

// ---- the scale chain ---------------------------------------------------------------------------

// feed -> x_0, x_{i+1} = scale(x_i), fetch x_N; every var a 1-element float32 tensor.
oldir::Program BuildScaleChain() {
  oldir::ProgramBuilder builder;
  builder.set_version(2006000);
  oldir::BlockBuilder& root = builder.root();
  namespace proto = oldir::proto;
  root.CreateTypedVar("feed", proto::VarType::FEED_MINIBATCH, /*persistable=*/true);
  root.CreateTypedVar("fetch", proto::VarType::FETCH_LIST, /*persistable=*/true);
  auto name = [](int i) { return fmt::format("x_{}", i); };
  root.CreateVar(name(0), proto::VarType::FP32, {1},
                 {.stop_gradient = true, .need_check_feed = true});
  root.AppendOp("feed", {{"X", {"feed"}}}, {{"Out", {name(0)}}}, {{"col", int32_t{0}}});
  for (int i = 0; i < kChainOps; ++i) {
    root.CreateVar(name(i + 1), proto::VarType::FP32, {1}, {.stop_gradient = true});
    root.AppendOp("scale", {{"X", {name(i)}}}, {{"Out", {name(i + 1)}}},
                  {{"scale", kScale}, {"bias", kBias}, {"bias_after_scale", true}});
  }
  root.AppendOp("fetch", {{"X", {name(kChainOps)}}}, {{"Out", {"fetch"}}}, {{"col", int32_t{0}}});
  return builder.Build();
}

struct Chain {
  oldir::Program legacy;
  irm::newir::Program pir;
  size_t pir_ops = 0;
  std::unique_ptr<rt::LegacyExecutor> legacy_executor;
  std::unique_ptr<rt::PirExecutor> pir_executor;
  rt::Tensor input;
  rt::FeedMap legacy_feeds, pir_feeds;
};

rt::FeedMap FeedsFor(const rt::Executor& executor, const rt::Tensor& input) {
  rt::FeedMap feeds;
  for (const rt::FeedSpec& spec : executor.FeedSpecs()) feeds[spec.name] = input.Clone();
  return feeds;
}

const Chain& SharedChain() {
  static const Chain* chain = [] {
    auto* c = new Chain;
    c->legacy = BuildScaleChain();
    c->pir = Take(irm::translator::TranslateProgram(c->legacy, {.file = "chain.pdmodel"}),
                  "translating the scale chain")
                 .program;
    Check(irm::newir::VerifyProgram(c->pir, {.file = "chain.json"}), "verifying the scale chain");
    c->pir_ops = c->pir.CountOps();
    c->legacy_executor =
        std::make_unique<rt::LegacyExecutor>(c->legacy, Options(0, "chain.pdmodel"));
    Check(c->legacy_executor->plan_status(), "planning the scale chain");
    c->pir_executor = std::make_unique<rt::PirExecutor>(c->pir, Options(0, "chain.json"));
    c->input = rt::Tensor::ZerosUnchecked(irm::DType::kFloat32, {1});
    c->input.data<float>()[0] = 3.0f;
    c->legacy_feeds = FeedsFor(*c->legacy_executor, c->input);
    c->pir_feeds = FeedsFor(*c->pir_executor, c->input);
    return c;
  }();
  return *chain;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void SetNsPerOp(benchmark::State& state, double seconds) {
  state.SetItemsProcessed(state.iterations() * kChainOps);
  state.counters["ns_per_op"] = seconds / static_cast<double>(state.iterations()) / kChainOps * 1e9;
}

void BM_DirectCalls(benchmark::State& state) {
  const Chain& c = SharedChain();
  const rt::KernelRegistry& registry = rt::KernelRegistry::Global();
  rt::KernelCall call;
  call.attrs.Set("scale", double{kScale});
  call.attrs.Set("bias", double{kBias});
  call.attrs.Set("bias_after_scale", true);
  call.context.gemm = rt::GemmMode::kBlas;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    rt::Tensor x = c.input.Clone();
    for (int i = 0; i < kChainOps; ++i) {
      rt::Tensor out;
      call.inputs = {&x};
      call.outputs = {&out};
      const irm::Status status = registry.Run("scale", irm::DType::kFloat32, call);
      if (!status.ok()) {
        state.SkipWithError(status.ToString().c_str());
        break;
      }
      x = std::move(out);
    }
    benchmark::DoNotOptimize(x);
  }
  SetNsPerOp(state, SecondsSince(start));
}
BENCHMARK(BM_DirectCalls)->Unit(benchmark::kMillisecond)->UseRealTime();

void RunChain(benchmark::State& state, rt::Executor& executor, const rt::FeedMap& feeds) {
  rt::Scope persistent;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    irm::StatusOr<std::vector<rt::Fetch>> fetches = executor.Run(persistent, feeds);
    if (!fetches.ok()) {
      state.SkipWithError(fetches.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(fetches);
  }
  SetNsPerOp(state, SecondsSince(start));
}

void BM_LegacyExecutor(benchmark::State& state) {
  const Chain& c = SharedChain();
  RunChain(state, *c.legacy_executor, c.legacy_feeds);
}
BENCHMARK(BM_LegacyExecutor)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PirExecutor(benchmark::State& state) {
  const Chain& c = SharedChain();
  RunChain(state, *c.pir_executor, c.pir_feeds);
  state.counters["pir_ops"] = static_cast<double>(c.pir_ops);
}
BENCHMARK(BM_PirExecutor)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- GPT training steps ------------------------------------------------------------------------

struct Gpt {
  oldir::Program legacy_startup, legacy_main;
  irm::newir::Program pir_startup, pir_main;
  int64_t legacy_ops = 0;
  size_t pir_ops = 0;
  int32_t seed = 0;
};

const Gpt& SharedGpt() {
  static const Gpt* gpt = [] {
    oldir::models::ModelPrograms model;
    oldir::models::GptConfig config;
    config.layers = kGptLayers;
    oldir::OptimizerOptions adamw;
    adamw.kind = oldir::OptimizerKind::kAdamW;
    Check(oldir::models::BuildGpt(config, &model), "building the GPT");
    Check(oldir::models::AddTraining(&model, adamw), "adding its training step");
    auto* g = new Gpt;
    g->seed = model.seed;
    g->legacy_startup = model.startup.Build();
    g->legacy_main = model.main.Build();
    g->legacy_ops = g->legacy_main.num_ops();
    g->pir_startup = Take(irm::translator::TranslateProgram(g->legacy_startup, {.file = "startup"}),
                          "translating the GPT's startup")
                         .program;
    g->pir_main = Take(irm::translator::TranslateProgram(g->legacy_main, {.file = "main"}),
                       "translating the GPT's main program")
                      .program;
    Check(irm::newir::VerifyProgram(g->pir_startup, {.file = "startup.json"}), "verifying startup");
    Check(irm::newir::VerifyProgram(g->pir_main, {.file = "main.json"}), "verifying main");
    g->pir_ops = g->pir_main.CountOps();
    return g;
  }();
  return *gpt;
}

// The first step's random feeds, the same tensors at every step.
rt::FeedMap FixedFeeds(const rt::Executor& main) {
  rt::FeedMap feeds;
  for (const rt::FeedSpec& spec : main.FeedSpecs()) {
    feeds[spec.name] = rt::RandomFeed(spec, kFeedSeed, /*step=*/1, kGptBatch);
  }
  return feeds;
}

// The loss of each path's first timed step, for the summary (both paths draw the same feeds and
// the same dropout masks, so the two should agree).
double legacy_first_loss = 0, pir_first_loss = 0;

void TrainSteps(benchmark::State& state, rt::Executor& startup, rt::Executor& main,
                double* first_loss) {
  rt::Scope persistent;
  Check(startup.Run(persistent, {}).status(), "running the startup program");
  const rt::FeedMap feeds = FixedFeeds(main);
  bool first = true;
  for (auto _ : state) {
    irm::StatusOr<std::vector<rt::Fetch>> fetches = main.Run(persistent, feeds);
    if (!fetches.ok()) {
      state.SkipWithError(fetches.status().ToString().c_str());
      break;
    }
    if (first && !fetches->empty() && fetches->front().tensor.dtype() == irm::DType::kFloat32) {
      *first_loss = fetches->front().tensor.data<float>()[0];
      first = false;
    }
    benchmark::DoNotOptimize(fetches);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_GptLegacy(benchmark::State& state) {
  const Gpt& g = SharedGpt();
  rt::LegacyExecutor startup(g.legacy_startup, Options(static_cast<uint64_t>(g.seed), "startup"));
  rt::LegacyExecutor main(g.legacy_main, Options(static_cast<uint64_t>(g.seed), "main"));
  Check(startup.plan_status(), "planning startup");
  Check(main.plan_status(), "planning main");
  TrainSteps(state, startup, main, &legacy_first_loss);
  state.counters["ops"] = static_cast<double>(g.legacy_ops);
}
BENCHMARK(BM_GptLegacy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GptPir(benchmark::State& state) {
  const Gpt& g = SharedGpt();
  rt::PirExecutor startup(g.pir_startup, Options(static_cast<uint64_t>(g.seed), "startup.json"));
  rt::PirExecutor main(g.pir_main, Options(static_cast<uint64_t>(g.seed), "main.json"));
  TrainSteps(state, startup, main, &pir_first_loss);
  state.counters["ops"] = static_cast<double>(g.pir_ops);
}
BENCHMARK(BM_GptPir)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);
  rt::SetBlasThreads(1);
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  auto& s = run.seconds;
  const bool chain =
      run.Has("BM_DirectCalls") || run.Has("BM_LegacyExecutor") || run.Has("BM_PirExecutor");
  if (chain) {
    fmt::print("scale chain: {} scale ops on float32[1]; its translation has {} new-IR ops\n",
               kChainOps, SharedChain().pir_ops);
  }
  auto ns = [&](const char* bm) { return s[bm] / kChainOps * 1e9; };
  for (const char* bm : {"BM_DirectCalls", "BM_LegacyExecutor", "BM_PirExecutor"}) {
    if (run.Has(bm)) fmt::print("  {}: {:.0f} ns per op\n", bm, ns(bm));
  }
  if (run.Has("BM_PirExecutor")) {
    fmt::print("  BM_PirExecutor: {:.0f} ns per new-IR op\n",
               s["BM_PirExecutor"] / static_cast<double>(SharedChain().pir_ops) * 1e9);
  }
  for (const char* bm : {"BM_LegacyExecutor", "BM_PirExecutor"}) {
    if (run.Has(bm) && run.Has("BM_DirectCalls")) {
      fmt::print("  {} overhead over direct kernel calls: {:.0f} ns per op ({:.2f}x)\n", bm,
                 ns(bm) - ns("BM_DirectCalls"), s[bm] / s["BM_DirectCalls"]);
    }
  }
  // The targets, on medians when repeated (robust to a busy machine): each executor's overhead
  // over the direct calls per op it interprets — per scale op for the legacy executor, per
  // new-IR op for the PirExecutor, whose pd_op.full per scale counts wholly as overhead.
  bool ok = true;
  auto check = [&](const char* bm, double ops, const char* per) {
    if (!run.Has(bm) || !run.Has("BM_DirectCalls")) return;
    const double overhead = (run.Robust(bm) - run.Robust("BM_DirectCalls")) / ops * 1e9;
    const bool pass = overhead <= kOverheadTargetNs;
    ok &= pass;
    fmt::print("  {} overhead per {}: {:.0f} ns (target <= {:.0f}) {}\n", bm, per, overhead,
               kOverheadTargetNs, pass ? "PASS" : "MISS");
  };
  check("BM_LegacyExecutor", kChainOps, "op");
  if (chain) check("BM_PirExecutor", static_cast<double>(SharedChain().pir_ops), "new-IR op");
  if (run.Has("BM_GptLegacy") || run.Has("BM_GptPir")) {
    const Gpt& g = SharedGpt();
    fmt::print("gpt: {} layers, adamw, batch {}: {} legacy ops, {} new-IR ops in main\n",
               kGptLayers, kGptBatch, g.legacy_ops, g.pir_ops);
  }
  if (run.Has("BM_GptLegacy")) {
    fmt::print("  legacy executor: {:.1f} steps/s (first loss {:.6f})\n", 1 / s["BM_GptLegacy"],
               legacy_first_loss);
  }
  if (run.Has("BM_GptPir")) {
    fmt::print("  pir executor: {:.1f} steps/s (first loss {:.6f})\n", 1 / s["BM_GptPir"],
               pir_first_loss);
  }
  if (run.Has("BM_GptLegacy") && run.Has("BM_GptPir")) {
    fmt::print("  pir / legacy steps/s: {:.3f}\n", s["BM_GptLegacy"] / s["BM_GptPir"]);
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
