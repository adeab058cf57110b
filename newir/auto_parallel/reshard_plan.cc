// Paddle's choice of reshard functions, per rank (reshard_plan.h).
#include "newir/auto_parallel/reshard_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "newir/auto_parallel/shard_layout.h"

namespace irm::newir {
namespace {

using Kind = ReshardStep::Kind;

Status Unsupported(std::string message) {
  return Status(StatusCode::kInvalid, Location{}, std::move(message));
}

std::optional<int64_t> PositionIn(const std::vector<int64_t>& ids, int64_t rank) {
  const auto it = std::find(ids.begin(), ids.end(), rank);
  if (it == ids.end()) return std::nullopt;
  return it - ids.begin();
}

// The one sharded tensor dim of a 1-D layout, or -1.
int64_t ShardedDim(const TensorDistAttr& dist) {
  for (size_t i = 0; i < dist.dims_mapping.size(); ++i) {
    if (dist.dims_mapping[i] >= 0) return static_cast<int64_t>(i);
  }
  return -1;
}

bool SameLayout(const TensorDistAttr& a, const TensorDistAttr& b) {
  return a.dims_mapping == b.dims_mapping && a.partial_status == b.partial_status;
}

std::string Describe(const TensorDistAttr& dist) {
  std::string partial;
  for (const auto& [dim, type] : dist.partial_status) {
    partial += fmt::format(", partial({},{})", dim, ReduceTypeName(type));
  }
  return fmt::format("dims_mapping [{}]{}", fmt::join(dist.dims_mapping, ","), partial);
}

class Planner {
 public:
  Planner(const std::vector<int64_t>& global_dims, int64_t rank)
      : global_dims_(global_dims), rank_(rank) {}

  std::vector<ReshardStep>& steps() { return steps_; }

  // One collective step over `group` (which holds the rank).
  Status Add(Kind kind, std::vector<int64_t> group, int64_t axis, int64_t in_axis = -1,
             ReduceType reduce = ReduceType::kSum) {
    ReshardStep step;
    step.kind = kind;
    step.position = *PositionIn(group, rank_);
    step.group = std::move(group);
    step.axis = axis;
    step.in_axis = in_axis;
    step.reduce = reduce;
    step.global_dims = global_dims_;
    const int64_t n = static_cast<int64_t>(step.group.size());
    for (int64_t dim : {axis, in_axis}) {
      if (dim < 0) continue;
      const int64_t size = global_dims_[dim];
      // A dynamic dim (a batch of -1) is cut and gathered as if the mesh divided it: the runtime
      // gives every data-parallel replica as many rows, and its size is not known to pad it.
      if (size < 0 && (kind == Kind::kSToR || kind == Kind::kRToS)) continue;
      if (size < 0) {
        return Unsupported(fmt::format("{} over dim {} needs a static size, found -1",
                                       ReshardStepKindName(kind), dim));
      }
      if (kind == Kind::kSToS && size % n != 0) {
        return Unsupported(fmt::format(
            "s->s needs dim {} ({}) divisible by the {} ranks of the mesh", dim, size, n));
      }
      IRM_RETURN_IF_ERROR(PieceOf(size, n, step.position).status());
    }
    steps_.push_back(std::move(step));
    return Status::Ok();
  }

  Status OneDim(const TensorDistAttr& cur, const TensorDistAttr& dst) {
    const std::vector<int64_t>& group = dst.mesh.process_ids;
    const int64_t in_axis = ShardedDim(cur);
    const int64_t out_axis = ShardedDim(dst);
    if (!cur.partial_status.empty()) {
      if (!dst.partial_status.empty()) {
        return Unsupported(fmt::format("no reshard from {} to {}", Describe(cur), Describe(dst)));
      }
      const ReduceType reduce = cur.partial_status.begin()->second;
      if (out_axis < 0) return Add(Kind::kPToR, group, -1, -1, reduce);
      if (reduce != ReduceType::kSum) {
        return Unsupported(fmt::format("p->s reduces by sum only, the partial status is {}",
                                       ReduceTypeName(reduce)));
      }
      return Add(Kind::kPToS, group, out_axis);
    }
    if (!dst.partial_status.empty()) {
      return Unsupported(
          fmt::format("r->p is not supported (from {} to {})", Describe(cur), Describe(dst)));
    }
    if (in_axis < 0) return Add(Kind::kRToS, group, out_axis);
    if (out_axis < 0) return Add(Kind::kSToR, group, in_axis);
    return Add(Kind::kSToS, group, out_axis, in_axis);
  }

  Status NDim(TensorDistAttr cur, const TensorDistAttr& dst) {
    const ProcessMesh& mesh = dst.mesh;
    const std::vector<int64_t> coordinate = *MeshCoordinate(mesh, rank_);
    int64_t first_diff = -1;
    for (size_t i = cur.dims_mapping.size(); i-- > 0;) {
      if (cur.dims_mapping[i] != dst.dims_mapping[i]) {
        first_diff = static_cast<int64_t>(i);
        break;
      }
    }
    for (const auto& [mesh_dim, reduce] : std::map(cur.partial_status)) {
      if (dst.partial_status.contains(mesh_dim)) continue;
      IRM_RETURN_IF_ERROR(
          Add(Kind::kPToR, SubMeshAlong(mesh, mesh_dim, coordinate), -1, -1, reduce));
      cur.partial_status.erase(mesh_dim);
    }
    for (int64_t i = first_diff; i >= 0; --i) {
      const int64_t in = cur.dims_mapping[i];
      if (in < 0 || in == dst.dims_mapping[i]) continue;
      IRM_RETURN_IF_ERROR(Add(Kind::kSToR, SubMeshAlong(mesh, in, coordinate), i));
      cur.dims_mapping[i] = -1;
    }
    for (const auto& [mesh_dim, reduce] : dst.partial_status) {
      if (!cur.partial_status.contains(mesh_dim)) {
        return Unsupported(fmt::format("r->p is not supported (partial({},{}) in {})", mesh_dim,
                                       ReduceTypeName(reduce), Describe(dst)));
      }
    }
    for (int64_t i = first_diff; i >= 0; --i) {
      const int64_t out = dst.dims_mapping[i];
      if (cur.dims_mapping[i] == out) continue;
      IRM_RETURN_IF_ERROR(Add(Kind::kRToS, SubMeshAlong(mesh, out, coordinate), i));
      cur.dims_mapping[i] = out;
    }
    return Status::Ok();
  }

 private:
  const std::vector<int64_t>& global_dims_;
  int64_t rank_;
  std::vector<ReshardStep> steps_;
};

}  // namespace

const char* ReshardStepKindName(ReshardStep::Kind kind) {
  switch (kind) {
    case Kind::kPToR:
      return "p->r";
    case Kind::kPToS:
      return "p->s";
    case Kind::kRToS:
      return "r->s";
    case Kind::kSToR:
      return "s->r";
    case Kind::kSToS:
      return "s->s";
    case Kind::kSend:
      return "send";
    case Kind::kRecv:
      return "recv";
  }
  return "?";
}

StatusOr<std::vector<ReshardStep>> PlanReshard(const std::vector<int64_t>& global_dims,
                                               const TensorDistAttr& src, const TensorDistAttr& dst,
                                               int64_t rank) {
  if (src.dims_mapping.size() != global_dims.size() ||
      dst.dims_mapping.size() != global_dims.size()) {
    return Unsupported(fmt::format("the dims_mappings ({} and {} entries) do not match the {} dims",
                                   src.dims_mapping.size(), dst.dims_mapping.size(),
                                   global_dims.size()));
  }
  Planner planner(global_dims, rank);
  TensorDistAttr cur = src;
  if (src.mesh != dst.mesh) {
    if (src.mesh.shape != dst.mesh.shape) {
      return Unsupported(fmt::format("no reshard between meshes of shapes [{}] and [{}]",
                                     fmt::join(src.mesh.shape, ","),
                                     fmt::join(dst.mesh.shape, ",")));
    }
    const std::vector<int64_t>& from = src.mesh.process_ids;
    const std::vector<int64_t>& to = dst.mesh.process_ids;
    const std::optional<int64_t> sends = PositionIn(from, rank);
    const std::optional<int64_t> receives = PositionIn(to, rank);
    if (sends && receives && *sends != *receives) {
      return Unsupported(fmt::format(
          "rank {} sits at position {} of the source mesh and {} of the destination mesh: a "
          "cross-mesh reshard pairs ranks by position",
          rank, *sends, *receives));
    }
    cur.mesh = dst.mesh;
    cur.placements.reset();
    if (sends && !receives) {
      ReshardStep send;
      send.kind = Kind::kSend;
      send.group = {rank, to[*sends]};
      send.position = 0;
      send.global_dims = global_dims;
      planner.steps().push_back(std::move(send));
      return std::move(planner.steps());
    }
    if (receives && !sends) {
      ReshardStep recv;
      recv.kind = Kind::kRecv;
      recv.group = {from[*receives], rank};
      recv.position = 1;
      recv.global_dims = global_dims;
      recv.received = cur;
      IRM_RETURN_IF_ERROR(LocalDimsOn(global_dims, cur, rank).status());
      planner.steps().push_back(std::move(recv));
    }
  }
  if (!MeshCoordinate(dst.mesh, rank) || SameLayout(cur, dst)) {
    return std::move(planner.steps());
  }
  if (dst.mesh.shape.size() == 1) {
    IRM_RETURN_IF_ERROR(planner.OneDim(cur, dst));
  } else {
    IRM_RETURN_IF_ERROR(planner.NDim(cur, dst));
  }
  return std::move(planner.steps());
}

}  // namespace irm::newir
