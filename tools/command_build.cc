// `ir-migrate build mlp|gpt`: a model-zoo training program (startup + main, as Paddle's static
// graph writes them: forward, append_backward, optimizer, feed and fetch ops) written as a
// single-rank bundle (docs/bundle.md) whose rank runs its main program once per step; with
// `--strategy`, the per-rank programs the legacy passes (oldir/passes/) make of it. With gradient
// merge, one optimizer update takes k_steps executor steps: bundle.json's `steps` counts executor
// steps, each reading a fresh micro-batch.
// `ir-migrate build corpus`: the parity corpus's distributed bundles (diff_tests/corpus).
// The output folder must be new or empty, and appears only once complete (common/staged_folder.h):
// a failed or interrupted build leaves nothing behind.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/staged_folder.h"
#include "diff_tests/corpus/corpus.h"
#include "oldir/bundle.h"
#include "oldir/dist_sidecar.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/bundle_output.h"
#include "oldir/passes/data_parallel.h"
#include "schedules/simulator.h"
#include "tools/bundle_comm_program.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

// Op counts of the written programs (rank 0's), for the summary line.
struct BuildResult {
  int world_size = 1;
  int64_t startup_ops = 0;
  int64_t main_ops = 0;
  int k_steps = 1;  // executor steps per optimizer update (gradient merge)
};

// Refuses an output that exists and is not an empty folder, as translate does: writing over an
// existing bundle would mix its files with the new ones.
Status CheckOutputFolder(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(st)) return Status::Ok();
  if (!std::filesystem::is_directory(st)) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "the output bundle must be a directory, this is a file");
  }
  if (!std::filesystem::is_empty(dir, ec) || ec) {
    Status status(StatusCode::kInvalidArgument, Location::File(dir),
                  "the output directory is not empty");
    status.AddNote("build writes a fresh bundle: remove the directory or name another");
    return status;
  }
  return Status::Ok();
}

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

// Records in bundle.json the point-to-point model the written plans need, as the schedule
// simulator finds it from the ranks' send and receive ops (the buffer depth of a 1F1B pipeline),
// so that runs take it without being told. Plans that would hang under every model are an internal
// error: a pass wrote them.
Status RecordP2pModel(const std::string& dir, oldir::Bundle bundle) {
  IRM_ASSIGN_OR_RETURN(schedules::CommProgram comm, BundleCommProgram(bundle, dir));
  IRM_ASSIGN_OR_RETURN(std::optional<int> depth, schedules::MinBufferDepth(comm));
  if (!depth) {
    return Status(StatusCode::kInternal, Location::File(dir),
                  "the written plans hang under every point-to-point model");
  }
  if (*depth == 0) return Status::Ok();
  bundle.p2p = schedules::P2pModel::Buffered(*depth);
  return oldir::WriteBundle(bundle, dir);
}

// Writes the bundle into `dir` (the staging folder).
StatusOr<BuildResult> Build(const BuildCommand& command, const std::string& dir,
                            oldir::models::ModelPrograms* model) {
  if (command.model == BuildCommand::Model::kMlp) {
    IRM_RETURN_IF_ERROR(oldir::models::BuildMlp(command.mlp, model));
  } else {
    IRM_RETURN_IF_ERROR(oldir::models::BuildGpt(command.gpt, model));
  }
  IRM_RETURN_IF_ERROR(oldir::models::AddTraining(model, command.optimizer));

  const char* model_name = command.model == BuildCommand::Model::kMlp ? "mlp" : "gpt";
  oldir::Bundle bundle;
  bundle.world_size = 1;
  bundle.steps = command.steps;
  bundle.seed = model->seed;
  bundle.strategy = {{"kind", "single"},
                     {"model", model_name},
                     {"optimizer", oldir::OptimizerKindName(command.optimizer.kind)}};
  for (const oldir::models::FeedSpec& feed : model->feeds) {
    std::optional<DType> dtype = oldir::DTypeFromVarType(feed.dtype);
    if (!dtype) {
      return Status(StatusCode::kInternal, Location{}.AtVar(feed.name),
                    "feed has a dtype without a tensor-file name");
    }
    bundle.feeds.push_back({feed.name, feed.shape, DTypeName(*dtype), oldir::FeedSplit::kBatch});
  }
  bundle.fetches = model->fetches;

  oldir::RankProgramsOptions options;
  options.text_copies = command.text_copies;
  // Each program is built (copied out of its builder) once: for writing and for the counts.
  const oldir::Program startup = model->startup.Build();
  const oldir::Program main = model->main.Build();
  if (!command.strategy.empty()) {
    IRM_ASSIGN_OR_RETURN(oldir::passes::Strategy strategy,
                         oldir::passes::ReadStrategyFile(command.strategy));
    oldir::passes::ApplyStrategyOptions apply;
    if (!command.annotations.empty()) {
      if (strategy.mp_degree == 1) {
        return Status(StatusCode::kInvalidArgument, Location::File(command.annotations),
                      "--annotations places parameters over the model-parallel mesh, and the "
                      "strategy's mp_degree is 1");
      }
      IRM_ASSIGN_OR_RETURN(oldir::dist_proto::DistAttrSidecar sidecar,
                           oldir::LoadDistSidecar(command.annotations));
      StatusOr<oldir::passes::Placements> placements =
          oldir::passes::PlacementsFromSidecar(sidecar, main);
      if (!placements.ok()) {
        Status status = placements.status();
        status.AddNote(fmt::format("in the annotations {}", command.annotations));
        return status;
      }
      apply.placements = *std::move(placements);
    }
    if (strategy.pipeline.enable) {
      IRM_ASSIGN_OR_RETURN(apply.micro_batch_size,
                           MicroBatchSize(command.batch_size, strategy.pipeline.accumulate_steps));
      for (oldir::FeedSpec& feed : bundle.feeds) {
        if (!feed.shape.empty() && feed.shape[0] == -1) feed.shape[0] = command.batch_size;
      }
    }
    IRM_ASSIGN_OR_RETURN(oldir::passes::DistributedPrograms programs,
                         oldir::passes::ApplyStrategy(startup, main, strategy, apply));
    // The runtime reads dp_degree here to give each replica its rows of the global batch.
    bundle.strategy = oldir::passes::StrategyToJson(strategy);
    bundle.strategy["kind"] = StrategyKind(strategy);
    bundle.strategy["model"] = model_name;
    bundle.strategy["optimizer"] = oldir::OptimizerKindName(command.optimizer.kind);
    IRM_ASSIGN_OR_RETURN(oldir::Bundle written, oldir::passes::WriteDistributedBundle(
                                                    programs, std::move(bundle), dir, options));
    IRM_RETURN_IF_ERROR(RecordP2pModel(dir, written));
    return BuildResult{programs.world_size, programs.ranks[0].startup.num_ops(),
                       programs.ranks[0].main.num_ops(),
                       strategy.gradient_merge.enable ? strategy.gradient_merge.k_steps : 1};
  }
  std::map<std::string, oldir::Program> programs;
  programs.emplace("main", main);
  IRM_ASSIGN_OR_RETURN(oldir::BundleRank rank,
                       oldir::WriteLegacyRankPrograms(dir, 0, startup, programs, options));
  bundle.ranks.push_back(std::move(rank));
  IRM_RETURN_IF_ERROR(oldir::WriteBundle(bundle, dir));
  return BuildResult{1, startup.num_ops(), main.num_ops(), 1};
}

// The parity corpus: one bundle per case, OUTPUT/<case>; the cases keep their own steps.
int BuildCorpus(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<corpus::BundleCase>> cases = corpus::StandardCases();
  if (!cases.ok()) return Fail(cases.status(), err);
  StatusOr<StagedFolder> staged = StagedFolder::Begin(command.output);
  if (!staged.ok()) return Fail(staged.status(), err);
  // The lines name the final folders, so they are printed once those exist.
  std::string lines;
  for (const corpus::BundleCase& c : *cases) {
    const std::string dir = (std::filesystem::path(staged->path()) / c.name).string();
    const Status written = corpus::WriteBundleCase(c, dir, command.text_copies);
    if (!written.ok()) return Fail(staged->Relocate(written), err);
    lines +=
        fmt::format("{}: {} ranks: {}\n", (std::filesystem::path(command.output) / c.name).string(),
                    c.ranks.size(), c.description);
  }
  if (const Status committed = staged->Commit(); !committed.ok()) return Fail(committed, err);
  out << lines;
  return kExitOk;
}

}  // namespace

int RunBuild(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  if (command.model != BuildCommand::Model::kCorpus && command.steps < 1) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{}, "--steps must be at least 1"),
                err);
  }
  if (const Status fresh = CheckOutputFolder(command.output); !fresh.ok()) return Fail(fresh, err);
  if (command.model == BuildCommand::Model::kCorpus) {
    if (!command.strategy.empty()) {
      return Fail(Status(StatusCode::kInvalidArgument, Location{},
                         "--strategy applies to mlp and gpt; the corpus cases carry their own"),
                  err);
    }
    return BuildCorpus(command, out, err);
  }
  oldir::models::ModelPrograms model;
  StatusOr<StagedFolder> staged = StagedFolder::Begin(command.output);
  if (!staged.ok()) return Fail(staged.status(), err);
  StatusOr<BuildResult> built = Build(command, staged->path(), &model);
  if (!built.ok()) return Fail(staged->Relocate(built.status()), err);
  if (const Status committed = staged->Commit(); !committed.ok()) return Fail(committed, err);
  if (built->world_size == 1) {
    out << fmt::format("{}: wrote a single-rank bundle: startup {} ops, main {} ops, loss '{}'\n",
                       command.output, built->startup_ops, built->main_ops, model.loss);
  } else {
    out << fmt::format(
        "{}: wrote a {}-rank bundle: startup {} ops, main {} ops per rank, loss '{}'\n",
        command.output, built->world_size, built->startup_ops, built->main_ops, model.loss);
  }
  if (built->k_steps > 1) {
    out << fmt::format("gradient merge: one optimizer update every {} executor steps\n",
                       built->k_steps);
  }
  return kExitOk;
}

}  // namespace irm::tools
