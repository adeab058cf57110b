// The pd_dist consistency checks: meshes, tensor dist attributes, dist tensor types, op_dist_attr.
#include "newir/verify_dist.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace irm::newir {
namespace {

const char* Plural(size_t n, const char* one, const char* many) { return n == 1 ? one : many; }

// The rank of a value of type `type` when it is a tensor (dense, dist, array, selected rows).
std::optional<size_t> RankOf(const Type& type) {
  switch (type.kind()) {
    case TypeKind::kDenseTensor:
    case TypeKind::kDistDenseTensor:
    case TypeKind::kDenseTensorArray:
    case TypeKind::kSelectedRows:
      return type.dims().size();
    default:
      return std::nullopt;
  }
}

// What placements[m] must be, from dims_mapping and the partial status.
Placement ExpectedPlacement(const TensorDistAttr& dist, int64_t mesh_dim) {
  for (size_t d = 0; d < dist.dims_mapping.size(); ++d) {
    if (dist.dims_mapping[d] == mesh_dim) return Placement::Shard(static_cast<int64_t>(d));
  }
  auto partial = dist.partial_status.find(mesh_dim);
  if (partial != dist.partial_status.end()) return Placement::Partial(partial->second);
  return Placement::Replicate();
}

// One entry (`label`, e.g. "operand(0)") of an op_dist_attr against a value of type `type`.
void CheckEntry(const Attribute& entry, const Type& type, const std::string& label,
                std::vector<std::string>& problems) {
  if (type.IsNull()) return;  // an absent optional result: its entry may be anything
  std::vector<std::string> inner;
  if (type.kind() == TypeKind::kVector) {
    const AttributeSpan* items = entry.AsArray();
    if (items == nullptr) {
      problems.push_back(
          fmt::format("{} must be an array of tensor dist attributes for {}, found {}", label,
                      type.ToString(), AttrKindName(entry.kind())));
      return;
    }
    if (items->size() != type.elements().size()) {
      problems.push_back(fmt::format("{} has {} {} but {} has {} {}", label, items->size(),
                                     Plural(items->size(), "entry", "entries"), type.ToString(),
                                     type.elements().size(),
                                     Plural(type.elements().size(), "element", "elements")));
      return;
    }
    for (size_t i = 0; i < items->size(); ++i) {
      const TensorDistAttr* dist = (*items)[i].AsTensorDist();
      const std::string item_label = fmt::format("{}[{}]", label, i);
      if (dist == nullptr) {
        problems.push_back(fmt::format("{} must be a tensor dist attribute, found {}", item_label,
                                       AttrKindName((*items)[i].kind())));
        continue;
      }
      inner.clear();
      CheckTensorDistAttr(*dist, RankOf(type.elements()[i]), inner);
      for (std::string& p : inner) problems.push_back(fmt::format("{}: {}", item_label, p));
    }
    return;
  }
  const TensorDistAttr* dist = entry.AsTensorDist();
  if (dist == nullptr) {
    problems.push_back(fmt::format("{} must be a tensor dist attribute for {}, found {}", label,
                                   type.ToString(), AttrKindName(entry.kind())));
    return;
  }
  CheckTensorDistAttr(*dist, RankOf(type), inner);
  for (std::string& p : inner) problems.push_back(fmt::format("{}: {}", label, p));
}

// Whether every process of `inner` is one of `outer`'s: the same mesh, or a sub-mesh of it.
bool WithinMesh(const ProcessMesh& inner, const ProcessMesh& outer) {
  for (int64_t id : inner.process_ids) {
    if (std::find(outer.process_ids.begin(), outer.process_ids.end(), id) ==
        outer.process_ids.end()) {
      return false;
    }
  }
  return true;
}

// An entry (a tensor dist attribute, or an array of them) whose mesh holds a process the op's
// mesh lacks: the op would run where its operand or result does not live.
void CheckEntryMesh(const Attribute& entry, const ProcessMesh& op_mesh, const std::string& label,
                    std::vector<std::string>& problems) {
  if (const AttributeSpan* items = entry.AsArray()) {
    for (size_t i = 0; i < items->size(); ++i) {
      CheckEntryMesh((*items)[i], op_mesh, fmt::format("{}[{}]", label, i), problems);
    }
    return;
  }
  const TensorDistAttr* dist = entry.AsTensorDist();
  if (dist == nullptr || dist->mesh.process_ids.empty() || op_mesh.process_ids.empty()) return;
  std::vector<std::string> own;
  CheckProcessMesh(dist->mesh, own);
  if (!own.empty() || WithinMesh(dist->mesh, op_mesh)) return;
  problems.push_back(
      fmt::format("{} lies on mesh {}, which is neither the op's mesh {} nor a "
                  "sub-mesh of it",
                  label, dist->mesh.ToString(), op_mesh.ToString()));
}

}  // namespace

void CheckProcessMesh(const ProcessMesh& mesh, std::vector<std::string>& problems) {
  if (mesh.shape.empty()) {
    problems.push_back("the mesh has no dims");
    return;
  }
  // Saturates instead of overflowing: no process_ids list can be that long anyway.
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() / 2;
  int64_t positions = 1;
  bool positive = true;
  for (size_t m = 0; m < mesh.shape.size(); ++m) {
    const int64_t s = mesh.shape[m];
    if (s <= 0) {
      problems.push_back(fmt::format("mesh dim {} has size {}; mesh dims must be positive", m, s));
      positive = false;
      continue;
    }
    positions = positions > kHuge / s ? kHuge : positions * s;
  }
  // No ids at all means "not recorded": early-2024 prints of dist types left them out.
  if (positive && !mesh.process_ids.empty() &&
      static_cast<int64_t>(mesh.process_ids.size()) != positions) {
    problems.push_back(fmt::format(
        "the mesh has {} process {} but its shape [{}] holds {}", mesh.process_ids.size(),
        Plural(mesh.process_ids.size(), "id", "ids"), fmt::join(mesh.shape, ","), positions));
  }
  std::vector<int64_t> ids = mesh.process_ids;
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    problems.push_back(fmt::format("process id {} appears twice in the mesh", *dup));
  }
  if (!mesh.dim_names.empty() && mesh.dim_names.size() != mesh.shape.size()) {
    problems.push_back(fmt::format("the mesh has {} dim {} but {} {}", mesh.dim_names.size(),
                                   Plural(mesh.dim_names.size(), "name", "names"),
                                   mesh.shape.size(), Plural(mesh.shape.size(), "dim", "dims")));
  }
}

void CheckTensorDistAttr(const TensorDistAttr& dist, std::optional<size_t> rank,
                         std::vector<std::string>& problems) {
  CheckProcessMesh(dist.mesh, problems);
  const auto mesh_rank = static_cast<int64_t>(dist.mesh.shape.size());
  if (rank && dist.dims_mapping.size() != *rank) {
    problems.push_back(fmt::format("dims_mapping has {} {} but the tensor has rank {}",
                                   dist.dims_mapping.size(),
                                   Plural(dist.dims_mapping.size(), "entry", "entries"), *rank));
  }
  // sharded_by[m]: the tensor dim mesh dim m shards, or -1.
  std::vector<int64_t> sharded_by(dist.mesh.shape.size(), -1);
  for (size_t d = 0; d < dist.dims_mapping.size(); ++d) {
    const int64_t m = dist.dims_mapping[d];
    if (m == -1) continue;
    if (m < -1 || m >= mesh_rank) {
      problems.push_back(fmt::format(
          "dims_mapping[{}] = {} is not a mesh dim (the mesh has {} {}; -1 means not sharded)", d,
          m, mesh_rank, Plural(mesh_rank, "dim", "dims")));
      continue;
    }
    if (sharded_by[m] >= 0) {
      problems.push_back(fmt::format("mesh dim {} shards both tensor dim {} and tensor dim {}", m,
                                     sharded_by[m], d));
      continue;
    }
    sharded_by[m] = static_cast<int64_t>(d);
  }
  for (const auto& [m, reduce] : dist.partial_status) {
    if (m < 0 || m >= mesh_rank) {
      problems.push_back(fmt::format("partial mesh dim {} is not a mesh dim (the mesh has {} {})",
                                     m, mesh_rank, Plural(mesh_rank, "dim", "dims")));
    } else if (sharded_by[m] >= 0) {
      problems.push_back(fmt::format("mesh dim {} is partial ({}) and also shards tensor dim {}", m,
                                     ReduceTypeName(reduce), sharded_by[m]));
    }
  }
  if (!dist.placements) return;
  const std::vector<Placement>& placements = *dist.placements;
  if (static_cast<int64_t>(placements.size()) != mesh_rank) {
    problems.push_back(fmt::format("placements has {} {} but the mesh has {} {}", placements.size(),
                                   Plural(placements.size(), "entry", "entries"), mesh_rank,
                                   Plural(mesh_rank, "dim", "dims")));
    return;
  }
  for (int64_t m = 0; m < mesh_rank; ++m) {
    const Placement expected = ExpectedPlacement(dist, m);
    if (placements[m] != expected) {
      problems.push_back(fmt::format(
          "placements[{}] is {} but dims_mapping and the partial status make mesh dim {} {}", m,
          placements[m].ToString(), m, expected.ToString()));
    }
  }
}

void CheckDistTensorType(const Type& type, std::vector<std::string>& problems) {
  if (type.kind() != TypeKind::kDistDenseTensor || type.dist_attr() == nullptr) return;
  const TensorDistAttr& dist = *type.dist_attr();
  const std::vector<int64_t>& dims = type.dims();
  const std::vector<int64_t>& local = type.local_dims();
  const size_t before = problems.size();
  CheckTensorDistAttr(dist, dims.size(), problems);
  // Local dims only make sense against a consistent mapping.
  if (problems.size() != before) return;
  if (local.size() != dims.size()) {
    problems.push_back(fmt::format("local dims have {} {} but the tensor has rank {}", local.size(),
                                   Plural(local.size(), "entry", "entries"), dims.size()));
    return;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t global = dims[d];
    if (global < 0) continue;
    const int64_t m = dist.dims_mapping[d];
    if (m < 0) {
      if (local[d] != global) {
        problems.push_back(
            fmt::format("local dim {} is {} but tensor dim {} is not sharded and has "
                        "size {}",
                        d, local[d], d, global));
      }
      continue;
    }
    const int64_t s = dist.mesh.shape[m];
    if (global % s == 0) {
      if (local[d] != global / s) {
        problems.push_back(
            fmt::format("local dim {} is {} but dim {} (size {}) sharded over mesh "
                        "dim {} (size {}) gives {}",
                        d, local[d], d, global, m, s, global / s));
      }
    } else if (local[d] < 0 || local[d] > (global + s - 1) / s) {
      problems.push_back(
          fmt::format("local dim {} is {} but dim {} (size {}) sharded unevenly over "
                      "mesh dim {} (size {}) gives at most {}",
                      d, local[d], d, global, m, s, (global + s - 1) / s));
    }
  }
}

void CheckOperationDistAttr(const Operation& op, const OperationDistAttr& dist,
                            std::vector<std::string>& problems) {
  const size_t before = problems.size();
  CheckProcessMesh(dist.mesh, problems);
  const bool mesh_ok = problems.size() == before;
  if (dist.chunk_id < -1) {
    problems.push_back(
        fmt::format("chunk_id is {}; it must be -1 (no chunk) or a chunk index", dist.chunk_id));
  }
  const bool operands_match = dist.operands.size() == op.num_operands() ||
                              (dist.operands.empty() && op.name() == "dist_op.shard_tensor");
  if (!operands_match) {
    problems.push_back(fmt::format("{} operand {} for {} {}", dist.operands.size(),
                                   Plural(dist.operands.size(), "entry", "entries"),
                                   op.num_operands(),
                                   Plural(op.num_operands(), "operand", "operands")));
  } else {
    for (size_t i = 0; i < dist.operands.size(); ++i) {
      const Value* v = op.operand(i);
      if (v == nullptr) continue;  // an absent optional operand: its entry may be anything
      CheckEntry(dist.operands[i], v->type(), fmt::format("operand({})", i), problems);
    }
  }
  // Paddle's OperationDistAttribute ties every operand and result to the op's mesh (a sub-mesh
  // for the MoE ops). A reshard is the exception: across meshes its operand lies on the source
  // mesh and the op on the destination's (dist_op.cc, ReshardOp::Build).
  // A malformed mesh is reported as such, not again as every entry's mismatch.
  if (mesh_ok && op.name() != "dist_op.reshard") {
    for (size_t i = 0; i < dist.operands.size(); ++i) {
      CheckEntryMesh(dist.operands[i], dist.mesh, fmt::format("operand({})", i), problems);
    }
    for (size_t i = 0; i < dist.results.size(); ++i) {
      CheckEntryMesh(dist.results[i], dist.mesh, fmt::format("result({})", i), problems);
    }
  }
  if (dist.results.size() != op.num_results()) {
    problems.push_back(fmt::format("{} result {} for {} {}", dist.results.size(),
                                   Plural(dist.results.size(), "entry", "entries"),
                                   op.num_results(),
                                   Plural(op.num_results(), "result", "results")));
  } else {
    for (size_t i = 0; i < dist.results.size(); ++i) {
      CheckEntry(dist.results[i], op.result(i)->type(), fmt::format("result({})", i), problems);
    }
  }
}

}  // namespace irm::newir
