// `ir-migrate build mlp|gpt|resnet`: a model-zoo training program (startup + main, as Paddle's
// static graph writes them: forward, append_backward, optimizer, feed and fetch ops) written as a
// single-rank bundle (docs/bundle.md) whose rank runs its main program once per step; with
// `--strategy`, the per-rank programs the legacy passes (oldir/passes/) make of it. With gradient
// merge, one optimizer update takes k_steps executor steps: bundle.json's `steps` counts executor
// steps, each reading a fresh micro-batch.
// `ir-migrate build corpus`: the parity corpus (diff_tests/corpus), its cases made by the same
// code from their strategies.
// `--lr-schedule piecewise|exponential` writes a learning-rate decay as fluid's
// learning_rate_scheduler.py did (oldir/models/lr_schedule.h) in place of the constant rate.
// The output folder must be new or empty, and appears only once complete (common/staged_folder.h):
// a failed or interrupted build leaves nothing behind.
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/staged_folder.h"
#include "diff_tests/corpus/corpus.h"
#include "diff_tests/corpus/model_bundle.h"
#include "oldir/passes/strategy.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

// What `build resnet` and the learning-rate flags add to BuildCommand's fields.
struct ZooExtras {
  bool resnet = false;
  oldir::models::ResnetConfig resnet_config;
  oldir::models::LrSchedule lr_schedule;
};

// Op counts of the written programs (rank 0's), for the summary line.
struct BuildResult {
  int world_size = 1;
  int64_t startup_ops = 0;
  int64_t main_ops = 0;
  int k_steps = 1;  // executor steps per optimizer update (gradient merge)
  std::string loss;
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

// Writes the bundle into `dir` (the staging folder): the recipe of the command's flags, made and
// written by the code the corpus uses (diff_tests/corpus/model_bundle.h).
StatusOr<BuildResult> Build(const BuildCommand& command, const ZooExtras& extras,
                            const std::string& dir) {
  corpus::ModelRecipe recipe;
  recipe.model =
      command.model == BuildCommand::Model::kMlp ? corpus::ZooModel::kMlp : corpus::ZooModel::kGpt;
  if (extras.resnet) recipe.model = corpus::ZooModel::kResnet;
  recipe.mlp = command.mlp;
  recipe.gpt = command.gpt;
  recipe.resnet = extras.resnet_config;
  recipe.lr_schedule = extras.lr_schedule;
  recipe.optimizer = command.optimizer;
  recipe.steps = command.steps;
  recipe.batch_size = command.batch_size;
  recipe.job_lists = command.job_lists;
  if (!command.strategy.empty()) {
    IRM_ASSIGN_OR_RETURN(recipe.strategy, oldir::passes::ReadStrategyFile(command.strategy));
    recipe.annotations = command.annotations;
  }
  IRM_ASSIGN_OR_RETURN(corpus::ModelBundle made, corpus::MakeModelBundle(recipe));
  oldir::RankProgramsOptions options;
  options.text_copies = command.text_copies;
  IRM_RETURN_IF_ERROR(corpus::WriteModelBundle(made, dir, options).status());
  return BuildResult{made.bundle.world_size, made.ranks[0].startup.num_ops(),
                     made.ranks[0].main.num_ops(), made.k_steps, made.loss};
}

// The parity corpus: one bundle per case, OUTPUT/<case>; the cases keep their own steps.
int BuildCorpus(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<corpus::BundleCase>> cases = corpus::CorpusCases();
  if (!cases.ok()) return Fail(cases.status(), err);
  StatusOr<StagedFolder> staged = StagedFolder::Begin(command.output);
  if (!staged.ok()) return Fail(staged.status(), err);
  // The lines name the final folders, so they are printed once those exist.
  std::string lines;
  for (const corpus::BundleCase& c : *cases) {
    const std::string dir = (std::filesystem::path(staged->path()) / c.name).string();
    const Status written = corpus::WriteBundleCase(c, dir, command.text_copies);
    if (!written.ok()) return Fail(staged->Relocate(written), err);
    lines += fmt::format("{}: {} rank{}: {}\n",
                         (std::filesystem::path(command.output) / c.name).string(),
                         c.bundle.world_size, c.bundle.world_size == 1 ? "" : "s", c.description);
  }
  if (const Status committed = staged->Commit(); !committed.ok()) return Fail(committed, err);
  out << lines;
  return kExitOk;
}

int RunBuildWith(const BuildCommand& command, const ZooExtras& extras, std::ostream& out,
                 std::ostream& err) {
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
  StatusOr<StagedFolder> staged = StagedFolder::Begin(command.output);
  if (!staged.ok()) return Fail(staged.status(), err);
  StatusOr<BuildResult> built = Build(command, extras, staged->path());
  if (!built.ok()) return Fail(staged->Relocate(built.status()), err);
  if (const Status committed = staged->Commit(); !committed.ok()) return Fail(committed, err);
  if (built->world_size == 1) {
    out << fmt::format("{}: wrote a single-rank bundle: startup {} ops, main {} ops, loss '{}'\n",
                       command.output, built->startup_ops, built->main_ops, built->loss);
  } else {
    out << fmt::format(
        "{}: wrote a {}-rank bundle: startup {} ops, main {} ops per rank, loss '{}'\n",
        command.output, built->world_size, built->startup_ops, built->main_ops, built->loss);
  }
  if (built->k_steps > 1) {
    out << fmt::format("gradient merge: one optimizer update every {} executor steps\n",
                       built->k_steps);
  }
  return kExitOk;
}

}  // namespace

int RunBuild(const BuildCommand& command, std::ostream& out, std::ostream& err) {
  return RunBuildWith(command, ZooExtras{}, out, err);
}

namespace {

void AddMlpOptions(CLI::App* app, oldir::models::MlpConfig* c) {
  app->add_option("--depth", c->depth, "Linear layers")->capture_default_str();
  app->add_option("--in-features", c->in_features, "Input features")->capture_default_str();
  app->add_option("--width", c->width, "Hidden width")->capture_default_str();
  app->add_option("--classes", c->classes, "Outputs")->capture_default_str();
  AddNamedOption(app, "--activation", &c->activation, {"relu", "gelu", "tanh", "sigmoid"},
                 oldir::models::MlpActivationFromName, "Activation (default relu)");
  AddNamedOption(app, "--loss", &c->loss, {"softmax_cross_entropy", "mse"},
                 oldir::models::MlpLossFromName, "Loss (default softmax_cross_entropy)");
  app->add_option("--seed", c->seed, "Program random seed")->capture_default_str();
}

void AddGptOptions(CLI::App* app, oldir::models::GptConfig* c) {
  app->add_option("--layers", c->layers, "Decoder blocks")->capture_default_str();
  app->add_option("--hidden", c->hidden, "Hidden size")->capture_default_str();
  app->add_option("--heads", c->heads, "Attention heads (divide hidden)")->capture_default_str();
  app->add_option("--vocab", c->vocab, "Vocabulary size")->capture_default_str();
  app->add_option("--seq", c->seq, "Sequence length")->capture_default_str();
  app->add_option("--dropout", c->dropout, "Attention dropout probability")->capture_default_str();
  app->add_option("--seed", c->seed, "Program random seed")->capture_default_str();
}

void AddResnetOptions(CLI::App* app, oldir::models::ResnetConfig* c) {
  AddNamedOption(
      app, "--block", &c->block, {"bottleneck", "basic"},
      [](std::string_view name) -> std::optional<oldir::models::ResnetBlock> {
        for (oldir::models::ResnetBlock b :
             {oldir::models::ResnetBlock::kBottleneck, oldir::models::ResnetBlock::kBasic}) {
          if (name == oldir::models::ResnetBlockName(b)) return b;
        }
        return std::nullopt;
      },
      "Residual block (default bottleneck)");
  app->add_option("--depth", c->depth, "Blocks per stage, one value per stage")
      ->capture_default_str();
  app->add_option("--width", c->width, "Stem filters and stage 0 width")->capture_default_str();
  app->add_option("--channels", c->channels, "Image channels")->capture_default_str();
  app->add_option("--image-size", c->image_size, "Image height and width")->capture_default_str();
  app->add_option("--classes", c->classes, "Classes")->capture_default_str();
  app->add_option("--top-k", c->top_k, "The second accuracy's k")->capture_default_str();
  app->add_option("--seed", c->seed, "Program random seed")->capture_default_str();
}

void AddLrScheduleOptions(CLI::App* app, oldir::models::LrSchedule* s) {
  AddNamedOption(app, "--lr-schedule", &s->decay, {"constant", "piecewise", "exponential"},
                 oldir::models::LrDecayFromName,
                 "Learning-rate decay written into the program (default constant)");
  app->add_option("--lr-boundaries", s->boundaries, "piecewise: step boundaries")
      ->capture_default_str();
  app->add_option("--lr-values", s->values, "piecewise: rates, one more than boundaries")
      ->capture_default_str();
  app->add_option("--lr-base", s->learning_rate, "exponential: initial rate")
      ->capture_default_str();
  app->add_option("--lr-decay-steps", s->decay_steps, "exponential: decay steps")
      ->capture_default_str();
  app->add_option("--lr-decay-rate", s->decay_rate, "exponential: decay rate")
      ->capture_default_str();
  app->add_flag("--lr-staircase", s->staircase, "exponential: floor the exponent");
}

}  // namespace

RegisteredCommand AddBuildCommand(CLI::App& parent) {
  auto command = std::make_shared<BuildCommand>();
  auto extras = std::make_shared<ZooExtras>();
  BuildCommand& build = *command;
  CLI::App* build_app = parent.add_subcommand(
      "build",
      "Build a model-zoo training program (startup + main, forward, backward, optimizer) "
      "as a single-rank bundle directory");
  build_app->require_subcommand(1);
  build_app->add_option("-o,--output", build.output, "The bundle directory to write")->required();
  build_app->add_flag("--text", build.text_copies, "Also write .prototxt copies of the programs");
  build_app->add_option("--steps", build.steps, "Training steps the bundle asks for")
      ->capture_default_str();
  build_app->add_option("--strategy", build.strategy,
                        "A strategy JSON file (dp_degree, dp_optimization, ...): write the "
                        "per-rank programs of its distributed run instead of one rank");
  build_app
      ->add_option("--batch-size", build.batch_size,
                   "Rows per data-parallel replica and step: a pipeline's send/recv shapes "
                   "are static, so its bundle's feeds fix dim 0 to this")
      ->capture_default_str();
  build_app->add_option("--annotations", build.annotations,
                        "A dist sidecar (binary or text) placing every parameter over the "
                        "model-parallel mesh, in place of the Megatron placements");
  AddNamedOption(
      build_app, "--job-lists", &build.job_lists, {"legacy", "pir"},
      [](std::string_view name) -> std::optional<schedules::JobListIr> {
        if (name == "legacy") return schedules::JobListIr::kLegacy;
        if (name == "pir") return schedules::JobListIr::kPir;
        return std::nullopt;
      },
      "A pipeline's jobs as Paddle's legacy passes make them (legacy, default) or as its PIR "
      "passes do (pir: recv_forward and send_backward jobs for 1F1B and VPP)");
  AddOptimizerOptions(build_app, &build.optimizer);
  AddLrScheduleOptions(build_app, &extras->lr_schedule);
  CLI::App* mlp_app = build_app->add_subcommand("mlp", "Linear layers with an activation");
  AddMlpOptions(mlp_app, &build.mlp);
  CLI::App* gpt_app = build_app->add_subcommand("gpt", "A small GPT-style decoder");
  AddGptOptions(gpt_app, &build.gpt);
  CLI::App* resnet_app = build_app->add_subcommand(
      "resnet",
      "A small ResNet (conv2d, batch_norm, pool2d, fc) as Paddle's static scripts write it");
  AddResnetOptions(resnet_app, &extras->resnet_config);
  CLI::App* corpus_app = build_app->add_subcommand(
      "corpus",
      "The parity corpus: distributed bundles the legacy passes make from strategies (data, "
      "tensor and pipeline parallel, gradient merge, hybrids), each in OUTPUT/<case>");
  // Options of `build` may also follow the model name: `build gpt --layers 2 -o OUT`.
  mlp_app->fallthrough();
  gpt_app->fallthrough();
  resnet_app->fallthrough();
  corpus_app->fallthrough();
  return {build_app,
          [command, extras, gpt_app, resnet_app, corpus_app](std::ostream& out, std::ostream& err) {
            command->model = gpt_app->parsed()      ? BuildCommand::Model::kGpt
                             : corpus_app->parsed() ? BuildCommand::Model::kCorpus
                                                    : BuildCommand::Model::kMlp;
            extras->resnet = resnet_app->parsed();
            return RunBuildWith(*command, *extras, out, err);
          }};
}

}  // namespace irm::tools
