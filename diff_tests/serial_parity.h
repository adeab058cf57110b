// The distributed-vs-serial check (docs/architecture.md, invariant 6; docs/parity.md, "Distributed
// against serial"): a distributed legacy bundle and the serial one-rank bundle of the same model
// run on the reference runtime from the same seed — the distributed ranks on the thread world,
// each data-parallel replica reading its rows of the global batch, and the serial rank the whole
// global batch (dp_degree times the rows; multi_rank_run.h) — and after the steps every loss and
// every parameter and optimizer state of the serial run is compared with the distributed run's:
// a step's fetch is the mean over the replicas of each replica's mean (a pipeline rank fetches
// one value per micro-batch; only the ranks that fetch it count), or, for a fetch with rows, the
// replicas' rows one after another; a var is reassembled from the ranks that hold it
// (shard_assembly.h). With the noise-floor tier, a tensor that misses the reordered tier is
// arbitrated by a float64 shadow of the serial program (serial_arbitration.h) and the report says
// which tensors needed it and why. On a mismatch the steps are re-run fewer at a time to name the
// earliest step after which a parameter or optimizer state differs, and those that differ then.
//
// Gradient merge (bundle.json's strategy gradient_merge, k_steps = k > 1): k executor steps make
// one update, so one serial step stands for k executor steps — it reads their global batches
// stacked along dim 0 (the rows the k micro-steps read, in order), from the same initial
// parameters, and a step's fetch is the mean over those k steps' (and the replicas') values, or
// their rows one after another. With the merge's average (Paddle's gradient_merge.avg, the
// default) the update is the serial update of the k·B rows (pipelines.md §2.3): the mean of k
// means of B rows is the mean of k·B rows.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "diff_tests/bundle_parity.h"
#include "diff_tests/parity_run.h"
#include "oldir/bundle.h"
#include "reference_runtime/multi_rank_run.h"
#include "schedules/p2p_model.h"

namespace irm::diff {

struct SerialParityOptions {
  int steps = 0;                 // 0: the distributed bundle's steps
  std::optional<uint64_t> seed;  // default: the distributed bundle's seed, for both runs
  int64_t batch_size = 4;        // rows per replica; the serial run draws dp_degree times as many
  Tier tier = Tier::kReordered;
  rt::GemmMode gemm = rt::GemmMode::kBlas;
  // The kernels of both runs' ranks (ExecutorOptions::kernels): null for the CPU's, the GPU
  // registry for --device gpu. The float64 shadow of the noise-floor tier stays on the CPU (it
  // is the reference). Must outlive the call.
  const rt::KernelRegistry* kernels = nullptr;
  // The thread world's backstop for a rank stuck outside the world (hangs are found at once).
  std::chrono::milliseconds timeout{60000};
  // The world both runs' ranks run in (`parity --backend device|nccl`, the engine's --backend);
  // unset: the thread world, with `timeout`. Must outlive the call.
  rt::RankWorldFactory make_world;
  // When a send returns (a pipeline's 1F1B needs buffered sends, as NCCL gives them); unset: the
  // model bundle.json states, else rendezvous.
  std::optional<schedules::P2pModel> p2p;
  // On a mismatch, re-run 1, 2, ... steps to find the earliest step after which the state differs.
  bool localize = true;
  // Called with side "distributed" or "serial".
  BundleParityProgress progress;
};

// Runs both bundles and compares them. The report's legacy_program is the distributed bundle, its
// new_program the serial one; entries reassembled over the ranks have rank -1.
//
// Errors: ReadBundle's; kInvalidArgument when either bundle is not a legacy bundle, the serial
// bundle has more than one rank, the distributed bundle's dp_degree is invalid
// (DataParallelDegree), the batch size is below 1, the serial bundle fixes a feed's rows to
// another number than the global batch's (each replica's fixed or --batch-size rows times the
// replicas), or, with gradient merge, the steps are not a multiple of k_steps (steps count
// executor steps: steps / k serial steps are compared); kUnimplemented, in the noise-floor tier or
// with gradient merge, for a serial rank that runs a plan (the shadow and the stacked serial run
// run `main` once per step); those of either run, with a note naming the side (a hang is
// kInternal).
StatusOr<ParityResult> RunSerialParity(const std::string& distributed_dir,
                                       const std::string& serial_dir,
                                       const SerialParityOptions& options);

// The comparison alone, on runs made elsewhere (RunSerialParity makes them).
struct DistributedOutcome {
  const oldir::Bundle* bundle = nullptr;  // the ranks' shards and the strategy's dp_degree
  const std::vector<rt::RankOutcome>* ranks = nullptr;
};
struct SerialOutcome {
  const rt::RankOutcome* run = nullptr;
  // The float64 shadow after the run and its fetches per step; null: no arbitration.
  const rt::Scope* shadow = nullptr;
  const std::vector<std::vector<rt::Fetch>>* shadow_fetches = nullptr;
};
// The serial program's float64 shadow (oldir::PromoteToFloat64), started from the serial
// startup's float32 parameters widened (none without `startup`), fed each step the serial run's
// feeds widened: the same draws (run.h's RandomFeed of `rows` rows, by `main`'s own float32
// declarations, as a rank without a plan draws them); with `stack` k > 1, shadow step t reads the
// draws of steps (t-1)k+1 .. tk stacked along dim 0, as the serial run under gradient merge does.
// What the noise-floor tier arbitrates by.
struct Float64Shadow {
  rt::Scope scope;
  std::vector<std::vector<rt::Fetch>> fetches;  // per step
};
StatusOr<std::unique_ptr<Float64Shadow>> RunFloat64Shadow(const oldir::Program* startup,
                                                          const oldir::Program& main, int steps,
                                                          uint64_t seed, int64_t rows,
                                                          rt::GemmMode gemm, int stack = 1);

// Appends to `report` every step's fetches and every var of the serial run's scope against the
// distributed run's, and every reassembly finding. DataParallelDegree's errors.
Status CompareWithSerial(const DistributedOutcome& distributed, const SerialOutcome& serial,
                         Tier tier, ParityReport& report);

}  // namespace irm::diff
