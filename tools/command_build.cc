// `ir-migrate build mlp|gpt`: a model-zoo training program (startup + main, as Paddle's static
// graph writes them: forward, append_backward, optimizer, feed and fetch ops) written as a
// single-rank bundle (docs/bundle.md) whose rank runs its main program once per step.
// `ir-migrate build corpus`: the parity corpus's distributed bundles (diff_tests/corpus).
#include <fmt/format.h>

#include <filesystem>

#include "diff_tests/corpus/corpus.h"
#include "oldir/bundle.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

// Op counts of the written programs, for the summary line.
struct BuildResult {
  int64_t startup_ops = 0;
  int64_t main_ops = 0;
};

StatusOr<BuildResult> Build(const BuildCommand& command, oldir::models::ModelPrograms* model) {
  if (command.model == BuildCommand::Model::kMlp) {
    IRM_RETURN_IF_ERROR(oldir::models::BuildMlp(command.mlp, model));
  } else {
    IRM_RETURN_IF_ERROR(oldir::models::BuildGpt(command.gpt, model));
  }
  IRM_RETURN_IF_ERROR(oldir::models::AddTraining(model, command.optimizer));

  oldir::Bundle bundle;
  bundle.world_size = 1;
  bundle.steps = command.steps;
  bundle.seed = model->seed;
  bundle.strategy = {{"kind", "single"},
                     {"model", command.model == BuildCommand::Model::kMlp ? "mlp" : "gpt"},
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
  std::map<std::string, oldir::Program> programs;
  programs.emplace("main", model->main.Build());
  IRM_ASSIGN_OR_RETURN(oldir::BundleRank rank, oldir::WriteLegacyRankPrograms(
                                                   command.output, 0, startup, programs, options));
  bundle.ranks.push_back(std::move(rank));
  IRM_RETURN_IF_ERROR(oldir::WriteBundle(bundle, command.output));
  return BuildResult{startup.num_ops(), programs.at("main").num_ops()};
}

// The parity corpus: one bundle per case, OUTPUT/<case>; the cases keep their own steps.
int BuildCorpus(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<corpus::BundleCase>> cases = corpus::StandardCases();
  if (!cases.ok()) return Fail(cases.status(), err);
  for (const corpus::BundleCase& c : *cases) {
    const std::string dir = (std::filesystem::path(command.output) / c.name).string();
    const Status written = corpus::WriteBundleCase(c, dir, command.text_copies);
    if (!written.ok()) return Fail(written, err);
    out << fmt::format("{}: {} ranks: {}\n", dir, c.ranks.size(), c.description);
  }
  return kExitOk;
}

}  // namespace

int RunBuild(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  if (command.model == BuildCommand::Model::kCorpus) return BuildCorpus(command, out, err);
  if (command.steps < 1) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{}, "--steps must be at least 1"),
                err);
  }
  oldir::models::ModelPrograms model;
  StatusOr<BuildResult> built = Build(command, &model);
  if (!built.ok()) return Fail(built.status(), err);
  out << fmt::format("{}: wrote a single-rank bundle: startup {} ops, main {} ops, loss '{}'\n",
                     command.output, built->startup_ops, built->main_ops, model.loss);
  return kExitOk;
}

}  // namespace irm::tools
