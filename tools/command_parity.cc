// `ir-migrate parity`: runs a legacy program (after its startup program) and its new-IR twin — a
// given new-IR program, or the legacy program translated on the fly — on the reference runtime for
// N steps with the same feeds, compares every fetch, every persistable var and every aligned
// intermediate, localises the first divergence and re-runs the suspect op in isolation. Markdown
// on stdout; JSON and JUnit reports and .npy dumps on request. Exit 0 parity, 1 mismatch, 2 bad
// input, 3 runtime failure. A bundle directory runs every rank of it and of its pir twin on the
// thread world, or the GPU's with --backend device|nccl (bundle_parity.h), and adds each rank's
// communication to the comparison; a hang in either run is a runtime failure with what every rank
// was waiting for. A distributed bundle against its serial one-rank bundle (serial_parity.h) runs
// both, and compares the losses and the parameters and optimizer state reassembled from the ranks,
// in the reordered or noise-floor tier.
// --device gpu runs both sides — of a program file, of a bundle, or the distributed and serial
// runs — on the host-staged GPU kernel registry (tools/cli_options.h, KernelsFor); --backend
// device|nccl names a bundle's GPU world as `run --ranks` takes it (GpuWorldFactory).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "common/file_io.h"
#include "common/npy.h"
#include "diff_tests/bundle_parity.h"
#include "diff_tests/parity_run.h"
#include "diff_tests/serial_parity.h"
#include "newir/verifier.h"
#include "oldir/bundle.h"
#include "reference_runtime/program_file.h"
#include "schedules/p2p_model.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"
#include "tools/run_inputs.h"
#include "translator/translate.h"

namespace irm::tools {
namespace {

// Failures before anything runs — files, formats, flags, translation — are bad input.
int FailInput(const Status& status, std::ostream& err) {
  err << status.diagnostic().Render();
  return kExitBadInput;
}

// Loads `path` and insists on its IR.
StatusOr<rt::LoadedProgram> LoadAs(const std::string& path, bool new_ir, const char* role) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status(StatusCode::kUnimplemented, Location::File(path),
                  fmt::format("the {} is a directory: a bundle is compared with a bundle; give "
                              "one program file",
                              role));
  }
  IRM_ASSIGN_OR_RETURN(rt::LoadedProgram loaded, rt::LoadProgramForRun(path, {}));
  if (loaded.new_ir != new_ir) {
    return Status(StatusCode::kInvalidArgument, Location::File(path),
                  fmt::format("the {} must be a {} program, and this is a {} one", role,
                              new_ir ? "new-IR" : "legacy", loaded.new_ir ? "new-IR" : "legacy"));
  }
  return loaded;
}

StatusOr<translator::Translation> Translate(const oldir::Program& program,
                                            const std::string& file) {
  IRM_ASSIGN_OR_RETURN(translator::Translation t,
                       translator::TranslateProgram(program, {.file = file}));
  IRM_RETURN_IF_ERROR(newir::VerifyProgram(t.program, {.file = file + " (translated)"}));
  return t;
}

// "legacy.step1.fc_0.tmp_0.npy": a name safe in any file system.
std::string DumpName(const std::string& side, const rt::OpRecord& record,
                     const rt::OutputRecord& output, int occurrence) {
  std::string name;
  for (char c : output.name) {
    name +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '@'
            ? c
            : '_';
  }
  return fmt::format("{}.step{}.{}{}.npy", side, record.step, name,
                     occurrence > 0 ? fmt::format(".{}", occurrence) : "");
}

// Writes every kept tensor of `trace` (the first divergence's, those --dump-name asked for).
StatusOr<int> DumpTrace(const diff::Trace& trace, const std::string& side, const std::string& dir) {
  std::map<std::pair<int, std::string>, int> seen;
  int written = 0;
  for (const rt::OpRecord& record : trace) {
    for (const rt::OutputRecord& output : record.outputs) {
      if (!output.produced || !output.tensor) continue;
      const int occurrence = seen[{record.step, output.name}]++;
      IRM_RETURN_IF_ERROR(
          SaveNpy(output.tensor->ToHost(), dir + "/" + DumpName(side, record, output, occurrence)));
      ++written;
    }
  }
  return written;
}

bool ProgressOnTerminal(const std::ostream& err) {
  return &err == &std::cerr && isatty(STDERR_FILENO);
}

Status CreateDumpDir(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(dir),
                  fmt::format("cannot create the dump folder: {}", ec.message()));
  }
  return Status::Ok();
}

// Writes the reports and dumps asked for, prints the Markdown and returns the verdict's exit code.
int Emit(const ParityCommand& command, const diff::ParityResult& result, std::ostream& out,
         std::ostream& err) {
  const diff::ParityReport& report = result.report;
  if (!command.report.empty()) {
    const Status written = WriteFileAtomically(command.report, diff::RenderJson(report));
    if (!written.ok()) return FailInput(written, err);
  }
  if (!command.junit.empty()) {
    // The suite is named after the file ("parity.<stem>"), so that merged files of several runs
    // keep every test suite and test apart.
    const std::string suite_name = "parity." + std::filesystem::path(command.junit).stem().string();
    const Status written =
        WriteFileAtomically(command.junit, diff::RenderJunit(report, suite_name));
    if (!written.ok()) return FailInput(written, err);
  }
  if (!command.trace.empty()) {
    const Status written = WriteFileAtomically(command.trace, result.chrome_trace);
    if (!written.ok()) return FailInput(written, err);
  }
  if (!command.dump_dir.empty()) {
    StatusOr<int> a = DumpTrace(result.old_trace, "legacy", command.dump_dir);
    if (!a.ok()) return FailInput(a.status(), err);
    StatusOr<int> b = DumpTrace(result.new_trace, "new", command.dump_dir);
    if (!b.ok()) return FailInput(b.status(), err);
    err << fmt::format("dumped {} tensors to {}\n", *a + *b, command.dump_dir);
  }
  out << diff::RenderMarkdown(report);
  return report.parity() ? kExitOk : kExitCheckFailed;
}

// The world of a bundle's runs: unset for the thread backend; for --backend device|nccl the GPU's,
// as `run --ranks` makes it (GpuWorldFactory: bad usage without --device gpu, a runtime failure
// in a build without the CUDA backend). `trace`: record every rank's calls (bundle parity compares
// them). CLI11 refuses any other backend (Gloo's runs are `run --backend gloo`'s).
StatusOr<rt::RankWorldFactory> BundleWorld(const ParityCommand& command, RunDevice device,
                                           bool trace) {
  if (command.backend == "thread") return rt::RankWorldFactory{};
  return GpuWorldFactory(command.backend, device, diff::BundleParityOptions{}.timeout, trace);
}

// A legacy bundle against its pir twin, every rank at once on the thread world (or the GPU's:
// BundleWorld), every rank's kernels from `kernels` (null: the CPU's).
int RunBundleParity(const ParityCommand& command, RunDevice device,
                    const rt::KernelRegistry* kernels, std::ostream& out, std::ostream& err) {
  StatusOr<rt::RankWorldFactory> world = BundleWorld(command, device, /*trace=*/true);
  if (!world.ok()) return Fail(world.status(), err);
  if (!command.startup.empty()) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{},
                            "--startup names one program's startup: every rank of a bundle runs "
                            "its own"),
                     err);
  }
  StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(command.legacy);
  if (!bundle.ok()) return FailInput(bundle.status(), err);
  if (command.ranks != 0 && command.ranks != bundle->world_size) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.legacy),
                            fmt::format("--ranks {} is not the bundle's world size {}",
                                        command.ranks, bundle->world_size)),
                     err);
  }
  std::error_code ec;
  if (!command.against.empty() && !std::filesystem::is_directory(command.against, ec)) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.against),
                            "--against must be a pir bundle directory when the legacy input is "
                            "a bundle"),
                     err);
  }
  if (command.steps && *command.steps < 1) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{},
                            fmt::format("--steps must be at least 1, got {}", *command.steps)),
                     err);
  }
  StatusOr<rt::FeedMap> feeds = ReadFeeds(command.feeds);
  if (!feeds.ok()) return FailInput(feeds.status(), err);
  if (const Status dump = CreateDumpDir(command.dump_dir); !dump.ok()) return FailInput(dump, err);

  diff::BundleParityOptions options;
  if (!command.p2p.empty()) {
    StatusOr<schedules::P2pModel> p2p = schedules::ParseP2pModel(command.p2p);
    if (!p2p.ok()) return FailInput(p2p.status(), err);
    options.p2p = *p2p;
  }
  options.steps = command.steps.value_or(0);
  options.seed = command.seed;
  options.feeds = std::move(feeds).value();
  options.batch_size = command.batch_size;
  options.tier = command.tier.value_or(diff::Tier::kExact);
  options.gemm = command.gemm;
  options.keep = command.dump_names;
  options.chrome_trace = !command.trace.empty();
  options.kernels = kernels;
  options.make_world = std::move(world).value();
  if (ProgressOnTerminal(err)) {
    options.progress = [&err](const std::string& side, int rank, int step, int steps) {
      err << fmt::format("{} run: rank {} step {}/{}\n", side, rank, step, steps);
      err.flush();
    };
  }
  StatusOr<diff::ParityResult> result =
      diff::RunBundleParity(command.legacy, command.against, options);
  if (!result.ok()) return FailRun(result.status(), err);
  return Emit(command, *result, out, err);
}

}  // namespace

// A distributed legacy bundle (`command.legacy`) against the serial one-rank bundle in `serial`,
// in `tier`, sends returning under `p2p` (schedules::ParseP2pModel). What the serial check cannot
// honour is refused rather than ignored: given feeds (the replicas would all read them whole), a
// new-IR side, the intermediates' dumps and the trace. Both runs' kernels come from `kernels`
// (null: the CPU's), on `device`.
int RunSerialParityCommand(const ParityCommand& command, const std::string& serial, diff::Tier tier,
                           const std::string& p2p, RunDevice device,
                           const rt::KernelRegistry* kernels, std::ostream& out,
                           std::ostream& err) {
  StatusOr<rt::RankWorldFactory> world = BundleWorld(command, device, /*trace=*/false);
  if (!world.ok()) return Fail(world.status(), err);
  auto refuse = [&err](const std::string& message) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{}, message), err);
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(command.legacy, ec)) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.legacy),
                            "--serial checks a distributed bundle directory against the serial "
                            "bundle; this is not a directory"),
                     err);
  }
  if (!std::filesystem::is_directory(serial, ec)) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(serial),
                            "--serial must be the serial program's one-rank bundle directory"),
                     err);
  }
  if (!command.against.empty()) {
    return refuse(
        "--against compares with a new-IR twin; --serial with the serial program: give "
        "one");
  }
  if (!command.startup.empty()) {
    return refuse("--startup names one program's startup: every rank of a bundle runs its own");
  }
  if (!command.feeds.empty()) {
    return refuse(
        "--feed with --serial: the feeds are drawn for the global batch and split by "
        "replica, and a given feed would be read whole by every replica");
  }
  if (!command.dump_dir.empty() || !command.dump_names.empty() || !command.trace.empty()) {
    return refuse(
        "--dump, --dump-name and --trace show a translation's ops; the serial check "
        "compares losses and state and keeps no op's tensors");
  }
  if (tier == diff::Tier::kExact) {
    return refuse(
        "--tier exact with --serial: a distributed run sums in another order than the "
        "serial one; use reordered (the default) or noise-floor");
  }
  if (command.steps && *command.steps < 1) {
    return refuse(fmt::format("--steps must be at least 1, got {}", *command.steps));
  }
  if (command.ranks != 0) {
    StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(command.legacy);
    if (!bundle.ok()) return FailInput(bundle.status(), err);
    if (command.ranks != bundle->world_size) {
      return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.legacy),
                              fmt::format("--ranks {} is not the bundle's world size {}",
                                          command.ranks, bundle->world_size)),
                       err);
    }
  }
  diff::SerialParityOptions options;
  if (!p2p.empty()) {
    StatusOr<schedules::P2pModel> p2p_model = schedules::ParseP2pModel(p2p);
    if (!p2p_model.ok()) return FailInput(p2p_model.status(), err);
    options.p2p = *p2p_model;
  }
  options.steps = command.steps.value_or(0);
  options.seed = command.seed;
  options.batch_size = command.batch_size;
  options.tier = tier;
  options.gemm = command.gemm;
  options.kernels = kernels;
  options.make_world = std::move(world).value();
  if (ProgressOnTerminal(err)) {
    options.progress = [&err](const std::string& side, int rank, int step, int steps) {
      err << fmt::format("{} run: rank {} step {}/{}\n", side, rank, step, steps);
      err.flush();
    };
  }
  StatusOr<diff::ParityResult> result = diff::RunSerialParity(command.legacy, serial, options);
  if (!result.ok()) return FailRun(result.status(), err);
  return Emit(command, *result, out, err);
}

namespace {

// RunParity on `device`, with both sides' kernels from `kernels` (null: the CPU's).
int RunParityOn(const ParityCommand& command, RunDevice device, const rt::KernelRegistry* kernels,
                std::ostream& out, std::ostream& err) {
  if (!command.serial.empty()) {
    return RunSerialParityCommand(command, command.serial,
                                  command.tier.value_or(diff::Tier::kReordered), command.p2p,
                                  device, kernels, out, err);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(command.legacy, ec)) {
    return RunBundleParity(command, device, kernels, out, err);
  }
  if (!command.p2p.empty()) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{},
                            "--p2p applies to the multi-rank runs of a bundle"),
                     err);
  }
  if (command.backend != "thread") {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{},
                            fmt::format("--backend {} applies to the multi-rank runs of a bundle",
                                        command.backend)),
                     err);
  }
  if (command.ranks != 0) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.legacy),
                            "--ranks compares a bundle directory, not a program file"),
                     err);
  }
  StatusOr<rt::LoadedProgram> legacy = LoadAs(command.legacy, false, "legacy program");
  if (!legacy.ok()) return FailInput(legacy.status(), err);
  std::optional<rt::LoadedProgram> startup;
  if (!command.startup.empty()) {
    StatusOr<rt::LoadedProgram> s = LoadAs(command.startup, false, "startup program");
    if (!s.ok()) return FailInput(s.status(), err);
    startup = std::move(s).value();
  }
  std::optional<rt::LoadedProgram> against;
  std::optional<translator::Translation> translated_main;
  if (!command.against.empty()) {
    StatusOr<rt::LoadedProgram> a = LoadAs(command.against, true, "--against program");
    if (!a.ok()) return FailInput(a.status(), err);
    against = std::move(a).value();
  } else {
    StatusOr<translator::Translation> t = Translate(*legacy->legacy, command.legacy);
    if (!t.ok()) return FailInput(t.status(), err);
    translated_main = std::move(t).value();
  }
  std::optional<translator::Translation> translated_startup;
  if (startup) {
    StatusOr<translator::Translation> t = Translate(*startup->legacy, command.startup);
    if (!t.ok()) return FailInput(t.status(), err);
    translated_startup = std::move(t).value();
  }
  StatusOr<rt::FeedMap> feeds = ReadFeeds(command.feeds);
  if (!feeds.ok()) return FailInput(feeds.status(), err);
  const int steps = command.steps.value_or(1);
  if (steps < 1) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location{},
                            fmt::format("--steps must be at least 1, got {}", steps)),
                     err);
  }
  if (const Status dump = CreateDumpDir(command.dump_dir); !dump.ok()) return FailInput(dump, err);

  diff::ParityPrograms programs;
  programs.legacy_main = legacy->legacy.get();
  programs.legacy_startup = startup ? startup->legacy.get() : nullptr;
  programs.new_main = against ? against->pir.get() : &translated_main->program;
  programs.new_startup = translated_startup ? &translated_startup->program : nullptr;
  programs.legacy_file = command.legacy;
  programs.new_file = command.against;
  diff::ParityOptions options;
  options.steps = steps;
  options.feeds = std::move(feeds).value();
  options.seed = command.seed.value_or(0);
  options.batch_size = command.batch_size;
  options.tier = command.tier.value_or(diff::Tier::kExact);
  options.gemm = command.gemm;
  options.kernels = kernels;
  options.keep = command.dump_names;
  options.chrome_trace = !command.trace.empty();
  if (ProgressOnTerminal(err)) {
    options.progress = [&err](const std::string& side, int step, int steps) {
      err << fmt::format("\r{} run: step {}/{}", side, step, steps) << (step == steps ? "\n" : "");
      err.flush();
    };
  }
  StatusOr<diff::ParityResult> result = diff::RunParity(programs, options);
  if (!result.ok()) return FailRun(result.status(), err);
  return Emit(command, *result, out, err);
}

int RunParityOnDevice(const ParityCommand& command, RunDevice device, std::ostream& out,
                      std::ostream& err) {
  // Before anything is read: without a GPU, --device gpu is a runtime failure (exit 3).
  std::unique_ptr<rt::KernelRegistry> gpu_kernels;
  StatusOr<const rt::KernelRegistry*> kernels = KernelsFor(device, &gpu_kernels);
  if (!kernels.ok()) return FailRun(kernels.status(), err);
  return RunParityOn(command, device, *kernels, out, err);
}

}  // namespace

int RunParity(const ParityCommand& command, std::ostream& out, std::ostream& err) {
  return RunParityOnDevice(command, RunDevice::kCpu, out, err);
}

RegisteredCommand AddParityCommand(CLI::App& parent) {
  auto command = std::make_shared<ParityCommand>();
  // Beside the command (ParityCommand has no device field yet).
  auto device = std::make_shared<RunDevice>(RunDevice::kCpu);
  ParityCommand& parity = *command;
  CLI::App* parity_app = parent.add_subcommand(
      "parity",
      "Run a legacy program (or every rank of a legacy bundle) and its new-IR twin (--against, "
      "or translated on the fly) side by side and compare every fetch, persistable var, aligned "
      "intermediate and, for a bundle, each rank's communication; exit 0 parity, 1 mismatch, "
      "2 bad input, 3 runtime failure (a hang included)");
  parity_app->add_option("legacy", parity.legacy, "Legacy program file or bundle directory")
      ->required();
  parity_app->add_option("--startup", parity.startup,
                         "Legacy startup program, run once first (translated for the new IR)");
  parity_app->add_option("--against", parity.against,
                         "New-IR program (pir bundle for a bundle) to compare with (default: "
                         "translate the legacy one)");
  parity_app->add_option("--serial", parity.serial,
                         "The serial program's one-rank bundle: check the distributed bundle "
                         "against it (losses, parameters and optimizer state reassembled from "
                         "the ranks) instead of against a translation");
  parity_app->add_option("--steps", parity.steps, "Training steps (default: the bundle's, else 1)");
  parity_app->add_option("--feed", parity.feeds,
                         "A feed for every step: NAME=FILE.npy (repeatable; others are random)");
  parity_app->add_option("--seed", parity.seed,
                         "Seed of random feeds and random ops (default: the bundle's, else 0)");
  parity_app->add_option("--ranks", parity.ranks,
                         "A bundle: every rank at once (N must be the world size; default: it)");
  parity_app
      ->add_option("--backend", parity.backend,
                   "A bundle's communication backend: thread (in-process, reductions in rank "
                   "order; the reference), or with --device gpu: device (every rank on one GPU, "
                   "reductions in rank order) or nccl (one rank per GPU)")
      ->check(CLI::IsMember({"thread", "device", "nccl"}))
      ->capture_default_str();
  parity_app->add_option(
      "--p2p", parity.p2p,
      "For a bundle: when a send returns, rendezvous or buffered[=K] (a pipeline's "
      "1F1B needs buffered sends, as NCCL gives them); default: the model "
      "bundle.json states, else rendezvous");
  parity_app->add_option("--batch-size", parity.batch_size, "The -1 dims of random feeds")
      ->capture_default_str();
  AddNamedOption(parity_app, "--tier", &parity.tier, {"exact", "reordered", "noise-floor"},
                 diff::TierFromName,
                 "Tolerance tier (default exact: bitwise; with --serial, reordered; noise-floor: "
                 "a float64 shadow of the serial program arbitrates, --serial only)");
  parity_app->add_option("--report", parity.report, "Write the JSON report to this file");
  parity_app->add_option("--junit", parity.junit, "Write a JUnit XML report to this file");
  parity_app->add_option("--trace", parity.trace,
                         "Write a Chrome trace of both runs (a process per side and rank; opens "
                         "in Perfetto)");
  parity_app->add_option("--dump", parity.dump_dir,
                         "Write the kept tensors (the first divergence's, --dump-name's) as .npy");
  parity_app->add_option("--dump-name", parity.dump_names,
                         "Keep (and dump) the tensors of names matching this glob (repeatable)");
  AddNamedOption(
      parity_app, "--gemm", &parity.gemm, {"blas", "reference"},
      [](std::string_view name) -> std::optional<rt::GemmMode> {
        if (name == "blas") return rt::GemmMode::kBlas;
        if (name == "reference") return rt::GemmMode::kReference;
        return std::nullopt;
      },
      "Matrix products by OpenBLAS (blas, default) or by fixed-order loops (reference)");
  AddDeviceOption(parity_app, device.get());
  return {parity_app, [command, device](std::ostream& out, std::ostream& err) {
            return RunParityOnDevice(*command, *device, out, err);
          }};
}

}  // namespace irm::tools
