// The standard and the sidecar placements (placements.h). Megatron's layout follows Paddle's
// tensor-parallel layers (python/paddle/distributed/fleet/layers/mpu/mp_layers.py:
// ColumnParallelLinear splits the weight [in, out] on dim 1 and its bias with it,
// RowParallelLinear splits the weight on dim 0 and adds the whole bias after the all-reduce,
// VocabParallelEmbedding splits the table on dim 0) and the auto-parallel GPT tests that annotate
// the same dims_mappings with shard_tensor (test/auto_parallel/get_gpt_model.py: qkv and ffn-in
// [-1, 0] / [0], attention-out and ffn-out [0, -1], word embeddings [0, -1]).
#include "oldir/passes/placements.h"

#include <fmt/format.h>

#include <optional>

#include "oldir/op_role.h"

namespace irm::oldir::passes {
namespace {

bool IsParameter(const Program& main, const std::string& name) {
  std::optional<Var> var = main.root().FindVar(name);
  return var && var->is_parameter();
}

// A forward matmul_v2 whose Y is a parameter, and the parameter its bias add adds (if any).
struct LinearUse {
  int op = -1;
  std::string weight;
  std::string bias;
};

StatusOr<std::vector<LinearUse>> ForwardLinears(const Program& main) {
  const Block root = main.root();
  std::vector<LinearUse> linears;
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (!IsForward(op.role()) || op.type() != "matmul_v2") continue;
    std::optional<std::string> y = op.SingleInput("Y");
    std::optional<std::string> out = op.SingleOutput("Out");
    if (!y || !out || !IsParameter(main, *y)) continue;
    if (op.AttrOr<bool>("trans_y", false) || main.root().FindVar(*y)->dims().size() != 2) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtOp(i, op.type()),
                    fmt::format("Megatron placements need linear weights of rank 2 read "
                                "untransposed; '{}' is not",
                                *y));
    }
    LinearUse use;
    use.op = i;
    use.weight = *y;
    for (int j = i + 1; j < root.num_ops(); ++j) {
      const Op add = root.op(j);
      if (add.type() != "elementwise_add" || add.SingleInput("X") != out) continue;
      std::optional<std::string> bias = add.SingleInput("Y");
      if (bias && IsParameter(main, *bias)) use.bias = *bias;
      break;
    }
    linears.push_back(std::move(use));
  }
  return linears;
}

void Column(const LinearUse& linear, Placements* placements) {
  (*placements)[linear.weight] = {-1, 0};
  if (!linear.bias.empty()) (*placements)[linear.bias] = {0};
}

void Row(const LinearUse& linear, Placements* placements) {
  (*placements)[linear.weight] = {0, -1};
  // The bias stays replicated: it is added once, after the partial products are summed.
}

}  // namespace

StatusOr<Placements> MegatronPlacements(const Program& main) {
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  const Block root = main.root();
  Placements placements;
  for (int i = 0; i < root.num_vars(); ++i) {
    const Var var = root.var(i);
    if (var.is_parameter()) placements[var.name()] = DimsMapping(var.dims().size(), -1);
  }
  IRM_ASSIGN_OR_RETURN(std::vector<LinearUse> linears, ForwardLinears(main));

  std::optional<int> word_embedding;
  for (int i = 0; i < root.num_ops() && !word_embedding; ++i) {
    const Op op = root.op(i);
    if (IsForward(op.role()) && op.type() == "lookup_table_v2") word_embedding = i;
  }
  if (word_embedding) {
    // gpt: 6 linears per decoder block (q, k, v, proj, fc1, fc2), then the head.
    if (linears.empty() || (linears.size() - 1) % 6 != 0) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0),
                    fmt::format("Megatron placements of a gpt need 6 linears per decoder block "
                                "and a head; the program has {} linears",
                                linears.size()));
    }
    std::optional<std::string> table = root.op(*word_embedding).SingleInput("W");
    if (!table || !IsParameter(main, *table) || root.FindVar(*table)->dims().size() != 2) {
      return Status(StatusCode::kInvalidArgument,
                    Location{}.InBlock(0).AtOp(*word_embedding, "lookup_table_v2"),
                    "the word embedding's table must be a parameter of rank 2");
    }
    placements[*table] = {0, -1};
    for (size_t b = 0; b + 1 < linears.size(); b += 6) {
      Column(linears[b], &placements);      // q
      Column(linears[b + 1], &placements);  // k
      Column(linears[b + 2], &placements);  // v
      Row(linears[b + 3], &placements);     // proj
      Column(linears[b + 4], &placements);  // fc1
      Row(linears[b + 5], &placements);     // fc2
    }
    Column(linears.back(), &placements);  // head, followed by the parallel cross entropy
    return placements;
  }
  for (size_t i = 0; i + 1 < linears.size(); i += 2) {
    Column(linears[i], &placements);
    Row(linears[i + 1], &placements);
  }
  return placements;
}

StatusOr<Placements> PlacementsFromSidecar(const dist_proto::DistAttrSidecar& sidecar,
                                           const Program& main) {
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  std::map<std::string, const dist_proto::TensorDistAttrProto*> annotated;
  for (const auto& entry : sidecar.vars()) {
    if (entry.block_idx() == 0) annotated[entry.var_name()] = &entry.dist_attr();
  }
  const Block root = main.root();
  Placements placements;
  for (int i = 0; i < root.num_vars(); ++i) {
    const Var var = root.var(i);
    if (!var.is_parameter()) continue;
    auto it = annotated.find(var.name());
    if (it == annotated.end()) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                    fmt::format("parameter '{}' has no dist attr in the sidecar: every parameter "
                                "needs a placement for tensor parallelism",
                                var.name()));
    }
    const dist_proto::TensorDistAttrProto& attr = *it->second;
    if (attr.process_mesh().shape_size() > 1) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                    fmt::format("parameter '{}' is placed on a {}-dimensional mesh; the "
                                "tensor-parallel pass takes a one-dimensional mp mesh",
                                var.name(), attr.process_mesh().shape_size()));
    }
    DimsMapping mapping(attr.dims_mapping().begin(), attr.dims_mapping().end());
    if (mapping.size() != var.dims().size()) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                    fmt::format("parameter '{}' has {} dims but a dims_mapping of {} entries",
                                var.name(), var.dims().size(), mapping.size()));
    }
    for (int64_t m : mapping) {
      if (m != -1 && m != 0) {
        return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtVar(var.name()),
                      fmt::format("parameter '{}': dims_mapping entry {} is neither -1 nor the "
                                  "mp mesh dim 0",
                                  var.name(), m));
      }
    }
    placements[var.name()] = std::move(mapping);
  }
  return placements;
}

}  // namespace irm::oldir::passes
