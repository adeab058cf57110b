// The shared benchmark runner: a console reporter that also collects per-benchmark times.
#include "bench/bench_runner.h"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <vector>

namespace irm::bench {
namespace {

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal, so that logs and docs get plain text.
  CollectingReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      std::string key = run.run_name.function_name;
      if (!run.run_name.args.empty()) key += "/" + run.run_name.args;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        median_seconds[key] =
            run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
        continue;
      }
      const bool mean = run.run_type == Run::RT_Aggregate && run.aggregate_name == "mean";
      std::string name = run.run_name.function_name;
      if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
      if (run.run_type == Run::RT_Iteration && has_mean_.contains(name)) continue;
      if (run.run_type != Run::RT_Iteration && !mean) continue;
      if (mean) has_mean_.insert(name);
      seconds[name] = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    }
  }

  std::map<std::string, double> seconds;
  std::map<std::string, double> median_seconds;

 private:
  std::set<std::string> has_mean_;
};

}  // namespace

BenchmarkRun RunBenchmarks(int argc, char** argv) {
  BenchmarkRun result;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--irm_check_targets") == 0) {
      result.check_targets = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  result.seconds = std::move(reporter.seconds);
  result.median_seconds = std::move(reporter.median_seconds);
  return result;
}

}  // namespace irm::bench
