// MakeModelBundle and WriteModelBundle (model_bundle.h).
#include "diff_tests/corpus/model_bundle.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <utility>

#include "diff_tests/corpus/bundle_comm_program.h"
#include "oldir/dist_sidecar.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/bundle_output.h"
#include "oldir/passes/placements.h"
#include "schedules/simulator.h"

namespace irm::corpus {
namespace {

// Rows of one pipeline micro-batch: the replica's rows split into accumulate_steps.
StatusOr<int64_t> MicroBatchSize(int64_t batch_size, int accumulate_steps) {
  if (batch_size < 1 || batch_size % accumulate_steps != 0) {
    return Status(StatusCode::kInvalidArgument, Location{}.AtAttr("--batch-size"),
                  fmt::format("--batch-size {} does not split into pipeline.accumulate_steps {} "
                              "micro-batches",
                              batch_size, accumulate_steps));
  }
  return batch_size / accumulate_steps;
}

// bundle.json's strategy kind: the parallel axes in use, outermost first ("single" for none).
std::string StrategyKind(const oldir::passes::Strategy& strategy) {
  std::vector<std::string> axes;
  if (strategy.dp_degree > 1) axes.push_back("data_parallel");
  if (strategy.pp_degree > 1) axes.push_back("pipeline");
  if (strategy.mp_degree > 1) axes.push_back("tensor_parallel");
  return axes.empty() ? "single" : fmt::format("{}", fmt::join(axes, "+"));
}

// The parameters' placements from the recipe's annotations, checked against the serial main.
StatusOr<oldir::passes::Placements> AnnotatedPlacements(const ModelRecipe& recipe,
                                                        const oldir::Program& main) {
  if (recipe.strategy->mp_degree == 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(recipe.annotations),
                  "--annotations places parameters over the model-parallel mesh, and the "
                  "strategy's mp_degree is 1");
  }
  IRM_ASSIGN_OR_RETURN(oldir::dist_proto::DistAttrSidecar sidecar,
                       oldir::LoadDistSidecar(recipe.annotations));
  StatusOr<oldir::passes::Placements> placements =
      oldir::passes::PlacementsFromSidecar(sidecar, main);
  if (!placements.ok()) {
    Status status = placements.status();
    status.AddNote(fmt::format("in the annotations {}", recipe.annotations));
    return status;
  }
  return placements;
}

// Records the point-to-point model the written plans need, as the schedule simulator finds it
// from the ranks' send and receive ops (the buffer depth of a 1F1B pipeline), so that runs take
// it without being told.
Status RecordP2pModel(const std::string& dir, oldir::Bundle* bundle) {
  IRM_ASSIGN_OR_RETURN(schedules::CommProgram comm, BundleCommProgram(*bundle, dir));
  IRM_ASSIGN_OR_RETURN(std::optional<int> depth, schedules::MinBufferDepth(comm));
  if (!depth) {
    return Status(StatusCode::kInternal, Location::File(dir),
                  "the written plans hang under every point-to-point model");
  }
  if (*depth == 0) return Status::Ok();
  bundle->p2p = schedules::P2pModel::Buffered(*depth);
  return oldir::WriteBundle(*bundle, dir);
}

}  // namespace

StatusOr<ModelBundle> MakeModelBundle(const ModelRecipe& recipe) {
  oldir::models::ModelPrograms model;
  oldir::models::TrainingOptions training;
  training.optimizer = recipe.optimizer;
  training.lr_schedule = recipe.lr_schedule;
  const char* model_name = "mlp";
  if (recipe.model == ZooModel::kMlp) {
    IRM_RETURN_IF_ERROR(oldir::models::BuildMlp(recipe.mlp, &model));
  } else if (recipe.model == ZooModel::kGpt) {
    model_name = "gpt";
    IRM_RETURN_IF_ERROR(oldir::models::BuildGpt(recipe.gpt, &model));
  } else {
    model_name = "resnet";
    oldir::models::ResnetMetrics metrics;
    IRM_RETURN_IF_ERROR(oldir::models::BuildResnet(recipe.resnet, &model, &metrics));
    training.extra_fetches = {metrics.acc_top1, metrics.acc_topk};
  }
  IRM_RETURN_IF_ERROR(oldir::models::AddTraining(&model, training));

  ModelBundle made;
  made.loss = model.loss;
  oldir::Bundle& bundle = made.bundle;
  bundle.world_size = 1;
  bundle.steps = recipe.steps;
  bundle.seed = model.seed;
  bundle.strategy = {{"kind", "single"},
                     {"model", model_name},
                     {"optimizer", oldir::OptimizerKindName(recipe.optimizer.kind)}};
  for (const oldir::models::FeedSpec& feed : model.feeds) {
    std::optional<DType> dtype = oldir::DTypeFromVarType(feed.dtype);
    if (!dtype) {
      return Status(StatusCode::kInternal, Location{}.AtVar(feed.name),
                    "feed has a dtype without a tensor-file name");
    }
    bundle.feeds.push_back({feed.name, feed.shape, DTypeName(*dtype), oldir::FeedSplit::kBatch});
  }
  bundle.fetches = model.fetches;

  const oldir::Program startup = model.startup.Build();
  const oldir::Program main = model.main.Build();
  if (!recipe.strategy) {
    made.ranks.push_back(oldir::passes::SingleProgramRank(startup, main));
    return made;
  }
  const oldir::passes::Strategy& strategy = *recipe.strategy;
  oldir::passes::ApplyStrategyOptions apply;
  apply.job_lists = recipe.job_lists;
  if (!recipe.annotations.empty()) {
    IRM_ASSIGN_OR_RETURN(apply.placements, AnnotatedPlacements(recipe, main));
  }
  if (strategy.pipeline.enable) {
    IRM_ASSIGN_OR_RETURN(apply.micro_batch_size,
                         MicroBatchSize(recipe.batch_size, strategy.pipeline.accumulate_steps));
    for (oldir::FeedSpec& feed : bundle.feeds) {
      if (!feed.shape.empty() && feed.shape[0] == -1) feed.shape[0] = recipe.batch_size;
    }
  }
  IRM_ASSIGN_OR_RETURN(oldir::passes::DistributedPrograms programs,
                       oldir::passes::ApplyStrategy(startup, main, strategy, apply));
  // The runtime reads dp_degree here to give each replica its rows of the global batch.
  bundle.strategy = oldir::passes::StrategyToJson(strategy);
  bundle.strategy["kind"] = StrategyKind(strategy);
  bundle.strategy["model"] = model_name;
  bundle.strategy["optimizer"] = oldir::OptimizerKindName(recipe.optimizer.kind);
  bundle.world_size = programs.world_size;
  bundle.process_groups = std::move(programs.process_groups);
  bundle.micro_batches = programs.micro_batches;
  made.ranks = std::move(programs.ranks);
  made.k_steps = strategy.gradient_merge.enable ? strategy.gradient_merge.k_steps : 1;
  return made;
}

StatusOr<oldir::Bundle> WriteModelBundle(const ModelBundle& made, const std::string& dir,
                                         const oldir::RankProgramsOptions& options) {
  oldir::passes::DistributedPrograms programs;
  programs.world_size = made.bundle.world_size;
  programs.process_groups = made.bundle.process_groups;
  programs.micro_batches = made.bundle.micro_batches;
  programs.ranks = made.ranks;
  IRM_ASSIGN_OR_RETURN(oldir::Bundle written,
                       oldir::passes::WriteDistributedBundle(programs, made.bundle, dir, options));
  // Only ranks that talk to each other can need buffers.
  if (written.world_size > 1) IRM_RETURN_IF_ERROR(RecordP2pModel(dir, &written));
  return written;
}

}  // namespace irm::corpus
