// Parallelize (parallelize.h).
#include "newir/auto_parallel/parallelize.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "newir/attributes.h"
#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/process_groups.h"
#include "newir/auto_parallel/remove_other_ranks.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/parser.h"
#include "newir/printer.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

// Programs are copied through their text, which round-trips every op, attribute and type.
StatusOr<Program> Copy(const Program& program) { return ParseProgram(PrintProgram(program)); }

StatusOr<Program> Completed(const Program& serial, const ShardAnnotations& annotations) {
  IRM_ASSIGN_OR_RETURN(Program program, Copy(serial));
  IRM_RETURN_IF_ERROR(AnnotateShards(program, annotations));
  IRM_RETURN_IF_ERROR(CompleteSpmd(program).status());
  IRM_RETURN_IF_ERROR(VerifyProgram(program));
  return program;
}

// The sharded parameters of a completed program: name -> its layout (the shard_tensor's).
std::map<std::string, TensorDistAttr> ShardedParameters(const Program& program) {
  std::map<std::string, TensorDistAttr> out;
  for (Operation* op : program.block().ops()) {
    if (op->name() != "dist_op.shard_tensor") continue;
    Operation* producer = op->operand(0)->defining_op();
    if (producer == nullptr || producer->name() != "builtin.parameter") continue;
    const std::string_view* name = producer->attribute("parameter_name").AsString();
    const TensorDistAttr* layout = op->result(0)->type().dist_attr();
    if (name == nullptr || layout == nullptr) continue;
    bool sharded = false;
    for (int64_t m : layout->dims_mapping) sharded = sharded || m >= 0;
    if (sharded) out[std::string(*name)] = *layout;
  }
  return out;
}

StatusOr<ParameterShard> ShardOn(const std::vector<int64_t>& global, const TensorDistAttr& layout,
                                 int64_t rank) {
  const std::optional<std::vector<int64_t>> coordinate = MeshCoordinate(layout.mesh, rank);
  ParameterShard shard{global, std::vector<int64_t>(global.size(), 0)};
  if (!coordinate) return shard;  // not on the mesh: holds nothing of it
  for (size_t d = 0; d < global.size(); ++d) {
    const int64_t m = layout.dims_mapping[d];
    if (m < 0) continue;
    IRM_ASSIGN_OR_RETURN(ShardPiece piece,
                         PieceOf(global[d], layout.mesh.shape[m], (*coordinate)[m]));
    shard.offsets[d] = piece.offset;
  }
  return shard;
}

// Makes the initialiser of parameter `name` in `startup` produce `local` dims.
Status LocaliseInitialiser(Program& startup, const std::string& name,
                           const std::vector<int64_t>& local) {
  for (Operation* op : startup.block().ops()) {
    if (op->name() != "builtin.set_parameter") continue;
    const std::string_view* parameter = op->attribute("parameter_name").AsString();
    if (parameter == nullptr || *parameter != name) continue;
    Value* value = op->operand(0);
    Operation* init = value->defining_op();
    Location at = LocationOf(*op);
    at.var = name;
    if (init == nullptr || value->use_count() != 1) {
      return Status(StatusCode::kUnimplemented, at,
                    "a sharded parameter's initial value must be made by one op for it alone");
    }
    if (init->name() == "pd_op.full") {
      init->SetAttribute("shape", Attribute::IntArrayFrom(local));
    } else if (init->name() == "pd_op.uniform" || init->name() == "pd_op.gaussian") {
      Operation* shape = init->num_operands() > 0 && init->operand(0) != nullptr
                             ? init->operand(0)->defining_op()
                             : nullptr;
      if (shape == nullptr || shape->name() != "pd_op.full_int_array" ||
          init->operand(0)->use_count() != 1) {
        return Status(StatusCode::kUnimplemented, LocationOf(*init),
                      "the shape of a sharded parameter's initialiser must be a "
                      "pd_op.full_int_array read by it alone");
      }
      std::vector<Attribute> dims;
      for (int64_t d : local) dims.push_back(Attribute::Int64(d));
      shape->SetAttribute("value", Attribute::Array(std::move(dims)));
    } else if (init->HasAttribute("shape")) {
      return Status(
          StatusCode::kUnimplemented, LocationOf(*init),
          fmt::format("cannot make the initialiser {} of a sharded parameter local", init->name()));
    }
    const Type& old = value->type();
    value->set_type(Type::DenseTensor(old.dtype(), local, old.layout(), old.lod(), old.offset()));
    return Status::Ok();
  }
  return Status(StatusCode::kNotFound, Location{},
                fmt::format("the startup program sets no parameter '{}'", name));
}

// Paddle's ProcessMesh names ranks of the job's world (process_mesh.py); a mesh naming a rank the
// world does not have would leave a collective waiting for it.
Status CheckMeshInWorld(const ProcessMesh& mesh, int64_t world_size) {
  if (world_size <= 0) return Status::Ok();
  for (int64_t id : mesh.process_ids) {
    if (id < world_size) continue;
    Status status(StatusCode::kInvalidArgument, Location::File("annotations: mesh"),
                  fmt::format("the mesh names rank {}, and the world has {} ranks (0..{})", id,
                              world_size, world_size - 1));
    status.AddNote(fmt::format("mesh {}", mesh.ToString()));
    return status;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::map<std::string, ParameterShard>> LocaliseShardedParameters(const Program& plan,
                                                                          int64_t rank,
                                                                          Program& startup) {
  std::map<std::string, std::vector<int64_t>> global_dims;
  for (Operation* op : plan.block().ops()) {
    if (op->name() != "builtin.parameter") continue;
    const std::string_view* name = op->attribute("parameter_name").AsString();
    if (name != nullptr) global_dims[std::string(*name)] = op->result(0)->type().dims();
  }
  std::map<std::string, ParameterShard> shards;
  for (const auto& [name, layout] : ShardedParameters(plan)) {
    if (!MeshCoordinate(layout.mesh, rank)) continue;  // another stage's: not in this startup
    const std::vector<int64_t>& global = global_dims[name];
    IRM_ASSIGN_OR_RETURN(ParameterShard shard, ShardOn(global, layout, rank));
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> local, LocalDimsOn(global, layout, rank));
    IRM_RETURN_IF_ERROR(LocaliseInitialiser(startup, name, local));
    shards[name] = std::move(shard);
  }
  return shards;
}

StatusOr<ParallelPrograms> Parallelize(const Program& serial_main, const Program& serial_startup,
                                       const ShardAnnotations& annotations,
                                       const ParallelizeOptions& options) {
  ParallelPrograms out;
  IRM_RETURN_IF_ERROR(CheckMeshInWorld(annotations.mesh, options.world_size));
  IRM_ASSIGN_OR_RETURN(Program plan, Completed(serial_main, annotations));
  out.world_size = options.world_size > 0 ? options.world_size : WorldSizeOf(plan);
  ProcessGroupTable groups(out.world_size);
  IRM_RETURN_IF_ERROR(PlanProcessGroups(plan, groups));
  out.process_groups = groups.groups();
  for (int64_t rank = 0; rank < out.world_size; ++rank) {
    IRM_ASSIGN_OR_RETURN(Program main, Completed(serial_main, annotations));
    ProcessGroupTable rank_groups = groups;
    IRM_RETURN_IF_ERROR(LowerReshards(main, rank, rank_groups).status());
    IRM_RETURN_IF_ERROR(RemoveOtherRankOps(main, rank).status());
    IRM_RETURN_IF_ERROR(DistToDense(main, rank));
    IRM_RETURN_IF_ERROR(VerifyProgram(main));
    IRM_ASSIGN_OR_RETURN(Program startup, Copy(serial_startup));
    IRM_ASSIGN_OR_RETURN(auto shards, LocaliseShardedParameters(plan, rank, startup));
    IRM_RETURN_IF_ERROR(VerifyProgram(startup));
    out.ranks.push_back(RankPrograms{std::move(main), std::move(startup), std::move(shards)});
  }
  return out;
}

}  // namespace irm::newir
