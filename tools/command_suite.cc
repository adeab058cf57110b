// `ir-migrate suite DIR`: the parity suite for CI (docs/suite.md). Reads every case file of DIR
// (a malformed one is a located diagnostic and exit 2 before anything runs), keeps the cases that
// --filter and --tag select (`--tag engine`: the Engine flow's three-way cases), runs them --jobs
// at a time with a progress line per case, prints the Markdown table and writes the JUnit, JSON,
// Markdown and evidence reports asked for.
#include <fnmatch.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "common/file_io.h"
#include "diff_tests/suite_case.h"
#include "diff_tests/suite_report.h"
#include "diff_tests/suite_runner.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

int FailInput(const Status& status, std::ostream& err) {
  err << status.diagnostic().Render();
  return kExitBadInput;
}

bool Selected(const diff::SuiteCase& c, const SuiteCommand& command) {
  bool name_ok = command.filter.empty();
  for (const std::string& glob : command.filter) {
    name_ok = name_ok || ::fnmatch(glob.c_str(), c.name.c_str(), 0) == 0;
  }
  bool tag_ok = command.tags.empty();
  for (const std::string& tag : command.tags) tag_ok = tag_ok || c.HasTag(tag);
  return name_ok && tag_ok;
}

// "[#####.....]" on a terminal, nothing in a log.
std::string Bar(int done, int total, bool terminal) {
  if (!terminal || total == 0) return "";
  constexpr int kWidth = 20;
  const int filled = done * kWidth / total;
  return "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
}

// The run's name in the JUnit test names: the JUnit file's stem, so that two runs of the same cases
// written to different files (a fast subset and the whole matrix, two backends) merge without two
// tests of the same name.
std::string JunitRunName(const std::string& junit_path) {
  return std::filesystem::path(junit_path).stem().string();
}

// The evidence manifest at `path` and, in <stem>.reports/ beside it, the reports it names.
Status WriteEvidence(const diff::SuiteRun& run, const std::string& path) {
  const std::filesystem::path manifest(path);
  const std::string folder = manifest.stem().string() + ".reports";
  const diff::SuiteEvidence evidence = diff::RenderSuiteEvidence(run, folder);
  const std::filesystem::path base = manifest.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(base / folder, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File((base / folder).string()),
                  fmt::format("cannot create the reports' folder: {}", ec.message()));
  }
  for (const auto& report : evidence.reports) {
    IRM_RETURN_IF_ERROR(WriteFileAtomically((base / report.first).string(), report.second));
  }
  return WriteFileAtomically(path, evidence.manifest);
}

}  // namespace

int RunSuite(const SuiteCommand& command, std::ostream& out, std::ostream& err) {
  StatusOr<std::vector<diff::SuiteCase>> all = diff::ReadSuiteCases(command.dir);
  if (!all.ok()) return FailInput(all.status(), err);
  std::vector<diff::SuiteCase> cases;
  for (diff::SuiteCase& c : *all) {
    if (Selected(c, command)) cases.push_back(std::move(c));
  }
  if (cases.empty()) {
    return FailInput(Status(StatusCode::kInvalidArgument, Location::File(command.dir),
                            "no case matches --filter and --tag: the suite would prove nothing"),
                     err);
  }

  const bool terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  diff::SuiteOptions options;
  options.jobs = command.jobs;
  options.progress = [&err, terminal](const diff::CaseOutcome& c, int done, int total) {
    err << fmt::format("{}[{}/{}] {:<8} {} ({:.2f} s){}\n", Bar(done, total, terminal), done, total,
                       diff::SuiteResultName(c.result), c.suite_case.name, c.seconds,
                       c.result == diff::SuiteResult::kSkipped ? ": " + c.detail : "");
    err.flush();
  };
  StatusOr<diff::SuiteRun> run = diff::RunSuite(cases, options);
  if (!run.ok()) return FailInput(run.status(), err);

  const std::string markdown = diff::RenderSuiteMarkdown(*run);
  struct Output {
    const std::string& path;
    std::string text;
  };
  for (const Output& o :
       {Output{command.junit, diff::RenderSuiteJunit(*run, JunitRunName(command.junit))},
        Output{command.json, diff::RenderSuiteJson(*run)}, Output{command.md, markdown}}) {
    if (o.path.empty()) continue;
    if (Status written = WriteFileAtomically(o.path, o.text); !written.ok()) {
      return FailInput(written, err);
    }
  }
  if (!command.evidence.empty()) {
    if (Status written = WriteEvidence(*run, command.evidence); !written.ok()) {
      return FailInput(written, err);
    }
  }
  out << markdown;
  return diff::SuiteExitCode(*run);
}

RegisteredCommand AddSuiteCommand(CLI::App& parent) {
  auto command = std::make_shared<SuiteCommand>();
  SuiteCommand& suite = *command;
  CLI::App* suite_app = parent.add_subcommand(
      "suite",
      "Run the parity suite's cases (one JSON file each): build each case's distributed bundle, "
      "compare it with its serial program and its translation, or run an engine case's three "
      "pairs (serial-legacy, serial-pir, legacy-pir); exit 0 all pass, 1 a mismatch, 2 a "
      "malformed case, 3 a runtime failure");
  suite_app->add_option("dir", suite.dir, "The folder of case files (diff_tests/cases)")
      ->required();
  suite_app->add_option("--filter", suite.filter, "Only cases whose name matches this glob");
  suite_app->add_option("--tag", suite.tags, "Only cases with this tag (e.g. fast)");
  suite_app->add_option("--jobs", suite.jobs, "Cases run at once")
      ->check(AtLeast(1))
      ->capture_default_str();
  suite_app->add_option("--junit", suite.junit, "Write JUnit XML (a test suite per case group)");
  suite_app->add_option("--json", suite.json, "Write the JSON summary");
  suite_app->add_option("--md", suite.md, "Write the Markdown table");
  suite_app->add_option("--evidence", suite.evidence,
                        "Write an ir-deadcode evidence manifest (and the parity reports it "
                        "names, in <stem>.reports/ beside it)");
  return {suite_app,
          [command](std::ostream& out, std::ostream& err) { return RunSuite(*command, out, err); }};
}

}  // namespace irm::tools
