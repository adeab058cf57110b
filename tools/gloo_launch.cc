// LaunchGlooProcesses (gloo_launch.h): spawning the children, waiting for them, merging what they
// printed.
#include "tools/gloo_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/temp_paths.h"
#include "reference_runtime/kernel.h"
#include "tools/exit_code.h"

extern char** environ;

namespace irm::tools {
namespace {

namespace fs = std::filesystem;

// The environment variable that tells a rank process its launcher's pid.
constexpr char kLauncherPidVariable[] = "IRM_GLOO_LAUNCHER_PID";

// The signals the launcher forwards, and the first one it got (0: none).
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t received_signal = 0;

void RecordSignal(int signal) {
  if (received_signal == 0) received_signal = signal;
}

// Installs RecordSignal for the forwarded signals (not for one the program ignores) while alive,
// and puts the previous handlers back.
class ForwardSignals {
 public:
  ForwardSignals() {
    received_signal = 0;
    for (size_t i = 0; i < std::size(kForwarded); ++i) {
      struct sigaction action {};
      action.sa_handler = RecordSignal;
      sigemptyset(&action.sa_mask);
      if (sigaction(kForwarded[i], nullptr, &previous_[i]) == 0 &&
          previous_[i].sa_handler != SIG_IGN) {
        installed_[i] = sigaction(kForwarded[i], &action, nullptr) == 0;
      }
    }
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < std::size(kForwarded); ++i) {
      if (installed_[i]) sigaction(kForwarded[i], &previous_[i], nullptr);
    }
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  struct sigaction previous_[std::size(kForwarded)]{};
  bool installed_[std::size(kForwarded)] = {};
};

// The child's command line: the parent's run options, one rank, the world's store.
std::vector<std::string> ChildArguments(const std::string& exe, const RunCommand& command, int rank,
                                        const std::string& store) {
  std::vector<std::string> args = {exe,
                                   "run",
                                   command.input,
                                   "--ranks",
                                   std::to_string(command.ranks),
                                   "--backend",
                                   "gloo",
                                   "--launch",
                                   "processes",
                                   "--rank-process",
                                   std::to_string(rank),
                                   "--store",
                                   store,
                                   "--timeout-ms",
                                   std::to_string(command.timeout_ms),
                                   "--batch-size",
                                   std::to_string(command.batch_size),
                                   "--gemm",
                                   rt::GemmModeName(command.gemm)};
  if (!command.p2p.empty()) args.insert(args.end(), {"--p2p", command.p2p});
  if (command.steps > 0) args.insert(args.end(), {"--steps", std::to_string(command.steps)});
  if (command.seed.has_value()) args.insert(args.end(), {"--seed", std::to_string(*command.seed)});
  for (const std::string& feed : command.feeds) args.insert(args.end(), {"--feed", feed});
  for (const std::string& fetch : command.fetch) args.insert(args.end(), {"--fetch", fetch});
  if (command.random_feeds) args.push_back("--random-feeds");
  // Only when asked, so that a CPU child's command line is what it always was.
  if (command.device != "cpu") args.insert(args.end(), {"--device", command.device});
  if (command.json) args.push_back("--json");
  return args;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A child's text output cut into its "step ..." blocks.
std::vector<std::string> StepBlocks(const std::string& text) {
  std::vector<std::string> blocks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("step ", 0) == 0 || blocks.empty()) blocks.emplace_back();
    blocks.back() += line + "\n";
  }
  return blocks;
}

// Every child's output merged: step by step, rank by rank. kInternal when a child's output does
// not parse (it should: the children are this program).
StatusOr<std::string> Merge(const std::vector<std::string>& outputs, bool json) {
  if (json) {
    nlohmann::json merged;
    nlohmann::json steps = nlohmann::json::array();
    for (const std::string& output : outputs) {
      nlohmann::json doc = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded() || !doc.contains("steps") || !doc["steps"].is_array()) {
        return Status(StatusCode::kInternal, Location{},
                      "a rank process printed no JSON document with steps");
      }
      for (nlohmann::json& step : doc["steps"]) steps.push_back(std::move(step));
      if (merged.is_null()) merged = std::move(doc);
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const nlohmann::json& a, const nlohmann::json& b) {
                       return a.value("step", 0) < b.value("step", 0);
                     });
    merged["steps"] = std::move(steps);
    return merged.dump(2) + "\n";
  }
  std::vector<std::vector<std::string>> blocks;
  for (const std::string& output : outputs) blocks.push_back(StepBlocks(output));
  std::string text;
  for (size_t step = 0; step < blocks.front().size(); ++step) {
    for (const std::vector<std::string>& rank : blocks) {
      if (step >= rank.size()) {
        return Status(StatusCode::kInternal, Location{},
                      "the rank processes printed different numbers of steps");
      }
      text += rank[step];
    }
  }
  return text;
}

struct Child {
  pid_t pid = -1;
  bool running = false;
  int exit_code = 0;  // 128 + signal when killed by one
  fs::path out, err;
};

Status Spawn(const std::vector<std::string>& args, Child& child) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  // This environment, and the launcher's pid for TieToLauncher.
  const std::string launcher = fmt::format("{}={}", kLauncherPidVariable, ::getpid());
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kLauncherPidVariable, std::strlen(kLauncherPidVariable)) != 0) {
      envp.push_back(*e);
    }
  }
  envp.push_back(const_cast<char*>(launcher.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, child.out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, child.err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int error = posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("cannot start a rank process: {}", std::strerror(error)));
  }
  child.running = true;
  return Status::Ok();
}

void Reap(Child& child, int options) {
  int status = 0;
  if (waitpid(child.pid, &status, options) != child.pid) return;
  child.running = false;
  child.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// After a forwarded signal: every child gets it, and SIGKILL if it is still alive after a grace
// period; all are reaped.
void StopChildren(std::vector<Child>& children, int signal) {
  for (Child& child : children) {
    if (child.running) ::kill(child.pid, signal);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (Child& child : children) {
    while (child.running && std::chrono::steady_clock::now() < deadline) {
      Reap(child, WNOHANG);
      if (child.running) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (child.running) {
      ::kill(child.pid, SIGKILL);
      Reap(child, 0);
    }
  }
}

}  // namespace

Status TieToLauncher() {
  const char* value = std::getenv(kLauncherPidVariable);
  if (value == nullptr) return Status::Ok();
  const long launcher = std::strtol(value, nullptr, 10);
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    return Status(
        StatusCode::kInternal, Location{},
        fmt::format("cannot tie this rank process to its launcher: {}", std::strerror(errno)));
  }
  // The launcher may have died before the call above: then this process has another parent.
  if (::getppid() != static_cast<pid_t>(launcher)) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("the launcher (process {}) has gone", launcher));
  }
  return Status::Ok();
}

int LaunchGlooProcesses(const RunCommand& command, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    err << fmt::format("error: cannot find this program to start the rank processes: {}\n",
                       ec.message());
    return kExitRuntimeFailure;
  }
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("irm_gloo_run_{}_{}", ::getpid(),
                                   std::chrono::steady_clock::now().time_since_epoch().count());
  const fs::path store = dir / "store";
  // Registered (for the paths' own signal handlers, should ours not run first) and removed below.
  TempPathGuard guard(dir.string(), TempKind::kFolder);
  ForwardSignals forward;
  fs::create_directories(store, ec);
  if (ec) {
    err << fmt::format("{}: error: cannot create the rank processes' directory: {}\n", dir.string(),
                       ec.message());
    return kExitRuntimeFailure;
  }

  std::vector<Child> children(static_cast<size_t>(command.ranks));
  Status started = Status::Ok();
  for (int rank = 0; rank < command.ranks && started.ok(); ++rank) {
    Child& child = children[static_cast<size_t>(rank)];
    child.out = dir / fmt::format("rank{}.out", rank);
    child.err = dir / fmt::format("rank{}.err", rank);
    started = Spawn(ChildArguments(exe.string(), command, rank, store.string()), child);
  }

  // Wait for all; once one has failed (or none could start), the others get the per-call timeout
  // and a grace period to notice, then are killed.
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  if (!started.ok()) deadline = Clock::now();
  const auto running = [&] {
    return std::any_of(children.begin(), children.end(), [](const Child& c) { return c.running; });
  };
  while (running()) {
    if (received_signal != 0) {
      // Interrupted: the rank processes go first, then this folder and the process's other
      // temporaries, then this process, of the same signal.
      const int signal = received_signal;
      StopChildren(children, signal);
      fs::remove_all(dir, ec);
      guard.Release();
      RemoveRegisteredTempPaths();
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      sigemptyset(&default_action.sa_mask);
      sigaction(signal, &default_action, nullptr);
      ::raise(signal);
      return 128 + signal;  // not reached: the signal ends the process
    }
    for (Child& child : children) {
      if (child.running) Reap(child, WNOHANG);
      if (!child.running && child.pid > 0 && child.exit_code != 0 && !deadline.has_value()) {
        deadline =
            Clock::now() + std::chrono::milliseconds(command.timeout_ms) + std::chrono::seconds(5);
      }
    }
    if (deadline.has_value() && Clock::now() > *deadline) {
      for (Child& child : children) {
        if (!child.running) continue;
        ::kill(child.pid, SIGKILL);
        Reap(child, 0);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  int code = kExitOk;
  if (!started.ok()) {
    err << started.diagnostic().Render();
    code = kExitRuntimeFailure;
  }
  std::vector<std::string> outputs;
  // The run's code is the first failing rank's own check failure or bad input (1, 2), as with
  // ranks as threads: a rank its failure stopped exits 3, and a signal counts as a runtime failure.
  std::optional<int> own_failure;
  for (size_t rank = 0; rank < children.size(); ++rank) {
    const Child& child = children[rank];
    if (child.pid <= 0) continue;
    if (child.exit_code != 0) {
      if (code == kExitOk) code = kExitRuntimeFailure;
      const bool check_or_input =
          child.exit_code == kExitCheckFailed || child.exit_code == kExitBadInput;
      if (check_or_input && !own_failure.has_value()) own_failure = child.exit_code;
      err << fmt::format("rank {} (process {}) failed with exit code {}:\n", rank, child.pid,
                         child.exit_code)
          << ReadFile(child.err);
    }
    outputs.push_back(ReadFile(child.out));
  }
  if (own_failure.has_value()) code = *own_failure;
  if (code == kExitOk) {
    StatusOr<std::string> merged = Merge(outputs, command.json);
    if (merged.ok()) {
      out << *merged;
    } else {
      err << merged.status().diagnostic().Render();
      code = kExitRuntimeFailure;
    }
  }
  fs::remove_all(dir, ec);
  guard.Release();
  return code;
}

}  // namespace irm::tools
