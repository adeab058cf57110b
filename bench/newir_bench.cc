// New-IR benchmarks on one generated program of >= 100,000 ops, a transformer-like stack of
// layers with static shapes: per layer four compressed-parameter candidates (weight, bias,
// layer-norm scale and bias), matmul / add / layer_norm / relu / softmax, a combine with two
// slices, a full feeding a scale; every 4th layer is distributed (dist tensor types over a
// 2-rank mesh, op_dist_attr on every op, DA on its parameters), and every 16th layer adds a
// pd_op.if with two branches.
//   text_print   PrintProgram (newir/printer.h), typed style
//   text_parse   ParseProgram (newir/parser.h) of that text
//   json_write   WritePirJson (compact)
//   json_read    ReadPirJson of that document
//   nlohmann_parse / nlohmann_dump   the natural baseline: nlohmann::json::parse of the same
//                document, and dump() of the parsed tree (what our writer and reader sit on)
// All report ops/s (items) and bytes/s of the text or document. After the runs it prints the
// ratio (json_write + json_read) / (nlohmann_parse + nlohmann_dump), target <= 3x, and exits 1 on
// a miss when run with --irm_check_targets.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "newir/builder.h"
#include "newir/parser.h"
#include "newir/pir_json.h"
#include "newir/printer.h"

namespace {

using irm::newir::Attribute;
using irm::newir::Builder;
using irm::newir::Operation;
using irm::newir::Program;
using irm::newir::Type;
using irm::newir::Value;
namespace nir = irm::newir;

constexpr int kLayers = 6700;  // ~15.3 ops per layer: >= 100,000 ops
constexpr int64_t kBatch = 16;
constexpr int64_t kHidden = 64;

Attribute Flags(bool v) { return Attribute::Array({Attribute::Bool(v)}); }

// Builds the layers; dense or distributed types and attributes depending on the layer.
class Generator {
 public:
  explicit Generator(Program& program) : b_(program.block()) {
    const nir::ProcessMesh mesh{{2}, {0, 1}, {"dp"}};
    split_ = {mesh, {0, -1}, {}, std::nullopt};
    split1_ = {mesh, {0}, {}, std::nullopt};
    replicated1_ = {mesh, {-1}, {}, std::nullopt};
    replicated2_ = {mesh, {-1, -1}, {}, std::nullopt};
    mesh_ = mesh;
  }

  void Build(int layers) {
    Value* x = b_.Create("pd_op.data", {}, {Act(false)},
                         {{"dtype", Attribute::DataTypeAttr(nir::DataType::kFloat32)},
                          {"name", Attribute::String("x")},
                          {"place", Attribute::PlaceAttr(nir::Place{})},
                          {"shape", Attribute::IntArrayAttr({kBatch, kHidden})},
                          {"stop_gradient", Flags(true)}})
                   ->result(0);
    for (int i = 0; i < layers; ++i) {
      dist_ = i % 4 == 3;
      x = Layer(i, x);
      if (i % 16 == 15) x = If(x);
    }
    dist_ = false;
    b_.Create("builtin.shadow_output", {x}, {}, {{"output_name", Attribute::String("out")}});
  }

 private:
  Type Dense(std::vector<int64_t> dims) const {
    return Type::DenseTensor(Type::F32(), std::move(dims));
  }
  // An activation [batch, hidden], split over the mesh in a dist layer.
  Type Act(bool dist) const {
    if (!dist) return Dense({kBatch, kHidden});
    return Type::DistDenseTensor(Dense({kBatch, kHidden}), split_).value();
  }
  Type Param(std::vector<int64_t> dims) const {
    if (!dist_) return Dense(dims);
    return Type::DistDenseTensor(Dense(dims), dims.size() == 2 ? replicated2_ : replicated1_)
        .value();
  }
  Attribute OpDist(size_t operands, size_t results) const {
    std::vector<Attribute> in(operands, Attribute::TensorDist(split_));
    std::vector<Attribute> out(results, Attribute::TensorDist(split_));
    return Attribute::OperationDist({mesh_, std::move(in), std::move(out), -1});
  }
  // The attributes every op carries, plus op_dist_attr in a dist layer.
  nir::AttributeMap Attrs(nir::AttributeMap attrs, size_t operands, size_t results) const {
    attrs["stop_gradient"] =
        Attribute::Array(std::vector<Attribute>(results, Attribute::Bool(false)));
    if (dist_) {
      attrs["op_dist_attr"] = OpDist(operands, results);
      attrs["op_role"] = Attribute::Int32(0);
    }
    return attrs;
  }
  Value* Parameter(const std::string& name, std::vector<int64_t> dims) {
    nir::AttributeMap attrs = {{"parameter_name", Attribute::String(name)},
                               {"is_distributed", Flags(dist_)},
                               {"is_parameter", Flags(true)},
                               {"need_clip", Flags(true)},
                               {"persistable", Flags(true)},
                               {"stop_gradient", Flags(false)},
                               {"trainable", Flags(true)}};
    if (dist_) attrs["op_dist_attr"] = OpDist(0, 1);
    return b_.Create("builtin.parameter", {}, {Param(std::move(dims))}, std::move(attrs))
        ->result(0);
  }
  Value* Op(const std::string& name, const std::vector<Value*>& in, Type out,
            nir::AttributeMap attrs = {}) {
    return b_.Create(name, in, {std::move(out)}, Attrs(std::move(attrs), in.size(), 1))->result(0);
  }

  Value* Layer(int i, Value* x) {
    const std::string prefix = fmt::format("layer_{}.", i);
    Value* w = Parameter(prefix + "w", {kHidden, kHidden});
    Value* bias = Parameter(prefix + "b", {kHidden});
    Value* scale = Parameter(prefix + "ln_scale", {kHidden});
    Value* shift = Parameter(prefix + "ln_bias", {kHidden});
    const Type act = Act(dist_);
    Value* h =
        Op("pd_op.matmul", {x, w}, act,
           {{"transpose_x", Attribute::Bool(false)}, {"transpose_y", Attribute::Bool(false)}});
    h = Op("pd_op.add", {h, bias}, act);
    const Type stat =
        dist_ ? Type::DistDenseTensor(Dense({kBatch}), split1_).value() : Dense({kBatch});
    Operation* ln = b_.Create(
        "pd_op.layer_norm", {h, scale, shift}, {act, stat, stat},
        Attrs({{"begin_norm_axis", Attribute::Int32(1)}, {"epsilon", Attribute::Float(1e-5f)}}, 3,
              3));
    Value* r = Op("pd_op.relu", {ln->result(0)}, act);
    Value* s = Op("pd_op.softmax", {r}, act, {{"axis", Attribute::Int32(-1)}});
    Value* pair = Op("builtin.combine", {r, s}, Type::Vector({act, act}));
    Value* first = Op("builtin.slice", {pair}, act, {{"index", Attribute::Int32(0)}});
    Value* second = Op("builtin.slice", {pair}, act, {{"index", Attribute::Int32(1)}});
    h = Op("pd_op.add", {first, second}, act);
    Value* factor = Op("pd_op.full", {}, Dense({1}),
                       {{"dtype", Attribute::DataTypeAttr(nir::DataType::kFloat32)},
                        {"place", Attribute::PlaceAttr(nir::Place::Of(nir::AllocationType::kCpu))},
                        {"shape", Attribute::IntArrayAttr({1})},
                        {"value", Attribute::Float(0.5f)}});
    return Op("pd_op.scale", {h, factor}, act,
              {{"bias", Attribute::Float(0.0f)}, {"bias_after_scale", Attribute::Bool(true)}});
  }

  // pd_op.if on a constant condition: relu in the true branch, x itself in the false one.
  Value* If(Value* x) {
    Value* cond = Op("pd_op.full", {}, Type::DenseTensor(Type::Bool(), {1}),
                     {{"dtype", Attribute::DataTypeAttr(nir::DataType::kBool)},
                      {"place", Attribute::PlaceAttr(nir::Place::Of(nir::AllocationType::kCpu))},
                      {"shape", Attribute::IntArrayAttr({1})},
                      {"value", Attribute::Float(1.0f)}});
    Operation* op =
        b_.Create("pd_op.if", {cond}, {x->type()}, {{"stop_gradient", Flags(false)}}, 2);
    Builder then_b(op->region(0).AddBlock());
    Value* r =
        then_b.Create("pd_op.relu", {x}, {x->type()}, {{"stop_gradient", Flags(false)}})->result(0);
    then_b.Create("cf.yield", {r}, {});
    Builder(op->region(1).AddBlock()).Create("cf.yield", {x}, {});
    return op->result(0);
  }

  Builder b_;
  bool dist_ = false;
  nir::ProcessMesh mesh_;
  nir::TensorDistAttr split_, split1_, replicated1_, replicated2_;
};

struct Fixture {
  Program program;
  int64_t ops = 0;
  std::string text;
  std::string json;
  nlohmann::json tree;  // the document parsed by nlohmann, for the dump baseline
};

const Fixture& Shared() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture;
    Generator(f->program).Build(kLayers);
    f->ops = static_cast<int64_t>(f->program.CountOps());
    f->text = nir::PrintProgram(f->program);
    f->json = nir::WritePirJson(f->program);
    f->tree = nlohmann::json::parse(f->json);
    return f;
  }();
  return *fixture;
}

void SetCounters(benchmark::State& state, size_t bytes) {
  const Fixture& f = Shared();
  state.SetItemsProcessed(state.iterations() * f.ops);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["ops"] = static_cast<double>(f.ops);
}

void BM_TextPrint(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    std::string text = nir::PrintProgram(f.program);
    benchmark::DoNotOptimize(text);
  }
  SetCounters(state, f.text.size());
}
BENCHMARK(BM_TextPrint)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_TextParse(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    auto program = nir::ParseProgram(f.text, "bench.pir");
    if (!program.ok()) state.SkipWithError(program.status().ToString().c_str());
    benchmark::DoNotOptimize(program);
  }
  SetCounters(state, f.text.size());
}
BENCHMARK(BM_TextParse)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_JsonWrite(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    std::string json = nir::WritePirJson(f.program);
    benchmark::DoNotOptimize(json);
  }
  SetCounters(state, f.json.size());
}
BENCHMARK(BM_JsonWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_JsonRead(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    auto program = nir::ReadPirJson(f.json, "bench.json");
    if (!program.ok()) state.SkipWithError(program.status().ToString().c_str());
    benchmark::DoNotOptimize(program);
  }
  SetCounters(state, f.json.size());
}
BENCHMARK(BM_JsonRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NlohmannParse(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    nlohmann::json tree = nlohmann::json::parse(f.json);
    benchmark::DoNotOptimize(tree);
  }
  SetCounters(state, f.json.size());
}
BENCHMARK(BM_NlohmannParse)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NlohmannDump(benchmark::State& state) {
  const Fixture& f = Shared();
  for (auto _ : state) {
    std::string json = f.tree.dump();
    benchmark::DoNotOptimize(json);
  }
  SetCounters(state, f.json.size());
}
BENCHMARK(BM_NlohmannDump)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  auto& s = run.seconds;
  auto has = [&](const char* bm) { return run.Has(bm); };
  bool ok = true;
  const Fixture& f = Shared();
  fmt::print("program: {} ops, text {} bytes, JSON {} bytes\n", f.ops, f.text.size(),
             f.json.size());
  for (const char* bm : {"BM_TextPrint", "BM_TextParse", "BM_JsonWrite", "BM_JsonRead"}) {
    if (has(bm)) {
      fmt::print("  {}: {:.2f} M ops/s\n", bm, static_cast<double>(f.ops) / s[bm] / 1e6);
    }
  }
  if (has("BM_JsonWrite") && has("BM_JsonRead") && has("BM_NlohmannParse") &&
      has("BM_NlohmannDump")) {
    const double ours = s["BM_JsonWrite"] + s["BM_JsonRead"];
    const double baseline = s["BM_NlohmannParse"] + s["BM_NlohmannDump"];
    const double ratio = ours / baseline;
    const bool pass = ratio <= 3.0;
    ok &= pass;
    fmt::print("  JSON write + read / nlohmann parse + dump: {:.3f}x (target <= 3x) {}\n", ratio,
               pass ? "PASS" : "MISS");
    fmt::print("  JSON write / nlohmann dump: {:.3f}x; JSON read / nlohmann parse: {:.3f}x\n",
               s["BM_JsonWrite"] / s["BM_NlohmannDump"], s["BM_JsonRead"] / s["BM_NlohmannParse"]);
  }
  benchmark::Shutdown();
  return run.check_targets && !ok ? 1 : 0;
}
