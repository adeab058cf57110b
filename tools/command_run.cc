// `ir-migrate run`: runs a program — legacy or new IR, told apart by content — or one rank of a
// bundle on the reference runtime: the startup program once, then N steps of the main program,
// with feeds from .npy files or drawn at random from the seed; prints each step's fetches (one
// line per tensor: dtype, shape, a few values, min/max/mean and a hash of the bytes, so two runs
// can be compared at a glance), or JSON; optionally saves every persistable var afterwards as a
// .pdiparams file (sorted by name, as Paddle's save_combine).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "oldir/bundle.h"
#include "oldir/params_io.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/program_file.h"
#include "reference_runtime/run.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

// What a run failure means for the exit code: the program's own inputs (a missing parameter or
// feed, an op without a binding) are bad input (2); a kernel refusing what the program computed
// (shapes that disagree) is a runtime failure (3).
int FailRun(const Status& status, std::ostream& err) {
  err << status.diagnostic().Render();
  return status.code() == StatusCode::kInvalid || status.code() == StatusCode::kInternal
             ? kExitRuntimeFailure
             : ExitCodeFor(status);
}

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

// The programs to run: a program file (plus --startup), or a bundle rank's startup and main.
struct RunInputs {
  std::string main;
  std::string startup;  // empty: none
  int steps = 1;
  uint64_t seed = 0;
};

StatusOr<RunInputs> ResolveInputs(const RunCommand& command) {
  RunInputs in{.main = command.input, .startup = command.startup, .steps = 1, .seed = 0};
  std::error_code ec;
  if (std::filesystem::is_directory(command.input, ec)) {
    IRM_ASSIGN_OR_RETURN(const oldir::Bundle bundle, oldir::ReadBundle(command.input));
    auto rank = std::find_if(bundle.ranks.begin(), bundle.ranks.end(),
                             [&](const oldir::BundleRank& r) { return r.rank == command.rank; });
    if (rank == bundle.ranks.end()) {
      return Status(StatusCode::kNotFound, Location::File(command.input),
                    fmt::format("the bundle has no rank {}", command.rank));
    }
    const std::string rank_dir = oldir::RankDir(command.input, command.rank);
    if (rank->plan.has_value()) {
      return Status(StatusCode::kUnimplemented, Location::File(rank_dir + "/plan.json"),
                    "a rank with a plan runs its jobs per micro-batch: that needs the plan "
                    "executor of the multi-rank runtime");
    }
    auto main = rank->programs.find("main");
    if (main == rank->programs.end()) {
      return Status(StatusCode::kNotFound, Location::File(rank_dir),
                    "a rank without a plan runs its main program, and there is none");
    }
    in.main = oldir::RankFile(command.input, command.rank, main->second);
    if (in.startup.empty() && !rank->startup.empty()) {
      in.startup = oldir::RankFile(command.input, command.rank, rank->startup);
    }
    in.steps = bundle.steps;
    in.seed = static_cast<uint64_t>(bundle.seed);
  }
  if (command.steps > 0) in.steps = command.steps;
  if (command.seed.has_value()) in.seed = *command.seed;
  return in;
}

StatusOr<rt::FeedMap> ReadFeeds(const std::vector<std::string>& feeds) {
  rt::FeedMap map;
  for (const std::string& feed : feeds) {
    const size_t eq = feed.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == feed.size()) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("--feed '{}' is not NAME=FILE.npy", feed));
    }
    IRM_ASSIGN_OR_RETURN(const HostTensor host, LoadNpy(feed.substr(eq + 1)));
    StatusOr<rt::Tensor> t = rt::Tensor::FromHost(host);
    if (!t.ok()) return Status(t.status()).InFile(feed.substr(eq + 1));
    map[feed.substr(0, eq)] = std::move(t).value();
  }
  return map;
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

}  // namespace

int RunRun(const RunCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<RunInputs> inputs = ResolveInputs(command);
  if (!inputs.ok()) return Fail(inputs.status(), err);
  StatusOr<rt::FeedMap> feeds = ReadFeeds(command.feeds);
  if (!feeds.ok()) return Fail(feeds.status(), err);

  rt::ExecutorOptions options;
  options.gemm = command.gemm;
  options.seed = inputs->seed;
  StatusOr<rt::LoadedProgram> main = rt::LoadProgramForRun(inputs->main, options);
  if (!main.ok()) return Fail(main.status(), err);
  std::optional<rt::LoadedProgram> startup;
  if (!inputs->startup.empty()) {
    StatusOr<rt::LoadedProgram> s = rt::LoadProgramForRun(inputs->startup, options);
    if (!s.ok()) return Fail(s.status(), err);
    if (s->new_ir != main->new_ir) {
      return Fail(Status(StatusCode::kInvalidArgument, Location::File(inputs->startup),
                         "the startup program and the main program are in different IRs"),
                  err);
    }
    startup = std::move(s).value();
  }

  rt::TrainingConfig config;
  config.steps = inputs->steps;
  config.feeds = std::move(feeds).value();
  config.random_feeds = command.random_feeds;
  config.seed = inputs->seed;
  config.batch_size = command.batch_size;
  config.fetch = command.fetch;
  rt::Scope scope;
  nlohmann::json json_steps = nlohmann::json::array();
  auto on_step = [&](const rt::StepResult& step) {
    if (command.json) {
      nlohmann::json fetches = nlohmann::json::array();
      for (const rt::Fetch& f : step.fetches) fetches.push_back(FetchJson(f));
      json_steps.push_back({{"step", step.step}, {"fetches", fetches}});
      return;
    }
    out << fmt::format("step {}/{}:", step.step, config.steps)
        << (step.fetches.empty() ? " (nothing fetched)\n" : "\n");
    for (const rt::Fetch& f : step.fetches) out << "  " << Summary(f) << "\n";
    out.flush();
  };
  StatusOr<std::vector<rt::StepResult>> ran =
      rt::RunTraining(startup.has_value() ? startup->executor.get() : nullptr, *main->executor,
                      scope, config, on_step);
  if (!ran.ok()) return FailRun(Status(ran.status()).InFile(inputs->main), err);
  if (command.json) {
    out << nlohmann::json{{"program", inputs->main},
                          {"ir", main->new_ir ? "pir" : "legacy"},
                          {"gemm", rt::GemmModeName(command.gemm)},
                          {"seed", inputs->seed},
                          {"steps", json_steps}}
               .dump(2)
        << "\n";
  }
  if (!command.save_params.empty()) {
    const Status saved = SaveParams(scope, command.save_params);
    if (!saved.ok()) return Fail(saved, err);
    err << fmt::format("saved {} persistable vars to {}\n", scope.LocalNames().size(),
                       command.save_params);
  }
  return kExitOk;
}

}  // namespace irm::tools
