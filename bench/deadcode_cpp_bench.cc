// The C++ front end of ir-deadcode on a real compile database: by default this project's own
// (the build tree's compile_commands.json, sources under the source tree), restricted by globs to
// spare a small machine. One benchmark iteration analyses every selected TU; the counters say how
// many TUs there were, their seconds per TU (mean and max, parse included), how many failed to
// compile, and how many functions and references the merged model holds; the program then lists
// each TU's time and any problem, and with --irm_check_targets exits 1 when a TU failed to compile
// (the target: none does). Flags, taken off before Google Benchmark sees the command line:
//   --irm_compile_commands=PATH  (default: the build tree's compile_commands.json)
//   --irm_root=DIR               (default: the source tree)
//   --irm_globs=G1,G2            (default: common/*.cc,oldir/*.cc; "" for every TU)
//   --irm_threads=N              (default 1)
// Generated headers must exist first (ninja oldir/proto/framework.pb.h oldir/proto/dist_attr.pb.h).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_runner.h"
#include "tools/deadcode/config.h"
#include "tools/deadcode/cpp_frontend.h"

namespace {

struct Options {
  std::string compile_commands = IRM_BENCH_BINARY_DIR "/compile_commands.json";
  std::string root = IRM_BENCH_SOURCE_DIR;
  std::vector<std::string> globs = {"common/*.cc", "oldir/*.cc"};
  int threads = 1;
};

Options& Flags() {
  static Options options;
  return options;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

irm::deadcode::CppAnalysis& LastAnalysis() {
  static irm::deadcode::CppAnalysis analysis;
  return analysis;
}

void BM_CppFrontend(benchmark::State& state) {
  const Options& options = Flags();
  for (auto _ : state) {
    irm::StatusOr<irm::deadcode::CppAnalysis> result =
        irm::deadcode::AnalyzeCompileCommands(options.compile_commands, options.globs, options.root,
                                              irm::deadcode::DefaultConfig(), options.threads);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    LastAnalysis() = std::move(*result);
  }
  const auto& units = LastAnalysis().units;
  double total = 0;
  double max = 0;
  for (const auto& unit : units) {
    total += unit.seconds;
    max = std::max(max, unit.seconds);
  }
  state.counters["tus"] = static_cast<double>(units.size());
  state.counters["s_per_tu_mean"] = units.empty() ? 0 : total / static_cast<double>(units.size());
  state.counters["s_per_tu_max"] = max;
  state.counters["problems"] = static_cast<double>(LastAnalysis().problems.size());
  size_t functions = 0;
  size_t references = 0;
  for (const auto& file : LastAnalysis().files) {
    functions += file.functions.size();
    references += file.references.size();
  }
  state.counters["functions"] = static_cast<double>(functions);
  state.counters["references"] = static_cast<double>(references);
}
BENCHMARK(BM_CppFrontend)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--irm_compile_commands=")) {
      Flags().compile_commands = v;
    } else if (const char* v = value("--irm_root=")) {
      Flags().root = v;
    } else if (const char* v = value("--irm_globs=")) {
      Flags().globs = Split(v);
    } else if (const char* v = value("--irm_threads=")) {
      Flags().threads = std::max(1, std::atoi(v));
    } else {
      rest.push_back(argv[i]);
    }
  }
  const irm::bench::BenchmarkRun run =
      irm::bench::RunBenchmarks(static_cast<int>(rest.size()), rest.data());
  const auto& analysis = LastAnalysis();
  for (const auto& unit : analysis.units) fmt::print("{:8.3f} s  {}\n", unit.seconds, unit.file);
  for (const auto& problem : analysis.problems) {
    fmt::print("problem: {}:{}:{}: {}\n", problem.file, problem.line, problem.column,
               problem.message);
  }
  return run.check_targets && !analysis.problems.empty() ? 1 : 0;
}
