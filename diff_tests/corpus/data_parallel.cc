// The data-parallel case and its serial twin (corpus.h).
#include <fmt/format.h>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/corpus/mlp_training.h"
#include "oldir/optimizer.h"

namespace irm::corpus {

namespace {

// The MLP trained with SGD; `ranks` > 1 synchronises the gradients before the update.
StatusOr<BundleCase> MlpCase(int ranks, int64_t rows, const CorpusOptions& options) {
  oldir::models::ModelPrograms model;
  IRM_RETURN_IF_ERROR(BuildCorpusMlp(options, &model));
  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads,
                       oldir::AppendBackward(model.main, model.loss));
  if (ranks > 1) AppendGradientSync(model.main, grads, ranks);
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(model.main, model.startup, grads, {}));
  model.fetches = {model.loss};
  AppendFetchOps(&model);

  BundleCase c;
  c.bundle = BaseBundle(model, ranks, rows, options);
  // Each rank reads its own rows (dp_degree ranks, one data-parallel replica each).
  c.bundle.strategy = {{"kind", ranks > 1 ? "data_parallel" : "single"}, {"dp_degree", ranks}};
  // Every rank runs the same programs: the same seed gives every rank the same initial
  // parameters, as the broadcast from rank 0 does in Paddle.
  for (int r = 0; r < ranks; ++r) {
    c.ranks.push_back(MainOnlyRank(model));
  }
  return c;
}

}  // namespace

StatusOr<BundleCase> DataParallelMlp(int ranks, const CorpusOptions& options) {
  if (ranks < 2) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("data parallelism needs at least 2 ranks, not {}", ranks));
  }
  IRM_ASSIGN_OR_RETURN(BundleCase c, MlpCase(ranks, options.batch, options));
  c.name = fmt::format("dp{}_mlp", ranks);
  c.description = fmt::format(
      "MLP, data parallel over {} ranks: c_allreduce_sum + scale 1/{} per gradient, SGD", ranks,
      ranks);
  return c;
}

StatusOr<BundleCase> SerialMlp(int64_t batch, const CorpusOptions& options) {
  IRM_ASSIGN_OR_RETURN(BundleCase c, MlpCase(1, batch, options));
  c.name = fmt::format("serial_mlp{}", batch);
  c.description = fmt::format("MLP on one rank, {} rows per step, SGD", batch);
  return c;
}

}  // namespace irm::corpus
