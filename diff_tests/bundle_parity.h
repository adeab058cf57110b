// The parity driver for a bundle (docs/bundle.md): every rank of the legacy bundle and every rank
// of its new-IR twin — a given pir bundle, or the legacy one translated into a scratch folder
// beside it — run as threads of the thread world (multi_rank_run.h) with the same random feeds
// and seed, each rank traced op by op with communication traces on. The report (the one RunParity
// makes) compares per rank every step's merged fetches, every persistable var of the rank's root
// scope after the run, every aligned intermediate and the communication trace, then localises the
// first divergence over the ranks and re-executes the suspect op in isolation.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "diff_tests/parity_run.h"
#include "reference_runtime/comm/rank_world.h"
#include "reference_runtime/kernel.h"
#include "schedules/p2p_model.h"

namespace irm::diff {

// After each step of one rank of one side ("legacy" or "new-IR"): the rank, the step, the steps.
// Called on the rank's thread, one call at a time.
using BundleParityProgress =
    std::function<void(const std::string& side, int rank, int step, int steps)>;

struct BundleParityOptions {
  int steps = 0;                 // 0: the bundle's steps
  std::optional<uint64_t> seed;  // default: the bundle's seed
  rt::FeedMap feeds;             // whole-batch feeds for every step; the others are random
  int64_t batch_size = 4;        // the -1 dims of random feeds
  Tier tier = Tier::kExact;
  rt::GemmMode gemm = rt::GemmMode::kBlas;
  // Every rank's kernels on both sides (ExecutorOptions::kernels; the isolated re-execution too):
  // null for the CPU's, the GPU registry for --device gpu. Must outlive the call.
  const rt::KernelRegistry* kernels = nullptr;
  std::vector<std::string> keep;  // glob patterns of outputs kept in full on both sides
  bool isolate = true;
  // The thread world's backstop for a rank stuck outside the world (hangs are found at once).
  std::chrono::milliseconds timeout{60000};
  // The world both sides' ranks run in (`parity --backend device|nccl`: the GPU's); unset: the
  // thread world, with `timeout`. Its worlds must record every rank's calls (the communication
  // is compared). Must outlive the call.
  rt::RankWorldFactory make_world;
  // When a send returns; unset: the model bundle.json states, else rendezvous.
  std::optional<schedules::P2pModel> p2p;
  // Draw both runs into a Chrome trace (ParityResult::chrome_trace): a process per rank and side,
  // job and op spans, communication as flows.
  bool chrome_trace = false;
  BundleParityProgress progress;
};

// Runs the legacy bundle in `legacy_dir` and the pir bundle in `new_dir` — empty: the legacy
// bundle translated (TranslateBundle) into a scratch folder beside it, removed afterwards — and
// compares them rank by rank. The traces of the result are those of the first divergence's rank
// (empty without a divergence).
//
// Errors: ReadBundle's; kInvalidArgument when `legacy_dir` is not a legacy bundle, `new_dir` not a
// pir bundle, their world sizes differ, or the tier is noise-floor (kUnimplemented);
// TranslateBundle's; and those of either run with a note naming the side — a hang is kInternal
// with what every rank was waiting for.
StatusOr<ParityResult> RunBundleParity(const std::string& legacy_dir, const std::string& new_dir,
                                       const BundleParityOptions& options);

}  // namespace irm::diff
