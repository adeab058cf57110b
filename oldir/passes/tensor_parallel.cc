// The partition of the tensor-parallel pass (tensor_parallel.h): the programs of one mp rank from
// the completed serial program. What each implementation writes follows Paddle's dist op impls
// and partitioner (python/paddle/distributed/auto_parallel/static/partitioner.py: ops in program
// order, var descs with the local shapes, new vars named by unique_name "<type>.tmp_<n>", one
// counter per prefix over forward and backward):
// - operators/dist_matmul.py, DistributedMatmulV2Impl0 (column parallel): forward `c_identity`
//   {ring_id, use_calc_stream: True, use_model_parallel: True, op_role: the matmul's} of X into
//   c_identity.tmp_<n>, which the matmul reads; backward (_right_operand_parameter_matmul_backward)
//   matmul_v2_grad writes X@GRAD into c_identity.tmp_<n>@GRAD, then `c_allreduce_sum` (same
//   attrs, Backward) of it into X@GRAD — none when X has no gradient;
// - DistributedMatmulV2Impl1 (row parallel): forward the matmul writes c_allreduce_sum.tmp_<n>,
//   then `c_allreduce_sum` of it into Out (before the bias add, which follows in the serial
//   program); backward `c_identity` of Out@GRAD into c_identity.tmp_<n>@GRAD, which
//   matmul_v2_grad reads;
// - operators/dist_embedding.py (row_parallel): forward `c_embedding` {start_index: the rank's
//   first row} into c_embedding.tmp_<n>, then `c_allreduce_sum` into Out; backward
//   `c_embedding_grad` {start_index} with the serial grad op's inputs and output;
// - operators/dist_cross_entropy.py, DistributedCrossEntropyImpl1: `c_softmax_with_cross_entropy`
//   {ring_id, rank, nranks, ignore_index (int64)} in place of softmax_with_cross_entropy, and
//   `c_softmax_with_cross_entropy_grad` {ignore_index, ring_id, rank, nranks} in place of its grad.
// Paddle's partitioner also appends a `c_broadcast` of every replicated parameter to the startup
// program (dist_matmul.py, _init_param_sync): here every rank's initialisers already draw the
// serial numbers, so the broadcast would copy equal values and is left out.
#include "oldir/passes/tensor_parallel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"
#include "oldir/passes/tensor_parallel_completion.h"

namespace irm::oldir::passes {
namespace {

using OpList = google::protobuf::RepeatedPtrField<proto::OpDesc>;

proto::OpDesc MakeOp(const std::string& type,
                     const std::vector<std::pair<std::string, std::vector<std::string>>>& inputs,
                     const std::vector<std::pair<std::string, std::vector<std::string>>>& outputs,
                     const AttrList& attrs) {
  proto::OpDesc desc;
  OpEditor op(&desc);
  op.SetType(type);
  for (const auto& [slot, names] : inputs) op.SetInput(slot, names);
  for (const auto& [slot, names] : outputs) op.SetOutput(slot, names);
  for (const auto& [name, value] : attrs) op.SetAttr(name, value);
  return desc;
}

std::vector<int64_t> LocalDims(std::vector<int64_t> dims, const DimsMapping& mapping, int mp) {
  for (size_t d = 0; d < dims.size() && d < mapping.size(); ++d) {
    if (mapping[d] >= 0) dims[d] /= mp;
  }
  return dims;
}

void SetDims(proto::VarDesc* var, const std::vector<int64_t>& dims) {
  proto::VarType::TensorDesc* tensor =
      var->mutable_type()->mutable_dense_tensor()->mutable_tensor();
  tensor->clear_dims();
  for (int64_t d : dims) tensor->add_dims(d);
}

class Partitioner {
 public:
  Partitioner(const Program& main, const TensorParallelCompletion& completion,
              const TensorParallelOptions& options)
      : main_(main), completion_(completion), options_(options), mappings_(completion.vars) {}

  StatusOr<Program> Main() {
    const Block root = main_.root();
    for (int v = 0; v < root.num_vars(); ++v) used_names_.insert(root.var(v).name());
    OpList ops;
    for (int i = 0; i < root.num_ops(); ++i) {
      const Op op = root.op(i);
      auto impl = completion_.ops.find(i);
      const ShardedOp kind = impl == completion_.ops.end() ? ShardedOp::kLocal : impl->second;
      IRM_RETURN_IF_ERROR(Partition(i, op, kind, &ops));
    }
    Program out = main_;
    proto::BlockDesc* block = out.mutable_desc()->mutable_blocks(0);
    block->mutable_ops()->Swap(&ops);
    for (const auto& [name, like] : new_vars_) {
      proto::VarDesc* var = block->add_vars();
      *var = root.FindVar(like)->desc();
      var->set_name(name);
      var->set_persistable(false);
      var->set_is_parameter(false);
    }
    for (int v = 0; v < block->vars_size(); ++v) {
      proto::VarDesc* var = block->mutable_vars(v);
      auto it = mappings_.find(var->name());
      if (it == mappings_.end() || !IsSharded(it->second)) continue;
      SetDims(var, LocalDims(Var(var).dims(), it->second, options_.mp_degree));
    }
    out.Reindex();
    return out;
  }

 private:
  // A new var named as Paddle's unique_name names it ("<prefix>_<n>" + suffix), declared like
  // `like` and split like it.
  std::string NewVar(const std::string& prefix, const std::string& suffix,
                     const std::string& like) {
    std::string name;
    do {
      name = fmt::format("{}_{}{}", prefix, counters_[prefix]++, suffix);
    } while (used_names_.count(name));
    used_names_.insert(name);
    new_vars_.emplace_back(name, like);
    auto it = mappings_.find(like);
    if (it != mappings_.end()) mappings_[name] = it->second;
    return name;
  }

  AttrList CommAttrs(int role) const {
    return {{"ring_id", int32_t{options_.ring_id}},
            {"use_calc_stream", true},
            {"use_model_parallel", true},
            {kOpRoleAttr, int32_t{role}}};
  }

  // The first row of the rank's shard of a table split on dim 0.
  StatusOr<int64_t> StartIndex(int i, const Op& op) const {
    std::optional<std::string> w = op.SingleInput("W");
    std::optional<Var> table = w ? main_.root().FindVar(*w) : std::nullopt;
    if (!table || table->dims().empty()) {
      return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtOp(i, op.type()),
                    "the embedding table has no dims");
    }
    return options_.mp_rank * (table->dims()[0] / options_.mp_degree);
  }

  Status Missing(int i, const Op& op, const char* slot) const {
    return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtOp(i, op.type()),
                  fmt::format("op {} ({}) needs one argument in slot {}", i, op.type(), slot));
  }

  Status Partition(int i, const Op& op, ShardedOp kind, OpList* ops) {
    const int role = op.role();
    switch (kind) {
      case ShardedOp::kLocal: {
        proto::OpDesc* copy = ops->Add();
        *copy = op.desc();
        auto reshape = completion_.reshapes.find(i);
        if (reshape != completion_.reshapes.end()) {
          OpEditor(copy).SetAttr("shape", reshape->second);
        }
        return Status::Ok();
      }
      case ShardedOp::kColumnParallelMatmul: {
        std::optional<std::string> x = op.SingleInput("X");
        if (!x) return Missing(i, op, "X");
        const std::string identity = NewVar("c_identity.tmp", "", *x);
        *ops->Add() = MakeOp("c_identity", {{"X", {*x}}}, {{"Out", {identity}}}, CommAttrs(role));
        proto::OpDesc* matmul = ops->Add();
        *matmul = op.desc();
        OpEditor(matmul).SetInput("X", {identity});
        return Status::Ok();
      }
      case ShardedOp::kRowParallelMatmul: {
        std::optional<std::string> out = op.SingleOutput("Out");
        if (!out) return Missing(i, op, "Out");
        const std::string partial = NewVar("c_allreduce_sum.tmp", "", *out);
        proto::OpDesc* matmul = ops->Add();
        *matmul = op.desc();
        OpEditor(matmul).SetOutput("Out", {partial});
        *ops->Add() =
            MakeOp("c_allreduce_sum", {{"X", {partial}}}, {{"Out", {*out}}}, CommAttrs(role));
        return Status::Ok();
      }
      case ShardedOp::kVocabParallelEmbedding: {
        std::optional<std::string> ids = op.SingleInput("Ids");
        std::optional<std::string> w = op.SingleInput("W");
        std::optional<std::string> out = op.SingleOutput("Out");
        if (!ids || !w || !out) return Missing(i, op, "Ids, W or Out");
        IRM_ASSIGN_OR_RETURN(const int64_t start, StartIndex(i, op));
        const std::string partial = NewVar("c_embedding.tmp", "", *out);
        // vocab_size as Paddle's fleet VocabParallelEmbedding sets it (mp_ops._c_lookup_table;
        // dist_embedding.py leaves the default -1): the serial table's rows, which bound the ids.
        const int64_t vocab = main_.root().FindVar(*w)->dims()[0];
        *ops->Add() =
            MakeOp("c_embedding", {{"Ids", {*ids}}, {"W", {*w}}}, {{"Out", {partial}}},
                   {{"start_index", start}, {"vocab_size", vocab}, {kOpRoleAttr, int32_t{role}}});
        *ops->Add() =
            MakeOp("c_allreduce_sum", {{"X", {partial}}}, {{"Out", {*out}}}, CommAttrs(role));
        return Status::Ok();
      }
      case ShardedOp::kParallelCrossEntropy: {
        std::optional<std::string> logits = op.SingleInput("Logits");
        std::optional<std::string> label = op.SingleInput("Label");
        std::optional<std::string> softmax = op.SingleOutput("Softmax");
        std::optional<std::string> loss = op.SingleOutput("Loss");
        if (!logits || !label || !softmax || !loss) return Missing(i, op, "Logits/Label/...");
        *ops->Add() =
            MakeOp("c_softmax_with_cross_entropy", {{"Logits", {*logits}}, {"Label", {*label}}},
                   {{"Softmax", {*softmax}}, {"Loss", {*loss}}}, CrossEntropyAttrs(op, role));
        return Status::Ok();
      }
      case ShardedOp::kColumnParallelMatmulGrad: {
        const Op::Names* x_grad = op.Output("X@GRAD");
        proto::OpDesc* grad = ops->Add();
        *grad = op.desc();
        if (x_grad == nullptr || x_grad->empty()) return Status::Ok();
        const std::string x_grad_name = x_grad->Get(0);
        const std::string partial = NewVar("c_identity.tmp", kGradSuffix, x_grad_name);
        OpEditor(grad).SetOutput("X@GRAD", {partial});
        *ops->Add() = MakeOp("c_allreduce_sum", {{"X", {partial}}}, {{"Out", {x_grad_name}}},
                             CommAttrs(kBackward));
        return Status::Ok();
      }
      case ShardedOp::kRowParallelMatmulGrad: {
        std::optional<std::string> out_grad = op.SingleInput("Out@GRAD");
        if (!out_grad) return Missing(i, op, "Out@GRAD");
        const std::string identity = NewVar("c_identity.tmp", kGradSuffix, *out_grad);
        *ops->Add() =
            MakeOp("c_identity", {{"X", {*out_grad}}}, {{"Out", {identity}}}, CommAttrs(kBackward));
        proto::OpDesc* grad = ops->Add();
        *grad = op.desc();
        OpEditor(grad).SetInput("Out@GRAD", {identity});
        return Status::Ok();
      }
      case ShardedOp::kVocabParallelEmbeddingGrad: {
        std::optional<std::string> ids = op.SingleInput("Ids");
        std::optional<std::string> w = op.SingleInput("W");
        std::optional<std::string> out_grad = op.SingleInput("Out@GRAD");
        std::optional<std::string> w_grad = op.SingleOutput("W@GRAD");
        if (!ids || !w || !out_grad || !w_grad) return Missing(i, op, "Ids/W/Out@GRAD/W@GRAD");
        IRM_ASSIGN_OR_RETURN(const int64_t start, StartIndex(i, op));
        *ops->Add() = MakeOp(
            "c_embedding_grad", {{"Ids", {*ids}}, {"W", {*w}}, {"Out@GRAD", {*out_grad}}},
            {{"W@GRAD", {*w_grad}}}, {{"start_index", start}, {kOpRoleAttr, int32_t{kBackward}}});
        return Status::Ok();
      }
      case ShardedOp::kParallelCrossEntropyGrad: {
        std::optional<std::string> softmax = op.SingleInput("Softmax");
        std::optional<std::string> label = op.SingleInput("Label");
        std::optional<std::string> loss_grad = op.SingleInput("Loss@GRAD");
        std::optional<std::string> logits_grad = op.SingleOutput("Logits@GRAD");
        if (!softmax || !label || !loss_grad || !logits_grad) {
          return Missing(i, op, "Softmax/Label/Loss@GRAD/Logits@GRAD");
        }
        *ops->Add() =
            MakeOp("c_softmax_with_cross_entropy_grad",
                   {{"Softmax", {*softmax}}, {"Label", {*label}}, {"Loss@GRAD", {*loss_grad}}},
                   {{"Logits@GRAD", {*logits_grad}}}, CrossEntropyAttrs(op, kBackward));
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

  AttrList CrossEntropyAttrs(const Op& op, int role) const {
    // The kernels read ignore_index as int64 (dist_cross_entropy.py sets it with
    // _set_int64_attr); the serial op carries an int.
    const int64_t ignore_index = op.AttrOr<int32_t>("ignore_index", -100);
    return {{"ring_id", int32_t{options_.ring_id}},
            {"rank", int32_t{options_.mp_rank}},
            {"nranks", int32_t{options_.mp_degree}},
            {"ignore_index", ignore_index},
            {kOpRoleAttr, int32_t{role}}};
  }

  const Program& main_;
  const TensorParallelCompletion& completion_;
  const TensorParallelOptions& options_;
  std::unordered_map<std::string, DimsMapping> mappings_;
  std::unordered_set<std::string> used_names_;
  std::map<std::string, int> counters_;
  std::vector<std::pair<std::string, std::string>> new_vars_;  // name, declared like
};

// The startup program of the rank: each sharded var's initialiser makes the local shape, and the
// rank records where its elements sit in the serial tensor.
Status PartitionStartup(const Program& main, const TensorParallelCompletion& completion,
                        const TensorParallelOptions& options, RankPrograms* rank) {
  Program startup = rank->startup;
  if (startup.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the startup program has no block");
  }
  proto::BlockDesc* block = startup.mutable_desc()->mutable_blocks(0);
  const Block root = main.root();
  for (int i = 0; i < block->ops_size(); ++i) {
    proto::OpDesc* desc = block->mutable_ops(i);
    const Op op(desc);
    for (const proto::OpDesc::Var& slot : desc->outputs()) {
      for (const std::string& name : slot.arguments()) {
        auto it = completion.vars.find(name);
        if (it == completion.vars.end() || !IsSharded(it->second)) continue;
        std::optional<Var> serial = root.FindVar(name);
        const std::vector<int64_t> global = serial ? serial->dims() : std::vector<int64_t>{};
        const std::vector<int64_t> local = LocalDims(global, it->second, options.mp_degree);
        StatusOr<AttrValue> shape = op.GetAttr("shape");
        const Location at = Location{}.InBlock(0).AtOp(i, op.type());
        if (!shape.ok()) {
          return Status(StatusCode::kInvalidArgument, at,
                        fmt::format("startup op {} ({}) initialises the sharded '{}' without a "
                                    "shape attr to make local",
                                    i, op.type(), name));
        }
        if (auto* longs = std::get_if<std::vector<int64_t>>(&*shape); longs && *longs == global) {
          OpEditor(desc).SetAttr("shape", local);
        } else if (auto* ints = std::get_if<std::vector<int32_t>>(&*shape);
                   ints && std::vector<int64_t>(ints->begin(), ints->end()) == global) {
          OpEditor(desc).SetAttr("shape", std::vector<int32_t>(local.begin(), local.end()));
        } else {
          return Status(StatusCode::kInvalidArgument, at,
                        fmt::format("startup op {} ({}) initialises '{}' with a shape attr other "
                                    "than its dims {}",
                                    i, op.type(), name, global));
        }
        ShardSlice slice;
        slice.global_shape = global;
        for (size_t d = 0; d < global.size(); ++d) {
          slice.offsets.push_back(it->second[d] >= 0 ? options.mp_rank * local[d] : 0);
        }
        rank->shards[name] = std::move(slice);
      }
    }
  }
  for (int v = 0; v < block->vars_size(); ++v) {
    proto::VarDesc* var = block->mutable_vars(v);
    auto it = completion.vars.find(var->name());
    if (it == completion.vars.end() || !IsSharded(it->second)) continue;
    SetDims(var, LocalDims(Var(var).dims(), it->second, options.mp_degree));
  }
  startup.Reindex();
  rank->startup = std::move(startup);
  return Status::Ok();
}

}  // namespace

StatusOr<RankPrograms> ApplyTensorParallel(const Program& startup, const Program& main,
                                           const TensorParallelOptions& options) {
  if (options.mp_degree < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("mp_degree {} must be positive", options.mp_degree));
  }
  if (options.mp_rank < 0 || options.mp_rank >= options.mp_degree) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("mp_rank {} is outside [0, mp_degree {})", options.mp_rank, options.mp_degree));
  }
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  if (options.mp_degree == 1) return SingleProgramRank(startup, main);
  IRM_ASSIGN_OR_RETURN(TensorParallelCompletion completion,
                       CompleteTensorParallel(main, options.placements, options.mp_degree));
  RankPrograms rank = SingleProgramRank(startup, main);
  IRM_ASSIGN_OR_RETURN(rank.main, Partitioner(main, completion, options).Main());
  IRM_RETURN_IF_ERROR(PartitionStartup(main, completion, options, &rank));
  return rank;
}

StatusOr<DistributedPrograms> ApplyTensorParallelWorld(const Program& startup, const Program& main,
                                                       int mp_degree,
                                                       const Placements& placements) {
  if (mp_degree < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("mp_degree {} must be positive", mp_degree));
  }
  DistributedPrograms out;
  out.world_size = mp_degree;
  ProcessGroup group;
  group.ring_id = 0;
  for (int r = 0; r < mp_degree; ++r) group.ranks.push_back(r);
  out.process_groups.push_back(group);
  TensorParallelOptions options;
  options.mp_degree = mp_degree;
  options.ring_id = group.ring_id;
  options.placements = placements;
  for (int r = 0; r < mp_degree; ++r) {
    options.mp_rank = r;
    IRM_ASSIGN_OR_RETURN(RankPrograms rank, ApplyTensorParallel(startup, main, options));
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

}  // namespace irm::oldir::passes
