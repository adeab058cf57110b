// The ir-deadcode command line: read the trees, analyse, write one report.
#include "tools/deadcode/deadcode_cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <thread>

#include "common/file_io.h"
#include "tools/deadcode/analysis.h"
#include "tools/deadcode/cpp_frontend.h"
#include "tools/deadcode/evidence.h"
#include "tools/deadcode/python_frontend.h"
#include "tools/deadcode/report_json.h"
#include "tools/deadcode/report_markdown.h"
#include "tools/deadcode/report_sarif.h"

namespace irm::deadcode {
namespace {

constexpr const char* kVersion = "0.1.0";

struct Options {
  std::vector<std::string> python_dirs;
  std::string compile_commands;
  std::vector<std::string> sources;
  std::string config;
  std::string evidence;
  std::string format = "json";
  std::string output = "-";
  std::string root = ".";
  int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  bool fail_on_errors = false;
  bool quiet = false;
};

// Progress on a terminal only: one line rewritten in place, so logs stay clean.
class Progress {
 public:
  Progress(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  void Update(const std::string& phase, int done, int total) {
    if (!enabled_) return;
    err_ << fmt::format("\r{}: {}/{}", phase, done, total) << std::flush;
    if (done == total) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool enabled_;
};

int Fail(std::ostream& err, const Status& status) {
  err << "ir-deadcode: " << status.ToString() << "\n";
  return 2;
}

}  // namespace

int RunIrDeadcode(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Options o;
  CLI::App app{
      "ir-deadcode: which legacy-IR code paths have a new-IR twin, which twins are verified, and "
      "what can be deleted.\nProblems with single files (a Python file that does not parse, a "
      "translation unit that does not compile, a missing compile database) are listed in the "
      "report and the rest is still analysed.\nExit codes: 0 report written, 1 problems found "
      "with --fail-on-errors, 2 bad usage or unreadable configuration / evidence.",
      "ir-deadcode"};
  app.set_version_flag("--version", std::string("ir-deadcode ") + kVersion);
  app.add_option("--python", o.python_dirs,
                 "Python package directories (module names start at each directory's name)");
  app.add_option("--compile-commands", o.compile_commands,
                 "compile_commands.json of the C++ code to analyse");
  app.add_option("--sources", o.sources,
                 "only translation units whose path matches one of these globs");
  app.add_option("--config", o.config, "configuration JSON (guards, twin rules, registrations)");
  app.add_option("--evidence", o.evidence, "evidence manifest JSON (docs/deadcode.md)");
  app.add_option("--format", o.format, "report format")
      ->check(CLI::IsMember({"json", "md", "sarif"}));
  app.add_option("-o,--output", o.output, "report file ('-': standard output)");
  app.add_option("--root", o.root, "directory the report's paths are relative to");
  app.add_option(
         "-j,--threads", o.threads,
         "threads for the front ends and reference resolution (the report is the same at any)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--fail-on-errors", o.fail_on_errors, "exit 1 when any input had a problem");
  app.add_flag("-q,--quiet", o.quiet, "no progress on the terminal");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err);
  }
  if (o.python_dirs.empty() && o.compile_commands.empty()) {
    err << "ir-deadcode: nothing to analyse: give --python DIR and/or --compile-commands FILE\n";
    return 2;
  }

  DeadcodeConfig config = DefaultConfig();
  if (!o.config.empty()) {
    StatusOr<DeadcodeConfig> loaded = LoadConfig(o.config);
    if (!loaded.ok()) return Fail(err, loaded.status());
    config = std::move(*loaded);
  }
  EvidenceManifest evidence;
  if (!o.evidence.empty()) {
    StatusOr<EvidenceManifest> loaded = LoadEvidence(o.evidence);
    if (!loaded.ok()) return Fail(err, loaded.status());
    evidence = std::move(*loaded);
  }

  Progress progress(err, !o.quiet && &err == &std::cerr && isatty(STDERR_FILENO));
  std::vector<FileModel> files;
  std::vector<FileProblem> problems;
  int python_files = 0;
  int translation_units = 0;
  if (!o.python_dirs.empty()) {
    StatusOr<std::vector<FileModel>> python =
        AnalyzePythonTrees(o.python_dirs, o.root, config, o.threads,
                           [&](int done, int total) { progress.Update("python", done, total); });
    if (!python.ok()) return Fail(err, python.status());
    python_files = static_cast<int>(python->size());
    for (FileModel& file : *python) files.push_back(std::move(file));
  }
  if (!o.compile_commands.empty()) {
    StatusOr<CppAnalysis> cpp = AnalyzeCompileCommands(
        o.compile_commands, o.sources, o.root, config, o.threads,
        [&](int done, int total, const std::string&) { progress.Update("c++", done, total); });
    if (!cpp.ok()) {
      // The Python side is still worth a report: the missing database is one problem among others.
      problems.push_back({o.compile_commands, 0, 0, cpp.status().diagnostic().message});
    } else {
      translation_units = static_cast<int>(cpp->units.size());
      for (FileModel& file : cpp->files) files.push_back(std::move(file));
      problems.insert(problems.end(), cpp->problems.begin(), cpp->problems.end());
    }
  }

  DeadcodeReport report = Analyze(
      files, config,
      [&evidence](const std::string& legacy, const std::string& twin) {
        return evidence.Lookup(legacy, twin);
      },
      o.threads);
  report.tool_version = kVersion;
  report.root = o.root;
  report.python_files = python_files;
  report.cpp_translation_units = translation_units;
  report.problems.insert(report.problems.end(), problems.begin(), problems.end());
  report.problems.insert(report.problems.end(), evidence.problems.begin(), evidence.problems.end());

  const Json json = ReportToJson(report);
  // The report must read back: an analysis bug shows as an error, never as a wrong report.
  if (StatusOr<DeadcodeReport> back = ReportFromJson(json, "<report>"); !back.ok()) {
    err << "ir-deadcode: internal error: the report does not read back: "
        << back.status().ToString() << "\n";
    return 3;
  }
  std::string text;
  if (o.format == "json") {
    text = DumpCanonical(json);
  } else if (o.format == "md") {
    text = RenderMarkdown(json);
  } else {
    text = DumpCanonical(RenderSarif(json));
  }
  if (o.output == "-") {
    out << text;
  } else if (Status written = WriteFileAtomically(o.output, text); !written.ok()) {
    return Fail(err, written);
  }
  if (!o.quiet) {
    int deletable = 0;
    for (const Finding& finding : report.findings) deletable += finding.deletable ? 1 : 0;
    err << fmt::format(
        "ir-deadcode: {} Python files, {} translation units: {} findings, {} deletable, {} "
        "problems\n",
        python_files, translation_units, report.findings.size(), deletable, report.problems.size());
  }
  return o.fail_on_errors && !report.problems.empty() ? 1 : 0;
}

}  // namespace irm::deadcode
