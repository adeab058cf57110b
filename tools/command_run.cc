// `ir-migrate run`: runs a program — legacy or new IR, told apart by content — or one rank of a
// bundle (or, with --ranks, every rank of it at once: as threads on the thread or the Gloo
// backend, or as one process per rank on Gloo; sends under the --p2p model) on the reference
// runtime: the startup program once, then N steps of the main program (a bundle rank: of its
// plan's jobs over micro-batches, bundle_run.h; or of its main program), with feeds from .npy
// files (each one the program reads) or drawn at random from the seed; prints each step's fetches
// (one line per tensor: dtype, shape, a few values, min/max/mean and a hash of the bytes, so two
// runs can be compared at a glance), or JSON; optionally saves every persistable var afterwards as
// a .pdiparams file (sorted by name, as Paddle's save_combine). A failure exits with the same code
// for one rank (--rank) as for all (--ranks). --device gpu runs the same executors on the
// host-staged GPU kernel registry (tools/cli_options.h, KernelsFor), and with --ranks may move the
// communication onto the GPU too: --backend device (every rank on one GPU) or nccl (one rank per
// GPU).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "oldir/bundle.h"
#include "oldir/params_io.h"
#include "reference_runtime/bundle_run.h"
#include "reference_runtime/chrome_trace.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/program_file.h"
#include "reference_runtime/run.h"
#include "schedules/p2p_model.h"
#ifdef IRM_HAVE_GLOO
#include "reference_runtime/comm/gloo_world.h"
#include "tools/gloo_launch.h"
#endif
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"
#include "tools/run_inputs.h"

namespace irm::tools {
namespace {

// The tensor's elements as doubles (for the summary line).
std::vector<double> Values(const rt::Tensor& t) {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(rt::ElementAsDouble(t, i));
  return v;
}

// The bytes' FNV-1a: equal hashes, equal bits (with overwhelming likelihood).
uint64_t HashBytes(const rt::Tensor& t) {
  return rt::Fnv1a(std::string_view(static_cast<const char*>(t.raw()), t.nbytes()));
}

std::string Summary(const rt::Fetch& f) {
  const std::vector<double> v = Values(f.tensor);
  std::string head;
  for (size_t i = 0; i < std::min<size_t>(v.size(), 4); ++i) {
    head += fmt::format("{}{:.9g}", i == 0 ? "" : ", ", v[i]);
  }
  if (v.size() > 4) head += ", ...";
  std::string stats;
  if (v.size() > 1) {
    double sum = 0;
    for (double x : v) sum += x;
    stats =
        fmt::format("  min {:.6g} max {:.6g} mean {:.6g}", *std::min_element(v.begin(), v.end()),
                    *std::max_element(v.begin(), v.end()), sum / static_cast<double>(v.size()));
  }
  return fmt::format("{} = {} [{}]{}  hash {:016x}", f.name, f.tensor.Describe(), head, stats,
                     HashBytes(f.tensor));
}

nlohmann::json FetchJson(const rt::Fetch& f) {
  nlohmann::json j = {{"name", f.name},
                      {"dtype", DTypeName(f.tensor.dtype())},
                      {"shape", f.tensor.shape()},
                      {"hash", fmt::format("{:016x}", HashBytes(f.tensor))}};
  const std::vector<double> v = Values(f.tensor);
  if (v.size() <= 16) j["values"] = v;
  return j;
}

Status SaveParams(const rt::Scope& scope, const std::string& path) {
  std::vector<oldir::ParamTensor> params;
  for (const std::string& name : scope.LocalNames()) {
    const rt::Tensor* t = scope.Find(name);
    if (t == nullptr || !t->defined()) continue;
    params.push_back({.name = name, .tensor = t->ToHost(), .lod = {}});
  }
  return oldir::SaveParams(params, path);
}

// Prints each step's fetches as they come (one line per tensor), or gathers them for --json.
class StepPrinter {
 public:
  StepPrinter(const RunCommand& command, int steps, std::ostream& out)
      : json_(command.json), steps_(steps), out_(out) {}

  // `rank` >= 0 labels the step with the rank that ran it (a --ranks run).
  void Print(int step, const std::vector<rt::Fetch>& fetches, int rank = -1) {
    if (json_) {
      nlohmann::json list = nlohmann::json::array();
      for (const rt::Fetch& f : fetches) list.push_back(FetchJson(f));
      nlohmann::json entry = {{"step", step}, {"fetches", list}};
      if (rank >= 0) entry["rank"] = rank;
      json_steps_.push_back(std::move(entry));
      return;
    }
    out_ << fmt::format("step {}/{}{}:", step, steps_,
                        rank >= 0 ? fmt::format(" rank {}", rank) : "")
         << (fetches.empty() ? " (nothing fetched)\n" : "\n");
    for (const rt::Fetch& f : fetches) out_ << "  " << Summary(f) << "\n";
    out_.flush();
  }

  void Finish(const RunCommand& command, const std::string& program, bool new_ir, uint64_t seed) {
    if (!json_) return;
    nlohmann::json summary = {{"program", program},
                              {"ir", new_ir ? "pir" : "legacy"},
                              {"gemm", rt::GemmModeName(command.gemm)},
                              {"seed", seed},
                              {"steps", json_steps_}};
    // Only a GPU run says so: a CPU run's JSON stays what it was.
    if (gpu_) summary["device"] = "gpu";
    out_ << summary.dump(2) << "\n";
  }

  void SetGpu() { gpu_ = true; }

 private:
  bool json_;
  bool gpu_ = false;
  int steps_;
  std::ostream& out_;
  nlohmann::json json_steps_ = nlohmann::json::array();
};

int SaveIfAsked(const RunCommand& command, const rt::Scope& scope, std::ostream& err) {
  if (command.save_params.empty()) return kExitOk;
  const Status saved = SaveParams(scope, command.save_params);
  if (!saved.ok()) return Fail(saved, err);
  err << fmt::format("saved {} persistable vars to {}\n", scope.LocalNames().size(),
                     command.save_params);
  return kExitOk;
}

// One rank of a bundle: its plan (or main, once per step) over micro-batches; each step prints
// the fetches merged over the micro-batches.
int RunBundle(const RunCommand& command, const rt::KernelRegistry* kernels, rt::FeedMap feeds,
              std::ostream& out, std::ostream& err) {
  rt::BundleRunConfig config;
  config.rank = command.rank;
  config.steps = command.steps;
  config.seed = command.seed;
  config.startup = command.startup;
  config.feeds = std::move(feeds);
  config.random_feeds = command.random_feeds;
  config.batch_size = command.batch_size;
  config.fetch = command.fetch;
  config.options.gemm = command.gemm;
  config.options.kernels = kernels;
  StatusOr<rt::BundleRankRunner> runner = rt::BundleRankRunner::Load(command.input, config);
  if (!runner.ok()) return Fail(runner.status(), err);

  StepPrinter printer(command, runner->steps(), out);
  if (kernels != nullptr) printer.SetGpu();
  rt::Scope scope;
  StatusOr<std::vector<rt::PlanStepResult>> ran = runner->Run(
      scope, [&](const rt::PlanStepResult& step) { printer.Print(step.step, step.merged); });
  if (!ran.ok()) return FailRun(Status(ran.status()).InFile(runner->rank_dir()), err);
  const oldir::BundleRank& rank =
      *std::find_if(runner->bundle().ranks.begin(), runner->bundle().ranks.end(),
                    [&](const oldir::BundleRank& r) { return r.rank == command.rank; });
  const std::string program = rank.plan.has_value() ? runner->rank_dir()
                                                    : oldir::RankFile(command.input, command.rank,
                                                                      rank.programs.at("main"));
  printer.Finish(command, program, runner->new_ir(), runner->seed());
  return SaveIfAsked(command, scope, err);
}

// The world of a --ranks run: unset for the thread backend; Gloo with every rank as a thread, or
// (a child of --launch processes) this process's one rank; on the GPU (--device gpu) the device
// world or NCCL.
StatusOr<rt::RankWorldFactory> WorldFactory(const RunCommand& command, RunDevice device) {
  if (command.backend == "device" || command.backend == "nccl") {
    if (command.launch != "threads" || command.rank_process >= 0) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    "--launch processes needs --backend gloo");
    }
    return GpuWorldFactory(command.backend, device, std::chrono::milliseconds(command.timeout_ms),
                           !command.trace.empty());
  }
  if (command.backend == "thread") {
    if (command.launch != "threads" || command.rank_process >= 0) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    "--launch processes needs --backend gloo");
    }
    return rt::RankWorldFactory{};
  }
  if (command.backend != "gloo") {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("--backend {}: the backends are thread and gloo", command.backend));
  }
#ifdef IRM_HAVE_GLOO
  rt::GlooWorldOptions options;
  options.timeout = std::chrono::milliseconds(command.timeout_ms);
  if (command.rank_process >= 0) {
    // A rank process ends with its launcher, even one killed by SIGKILL.
    IRM_RETURN_IF_ERROR(TieToLauncher());
    return rt::GlooWorld::ProcessRankFactory(command.rank_process, command.store, options);
  }
  return rt::GlooWorld::ThreadsFactory(options);
#else
  return Status(StatusCode::kInvalidArgument, Location{},
                "--backend gloo: this build has no Gloo backend (configure with "
                "IRM_WITH_GLOO=ON after scripts/setup)");
#endif
}

// Every rank of a bundle at once (or, as a child of --launch processes, the one rank this process
// hosts). The ranks run concurrently; their fetches are printed afterwards, step by step and rank
// by rank, so the output is the same every run.
int RunAllRanks(const RunCommand& command, const rt::KernelRegistry* kernels, rt::FeedMap feeds,
                std::ostream& out, std::ostream& err) {
  StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(command.input);
  if (!bundle.ok()) return Fail(bundle.status(), err);
  StatusOr<rt::RankWorldFactory> factory =
      WorldFactory(command, kernels != nullptr ? RunDevice::kGpu : RunDevice::kCpu);
  if (!factory.ok()) return Fail(factory.status(), err);
  if (bundle->world_size != command.ranks) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(command.input),
                       fmt::format("--ranks {} is not the bundle's world size {}", command.ranks,
                                   bundle->world_size)),
                err);
  }
  if (!command.save_params.empty() || !command.startup.empty()) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{},
                       "--save-params and --startup name one rank's files: use them with --rank"),
                err);
  }
#ifdef IRM_HAVE_GLOO
  if (command.launch == "processes" && !command.trace.empty()) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{},
                       "--trace draws ranks of one process: use it with --launch threads"),
                err);
  }
  if (command.launch == "processes" && command.rank_process < 0) {
    return LaunchGlooProcesses(command, out, err);
  }
#endif
  rt::MultiRankConfig config;
  // The model asked for; else the runner takes the one the bundle says its plans need.
  if (!command.p2p.empty()) {
    StatusOr<schedules::P2pModel> p2p = schedules::ParseP2pModel(command.p2p);
    if (!p2p.ok()) return Fail(p2p.status(), err);
    config.p2p = *p2p;
  }
  std::optional<rt::ChromeTraceRecorder> trace;
  if (!command.trace.empty()) {
    trace.emplace(bundle->world_size);
    config.world.trace = true;
    config.observer = [&trace](int rank) { return trace->observer(rank); };
    config.on_job = [&trace](int rank, const rt::JobContext& job) { trace->OnJob(rank, job); };
  }
  config.rank_config.steps = command.steps;
  config.rank_config.seed = command.seed;
  config.rank_config.feeds = std::move(feeds);
  config.rank_config.random_feeds = command.random_feeds;
  config.rank_config.batch_size = command.batch_size;
  config.rank_config.fetch = command.fetch;
  config.rank_config.options.gemm = command.gemm;
  config.rank_config.options.kernels = kernels;
  config.make_world = std::move(factory).value();
  // A rank that fails to load exits as `--rank` does for it (a program whose check fails: 1), not
  // as a failure while running.
  bool loaded = false;
  config.on_loaded = [&loaded] { loaded = true; };
  StatusOr<rt::MultiRankResult> ran = rt::RunBundleRanks(command.input, config);
  if (!ran.ok()) {
    const Status failed = Status(ran.status()).InFile(command.input);
    return loaded ? FailRun(failed, err) : Fail(failed, err);
  }

  if (trace.has_value()) {
    std::vector<const rt::CommTrace*> comm;
    for (int rank = 0; rank < bundle->world_size; ++rank) comm.push_back(ran->world->trace(rank));
    std::vector<std::pair<int, std::vector<int>>> rings;
    for (const oldir::ProcessGroup& group : bundle->process_groups) {
      rings.emplace_back(group.ring_id, group.ranks);
    }
    const Status written = WriteFileAtomically(command.trace, trace->Render(comm, rings));
    if (!written.ok()) return Fail(written, err);
  }
  const std::vector<int>& hosted = ran->world->hosted_ranks();
  const size_t steps = ran->ranks[static_cast<size_t>(hosted.front())].steps.size();
  StepPrinter printer(command, static_cast<int>(steps), out);
  if (kernels != nullptr) printer.SetGpu();
  for (size_t step = 0; step < steps; ++step) {
    for (int rank : hosted) {
      const rt::PlanStepResult& result = ran->ranks[static_cast<size_t>(rank)].steps[step];
      printer.Print(result.step, result.merged, rank);
    }
  }
  printer.Finish(command, command.input, bundle->ir == oldir::BundleIr::kPir,
                 command.seed.value_or(static_cast<uint64_t>(bundle->seed)));
  return kExitOk;
}

// RunRun on `device`.
int RunOnDevice(const RunCommand& command, RunDevice device, std::ostream& out, std::ostream& err) {
  // Checked up front, so that a bad value is bad usage whatever else the command asks.
  if (!command.p2p.empty()) {
    if (StatusOr<schedules::P2pModel> p2p = schedules::ParseP2pModel(command.p2p); !p2p.ok()) {
      return Fail(p2p.status(), err);
    }
  }
  // Before anything is read: without a GPU, --device gpu is a runtime failure (exit 3).
  std::unique_ptr<rt::KernelRegistry> gpu_kernels;
  StatusOr<const rt::KernelRegistry*> kernels = KernelsFor(device, &gpu_kernels);
  if (!kernels.ok()) return Fail(kernels.status(), err);
  StatusOr<rt::FeedMap> feeds = ReadFeeds(command.feeds);
  if (!feeds.ok()) return Fail(feeds.status(), err);
  std::error_code ec;
  if (!command.trace.empty() && command.ranks == 0) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{},
                       "--trace draws a run of every rank: use it with --ranks"),
                err);
  }
  if (command.ranks > 0) {
    if (!std::filesystem::is_directory(command.input, ec)) {
      return Fail(Status(StatusCode::kInvalidArgument, Location::File(command.input),
                         "--ranks runs a bundle directory, not a program file"),
                  err);
    }
    return RunAllRanks(command, *kernels, std::move(feeds).value(), out, err);
  }
  if (std::filesystem::is_directory(command.input, ec)) {
    return RunBundle(command, *kernels, std::move(feeds).value(), out, err);
  }

  const uint64_t seed = command.seed.value_or(0);
  rt::ExecutorOptions options;
  options.gemm = command.gemm;
  options.seed = seed;
  options.kernels = *kernels;
  StatusOr<rt::LoadedProgram> main = rt::LoadProgramForRun(command.input, options);
  if (!main.ok()) return Fail(main.status(), err);
  std::optional<rt::LoadedProgram> startup;
  if (!command.startup.empty()) {
    StatusOr<rt::LoadedProgram> s = rt::LoadProgramForRun(command.startup, options);
    if (!s.ok()) return Fail(s.status(), err);
    if (s->new_ir != main->new_ir) {
      return Fail(Status(StatusCode::kInvalidArgument, Location::File(command.startup),
                         "the startup program and the main program are in different IRs"),
                  err);
    }
    startup = std::move(s).value();
  }

  rt::TrainingConfig config;
  config.steps = command.steps > 0 ? command.steps : 1;
  config.feeds = std::move(feeds).value();
  config.random_feeds = command.random_feeds;
  config.seed = seed;
  config.batch_size = command.batch_size;
  config.fetch = command.fetch;
  rt::Scope scope;
  StepPrinter printer(command, config.steps, out);
  if (*kernels != nullptr) printer.SetGpu();
  StatusOr<std::vector<rt::StepResult>> ran = rt::RunTraining(
      startup.has_value() ? startup->executor.get() : nullptr, *main->executor, scope, config,
      [&](const rt::StepResult& step) { printer.Print(step.step, step.fetches); });
  if (!ran.ok()) return FailRun(Status(ran.status()).InFile(command.input), err);
  printer.Finish(command, command.input, main->new_ir, seed);
  return SaveIfAsked(command, scope, err);
}

}  // namespace

int RunRun(const RunCommand& command, std::ostream& out, std::ostream& err) {
  return RunOnDevice(command, RunDevice::kCpu, out, err);
}

RegisteredCommand AddRunCommand(CLI::App& parent) {
  auto command = std::make_shared<RunCommand>();
  // Parsed beside the command, then written into RunCommand::device (which --launch processes
  // forwards to each rank).
  auto device = std::make_shared<RunDevice>(RunDevice::kCpu);
  RunCommand& run = *command;
  CLI::App* run_app = parent.add_subcommand(
      "run",
      "Run a program (legacy or new IR, by content) or one rank of a bundle on the reference "
      "runtime: the startup program once, then N training steps; prints each step's fetches");
  run_app->add_option("input", run.input, "Program file or bundle directory")->required();
  run_app->add_option("--startup", run.startup,
                      "Startup program run once before the steps (a bundle rank's own by "
                      "default)");
  run_app->add_option("--rank", run.rank, "The bundle rank to run")
      ->check(AtLeast(0))
      ->capture_default_str();
  run_app
      ->add_option("--ranks", run.ranks,
                   "Run every rank of the bundle at once, as threads communicating through "
                   "the backend (N must be the bundle's world size)")
      ->check(AtLeast(1));
  run_app
      ->add_option("--backend", run.backend,
                   "The communication backend of a --ranks run: thread (in-process, "
                   "reductions in rank order; the reference), gloo (TCP on loopback), or with "
                   "--device gpu: device (every rank on one GPU, reductions in rank order) or "
                   "nccl (one rank per GPU)")
      ->check(CLI::IsMember({"thread", "gloo", "device", "nccl"}))
      ->capture_default_str();
  run_app->add_option("--trace", run.trace,
                      "With --ranks: write a Chrome trace of the run (one track per rank, job "
                      "and op spans, communication as flows; opens in Perfetto)");
  run_app
      ->add_option("--launch", run.launch,
                   "How --backend gloo hosts the ranks: threads of this process, or one "
                   "process per rank meeting through a file store")
      ->check(CLI::IsMember({"threads", "processes"}))
      ->capture_default_str();
  run_app
      ->add_option("--timeout-ms", run.timeout_ms,
                   "--backend gloo, device, nccl: a call waiting longer than this fails (a hang "
                   "becomes an error)")
      ->check(AtLeast(1))
      ->capture_default_str();
  run_app->add_option("--p2p", run.p2p,
                      "With --ranks: when a send returns: rendezvous (once the receiver takes the "
                      "message; the strict model) or buffered[=K] (at once while its channel holds "
                      "fewer than K unreceived messages, K = 1 by default); default: the model "
                      "bundle.json states, else rendezvous");
  // The children of a --launch processes run: one rank each (not for people to call).
  run_app->add_option("--rank-process", run.rank_process)->group("");
  run_app->add_option("--store", run.store)->group("");
  run_app->add_option("--steps", run.steps, "Training steps (default: the bundle's, else 1)")
      ->check(AtLeast(1));
  run_app->add_option("--feed", run.feeds,
                      "A feed for every step: NAME=FILE.npy (repeatable; NAME one the program "
                      "or bundle feeds)");
  run_app->add_flag("--random-feeds", run.random_feeds,
                    "Draw the feeds not given from the seed, anew each step (integer ids below "
                    "the table size they index)");
  run_app->add_option_function<uint64_t>(
      "--seed", [&run](uint64_t seed) { run.seed = seed; },
      "The run's seed: random feeds and random ops without their own seed (default: the "
      "bundle's, else 0)");
  run_app->add_option("--batch-size", run.batch_size, "The -1 dims of random feeds")
      ->check(AtLeast(1))
      ->capture_default_str();
  run_app->add_option("--fetch", run.fetch,
                      "Fetch these instead of the program's fetch list: fetched names or "
                      "persistable vars (repeatable)");
  run_app->add_option("--save-params", run.save_params,
                      "Save every persistable var afterwards to this .pdiparams file");
  AddNamedOption(
      run_app, "--gemm", &run.gemm, {"blas", "reference"},
      [](std::string_view name) -> std::optional<rt::GemmMode> {
        if (name == "blas") return rt::GemmMode::kBlas;
        if (name == "reference") return rt::GemmMode::kReference;
        return std::nullopt;
      },
      "Matrix products by OpenBLAS (blas, default) or by fixed-order loops whose bits are the "
      "same on every machine (reference)");
  AddDeviceOption(run_app, device.get());
  run_app->add_flag("--json", run.json, "JSON on stdout: every step's fetches with hashes");
  return {run_app, [command, device](std::ostream& out, std::ostream& err) {
            command->device = *device == RunDevice::kGpu ? "gpu" : "cpu";
            return RunOnDevice(*command, *device, out, err);
          }};
}

}  // namespace irm::tools
