// The corpus's shared MLP and bundle fields (mlp_training.h).
#include "diff_tests/corpus/mlp_training.h"

#include "common/host_tensor.h"
#include "oldir/models/mlp.h"
#include "oldir/op_role.h"
#include "oldir/params_io.h"

namespace irm::corpus {

namespace proto = oldir::proto;

Status BuildCorpusMlp(const CorpusOptions& options, oldir::models::ModelPrograms* model) {
  oldir::models::MlpConfig config;
  config.depth = 3;
  config.in_features = 4;
  config.width = 8;
  config.classes = 3;
  config.seed = options.seed;
  return oldir::models::BuildMlp(config, model);
}

void AppendFetchOps(oldir::models::ModelPrograms* model) {
  oldir::BlockBuilder& root = model->main.root();
  root.CreateTypedVar("fetch", proto::VarType::FETCH_LIST, /*persistable=*/true);
  oldir::ScopedOpRole role(model->main, oldir::kForward);
  for (size_t col = 0; col < model->fetches.size(); ++col) {
    root.AppendOp("fetch", {{"X", {model->fetches[col]}}}, {{"Out", {"fetch"}}},
                  {{"col", static_cast<int32_t>(col)}});
  }
}

oldir::Bundle BaseBundle(const oldir::models::ModelPrograms& model, int world_size, int64_t rows,
                         const CorpusOptions& options) {
  oldir::Bundle bundle;
  bundle.world_size = world_size;
  oldir::ProcessGroup all;
  all.ring_id = 0;
  for (int r = 0; r < world_size; ++r) all.ranks.push_back(r);
  bundle.process_groups.push_back(all);
  for (const oldir::models::FeedSpec& feed : model.feeds) {
    oldir::FeedSpec spec;
    spec.name = feed.name;
    spec.shape = feed.shape;
    if (!spec.shape.empty()) spec.shape[0] = rows;
    spec.dtype = DTypeName(*oldir::DTypeFromVarType(feed.dtype));
    bundle.feeds.push_back(spec);
  }
  bundle.fetches = {model.loss};
  bundle.steps = options.steps;
  bundle.seed = options.seed;
  return bundle;
}

RankPrograms MainOnlyRank(const oldir::models::ModelPrograms& model) {
  RankPrograms rank{model.startup.Build(), {}, std::nullopt};
  rank.jobs.emplace("main", model.main.Build());
  return rank;
}

void AppendGradientSync(oldir::ProgramBuilder& main, const std::vector<oldir::ParamGrad>& grads,
                        int ranks) {
  oldir::ScopedOpRole role(main, oldir::kBackward);
  for (const oldir::ParamGrad& pg : grads) {
    main.root().AppendOp(
        "c_allreduce_sum", {{"X", {pg.grad}}}, {{"Out", {pg.grad}}},
        {{"ring_id", int32_t{0}}, {"use_calc_stream", true}, {"use_model_parallel", false}});
    main.root().AppendOp(
        "scale", {{"X", {pg.grad}}}, {{"Out", {pg.grad}}},
        {{"scale", 1.0f / static_cast<float>(ranks)}, {"bias", 0.0f}, {"bias_after_scale", true}});
  }
}

}  // namespace irm::corpus
