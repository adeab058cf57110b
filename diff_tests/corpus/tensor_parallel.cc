// The tensor-parallel case (corpus.h): a Megatron MLP block between a replicated input layer and
// a replicated output layer, sharded over the ranks. Each rank's program is the serial program of
// its shards with the communication ops inserted where Paddle's dist op implementations put them:
//   h0 -> c_identity -> h0.tp -> matmul(W1 column shard) + b1 shard -> relu
//      -> matmul(W2 row shard) -> p -> c_allreduce_sum -> p.sum -> output layer -> loss
// and in the backward pass `c_allreduce_sum(h0@GRAD)` right after the column matmul's grad op
// writes it (the gradient of c_identity). The gradient of the row-parallel all-reduce is the
// identity: p@GRAD is the same on every rank.
#include <fmt/format.h>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/corpus/mlp_training.h"
#include "diff_tests/corpus/program_surgery.h"
#include "oldir/editor.h"
#include "oldir/layers.h"
#include "oldir/op_role.h"
#include "oldir/optimizer.h"

namespace irm::corpus {

namespace {

namespace layers = oldir::layers;
namespace models = oldir::models;
namespace proto = oldir::proto;

constexpr int64_t kBlockWidth = 16;  // the sharded hidden width of the Megatron block

oldir::AttrList CommAttrs(bool model_parallel) {
  return {
      {"ring_id", int32_t{0}}, {"use_calc_stream", true}, {"use_model_parallel", model_parallel}};
}

// A shard's initialiser draws with a seed of its rank, so that the shards differ; replicated
// parameters keep the program seed and are equal on every rank.
Status SeedShard(models::ModelPrograms* model, const std::string& param, int32_t seed) {
  IRM_ASSIGN_OR_RETURN(int writer, FindWriter(model->startup.root(), param));
  oldir::OpEditor(model->startup.root().desc()->mutable_ops(writer)).SetAttr("seed", seed);
  return Status::Ok();
}

Status BuildRank(int ranks, int rank, const CorpusOptions& options, models::ModelPrograms* m) {
  m->seed = options.seed;
  oldir::BlockBuilder& block = m->main.root();
  IRM_ASSIGN_OR_RETURN(std::string x, layers::Data(m, {"x", proto::VarType::FP32, {-1, 4}}));
  IRM_ASSIGN_OR_RETURN(std::string label,
                       layers::Data(m, {"label", proto::VarType::INT64, {-1, 1}}));
  IRM_ASSIGN_OR_RETURN(layers::LinearLayer input, layers::CreateLinear(m, 4, 8));
  IRM_ASSIGN_OR_RETURN(layers::LinearLayer column, layers::CreateLinear(m, 8, kBlockWidth / ranks));
  IRM_ASSIGN_OR_RETURN(layers::LinearLayer row,
                       layers::CreateLinear(m, kBlockWidth / ranks, 8, /*with_bias=*/false));
  IRM_ASSIGN_OR_RETURN(layers::LinearLayer output, layers::CreateLinear(m, 8, 3));
  const int32_t shard_seed = options.seed + 1 + rank;
  IRM_RETURN_IF_ERROR(SeedShard(m, column.weight, shard_seed));
  IRM_RETURN_IF_ERROR(SeedShard(m, row.weight, shard_seed));

  IRM_ASSIGN_OR_RETURN(std::string h0, layers::Linear(block, input, x));
  IRM_ASSIGN_OR_RETURN(std::string hc, layers::Linear(block, column, h0));
  IRM_ASSIGN_OR_RETURN(std::string a, layers::Relu(block, hc));
  IRM_ASSIGN_OR_RETURN(std::string p, layers::Linear(block, row, a));
  IRM_ASSIGN_OR_RETURN(std::string logits, layers::Linear(block, output, p));
  IRM_ASSIGN_OR_RETURN(layers::SoftmaxWithCrossEntropyOutputs ce,
                       layers::SoftmaxWithCrossEntropy(block, logits, label));
  IRM_ASSIGN_OR_RETURN(m->loss, layers::Mean(block, ce.loss));
  IRM_RETURN_IF_ERROR(layers::PrependFeedOps(m));
  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads,
                       oldir::AppendBackward(m->main, m->loss));
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(m->main, m->startup, grads, {}));
  m->fetches = {m->loss};
  AppendFetchOps(m);

  // Row parallel: the partial products are summed right after the matmul; later reads (the
  // output layer's matmul and its grad op) take the sum.
  {
    oldir::ScopedOpRole role(m->main, oldir::kForward);
    IRM_ASSIGN_OR_RETURN(int writer, FindWriter(block, p));
    const std::string sum = p + ".sum";
    IRM_RETURN_IF_ERROR(DeclareLike(block, sum, p));
    InsertOp(block, writer + 1, "c_allreduce_sum", {{"X", {p}}}, {{"Out", {sum}}}, CommAttrs(true));
    RenameInputs(block, writer + 2, p, sum);
  }
  // Column parallel: the block's input passes c_identity; the column matmul and its grad op read
  // its output.
  {
    oldir::ScopedOpRole role(m->main, oldir::kForward);
    IRM_ASSIGN_OR_RETURN(int writer, FindWriter(block, h0));
    const std::string identity = h0 + ".tp";
    IRM_RETURN_IF_ERROR(DeclareLike(block, identity, h0));
    InsertOp(block, writer + 1, "c_identity", {{"X", {h0}}}, {{"Out", {identity}}},
             CommAttrs(true));
    RenameInputs(block, writer + 2, h0, identity);
  }
  // c_identity's gradient: the column matmul's input gradient summed over the ranks, in place.
  {
    oldir::ScopedOpRole role(m->main, oldir::kBackward);
    const std::string grad = h0 + "@GRAD";
    IRM_ASSIGN_OR_RETURN(int writer, FindWriter(block, grad));
    InsertOp(block, writer + 1, "c_allreduce_sum", {{"X", {grad}}}, {{"Out", {grad}}},
             CommAttrs(true));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<BundleCase> TensorParallelMlp(int ranks, const CorpusOptions& options) {
  if (ranks < 2 || kBlockWidth % ranks != 0) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("tensor parallelism over {} ranks: the ranks must be at least 2 "
                              "and divide the block width {}",
                              ranks, kBlockWidth));
  }
  BundleCase c;
  c.name = fmt::format("tp{}_mlp", ranks);
  c.description = fmt::format(
      "MLP with a Megatron block sharded over {} ranks: c_identity, column- and row-parallel "
      "matmuls, c_allreduce_sum forward and backward, SGD",
      ranks);
  for (int r = 0; r < ranks; ++r) {
    models::ModelPrograms m;
    IRM_RETURN_IF_ERROR(BuildRank(ranks, r, options, &m));
    if (r == 0) {
      c.bundle = BaseBundle(m, ranks, options.batch, options);
      // Every rank reads the same rows: one data-parallel replica.
      c.bundle.strategy = {{"kind", "tensor_parallel"}, {"mp_degree", ranks}, {"dp_degree", 1}};
    }
    c.ranks.push_back(MainOnlyRank(m));
  }
  return c;
}

}  // namespace irm::corpus
