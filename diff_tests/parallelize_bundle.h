// A translated serial pir bundle made distributed by the new IR's auto-parallel passes: what
// `ir-migrate parallelize` does, as a library so that the new-IR engine's tests and the three-way
// check (pir_bundle_compare.h) drive the same code. The layouts come from an annotation file or
// from the strategy's standard placements (newir/auto_parallel/strategy_placements.h: batch
// sharding for dp, Megatron for mp, a [dp, mp] mesh for both); the feeds the serial bundle splits
// by batch are the ones sharded on the dp axis. The written bundle records the strategy (its
// dp_degree gives each replica its rows in `run --ranks N`) and the process groups, and each
// rank's shards.json its sharded parameters.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "newir/auto_parallel/parallelize.h"
#include "newir/auto_parallel/shard_annotation.h"
#include "oldir/bundle.h"
#include "oldir/passes/strategy.h"

namespace irm::diff {

struct ParallelizedBundle {
  oldir::Bundle bundle;  // bundle.json as written (ranks with their files and shards)
  newir::ParallelPrograms programs;
};

// Reads the serial pir bundle in `serial_dir` (one rank, a startup and a main program, no plan)
// and parallelizes it. `strategy_file` names the strategy in diagnostics. `annotations` unset:
// the strategy's standard placements. Errors, located: not a serial pir bundle
// (kInvalidArgument at the folder); a pipeline (pp_degree > 1: kUnimplemented at the strategy,
// with a note); a mesh naming a rank the strategy's world lacks, or covering fewer ranks than the
// world has (kInvalidArgument at the strategy); the placements', annotation's and passes' errors
// (the op and the value).
StatusOr<ParallelizedBundle> ParallelizeBundle(
    const std::string& serial_dir, const oldir::passes::Strategy& strategy,
    const std::string& strategy_file,
    const std::optional<newir::ShardAnnotations>& annotations = std::nullopt);

// Writes `made` as a pir bundle into `dir` (a new folder, staged: nothing appears on error).
Status WriteParallelizedBundle(const ParallelizedBundle& made, const std::string& dir);

}  // namespace irm::diff
