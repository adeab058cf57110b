// `ir-migrate engine mlp|gpt|SERIAL_BUNDLE --strategy s.json --ir legacy|pir|both -o OUT`: the
// Engine flow (diff_tests/engine_flow.h, docs/engine.md) — build, plan, parallel, init comm,
// initialize, run — by the legacy passes, the new IR's, or both, each against the serial program
// and, with both, the two against each other. A progress line per stage (and rank) on stderr, the
// summary table on stdout, the reports in OUT (report.md, report.json, report.xml) and where
// --md/--json/--junit say. --device gpu runs every run of the flow on the host-staged GPU kernel
// registry and --backend device|nccl communicates on the GPU (tools/cli_options.h), as `run`
// does. Exit 0 every pair passes, 1 a pair fails, 2 bad input (nothing written), 3 a run failed
// (a hang included; without a GPU, --device gpu: before anything is read or written).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/file_io.h"
#include "diff_tests/engine_flow.h"
#include "oldir/passes/strategy.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

struct EngineCommand {
  std::string input;  // "mlp", "gpt" or a serial legacy bundle directory
  std::string strategy;
  std::string ir = "both";
  std::string output;
  int steps = 3;
  std::optional<uint64_t> seed;
  int64_t batch_size = 4;
  std::string junit;
  std::string json;
  std::string markdown;
  std::string test_fault;
  RunDevice device = RunDevice::kCpu;
  std::string backend = "thread";
  oldir::models::MlpConfig mlp;
  oldir::models::GptConfig gpt;
  oldir::OptimizerOptions optimizer;
};

// The report files the command line names besides OUT's own copies.
Status WriteReports(const EngineCommand& command, const diff::EngineResult& result) {
  if (!command.markdown.empty()) {
    IRM_RETURN_IF_ERROR(WriteFileAtomically(command.markdown, diff::RenderEngineMarkdown(result)));
  }
  if (!command.json.empty()) {
    IRM_RETURN_IF_ERROR(WriteFileAtomically(command.json, diff::RenderEngineJson(result)));
  }
  if (!command.junit.empty()) {
    IRM_RETURN_IF_ERROR(WriteFileAtomically(command.junit, diff::RenderEngineJunit(result)));
  }
  return Status::Ok();
}

int RunEngine(const EngineCommand& command, std::ostream& out, std::ostream& err) {
  diff::EngineOptions options;
  // Before anything is read, as `run` and `parity` do: without a GPU, --device gpu is a runtime
  // failure (exit 3); a GPU backend without --device gpu is bad usage (exit 2).
  std::unique_ptr<rt::KernelRegistry> gpu_kernels;
  StatusOr<const rt::KernelRegistry*> kernels = KernelsFor(command.device, &gpu_kernels);
  if (!kernels.ok()) return Fail(kernels.status(), err);
  if (command.backend != "thread") {
    StatusOr<rt::RankWorldFactory> world =
        GpuWorldFactory(command.backend, command.device, options.timeout, /*trace=*/false);
    if (!world.ok()) return Fail(world.status(), err);
    options.make_world = std::move(world).value();
  }
  options.kernels = *kernels;
  options.device = command.device == RunDevice::kGpu ? "gpu" : "cpu";
  options.backend = command.backend;
  options.ir = *diff::EngineIrFromName(command.ir);  // CLI11 checked the name
  options.strategy_file = command.strategy;
  StatusOr<oldir::passes::Strategy> strategy = oldir::passes::ReadStrategyFile(command.strategy);
  if (!strategy.ok()) return Fail(strategy.status(), err);
  options.strategy = *strategy;
  if (!command.test_fault.empty()) {
    StatusOr<diff::EngineTestFault> fault = diff::ParseEngineTestFault(command.test_fault);
    if (!fault.ok()) return Fail(fault.status(), err);
    options.test_fault = *fault;
  }
  if (command.input == "mlp" || command.input == "gpt") {
    options.recipe.model = command.input == "mlp" ? corpus::ZooModel::kMlp : corpus::ZooModel::kGpt;
    options.recipe.mlp = command.mlp;
    options.recipe.gpt = command.gpt;
    options.recipe.optimizer = command.optimizer;
  } else if (std::filesystem::is_directory(command.input)) {
    options.serial_bundle = command.input;
  } else {
    Status status(StatusCode::kInvalidArgument, Location::File(command.input),
                  "neither a zoo model (mlp, gpt) nor a bundle directory");
    status.AddNote("ir-migrate build mlp|gpt -o DIR writes a serial bundle");
    return Fail(status, err);
  }
  options.steps = command.steps;
  options.seed = command.seed;
  options.batch_size = command.batch_size;
  options.progress = [&err](const std::string& line) { err << line << "\n" << std::flush; };

  std::string stem = std::filesystem::path(command.strategy).stem().string();
  if (options.serial_bundle.empty()) stem = command.input + "." + stem;
  diff::EngineFailure failure;
  StatusOr<diff::EngineResult> result =
      diff::RunEngineFlow(options, command.output, stem, &failure);
  if (!result.ok()) {
    Fail(result.status(), err);
    if (result.status().code() == StatusCode::kInternal) return kExitRuntimeFailure;
    return failure.input_error() ? kExitBadInput : kExitRuntimeFailure;
  }
  if (const Status written = WriteReports(command, *result); !written.ok()) {
    return Fail(written, err);
  }
  const std::string report = diff::RenderEngineMarkdown(*result);
  out << report.substr(0, report.find("\n## ")) << "\n";
  out << fmt::format("{}: {}\n", command.output,
                     result->parity() ? "every pair passes" : "a pair FAILS");
  return result->parity() ? kExitOk : kExitCheckFailed;
}

}  // namespace

RegisteredCommand AddEngineCommand(CLI::App& parent) {
  auto command = std::make_shared<EngineCommand>();
  EngineCommand& engine = *command;
  CLI::App* app = parent.add_subcommand(
      "engine",
      "The auto-parallel Engine flow (build, plan, parallel, init comm, initialize, run) by the "
      "legacy passes, the new IR's, or both, each against the serial program, with a three-way "
      "report");
  app->add_option("input", engine.input,
                  "A zoo model (mlp, gpt) or a serial legacy bundle directory")
      ->required();
  app->add_option("--strategy", engine.strategy, "Strategy JSON")->required();
  app->add_option("--ir", engine.ir, "Which passes: legacy, pir or both (three-way)")
      ->check(CLI::IsMember({"legacy", "pir", "both"}))
      ->capture_default_str();
  app->add_option("-o,--output", engine.output, "Output folder (new or empty)")->required();
  app->add_option("--steps", engine.steps, "Executor steps")
      ->check(AtLeast(1))
      ->capture_default_str();
  app->add_option_function<uint64_t>(
      "--seed", [command](uint64_t seed) { command->seed = seed; },
      "Run seed (default: the serial program's)");
  app->add_option("--batch-size", engine.batch_size, "Rows per data-parallel replica and step")
      ->check(AtLeast(1))
      ->capture_default_str();
  app->add_option("--junit", engine.junit, "Also write the JUnit XML here");
  app->add_option("--json", engine.json, "Also write the JSON report here");
  app->add_option("--md", engine.markdown, "Also write the Markdown report here");
  app->add_option("--test-fault", engine.test_fault,
                  "Test-only: break a new-IR pass on purpose (gm:scale-by-k-plus-1, gm:drop-if, "
                  "pp:wrong-peer)");
  // The zoo models' sizes and the optimizer, as `build` takes them.
  app->add_option("--depth", engine.mlp.depth, "mlp: linear layers")->capture_default_str();
  app->add_option("--in-features", engine.mlp.in_features, "mlp: input features")
      ->capture_default_str();
  app->add_option("--width", engine.mlp.width, "mlp: hidden width")->capture_default_str();
  app->add_option("--classes", engine.mlp.classes, "mlp: outputs")->capture_default_str();
  app->add_option("--layers", engine.gpt.layers, "gpt: decoder blocks")->capture_default_str();
  app->add_option("--hidden", engine.gpt.hidden, "gpt: hidden size")->capture_default_str();
  app->add_option("--heads", engine.gpt.heads, "gpt: attention heads")->capture_default_str();
  app->add_option("--vocab", engine.gpt.vocab, "gpt: vocabulary size")->capture_default_str();
  app->add_option("--seq", engine.gpt.seq, "gpt: sequence length")->capture_default_str();
  app->add_option("--dropout", engine.gpt.dropout,
                  "gpt: attention dropout probability (0 for the serial checks: dropout draws by "
                  "the local element index, which a split batch changes)")
      ->capture_default_str();
  AddOptimizerOptions(app, &engine.optimizer);
  AddDeviceOption(app, &engine.device);
  app->add_option("--backend", engine.backend,
                  "How the ranks of every run communicate: thread (in-process, reductions in rank "
                  "order; the reference), or with --device gpu: device (every rank on one GPU, "
                  "reductions in rank order) or nccl (one rank per GPU)")
      ->check(CLI::IsMember({"thread", "device", "nccl"}))
      ->capture_default_str();
  return {app, [command](std::ostream& out, std::ostream& err) {
            return RunEngine(*command, out, err);
          }};
}

}  // namespace irm::tools
