// Parallelize: a serial new-IR training program (and the startup program that initialises its
// parameters) plus shard annotations -> every rank's dense programs. The main program is
// annotated (shard_annotation.h), completed (spmd-completion), then for each rank lowered
// (lower-reshard), stripped of the other ranks' ops (remove-other-ranks) and made dense
// (dist-to-dense), as Paddle's PIR engine does per rank (apply_partition_pass, reshard_pass,
// remove_other_rank_op_pass, then the dense program). Each rank's startup program
// initialises its local shards: the initialiser of a sharded parameter makes the local shape, and
// the rank's shards list where its piece lies in the serial tensor, so that the runtime draws the
// serial numbers for it (docs/bundle.md "shards.json"), as the legacy tensor-parallel pass does.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "newir/auto_parallel/shard_annotation.h"
#include "newir/program.h"

namespace irm::newir {

// Where a rank's piece of a sharded parameter lies in the serial tensor.
struct ParameterShard {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offsets;
  bool operator==(const ParameterShard&) const = default;
};

struct RankPrograms {
  Program main;
  Program startup;
  std::map<std::string, ParameterShard> shards;  // by parameter name; only sharded ones
};

struct ParallelPrograms {
  int64_t world_size = 0;
  // ring id -> ranks, ring 0 the whole world (process_groups.h).
  std::map<int64_t, std::vector<int64_t>> process_groups;
  std::vector<RankPrograms> ranks;
};

struct ParallelizeOptions {
  // Ranks in the world; 0: the largest process id of the annotations' mesh plus one. A mesh that
  // names a rank outside the world is refused.
  int64_t world_size = 0;
};

// Makes the initialiser of each parameter a completed `plan` shards on a mesh holding `rank`
// produce the rank's piece in `startup`, and returns the pieces by parameter name (the bundle's
// shards). Parameters on meshes without the rank are left alone. Errors: an initialiser whose
// shape cannot be made local (below), a startup that does not set the parameter.
StatusOr<std::map<std::string, ParameterShard>> LocaliseShardedParameters(const Program& plan,
                                                                          int64_t rank,
                                                                          Program& startup);

// Fails, located, when the annotations do not fit the program (shard_annotation.h), when
// completion refuses an op, when a reshard cannot be lowered, or when a sharded parameter's
// initialiser in `startup` is not one whose shape can be made local (pd_op.full, or pd_op.uniform
// / pd_op.gaussian with a pd_op.full_int_array shape read by it alone).
StatusOr<ParallelPrograms> Parallelize(const Program& serial_main, const Program& serial_startup,
                                       const ShardAnnotations& annotations,
                                       const ParallelizeOptions& options = {});

}  // namespace irm::newir
