// Shard annotations: which parameters and inputs of a serial program are distributed, and how.
// Paddle's auto-parallel starts from a serial program whose parameters and inputs the user wraps
// in `shard_tensor(x, mesh, placements)` (python/paddle/distributed/auto_parallel/api.py); here
// the same decisions come as data, from an annotation file or from a standard strategy, and
// AnnotateShards puts the `dist_op.shard_tensor` ops into the program. spmd-completion, then
// lower-reshard and dist-to-dense per rank, do the rest (passes.h).
//
// The annotation file (JSON):
//   {"mesh": {"shape": [2], "process_ids": [0, 1], "dim_names": ["mp"]},
//    "values": {"linear_0.w_0": {"placements": ["Replicate()", "Shard(1)"]},
//               "x": {"dims_mapping": [0, -1]}}}
// `placements` has one entry per mesh dim (Paddle's order: Shard(d) puts tensor dim d on that
// mesh dim); `dims_mapping` one per tensor dim (the mesh dim it lies on, -1 for none). A value is
// named by its legacy var name: a `builtin.parameter`'s parameter_name or a `pd_op.data`'s name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/dist_attr.h"
#include "newir/program.h"

namespace irm::newir {

// How one value is laid out: either a dims mapping (one entry per tensor dim) or, when
// `by_placements`, the tensor dim each mesh dim shards (-1: Replicate()).
struct ValueAnnotation {
  bool by_placements = false;
  std::vector<int64_t> dims_mapping;
  std::vector<int64_t> shard_dim_of_mesh_dim;
  std::string source;  // where it was read: "a.json: /values/x", for diagnostics
};

struct ShardAnnotations {
  ProcessMesh mesh;
  std::map<std::string, ValueAnnotation> values;  // by legacy var name
};

// Parses an annotation file's text. Every error is located by `file` and a JSON pointer.
StatusOr<ShardAnnotations> ParseShardAnnotations(std::string_view text, const std::string& file);

// Data parallelism: a 1-D mesh "dp" of ranks 0..degree-1 and each of `feeds` sharded along its
// first (batch) dim, the rest replicated (Paddle's DP: shard_dataloader shards the batch).
ShardAnnotations DataParallelAnnotations(int64_t degree, const std::vector<std::string>& feeds);

// Checks the mesh (shape and process ids agree, ids distinct and not negative, names one per
// mesh dim) and puts a dist_op.shard_tensor after every builtin.parameter and pd_op.data of the
// top block that `annotations` names, every reader then reading the distributed value. Fails,
// located at the annotation's source and the op, when a layout does not fit the value (wrong
// length, a mesh or tensor dim out of range, a mesh dim used twice, a piece that would be empty)
// and when an annotation names a value the program does not have.
Status AnnotateShards(Program& program, const ShardAnnotations& annotations);

// The dims mapping `annotation` gives a tensor of `rank` dims on `mesh`, checked as above.
StatusOr<std::vector<int64_t>> DimsMappingOf(const ValueAnnotation& annotation, size_t rank,
                                             const ProcessMesh& mesh);

}  // namespace irm::newir
