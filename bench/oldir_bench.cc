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

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "bench/bench_runner.h"
#include "examples/mlp_program.h"
#include "oldir/bundle.h"
#include "oldir/dump.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
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
        !irm::oldir::models::AddTraining(&model, irm::oldir::OptimizerOptions{}).ok()) {
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

// ---- hostile sizes: the validator is linear in them --------------------------------------
//   validate_deep:N   N blocks, each the sub-block of a conditional_block of the one before, each
//                     reading a var the root block computed (the dataflow walks the chain of
//                     owners); was cubic in N (1,000 levels: 11.8 s)
//   validate_attrs:N  one op with N attributes its schema does not know (duplicates are searched
//                     among them); was quadratic in N
//   validate_plan:N   ReadBundle + CheckBundle of a one-rank MLP bundle whose plan.json holds N
//                     jobs (micro-batches 0..N-1), what `ir-migrate validate DIR` does; was
//                     quadratic in N (nlohmann's parse callback, 100,000 jobs: 9.2 s)

irm::oldir::Program DeepProgram(int levels) {
  using namespace irm::oldir;
  proto::ProgramDesc desc;
  auto add_block = [&](int parent) {
    proto::BlockDesc* block = desc.add_blocks();
    block->set_idx(desc.blocks_size() - 1);
    block->set_parent_idx(parent);
    return block;
  };
  auto add_var = [](proto::BlockDesc* block, const std::string& name, bool feed) {
    proto::VarDesc* var = block->add_vars();
    var->set_name(name);
    var->set_need_check_feed(feed);
    var->mutable_type()->set_type(proto::VarType::DENSE_TENSOR);
    auto* tensor = var->mutable_type()->mutable_dense_tensor()->mutable_tensor();
    tensor->set_data_type(proto::VarType::FP32);
    tensor->add_dims(1);
  };
  auto add_op = [](proto::BlockDesc* block, const char* type, const char* in_slot,
                   const std::string& in, const std::string& out) {
    proto::OpDesc* op = block->add_ops();
    op->set_type(type);
    proto::OpDesc::Var* input = op->add_inputs();
    input->set_parameter(in_slot);
    input->add_arguments(in);
    proto::OpDesc::Var* output = op->add_outputs();
    output->set_parameter("Out");
    output->add_arguments(out);
    return op;
  };
  proto::BlockDesc* root = add_block(-1);
  add_var(root, "x0", true);
  add_var(root, "x", false);
  add_var(root, "y", false);
  add_op(root, "relu", "X", "x0", "x");
  for (int b = 1; b < levels; ++b) add_block(b - 1);
  for (int b = 0; b < levels; ++b) {
    proto::BlockDesc* block = desc.mutable_blocks(b);
    if (b > 0) {
      add_var(block, "t" + std::to_string(b), false);
      add_op(block, "relu", "X", "x", "t" + std::to_string(b));
    }
    if (b + 1 < levels) {
      proto::OpDesc* op = add_op(block, "conditional_block", "Cond", "x", "y");
      proto::OpDesc::Attr* attr = op->add_attrs();
      attr->set_name("sub_block");
      attr->set_type(proto::BLOCK);
      attr->set_block_idx(b + 1);
    }
  }
  return Program(desc);
}

irm::oldir::Program WideOpProgram(int attrs) {
  using namespace irm::oldir;
  proto::ProgramDesc desc;
  proto::BlockDesc* root = desc.add_blocks();
  root->set_parent_idx(-1);
  proto::OpDesc* op = root->add_ops();
  op->set_type("custom_op");
  for (int i = 0; i < attrs; ++i) {
    proto::OpDesc::Attr* attr = op->add_attrs();
    attr->set_name("a" + std::to_string(i));
    attr->set_type(proto::INT);
    attr->set_i(i);
  }
  return Program(desc);
}

void ValidateLoop(benchmark::State& state, const irm::oldir::Program& program) {
  irm::oldir::ValidateOptions options;
  options.file = "bench.pdmodel";
  for (auto _ : state) {
    irm::Diagnostics findings = irm::oldir::ValidateProgram(program, options);
    benchmark::DoNotOptimize(findings);
  }
}

void BM_ValidateDeep(benchmark::State& state) {
  const irm::oldir::Program program = DeepProgram(static_cast<int>(state.range(0)));
  ValidateLoop(state, program);
}
BENCHMARK(BM_ValidateDeep)
    ->ArgName("blocks")
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ValidateWideOp(benchmark::State& state) {
  const irm::oldir::Program program = WideOpProgram(static_cast<int>(state.range(0)));
  ValidateLoop(state, program);
}
BENCHMARK(BM_ValidateWideOp)
    ->ArgName("attrs")
    ->Arg(20000)
    ->Arg(200000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A bundle folder written once per process, removed at exit.
const std::string& PlanBundle(int jobs) {
  static std::map<int, std::string> dirs;
  auto it = dirs.find(jobs);
  if (it != dirs.end()) return it->second;
  namespace fs = std::filesystem;
  using namespace irm::oldir;
  std::string dir =
      (fs::temp_directory_path() / fmt::format("irm_bench_plan_{}_{}", ::getpid(), jobs)).string();
  models::ModelPrograms model;
  if (!models::BuildMlp({}, &model).ok() || !models::AddTraining(&model, OptimizerOptions{}).ok())
    std::abort();
  Bundle bundle;
  bundle.micro_batches = jobs;
  for (const models::FeedSpec& feed : model.feeds) {
    bundle.feeds.push_back(
        {feed.name, feed.shape, irm::DTypeName(*DTypeFromVarType(feed.dtype)), FeedSplit::kBatch});
  }
  irm::StatusOr<BundleRank> rank =
      WriteLegacyRankPrograms(dir, 0, model.startup.Build(), {{"main", model.main.Build()}});
  if (!rank.ok()) std::abort();
  rank->plan.emplace();
  for (int j = 0; j < jobs; ++j) rank->plan->push_back({"main", j});
  bundle.ranks.push_back(*rank);
  if (!WriteBundle(bundle, dir).ok()) std::abort();
  static const bool cleanup = [] {
    return std::atexit([] {
             for (const auto& [n, path] : dirs) fs::remove_all(path);
           }) == 0;
  }();
  (void)cleanup;
  return dirs.emplace(jobs, std::move(dir)).first->second;
}

void BM_ValidatePlan(benchmark::State& state) {
  const std::string& dir = PlanBundle(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    irm::StatusOr<irm::oldir::Bundle> bundle = irm::oldir::ReadBundle(dir);
    if (!bundle.ok()) std::abort();
    irm::oldir::BundleCheck check = irm::oldir::CheckBundle(*bundle, dir);
    if (check.findings.HasErrors()) std::abort();
    benchmark::DoNotOptimize(check);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ValidatePlan)
    ->ArgName("jobs")
    ->Arg(10000)
    ->Arg(100000)
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
