// The parity corpus's distributed legacy bundles, written by hand in the style of what Paddle's
// static auto-parallel passes leave behind, on the model zoo's MLP:
//   - data parallel: every rank the whole model; after the backward pass each parameter gradient
//     is summed over the ranks in place (`c_allreduce_sum`, ring 0) and scaled by 1/N (`scale`);
//   - tensor parallel (Megatron MLP block): `c_identity` on the block's input, a column-parallel
//     matmul (weight sharded along its columns), a row-parallel matmul (sharded along its rows)
//     whose partial products are summed by `c_allreduce_sum`, and the `c_allreduce_sum` of the
//     input's gradient in the backward pass;
//   - a 2-stage pipeline: forward / backward / optimizer job programs per stage, activations and
//     their gradients passed by `send_v2` / `recv_v2` on one process group per direction, an
//     FThenB plan over m micro-batches, and gradient merge (`<param>@GRAD@MERGE` buffers summed
//     by the backward jobs, scaled by 1/m, applied and zeroed by the optimizer job);
//   - gradient merge with the conditional block (data parallel over 2 ranks, k steps): the
//     backward pass adds each reduced gradient into its merge buffer and counts steps; a
//     `conditional_block` runs every k-th step the 1/k scale, the optimizer and the buffers'
//     reset (`set_value` to 0).
// Every case also records what a run feeds and fetches, its steps and seed in bundle.json.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/bundle_case.h"

namespace irm::corpus {

struct CorpusOptions {
  int64_t batch = 4;  // rows per rank and step (per micro-batch for the pipeline)
  int steps = 3;
  int32_t seed = 2024;
};

// "dp<ranks>_mlp".
StatusOr<BundleCase> DataParallelMlp(int ranks, const CorpusOptions& options = {});
// "serial_mlp<batch>": the data-parallel case's model on one rank, without communication, fed
// `batch` rows per step (ranks × the data-parallel batch to compare with it).
StatusOr<BundleCase> SerialMlp(int64_t batch, const CorpusOptions& options = {});
// "tp<ranks>_mlp"; ranks must divide the block's hidden width (16).
StatusOr<BundleCase> TensorParallelMlp(int ranks, const CorpusOptions& options = {});
// "pp2_fthenb_mb<micro_batches>_mlp".
StatusOr<BundleCase> PipelineFThenBMlp(int micro_batches, const CorpusOptions& options = {});
// "dp2_gm<k_steps>_mlp".
StatusOr<BundleCase> GradientMergeMlp(int k_steps, const CorpusOptions& options = {});

// The cases the parity tests run: dp2, dp4, tp2, pp2 with 2 and 4 micro-batches, gm2.
StatusOr<std::vector<BundleCase>> StandardCases(const CorpusOptions& options = {});

}  // namespace irm::corpus
