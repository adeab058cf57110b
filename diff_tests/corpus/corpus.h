// The parity corpus: distributed legacy bundles generated from strategies. Each case is a recipe
// (model_bundle.h: a zoo model's config, its optimizer, a strategy JSON, steps, seed and batch
// size) made by the legacy passes (oldir/passes/apply_strategy.h) exactly as
// `ir-migrate build mlp|gpt --strategy` makes it — data and tensor parallel, pipelines under
// FThenB, 1F1B, VPP and ZBH1, gradient merge, and their hybrids.
// `ir-migrate build corpus` writes every case (CorpusCases) in a folder of its name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/model_bundle.h"

namespace irm::corpus {

// One corpus bundle: what the passes made of `recipe` (the ModelBundle), named.
struct BundleCase : ModelBundle {
  std::string name;         // "dp2_mlp": the case's directory name in a corpus
  std::string description;  // one line, for reports
  ModelRecipe recipe;       // what it is made from
  std::string strategy;     // the recipe's strategy as JSON text ("" for the serial case)
};

// The distributed cases the parity tests run, in this order (the first six are the corpus's
// original cases; the rest came with the passes):
//   dp2_mlp, dp4_mlp, tp2_mlp, pp2_fthenb_mb2_mlp, pp2_fthenb_mb4_mlp, dp2_gm2_mlp,
//   pp2_1f1b_mb2_mlp, pp2_vpp2_mb4_mlp, pp2_zbh1_mb2_mlp, tp2_gpt, dp2_tp2_mlp, dp2_pp2_mlp,
//   dp2_tp2_pp2_gpt.
// An error means a pass or the zoo broke: the recipes are fixed.
StatusOr<std::vector<BundleCase>> StandardCases();

// Everything `build corpus` writes: the standard cases, then serial_mlp8 (dp2_mlp's model on one
// rank, the serial run of its 2 × 4-row global batch).
StatusOr<std::vector<BundleCase>> CorpusCases();

// The corpus case of that name (kNotFound listing the names otherwise).
StatusOr<BundleCase> CaseNamed(std::string_view name);

// "dp<ranks>_mlp": the corpus MLP, data parallel over `ranks`.
StatusOr<BundleCase> DataParallelMlp(int ranks);
// "serial_mlp<batch>": the corpus MLP on one rank, without communication, for runs of `batch`
// rows per step (ranks × the data-parallel batch to compare with it).
StatusOr<BundleCase> SerialMlp(int64_t batch);

// Writes the case into `dir` as `build` writes a bundle (WriteModelBundle), with protobuf text
// copies of the programs beside them when `text_copies`.
Status WriteBundleCase(const BundleCase& bundle_case, const std::string& dir,
                       bool text_copies = false);

}  // namespace irm::corpus
