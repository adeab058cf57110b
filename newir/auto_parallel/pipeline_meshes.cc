// Pipeline stages as process meshes (pipeline_meshes.h).
#include "newir/auto_parallel/pipeline_meshes.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "newir/attributes.h"
#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/gradient_merge.h"
#include "newir/auto_parallel/op_roles.h"
#include "newir/auto_parallel/pipeline_accumulation.h"
#include "newir/auto_parallel/process_groups.h"
#include "newir/auto_parallel/remove_other_ranks.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/auto_parallel/spmd_completion.h"
#include "newir/builder.h"
#include "newir/parser.h"
#include "newir/printer.h"
#include "newir/rewriter.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

std::string StringAttr(const Operation& op, std::string_view name) {
  const std::string_view* value = op.attribute(name).AsString();
  return value != nullptr ? std::string(*value) : "";
}

// The legacy var name the translator recorded for a value.
std::string LegacyName(const Value& value) {
  const Operation* op = value.defining_op();
  if (op == nullptr) return "";
  const AttributeSpan* names = op->attribute("legacy_var_names").AsArray();
  if (names == nullptr || value.index() >= names->size()) return "";
  const std::string_view* name = (*names)[value.index()].AsString();
  return name != nullptr ? std::string(*name) : "";
}

// "x@GRAD", "x@GRAD@RENAME@block0@1" -> "x"; "" for a name that is no gradient.
std::string GradientOf(const std::string& name) {
  const size_t at = name.find("@GRAD");
  return at == std::string::npos ? "" : name.substr(0, at);
}

Status Invalid(const Operation& op, std::string message) {
  return Status(StatusCode::kInvalid, LocationOf(op), std::move(message));
}

// Decides every top-level op's global chunk (pipeline_meshes.h's rule).
class ChunkAssignment {
 public:
  ChunkAssignment(const Program& main, const PipelineMeshOptions& options)
      : main_(main), options_(options) {}

  StatusOr<std::map<const Operation*, int>> Run() {
    const int chunks = options_.pp_degree * options_.vpp_degree;
    for (int c = 0; c < chunks; ++c) {
      for (int u = c * options_.unit_count / chunks; u < (c + 1) * options_.unit_count / chunks;
           ++u) {
        chunk_of_unit_[u] = c;
      }
    }
    std::vector<const Operation*> unplaced;
    for (const Operation* op : main_.block().ops()) {
      if (op->num_operands() == 0) continue;
      if (op->num_regions() != 0) {
        return Invalid(*op, "a pipeline stage's top-level op cannot hold regions here");
      }
      IRM_ASSIGN_OR_RETURN(std::optional<int> chunk, Decide(*op));
      if (!chunk) {
        unplaced.push_back(op);
        continue;
      }
      Place(*op, *chunk);
    }
    // What reads no placed value goes with its first placed reader (the legacy rule for
    // constants); readers come later, so the last ones are decided first.
    for (auto it = unplaced.rbegin(); it != unplaced.rend(); ++it) {
      const Operation* op = *it;
      if (OpRoleOf(*op) == kOptimizeRole) continue;  // an optimizer op of no parameter: every stage
      std::optional<int> chunk = FirstReaderChunk(*op);
      if (chunk) chunk_[op] = *chunk;
    }
    return chunk_;
  }

 private:
  void Place(const Operation& op, int chunk) {
    chunk_[&op] = chunk;
    if ((OpRoleOf(op).value_or(0) & kBackwardRole) != 0 || OpRoleOf(op) == kOptimizeRole) return;
    for (const Value* result : op.results()) {
      const std::string name = LegacyName(*result);
      if (!name.empty()) forward_chunk_of_var_.emplace(name, chunk);
    }
  }

  std::optional<int> ParameterChunk(const Value* value) const {
    const Operation* producer = value == nullptr ? nullptr : value->defining_op();
    if (producer == nullptr || producer->name() != "builtin.parameter") return std::nullopt;
    auto unit = options_.unit_of_param.find(StringAttr(*producer, "parameter_name"));
    if (unit == options_.unit_of_param.end()) return std::nullopt;
    auto chunk = chunk_of_unit_.find(unit->second);
    if (chunk == chunk_of_unit_.end()) return std::nullopt;
    return chunk->second;
  }

  std::optional<int> ProducerChunk(const Value* value) const {
    const Operation* producer = value == nullptr ? nullptr : value->defining_op();
    if (producer == nullptr) return std::nullopt;
    if (producer->name() == "builtin.combine") {
      std::optional<int> latest;
      for (size_t i = 0; i < producer->num_operands(); ++i) {
        const std::optional<int> c = ProducerChunk(producer->operand(i));
        if (c && (!latest || *c > *latest)) latest = c;
      }
      return latest;
    }
    auto placed = chunk_.find(producer);
    if (placed == chunk_.end()) return std::nullopt;
    return placed->second;
  }

  StatusOr<std::optional<int>> ChunkOfParameters(const Operation& op) const {
    std::optional<int> chunk;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const std::optional<int> c = ParameterChunk(op.operand(i));
      if (!c) continue;
      if (chunk && *chunk != *c) {
        return Invalid(op, fmt::format("the op reads parameters of chunks {} and {}", *chunk, *c));
      }
      chunk = c;
    }
    return chunk;
  }

  std::optional<int> LatestProducerChunk(const Operation& op) const {
    std::optional<int> latest;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const std::optional<int> c = ProducerChunk(op.operand(i));
      if (c && (!latest || *c > *latest)) latest = c;
    }
    return latest;
  }

  std::optional<int> ForwardChunkOf(const std::string& var) const {
    auto found = forward_chunk_of_var_.find(var);
    if (found == forward_chunk_of_var_.end()) return std::nullopt;
    return found->second;
  }

  StatusOr<std::optional<int>> Decide(const Operation& op) const {
    const std::optional<int32_t> role = OpRoleOf(op);
    if (!role || op.name() == "pd_op.fetch") return LatestProducerChunk(op);
    if (*role == kOptimizeRole) {
      return op.num_operands() > 0 ? ParameterChunk(op.operand(0)) : std::nullopt;
    }
    if ((*role & kBackwardRole) != 0) {
      // The forward op whose output gradient it reads; a gradient's sum goes with the var's
      // producer.
      for (size_t i = 0; i < op.num_operands(); ++i) {
        const Value* v = op.operand(i);
        std::vector<const Value*> read = {v};
        if (v != nullptr && v->defining_op() != nullptr &&
            v->defining_op()->name() == "builtin.combine") {
          read.clear();
          for (size_t j = 0; j < v->defining_op()->num_operands(); ++j) {
            read.push_back(v->defining_op()->operand(j));
          }
        }
        for (const Value* r : read) {
          if (r == nullptr) continue;
          const std::optional<int> c = ForwardChunkOf(GradientOf(LegacyName(*r)));
          if (c) return c;
        }
      }
      for (const Value* result : op.results()) {
        const std::optional<int> c = ForwardChunkOf(GradientOf(LegacyName(*result)));
        if (c) return c;
      }
    }
    IRM_ASSIGN_OR_RETURN(std::optional<int> by_parameters, ChunkOfParameters(op));
    if (by_parameters) return by_parameters;
    return LatestProducerChunk(op);
  }

  std::optional<int> FirstReaderChunk(const Operation& op) const {
    for (const Value* result : op.results()) {
      for (const OpOperand* use : result->uses()) {
        const Operation* reader = use->owner();
        if (reader->name() == "builtin.combine") {
          for (const Value* combined : reader->results()) {
            for (const OpOperand* inner : combined->uses()) {
              auto placed = chunk_.find(inner->owner());
              if (placed != chunk_.end()) return placed->second;
            }
          }
          continue;
        }
        auto placed = chunk_.find(reader);
        if (placed != chunk_.end()) return placed->second;
      }
    }
    return std::nullopt;
  }

  const Program& main_;
  const PipelineMeshOptions& options_;
  std::map<int, int> chunk_of_unit_;
  std::map<const Operation*, int> chunk_;
  std::map<std::string, int> forward_chunk_of_var_;
};

// Stage `stage`'s mesh: its data- and tensor-parallel ranks in the hybrid topology
// (rank = (d * pp + stage) * mp + m), axes of degree 1 left out as StandardAnnotations leaves them
// ([s] named "pp" for a pure pipeline).
ProcessMesh StageMesh(const PipelineMeshOptions& options, int stage) {
  ProcessMesh mesh;
  if (options.dp_degree > 1 || options.mp_degree == 1) {
    mesh.shape.push_back(options.dp_degree);
    mesh.dim_names.push_back(options.dp_degree > 1 ? "dp" : "pp");
  }
  if (options.mp_degree > 1) {
    mesh.shape.push_back(options.mp_degree);
    mesh.dim_names.push_back("mp");
  }
  for (int d = 0; d < options.dp_degree; ++d) {
    for (int m = 0; m < options.mp_degree; ++m) {
      mesh.process_ids.push_back(
          (static_cast<int64_t>(d) * options.pp_degree + stage) * options.mp_degree + m);
    }
  }
  return mesh;
}

TensorDistAttr ReplicatedOn(const ProcessMesh& mesh, size_t rank) {
  TensorDistAttr dist;
  dist.mesh = mesh;
  dist.dims_mapping.assign(rank, -1);
  return dist;
}

// Puts `dist_op.shard_tensor` on `mesh` after `op`'s one result (its readers read it): the batch
// feeds split by rows over "dp" (`by_rows`), a parameter by its `mp_mapping` over "mp" (a dims
// mapping over the mp axis; empty: replicated).
Status ShardOnMesh(Operation& op, const ProcessMesh& mesh, bool by_rows,
                   const std::vector<int64_t>& mp_mapping) {
  Value* value = op.result(0);
  TensorDistAttr dist = ReplicatedOn(mesh, value->type().dims().size());
  if (by_rows && !dist.dims_mapping.empty()) dist.dims_mapping[0] = 0;  // "dp" is axis 0
  const int64_t mp_axis = static_cast<int64_t>(mesh.dim_names.size()) - 1;
  for (size_t d = 0; d < mp_mapping.size() && d < dist.dims_mapping.size(); ++d) {
    if (mp_mapping[d] >= 0 && mesh.dim_names.back() == "mp") dist.dims_mapping[d] = mp_axis;
  }
  IRM_ASSIGN_OR_RETURN(Type type, Type::DistDenseTensor(value->type(), dist));
  Builder builder(*op.parent_block());
  builder.SetInsertionPointAfter(op);
  OperationDistAttr attr;
  attr.mesh = mesh;
  attr.results = {Attribute::TensorDist(dist)};
  Operation* shard = builder.Create("dist_op.shard_tensor", {value}, {type},
                                    {{"op_dist_attr", Attribute::OperationDist(std::move(attr))}});
  value->ReplaceUsesWithIf(shard->result(0),
                           [shard](const OpOperand& use) { return use.owner() != shard; });
  return Status::Ok();
}

Status CheckOptions(const PipelineMeshOptions& options) {
  if (options.pp_degree < 1 || options.vpp_degree < 1 || options.dp_degree < 1 ||
      options.mp_degree < 1) {
    return Status(
        StatusCode::kInvalidArgument, Location::File("pipeline"),
        fmt::format("pp_degree {}, vpp_degree {}, dp_degree {} and mp_degree {}: at "
                    "least 1",
                    options.pp_degree, options.vpp_degree, options.dp_degree, options.mp_degree));
  }
  const int chunks = options.pp_degree * options.vpp_degree;
  if (chunks > options.unit_count) {
    return Status(StatusCode::kInvalidArgument, Location::File("pp_degree"),
                  fmt::format("pp_degree above the layer count: pp_degree {} x vpp_degree {} = {} "
                              "chunks, {} layer units",
                              options.pp_degree, options.vpp_degree, chunks, options.unit_count));
  }
  return Status::Ok();
}

StatusOr<Program> Copy(const Program& program) { return ParseProgram(PrintProgram(program)); }

// Ops that still carry only a mesh (they read no distributed value) are dense: they run on every
// rank that reads them.
void DropUnusedMeshes(Program& program) {
  for (Operation* op : program.block().ops()) {
    const OperationDistAttr* dist = op->attribute("op_dist_attr").AsOperationDist();
    if (dist == nullptr || !dist->operands.empty() || !dist->results.empty()) continue;
    if (op->name().starts_with("dist_op.")) continue;
    op->RemoveAttribute("op_dist_attr");
  }
}

// A reshard inside a stage (the data-parallel gradient's all-reduce before its optimizer op, the
// loss's) runs in its reader's role and chunk, as Paddle creates reshards under their consumer's
// role (static/pir_pass.py reshard_single_value: pir_op_role_guard), so that the job split
// places what it lowers to. With several readers (a tensor-parallel all-reduce read by a forward
// op and by its grad op), the first in program order's: the reshard runs before any of them.
void TagReshardsWithTheirReaders(Program& program) {
  std::map<const Operation*, size_t> position;
  for (Operation* op : program.block().ops()) position.emplace(op, position.size());
  for (Operation* op : program.block().ops()) {
    if (op->name() != "dist_op.reshard" || op->num_results() != 1) continue;
    const Operation* reader = nullptr;
    for (const OpOperand* use : op->result(0)->uses()) {
      if (!use->owner()->HasAttribute("op_role")) continue;  // a shadow_output
      auto at = position.find(use->owner());
      if (at == position.end()) continue;
      if (reader == nullptr || at->second < position.at(reader)) reader = use->owner();
    }
    if (reader == nullptr) continue;
    for (const char* attr : {"op_role", "chunk_id"}) {
      if (reader->HasAttribute(attr) && !op->HasAttribute(attr)) {
        op->SetAttribute(attr, reader->attribute(attr));
      }
    }
  }
}

// A recv_v2 of a dynamic batch receives one micro-batch's rows.
void StaticReceiveShapes(Program& program, int64_t micro_batch_size) {
  for (Operation* op : program.block().ops()) {
    if (op->name() != "pd_op.recv_v2") continue;
    const AttributeSpan* shape = op->attribute("out_shape").AsArray();
    if (shape == nullptr) continue;
    std::vector<Attribute> dims;
    for (const Attribute& d : *shape) {
      const int64_t* v = d.AsInt64();
      dims.push_back(
          Attribute::Int64(v != nullptr && *v < 0 ? micro_batch_size : (v != nullptr ? *v : 0)));
    }
    op->SetAttribute("out_shape", Attribute::Array(std::move(dims)));
  }
}

// The zeros a reshard's lowering leaves for a value this rank sent away (reshard_lowering.h) are
// dead once the other stages' readers are removed; with a dynamic batch dim they could not even
// be made.
Status EraseDeadZeros(Program& program) {
  std::vector<Operation*> ops = program.block().ops();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation* op = *it;
    if (op->name() == "pd_op.full" && op->num_results() == 1 && op->result(0)->use_empty()) {
      IRM_RETURN_IF_ERROR(EraseOp(op));
    }
  }
  return Status::Ok();
}

// The parameters `main` reads (nested blocks too).
std::set<std::string> ParametersRead(const Program& main) {
  std::set<std::string> names;
  main.module().Walk([&names](Operation* op) {
    if (op->name() == "builtin.parameter") names.insert(StringAttr(*op, "parameter_name"));
  });
  return names;
}

// The rank's startup: the initialisers of what its stage reads.
Status KeepInitialisersOf(Program& startup, const std::set<std::string>& read) {
  std::vector<Operation*> ops = startup.block().ops();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation* op = *it;
    bool drop = false;
    if (op->name() == "builtin.set_parameter") {
      drop = read.count(StringAttr(*op, "parameter_name")) == 0;
    } else if (op->num_regions() == 0 && op->num_results() > 0) {
      const std::vector<Value*> results = op->results();
      drop = std::all_of(results.begin(), results.end(),
                         [](const Value* v) { return v->use_empty(); });
    }
    if (drop) IRM_RETURN_IF_ERROR(EraseOp(op));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<size_t> AnnotatePipelineStages(Program& main, const PipelineMeshOptions& options) {
  IRM_RETURN_IF_ERROR(CheckOptions(options));
  IRM_ASSIGN_OR_RETURN(auto chunks, ChunkAssignment(main, options).Run());
  std::map<const Operation*, int> placed(chunks.begin(), chunks.end());
  const std::vector<Operation*> ops = main.block().ops();
  // The seeds: each stage's parameters; an optimizer's state (moments, beta powers: persistable
  // parameters of no layer) with the one chunk that reads it, placed over "mp" as its parameter
  // (mp_placements) — state read on several stages (the learning rate) stays dense; the feeds on
  // their first reader's stage.
  for (Operation* op : ops) {
    std::optional<int> chunk;
    if (op->name() == "builtin.parameter") {
      auto unit = options.unit_of_param.find(StringAttr(*op, "parameter_name"));
      if (unit != options.unit_of_param.end()) {
        const int count = options.pp_degree * options.vpp_degree;
        for (int c = 0; c < count; ++c) {
          if (unit->second >= c * options.unit_count / count &&
              unit->second < (c + 1) * options.unit_count / count) {
            chunk = c;
          }
        }
      } else if (op->num_results() == 1) {
        std::set<int> readers;
        for (const OpOperand* use : op->result(0)->uses()) {
          auto reader = placed.find(use->owner());
          readers.insert(reader != placed.end() ? reader->second : -1);
        }
        if (readers.size() == 1 && *readers.begin() >= 0) chunk = *readers.begin();
      }
    } else if (op->name() == "pd_op.data" && OpRoleOf(*op)) {
      for (const OpOperand* use : op->result(0)->uses()) {
        auto reader = placed.find(use->owner());
        if (reader != placed.end()) {
          chunk = reader->second;
          break;
        }
      }
    }
    if (!chunk || op->num_results() != 1 || op->result(0)->use_empty()) continue;
    const bool by_rows = options.dp_degree > 1 && op->name() == "pd_op.data" &&
                         std::find(options.batch_feeds.begin(), options.batch_feeds.end(),
                                   StringAttr(*op, "name")) != options.batch_feeds.end();
    static const std::vector<int64_t> kReplicated;
    auto placed_over_mp = op->name() == "builtin.parameter"
                              ? options.mp_placements.find(StringAttr(*op, "parameter_name"))
                              : options.mp_placements.end();
    IRM_RETURN_IF_ERROR(ShardOnMesh(
        *op, StageMesh(options, *chunk % options.pp_degree), by_rows,
        placed_over_mp != options.mp_placements.end() ? placed_over_mp->second : kReplicated));
  }
  for (const auto& [op, chunk] : placed) {
    Operation* mutable_op = const_cast<Operation*>(op);
    OperationDistAttr mesh_only;
    mesh_only.mesh = StageMesh(options, chunk % options.pp_degree);
    mesh_only.chunk_id = chunk / options.pp_degree;
    mutable_op->SetAttribute("op_dist_attr", Attribute::OperationDist(std::move(mesh_only)));
    mutable_op->SetAttribute("chunk_id", Attribute::Int32(chunk / options.pp_degree));
  }
  return placed.size();
}

StatusOr<ParallelPrograms> ParallelizePipeline(const Program& serial_main,
                                               const Program& serial_startup,
                                               const PipelineMeshOptions& options) {
  IRM_ASSIGN_OR_RETURN(Program plan, Copy(serial_main));
  IRM_RETURN_IF_ERROR(AnnotatePipelineStages(plan, options).status());
  IRM_RETURN_IF_ERROR(CompleteSpmd(plan).status());
  DropUnusedMeshes(plan);
  TagReshardsWithTheirReaders(plan);
  IRM_RETURN_IF_ERROR(VerifyProgram(plan));
  ParallelPrograms out;
  out.world_size = static_cast<int64_t>(options.pp_degree) * options.dp_degree * options.mp_degree;
  ProcessGroupTable groups(out.world_size);
  IRM_RETURN_IF_ERROR(PlanProcessGroups(plan, groups));
  out.process_groups = groups.groups();
  for (int64_t rank = 0; rank < out.world_size; ++rank) {
    IRM_ASSIGN_OR_RETURN(Program main, Copy(plan));
    ProcessGroupTable rank_groups = groups;
    IRM_RETURN_IF_ERROR(LowerReshards(main, rank, rank_groups).status());
    IRM_RETURN_IF_ERROR(RemoveOtherRankOps(main, rank).status());
    IRM_RETURN_IF_ERROR(EraseDeadZeros(main));
    IRM_RETURN_IF_ERROR(DistToDense(main, rank));
    StaticReceiveShapes(main, options.micro_batch_size);
    IRM_RETURN_IF_ERROR(
        AppendPipelineAccumulation(main, options.micro_batches, options.avg).status());
    IRM_RETURN_IF_ERROR(VerifyProgram(main));
    IRM_ASSIGN_OR_RETURN(Program startup, Copy(serial_startup));
    IRM_RETURN_IF_ERROR(KeepInitialisersOf(startup, ParametersRead(main)));
    IRM_ASSIGN_OR_RETURN(auto shards, LocaliseShardedParameters(plan, rank, startup));
    IRM_RETURN_IF_ERROR(AddGradientMergeInitializers(startup, main));
    IRM_RETURN_IF_ERROR(VerifyProgram(startup));
    out.ranks.push_back(RankPrograms{std::move(main), std::move(startup), std::move(shards)});
  }
  return out;
}

}  // namespace irm::newir
