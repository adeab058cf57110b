// The distribution strategy the legacy passes apply, as JSON with the field names of Paddle's
// auto-parallel Strategy (python/paddle/distributed/auto_parallel/constants.py): the degrees of
// the data-, model- and pipeline-parallel axes, `pipeline`, `gradient_merge`, `fused_passes` and
// `dp_optimization` (the fused all-reduce and its bucket size, `fuse_grad_size_in_MB`). Defaults
// are Paddle's. Every field is parsed and checked; a field whose pass does not exist yet is
// refused when set to anything but its default, so nothing in a strategy is silently ignored.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace irm::oldir::passes {

// constants.py: PIPELINE.
struct PipelineStrategy {
  bool enable = false;
  std::string schedule_mode = "1F1B";  // FThenB, 1F1B, Eager1F1B, VPP, ZBH1, ZBVPP
  int accumulate_steps = 1;
  int vpp_degree = 1;
  bool split_backward = false;
  bool enable_send_recv_overlap = false;
  bool operator==(const PipelineStrategy&) const = default;
};

// constants.py: GRADIENT_MERGE.
struct GradientMergeStrategy {
  bool enable = false;
  int k_steps = 1;
  bool avg = true;
  bool operator==(const GradientMergeStrategy&) const = default;
};

// constants.py: DP_OPTIMIZATION. With `enable` and `fuse_all_reduce_ops`, the gradients'
// all-reduces are fused into buckets of at most `fuse_grad_size_in_MB` (2^20 bytes) each.
struct DpOptimizationStrategy {
  bool enable = false;
  bool fuse_all_reduce_ops = true;
  double fuse_grad_size_in_MB = 32;  // Paddle's name; fractions allowed (small test models)
  // With gradient merge: all-reduce the merged gradients once per update instead of every
  // micro-step's gradients in backward (parallelizer_v2.py, _apply_post_optimization). Parsed so
  // that asking for it is refused: only the default (sync in backward) is implemented.
  bool gradient_sync_after_accumulate = false;
  bool operator==(const DpOptimizationStrategy&) const = default;
};

// constants.py: FUSED_PASSES (the new-IR fusion passes to run by name). Parsed so that a strategy
// naming passes is refused rather than run without them.
struct FusedPassesStrategy {
  bool enable = false;
  std::vector<std::string> fused_passes_list;
  bool operator==(const FusedPassesStrategy&) const = default;
};

struct Strategy {
  int dp_degree = 1;
  int mp_degree = 1;
  int pp_degree = 1;
  PipelineStrategy pipeline;
  GradientMergeStrategy gradient_merge;
  DpOptimizationStrategy dp_optimization;
  FusedPassesStrategy fused_passes;

  int world_size() const { return dp_degree * mp_degree * pp_degree; }
  // Whether the data-parallel gradients are synchronised in fused buckets.
  bool fuse_all_reduce() const {
    return dp_optimization.enable && dp_optimization.fuse_all_reduce_ops;
  }
  bool operator==(const Strategy&) const = default;
};

// Parses strategy JSON text. `file` names the input in diagnostics. kParseError (file:line:col or
// byte for syntax, file + JSON pointer for the structure: a wrong type, an unknown field),
// kInvalidArgument (file + pointer) for a value out of range (a degree below 1, a `world_size`
// that is not dp*mp*pp, an unknown schedule), kUnimplemented for a field set to a value no pass
// implements yet ("... is not supported yet").
StatusOr<Strategy> ParseStrategyJson(std::string_view text, const std::string& file);

// Reads and parses a strategy file (kNotFound / kIoError when it cannot be read).
StatusOr<Strategy> ReadStrategyFile(const std::string& path);

// Every field, defaults included, plus `world_size`: what a bundle's `strategy` records.
// ParseStrategyJson(StrategyToJson(s).dump()) == s for every strategy it accepts.
nlohmann::json StrategyToJson(const Strategy& strategy);

}  // namespace irm::oldir::passes
