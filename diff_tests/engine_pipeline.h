// The Engine flow's new-IR road for a pipeline strategy (docs/engine.md, "Pipelines on the new-IR
// road"): the new IR's own passes, stages as process meshes (newir/auto_parallel/pipeline_meshes.h:
// the stage rule of the legacy partition read on the new IR, each stage on the [dp, mp] mesh of
// its ranks with Megatron placements under tensor parallelism, SPMD completion across the stage
// meshes, cross-mesh reshards lowered to send_v2/recv_v2, remove-other-ranks, dist-to-dense, the
// PIR micro-batch accumulation); each rank's stage program is then split into the job programs
// and the job list of the schedule by the new IR's pipeline pass
// (newir/auto_parallel/pipeline_split.h, Paddle's `_partial_pir_programs`). Eager1F1B has no PIR
// pass in Paddle (static/pir_pass.py pipeline_pass takes FThenB, 1F1B and VPP): its programs are
// FThenB's (pass_utils.py `_program_for_fthenb_and_1f1b` serves FThenB, 1F1B and Eager1F1B alike)
// and its job list the legacy one. The written bundle's send/receive order is then checked before
// anything runs (corpus/bundle_comm_check.h), and the buffer depth its plans need recorded as
// bundle.json's `p2p`, as the legacy build records its own.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/passes/strategy.h"
#include "oldir/program.h"

namespace irm::diff {

struct PirPipelineOptions {
  oldir::passes::Strategy strategy;  // its pipeline: schedule_mode, accumulate_steps, vpp_degree
  // Test-only: stage 0's first forward send (of its first data- and model-parallel rank) names
  // the sending rank itself as its peer, as a stage rule that read the wrong stage would.
  bool send_to_the_wrong_peer = false;
  std::function<void(const std::string& line)> progress;  // one line per rank
};

// The serial program the stages are made from.
struct PirPipelineFromSerial {
  std::string serial_pir_dir;  // the translated serial bundle (one rank, startup and main)
  // The legacy serial main program, whose parameters give the layer units (FindLayerUnits).
  const oldir::Program* legacy_serial_main = nullptr;
  // The bundle's feeds (a step's whole batch), fetches, steps, seed and micro_batches.
  const oldir::Bundle* like = nullptr;
  int64_t micro_batch_size = 1;
};

// Writes the pir bundle of `serial` into `out_dir`. Returns the communication check's finding
// when the plans cannot complete under any point-to-point model (naming the op, rank and peer), ""
// when they can. Errors: FindLayerUnits', MegatronPlacementsOver's (a split dim mp does not
// divide), ParallelizePipeline's, SplitPipelineProgram's (located at "the stage program of rank
// N"), MakeJobList's, kInternal for the wrong-peer fault on a stage that sends nothing forward,
// kIoError when writing fails.
StatusOr<std::string> WritePirPipelineFromSerial(const PirPipelineFromSerial& serial,
                                                 const PirPipelineOptions& options,
                                                 const std::string& out_dir);

}  // namespace irm::diff
