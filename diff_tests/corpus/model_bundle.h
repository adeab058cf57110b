// A model-zoo training program made into a legacy bundle (docs/bundle.md): the recipe (model
// config, optimizer, strategy, steps, batch size) and what `ir-migrate build mlp|gpt|resnet` and
// the parity corpus (corpus.h) both do with it — build the serial startup and main programs
// (forward, append_backward, optimizer, feed and fetch ops), apply the strategy with the legacy
// passes (oldir/passes/apply_strategy.h) and write the per-rank programs with bundle.json,
// recording the strategy and, for a plan that needs buffered sends, the point-to-point model. One
// code path, so a corpus case is byte for byte what `build` writes for the same inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/models/gpt.h"
#include "oldir/models/lr_schedule.h"
#include "oldir/models/mlp.h"
#include "oldir/models/resnet.h"
#include "oldir/optimizer.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/strategy.h"
#include "schedules/paddle_schedule.h"

namespace irm::corpus {

enum class ZooModel { kMlp, kGpt, kResnet };

// What a bundle is made from: `build`'s flags.
struct ModelRecipe {
  ZooModel model = ZooModel::kMlp;
  oldir::models::MlpConfig mlp;  // used when model is kMlp (its seed is bundle.json's seed)
  oldir::models::GptConfig gpt;  // used when model is kGpt
  // Used when model is kResnet; its accuracies are fetched after the loss.
  oldir::models::ResnetConfig resnet;
  // The learning-rate schedule (oldir/models/lr_schedule.h); constant by default.
  oldir::models::LrSchedule lr_schedule;
  oldir::OptimizerOptions optimizer;
  int steps = 1;  // executor steps (with gradient merge, k_steps of them make one update)
  // The legacy passes' strategy; unset: the serial single-rank bundle.
  std::optional<oldir::passes::Strategy> strategy;
  // Rows per data-parallel replica and step. A pipeline's recv_v2 shapes are static: its feeds
  // take this as dim 0 (other bundles keep -1, the batch chosen at run time).
  int64_t batch_size = 4;
  // A dist sidecar file (oldir/dist_sidecar.h) placing the parameters over the mp mesh in place
  // of the zoo's Megatron placements; empty: those.
  std::string annotations;
  // A pipeline's job lists in the legacy form or Paddle's PIR form (recv_forward / send_backward
  // jobs for 1F1B and VPP: oldir/passes/pipeline_jobs.h).
  schedules::JobListIr job_lists = schedules::JobListIr::kLegacy;
};

// The bundle in memory: bundle.json's fields (world size, process groups, micro-batches, feeds,
// fetches, steps, seed, strategy; `ranks` filled on writing) and every rank's programs.
struct ModelBundle {
  oldir::Bundle bundle;
  std::vector<oldir::passes::RankPrograms> ranks;  // by rank
  std::string loss;                                // the serial program's loss var
  int k_steps = 1;                                 // executor steps per optimizer update
};

// Builds the serial programs and applies the strategy. Errors: a bad model config
// (kInvalidArgument), a batch size that does not split into the pipeline's micro-batches
// (kInvalidArgument at "--batch-size"), annotations without model parallelism or that do not fit
// the program, the passes' errors — all located.
StatusOr<ModelBundle> MakeModelBundle(const ModelRecipe& recipe);

// Writes `made` into `dir` (created; files of the same names replaced): per rank its programs,
// plan and shards, then bundle.json — with `p2p` set to the buffered model when the plans' sends
// need buffers to complete (what the schedule simulator finds, schedules/simulator.h). Returns
// the bundle as written. Plans that hang under every model are an internal error.
StatusOr<oldir::Bundle> WriteModelBundle(const ModelBundle& made, const std::string& dir,
                                         const oldir::RankProgramsOptions& options = {});

}  // namespace irm::corpus
