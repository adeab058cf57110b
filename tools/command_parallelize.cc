// `ir-migrate parallelize SERIAL_BUNDLE --strategy s.json [--annotations a.json] -o BUNDLE`: a
// translated serial pir bundle (as `ir-migrate translate` writes it) made into a pir bundle of
// every rank's dense programs by the new IR's auto-parallel passes (diff_tests/
// parallelize_bundle.h). The layouts come from the annotation file, or from the strategy's
// standard placements: batch sharding for dp, Megatron's for mp, a [dp, mp] mesh for both;
// pipeline parallelism is refused. Written into a staged folder renamed into place: nothing is
// written on error, and every error of the input (bad files, layouts the rules refuse) exits 2.
#include <fmt/format.h>

#include <optional>

#include "common/file_io.h"
#include "diff_tests/parallelize_bundle.h"
#include "oldir/passes/strategy.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

Status Parallelize(const ParallelizeCommand& command, std::ostream& out) {
  std::string in_dir = command.input;
  while (in_dir.size() > 1 && in_dir.back() == '/') in_dir.pop_back();
  IRM_ASSIGN_OR_RETURN(oldir::passes::Strategy strategy,
                       oldir::passes::ReadStrategyFile(command.strategy));
  std::optional<newir::ShardAnnotations> annotations;
  if (!command.annotations.empty()) {
    IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(command.annotations));
    IRM_ASSIGN_OR_RETURN(annotations, newir::ParseShardAnnotations(text, command.annotations));
  }
  IRM_ASSIGN_OR_RETURN(diff::ParallelizedBundle made,
                       diff::ParallelizeBundle(in_dir, strategy, command.strategy, annotations));
  IRM_RETURN_IF_ERROR(diff::WriteParallelizedBundle(made, command.output));
  out << fmt::format("{}: wrote a pir bundle of {} ranks ({} process groups)\n", command.output,
                     made.programs.world_size, made.programs.process_groups.size());
  return Status::Ok();
}

}  // namespace

int RunParallelize(const ParallelizeCommand& command, std::ostream& out, std::ostream& err) {
  const Status status = Parallelize(command, out);
  if (status.ok()) return kExitOk;
  Fail(status, err);
  // Every failure here is the input's (files, strategy, layouts the rules refuse) or the
  // output folder's.
  return status.code() == StatusCode::kInternal ? kExitRuntimeFailure : kExitBadInput;
}

RegisteredCommand AddParallelizeCommand(CLI::App& parent) {
  auto command = std::make_shared<ParallelizeCommand>();
  ParallelizeCommand& parallelize = *command;
  CLI::App* parallelize_app = parent.add_subcommand(
      "parallelize",
      "Make a translated serial pir bundle into a pir bundle of every rank's dense programs: "
      "shard_tensor annotations, SPMD completion, reshard lowering, dist-to-dense");
  parallelize_app->add_option("input", parallelize.input, "Serial pir bundle directory")
      ->required();
  parallelize_app->add_option("--strategy", parallelize.strategy, "Strategy JSON")->required();
  parallelize_app->add_option("--annotations", parallelize.annotations,
                              "Annotation JSON: mesh and placements by var name (default: the "
                              "strategy's standard placements: batch sharding for dp, Megatron "
                              "for mp, a [dp, mp] mesh for both)");
  parallelize_app->add_option("-o,--output", parallelize.output, "Output bundle, a new directory")
      ->required();
  return {parallelize_app, [command](std::ostream& out, std::ostream& err) {
            return RunParallelize(*command, out, err);
          }};
}

}  // namespace irm::tools
