// What every benchmark program here shares: run the registered benchmarks with the console
// reporter, keep each one's real time per iteration for the target checks a program prints after
// the table, and take the `--irm_check_targets` flag (exit 1 when a target is missed) off the
// command line before Google Benchmark sees it.
#pragma once

#include <map>
#include <string>

namespace irm::bench {

struct BenchmarkRun {
  // Seconds per iteration by benchmark name ("BM_Load/program:0"; "BM_TextPrint" when the
  // benchmark has no arguments): the mean over repetitions when run with
  // --benchmark_repetitions, else the single run.
  std::map<std::string, double> seconds;
  // The median over repetitions, for benchmarks run with --benchmark_repetitions (robust to the
  // scheduling outliers of a shared machine); absent otherwise.
  std::map<std::string, double> median_seconds;
  bool check_targets = false;  // --irm_check_targets was given

  bool Has(const std::string& name) const { return seconds.contains(name); }
  // The median when there is one, else `seconds`.
  double Robust(const std::string& name) const {
    auto it = median_seconds.find(name);
    return it != median_seconds.end() ? it->second : seconds.at(name);
  }
};

BenchmarkRun RunBenchmarks(int argc, char** argv);

}  // namespace irm::bench
