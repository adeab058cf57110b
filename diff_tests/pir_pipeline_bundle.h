// A pir pipeline bundle made by the new IR's pipeline split (newir/auto_parallel/pipeline_split.h)
// from a zoo model, reproducibly: the legacy pipeline pass cuts the serial program into stages
// (each rank's stage program as the legacy job split received it: after the micro-batch
// accumulation and the send syncs), the translator makes each stage program new IR, and
// SplitPipelineProgram splits it into the rank's job programs and plan. The startup programs are
// the translated legacy ones. What the hang reproduction of Paddle's PR #70360 (1F1B) and #71104
// (VPP) runs: the same model with and without the recv_forward / send_backward split
// (PipelineSplitOptions::split_recv_send), checked by the schedule simulator and run.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "diff_tests/corpus/model_bundle.h"
#include "oldir/bundle.h"

namespace irm::diff {

struct PirPipelineRecipe {
  // The model, optimizer, steps, batch size and strategy (its pipeline: schedule_mode,
  // accumulate_steps, vpp_degree; pp_degree > 1 and pipeline.enable required). job_lists is
  // chosen here: the legacy split the translated startups come from.
  corpus::ModelRecipe model;
  // PipelineSplitOptions::split_recv_send: false gives Paddle's PIR programs and job lists from
  // before PR #70360 (1F1B) and #71104 (VPP).
  bool split_recv_send = true;
};

struct PirPipelineBundle {
  oldir::Bundle bundle;  // as written (ir pir)
  // The smallest buffer depth the written plans need (schedules::MinBufferDepth of the bundle's
  // send/recv order): 0 when they complete under rendezvous; nullopt: never.
  std::optional<int> min_buffer_depth;
};

// Writes the pir bundle into `dir` (which must not exist or be empty). bundle.json's `p2p` is
// left unset (rendezvous), whatever the plans need: the bundle is there to show what the order
// needs, and a run or a check chooses its model. Errors: MakeModelBundle's, the translator's,
// SplitPipelineProgram's (located at "stage <rank>"); kInvalidArgument for a strategy without a
// pipeline; kIoError when writing fails.
StatusOr<PirPipelineBundle> WritePirPipelineBundle(const PirPipelineRecipe& recipe,
                                                   const std::string& dir);

}  // namespace irm::diff
