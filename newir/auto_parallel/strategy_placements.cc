// Standard placements (strategy_placements.h). The Megatron layout follows Paddle's
// tensor-parallel layers (python/paddle/distributed/fleet/layers/mpu/mp_layers.py:
// ColumnParallelLinear splits the weight [in, out] on dim 1 and its bias with it,
// RowParallelLinear splits the weight on dim 0 and adds the whole bias after the all-reduce,
// VocabParallelEmbedding splits the table on dim 0) and the auto-parallel GPT test that annotates
// the same layouts with shard_tensor (test/auto_parallel/get_gpt_model.py), as the legacy
// placements do (oldir/passes/placements.cc).
#include "newir/auto_parallel/strategy_placements.h"

#include <fmt/format.h>

#include <optional>

#include "newir/attributes.h"

namespace irm::newir {
namespace {

using Mapping = std::vector<int64_t>;
using Placements = std::map<std::string, Mapping>;

// The parameter name of the builtin.parameter that defines `value`, or empty.
std::string ParameterName(const Value* value) {
  if (value == nullptr || value->defining_op() == nullptr) return "";
  const Operation& op = *value->defining_op();
  if (op.name() != "builtin.parameter") return "";
  const std::string_view* name = op.attribute("parameter_name").AsString();
  return name == nullptr ? "" : std::string(*name);
}

// Paddle's OpRole: bit 0 backward, bit 1 optimize (op_role.h); forward ops are 0 or 0x100 (loss).
bool IsForward(const Operation& op) {
  const int32_t* role = op.attribute("op_role").AsInt32();
  return role == nullptr || (*role & 0x3) == 0;
}

struct Linear {
  const Operation* matmul = nullptr;
  std::string weight;
  std::string bias;
};

StatusOr<std::vector<Linear>> ForwardLinears(const Program& main) {
  std::vector<Linear> linears;
  for (Operation* op : main.block().ops()) {
    if (op->name() != "pd_op.matmul" || !IsForward(*op) || op->num_operands() < 2) continue;
    Linear linear;
    linear.matmul = op;
    linear.weight = ParameterName(op->operand(1));
    if (linear.weight.empty()) continue;
    const bool* transposed = op->attribute("transpose_y").AsBool();
    if ((transposed != nullptr && *transposed) || op->operand(1)->type().dims().size() != 2) {
      Location at = LocationOf(*op);
      at.var = linear.weight;
      return Status(StatusCode::kInvalidArgument, at,
                    fmt::format("Megatron placements need linear weights of rank 2 read "
                                "untransposed; '{}' is not",
                                linear.weight));
    }
    // The bias: what the first add reading the product adds, when it is a parameter.
    for (const OpOperand* use : op->result(0)->uses()) {
      const Operation* add = use->owner();
      if (add->name() != "pd_op.add" || add->num_operands() != 2 ||
          add->operand(0) != op->result(0)) {
        continue;
      }
      linear.bias = ParameterName(add->operand(1));
      break;
    }
    linears.push_back(std::move(linear));
  }
  return linears;
}

void Column(const Linear& linear, Placements& placements) {
  placements[linear.weight] = {-1, 0};
  if (!linear.bias.empty()) placements[linear.bias] = {0};
}

void Row(const Linear& linear, Placements& placements) {
  placements[linear.weight] = {0, -1};
  // The bias stays replicated: it is added once, after the partial products are summed.
}

// The optimizer state of a sharded parameter's shape is split like it: every other parameter an
// update op reads with the parameter's dims (moments, velocity; not the learning rate or the
// beta powers, of shape [1]).
void PlaceOptimizerState(const Program& main, Placements& placements) {
  for (Operation* op : main.block().ops()) {
    if (op->num_operands() < 2 || !op->name().ends_with("_")) continue;
    const std::string param = ParameterName(op->operand(0));
    auto it = param.empty() ? placements.end() : placements.find(param);
    if (it == placements.end()) continue;
    const Mapping mapping = it->second;
    bool sharded = false;
    for (int64_t m : mapping) sharded = sharded || m >= 0;
    if (!sharded) continue;
    const std::vector<int64_t>& dims = op->operand(0)->type().dims();
    for (size_t i = 1; i < op->num_operands(); ++i) {
      const std::string state = ParameterName(op->operand(i));
      if (state.empty() || state == param || op->operand(i)->type().dims() != dims) continue;
      placements[state] = mapping;
    }
  }
}

// Paddle's tensor-parallel layers require the split dim to divide by the mp degree
// (mp_layers.py: ColumnParallelLinear "Number of column of the weight for linear ({}) must be
// divisible by model parallel size ({})", RowParallelLinear and VocabParallelEmbedding alike).
// Refused at the first op that reads the parameter, naming it.
Status CheckDivides(const Program& main, const Placements& placements, int64_t mp) {
  for (Operation* op : main.block().ops()) {
    const std::string name = op->num_results() == 1 ? ParameterName(op->result(0)) : "";
    auto it = name.empty() ? placements.end() : placements.find(name);
    if (it == placements.end()) continue;
    const std::vector<int64_t>& dims = op->result(0)->type().dims();
    for (size_t d = 0; d < it->second.size() && d < dims.size(); ++d) {
      if (it->second[d] < 0 || (dims[d] > 0 && dims[d] % mp == 0)) continue;
      const Operation* reader = op;  // the first op after it that reads it, else itself
      for (const Operation* next = op->next(); next != nullptr && reader == op;
           next = next->next()) {
        for (size_t i = 0; i < next->num_operands(); ++i) {
          if (next->operand(i) == op->result(0)) reader = next;
        }
      }
      Location at = LocationOf(*reader);
      at.var = name;
      Status status(StatusCode::kInvalidArgument, at,
                    fmt::format("Megatron placement splits dim {} of '{}' (size {}) over {} "
                                "model-parallel ranks, which does not divide it",
                                d, name, dims[d], mp));
      status.AddNote(
          "Paddle's ColumnParallelLinear, RowParallelLinear and VocabParallelEmbedding require "
          "the split dim to be a multiple of the mp degree");
      return status;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Placements> MegatronPlacements(const Program& main) {
  Placements placements;
  for (Operation* op : main.block().ops()) {
    const std::string name = op->num_results() == 1 ? ParameterName(op->result(0)) : "";
    if (!name.empty()) placements[name] = Mapping(op->result(0)->type().dims().size(), -1);
  }
  IRM_ASSIGN_OR_RETURN(std::vector<Linear> linears, ForwardLinears(main));
  const Operation* word_embedding = nullptr;
  for (Operation* op : main.block().ops()) {
    if (op->name() == "pd_op.embedding" && IsForward(*op)) {
      word_embedding = op;
      break;
    }
  }
  if (word_embedding != nullptr) {
    // gpt: 6 linears per decoder block (q, k, v, proj, fc1, fc2), then the head.
    if (linears.empty() || (linears.size() - 1) % 6 != 0) {
      return Status(StatusCode::kInvalidArgument, LocationOf(*word_embedding),
                    fmt::format("Megatron placements of a gpt need 6 linears per decoder block "
                                "and a head; the program has {} linears",
                                linears.size()));
    }
    const Value* table = word_embedding->num_operands() == 2 ? word_embedding->operand(1) : nullptr;
    const std::string table_name = ParameterName(table);
    if (table_name.empty() || table->type().dims().size() != 2) {
      return Status(StatusCode::kInvalidArgument, LocationOf(*word_embedding),
                    "the word embedding's table must be a parameter of rank 2");
    }
    placements[table_name] = {0, -1};
    for (size_t b = 0; b + 1 < linears.size(); b += 6) {
      Column(linears[b], placements);      // q
      Column(linears[b + 1], placements);  // k
      Column(linears[b + 2], placements);  // v
      Row(linears[b + 3], placements);     // proj
      Column(linears[b + 4], placements);  // fc1
      Row(linears[b + 5], placements);     // fc2
    }
    Column(linears.back(), placements);  // head, followed by the parallel cross entropy
  } else {
    // mlp: the linears in pairs, column then row; an unpaired last one stays replicated.
    for (size_t i = 0; i + 1 < linears.size(); i += 2) {
      Column(linears[i], placements);
      Row(linears[i + 1], placements);
    }
  }
  PlaceOptimizerState(main, placements);
  return placements;
}

StatusOr<Placements> MegatronPlacementsOver(const Program& main, int64_t mp) {
  IRM_ASSIGN_OR_RETURN(Placements placements, MegatronPlacements(main));
  IRM_RETURN_IF_ERROR(CheckDivides(main, placements, mp));
  return placements;
}

StatusOr<ShardAnnotations> StandardAnnotations(const Program& main, const ParallelDegrees& degrees,
                                               const std::vector<std::string>& batch_feeds) {
  if (degrees.dp < 1 || degrees.mp < 1 || degrees.pp < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("degrees must be at least 1: dp {}, mp {}, pp {}", degrees.dp,
                              degrees.mp, degrees.pp));
  }
  if (degrees.pp > 1) {
    Status status(StatusCode::kUnimplemented, Location{},
                  fmt::format("pipeline parallelism (pp_degree {}) has no standard placements in "
                              "the new IR's passes",
                              degrees.pp));
    status.AddNote(
        "pipeline stages are made by the legacy passes: ir-migrate build --strategy, then "
        "translate");
    return status;
  }
  ShardAnnotations out;
  // Axes of degree 1 are left out: a 1-D mesh for dp or mp alone, as Paddle's tests build them.
  int64_t dp_axis = -1;
  int64_t mp_axis = -1;
  if (degrees.dp > 1 || degrees.mp == 1) {
    dp_axis = static_cast<int64_t>(out.mesh.shape.size());
    out.mesh.shape.push_back(degrees.dp);
    out.mesh.dim_names.push_back("dp");
  }
  if (degrees.mp > 1) {
    mp_axis = static_cast<int64_t>(out.mesh.shape.size());
    out.mesh.shape.push_back(degrees.mp);
    out.mesh.dim_names.push_back("mp");
  }
  for (int64_t rank = 0; rank < degrees.dp * degrees.mp; ++rank)
    out.mesh.process_ids.push_back(rank);
  const size_t mesh_dims = out.mesh.shape.size();
  if (degrees.dp > 1) {
    for (const std::string& feed : batch_feeds) {
      ValueAnnotation annotation;
      annotation.by_placements = true;
      annotation.shard_dim_of_mesh_dim.assign(mesh_dims, -1);
      annotation.shard_dim_of_mesh_dim[dp_axis] = 0;
      annotation.source = fmt::format("data parallel: batch feed '{}'", feed);
      out.values[feed] = std::move(annotation);
    }
  }
  if (mp_axis >= 0) {
    IRM_ASSIGN_OR_RETURN(Placements placements, MegatronPlacementsOver(main, degrees.mp));
    for (const auto& [name, mapping] : placements) {
      ValueAnnotation annotation;
      annotation.by_placements = true;
      annotation.shard_dim_of_mesh_dim.assign(mesh_dims, -1);
      for (size_t d = 0; d < mapping.size(); ++d) {
        if (mapping[d] >= 0) annotation.shard_dim_of_mesh_dim[mp_axis] = static_cast<int64_t>(d);
      }
      if (annotation.shard_dim_of_mesh_dim[mp_axis] < 0) continue;  // replicated: no annotation
      annotation.source = fmt::format("Megatron placement: parameter '{}'", name);
      out.values[name] = std::move(annotation);
    }
  }
  return out;
}

}  // namespace irm::newir
