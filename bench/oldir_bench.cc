// Legacy-IR benchmarks on two generated training programs of >= 50,000 ops each (an MLP scaled to
// thousands of layers; forward, backward and SGD):
//   program:0  examples/mlp_program.h — Paddle 2.2-style ops: each op's own attributes plus the six
//              common ones, a two-line op_callstack on every op
//   program:1  the model zoo's MLP (ir-migrate build mlp) — Paddle 2.6-style ops: also the
//              op_compat "extra" attributes (use_mkldnn, mkldnn_data_type, ...) and empty
//              optional slots, so ~1.5x the attributes per op
// Per program:
//   raw_parse        protobuf's ParseFromString of the bytes — the natural baseline
//   raw_parse_arena  the same into a protobuf arena (what our load parses into)
//   load             ir-migrate's load: arena parse + unknown-field/wire checks + required-field
//                    check + var index
//   validate    the full validator; reported in ops/s
//   dump        the pretty dump; ops/s
// After the runs it prints the ratios the project's targets are stated in (load <= 1.5x raw
// parse, validate >= 1,000,000 ops/s) and exits 1 if a target is missed (when run with
// --irm_check_targets).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "bench/bench_runner.h"
#include "examples/mlp_program.h"
#include "oldir/dump.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace {

using irm::oldir::Program;
using irm::oldir::ProgramFormat;

constexpr int kLayers = 6300;  // 8 ops per layer: >= 50,000 ops

struct Fixture {
  Program program;
  std::string bytes;
  int64_t ops = 0;
};

Fixture MakeFixture(std::string bytes) {
  Fixture f;
  f.bytes = std::move(bytes);
  // Validate and dump run on a loaded program, as the CLI does: a program built op by op has
  // its messages scattered over the heap and walks about twice as slowly.
  f.program = irm::oldir::ParseProgram(f.bytes, "bench.pdmodel").value();
  f.ops = f.program.num_ops();
  return f;
}

const Fixture& Shared(int64_t which) {
  static const Fixture* example = [] {
    irm::examples::MlpOptions options;
    options.layers = kLayers;
    return new Fixture(
        MakeFixture(irm::oldir::SerializeProgram(irm::examples::MakeMlpTrainingProgram(options),
                                                 ProgramFormat::kBinary)
                        .value()));
  }();
  static const Fixture* zoo = [] {
    irm::oldir::models::ModelPrograms model;
    irm::oldir::models::MlpConfig config;
    config.depth = kLayers;
    if (!irm::oldir::models::BuildMlp(config, &model).ok() ||
        !irm::oldir::models::AddTraining(&model, {}).ok()) {
      std::abort();  // a broken benchmark setup, not user input
    }
    return new Fixture(MakeFixture(
        irm::oldir::SerializeProgram(model.main.Build(), ProgramFormat::kBinary).value()));
  }();
  return which == 0 ? *example : *zoo;
}

void SetCounters(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  state.SetItemsProcessed(state.iterations() * f.ops);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(f.bytes.size()));
  state.counters["ops"] = static_cast<double>(f.ops);
}

void BM_RawParse(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  for (auto _ : state) {
    irm::oldir::proto::ProgramDesc desc;
    bool ok = desc.ParseFromString(f.bytes);
    benchmark::DoNotOptimize(ok);
  }
  SetCounters(state);
}
BENCHMARK(BM_RawParse)
    ->ArgName("program")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same parse into a protobuf arena, as our load does: separates the arena's gain from our
// own overhead (wire checks, required fields, var index).
void BM_RawParseArena(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  for (auto _ : state) {
    google::protobuf::ArenaOptions options;
    options.max_block_size = 1 << 20;
    google::protobuf::Arena arena(options);
    auto* desc = google::protobuf::Arena::CreateMessage<irm::oldir::proto::ProgramDesc>(&arena);
    bool ok = desc->ParseFromString(f.bytes);
    benchmark::DoNotOptimize(ok);
  }
  SetCounters(state);
}
BENCHMARK(BM_RawParseArena)
    ->ArgName("program")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Load(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  for (auto _ : state) {
    auto program = irm::oldir::ParseProgram(f.bytes, "bench.pdmodel", ProgramFormat::kBinary);
    if (!program.ok()) state.SkipWithError(program.status().ToString().c_str());
    benchmark::DoNotOptimize(program);
  }
  SetCounters(state);
}
BENCHMARK(BM_Load)
    ->ArgName("program")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Validate(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  irm::oldir::ValidateOptions options;
  options.file = "bench.pdmodel";
  for (auto _ : state) {
    irm::Diagnostics findings = irm::oldir::ValidateProgram(f.program, options);
    if (findings.HasErrors()) state.SkipWithError(findings.items()[0].Render().c_str());
    benchmark::DoNotOptimize(findings);
  }
  SetCounters(state);
}
BENCHMARK(BM_Validate)
    ->ArgName("program")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Dump(benchmark::State& state) {
  const Fixture& f = Shared(state.range(0));
  for (auto _ : state) {
    std::string text = irm::oldir::DumpProgram(f.program);
    benchmark::DoNotOptimize(text);
  }
  SetCounters(state);
}
BENCHMARK(BM_Dump)
    ->ArgName("program")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  auto& s = run.seconds;
  bool ok = true;
  for (int64_t which : {0, 1}) {
    const Fixture& f = Shared(which);
    const std::string arg = fmt::format("/program:{}", which);
    auto has = [&](const char* bm) { return run.Has(bm + arg); };
    auto at = [&](const char* bm) { return s[bm + arg]; };
    fmt::print("program:{}: {} ops, {} blocks, {} bytes binary\n", which, f.ops,
               f.program.num_blocks(), f.bytes.size());
    if (has("BM_RawParse") && has("BM_Load")) {
      const double ratio = at("BM_Load") / at("BM_RawParse");
      const bool pass = ratio <= 1.5;
      ok &= pass;
      fmt::print("  load / raw parse: {:.3f}x (target <= 1.5x) {}\n", ratio,
                 pass ? "PASS" : "MISS");
    }
    if (has("BM_RawParseArena") && has("BM_Load")) {
      fmt::print("  load / raw parse into an arena: {:.3f}x (our own overhead)\n",
                 at("BM_Load") / at("BM_RawParseArena"));
    }
    if (has("BM_Validate")) {
      const double ops_per_s = static_cast<double>(f.ops) / at("BM_Validate");
      const bool pass = ops_per_s >= 1e6;
      ok &= pass;
      fmt::print("  validate: {:.2f} M ops/s (target >= 1 M ops/s) {}\n", ops_per_s / 1e6,
                 pass ? "PASS" : "MISS");
    }
    if (has("BM_Dump")) {
      fmt::print("  dump: {:.2f} M ops/s\n", static_cast<double>(f.ops) / at("BM_Dump") / 1e6);
    }
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
