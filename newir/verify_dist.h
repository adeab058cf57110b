// Consistency checks of the pd_dist metadata (dist_attr.h): process meshes, tensor dist attributes,
// dist dense tensor types and the op_dist_attr of an op against the op's operands and results.
// Each check appends one sentence per problem (no location: the caller knows where the metadata
// sits) and never stops at the first, so a report can list everything at once. The verifier
// (verifier.h) runs them on every value type and dist attribute of a program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "newir/attributes.h"
#include "newir/dist_attr.h"
#include "newir/operation.h"
#include "newir/types.h"

namespace irm::newir {

// Every mesh dim is positive; process_ids, unless empty (not recorded: early-2024 prints of dist
// types leave them out), has one id per mesh position (the product of the shape) and no id twice;
// dim_names, when given, name every mesh dim.
void CheckProcessMesh(const ProcessMesh& mesh, std::vector<std::string>& problems);

// The mesh, then: dims_mapping has `rank` entries (when the rank is known); each entry is -1 or a
// mesh dim; no mesh dim shards two tensor dims; partial mesh dims are mesh dims and shard
// nothing; placements, when present, have one entry per mesh dim saying what dims_mapping and the
// partial status say (Shard(dim=d) for the mesh dim that shards tensor dim d, Partial for a
// partial mesh dim, Replicate otherwise).
void CheckTensorDistAttr(const TensorDistAttr& dist, std::optional<size_t> rank,
                         std::vector<std::string>& problems);

// A pd_dist.tensor type: its dist attribute against its global dims, and its local dims: an
// unsharded dim keeps its size; a dim sharded over a mesh dim of size s is dim/s when s divides it,
// and at most ceil(dim/s) when it does not (Paddle records the local dims then); dynamic dims pass.
// Other kinds of types have nothing to check.
void CheckDistTensorType(const Type& type, std::vector<std::string>& problems);

// `op`'s op_dist_attr: its mesh and chunk_id, one operand entry per operand and one result entry
// per result (dist_op.shard_tensor may have no operand entries: Paddle builds it so), each entry
// shaped like its value (a tensor dist attribute for a tensor, an array of them for a vector,
// anything for an empty slot or a null type) with dims_mapping as long as the value's rank.
void CheckOperationDistAttr(const Operation& op, const OperationDistAttr& dist,
                            std::vector<std::string>& problems);

}  // namespace irm::newir
