// `ir-migrate validate`: every finding of the legacy validator or the new-IR verifier, as
// compiler-style diagnostics on stderr and a summary line on stdout, or as a JSON report on stdout
// (--json) for machines. A directory is checked as a bundle (docs/bundle.md): its layout, then
// every program in it — legacy programs by oldir::CheckBundle, the programs of a pir bundle here
// (oldir does not depend on newir, so it cannot read them).
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "newir/program_io.h"
#include "newir/verifier.h"
#include "oldir/bundle.h"
#include "oldir/validator.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

nlohmann::json LocationJson(const Location& loc) {
  nlohmann::json j = nlohmann::json::object();
  if (!loc.file.empty()) j["file"] = loc.file;
  if (loc.line > 0) j["line"] = loc.line;
  if (loc.column > 0) j["column"] = loc.column;
  if (loc.block >= 0) j["block"] = loc.block;
  if (loc.op >= 0) j["op"] = loc.op;
  if (!loc.op_type.empty()) j["op_type"] = loc.op_type;
  if (!loc.var.empty()) j["var"] = loc.var;
  if (!loc.attr.empty()) j["attr"] = loc.attr;
  if (!loc.detail.empty()) j["detail"] = loc.detail;
  return j;
}

nlohmann::json DiagnosticJson(const Diagnostic& d) {
  return {{"severity", SeverityName(d.severity)},
          {"message", d.message},
          {"location", LocationJson(d.location)},
          {"notes", d.notes}};
}

std::string Plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// The programs of a pir bundle: one that does not load as PIR JSON makes the bundle unusable;
// the verifier's findings make it invalid. Rank folders outside world_size are CheckBundle's
// finding already.
void CheckPirPrograms(const oldir::Bundle& bundle, const std::string& dir, bool allow_unregistered,
                      oldir::BundleCheck* check) {
  newir::ReadOptions read;
  read.allow_unregistered = allow_unregistered;
  for (const oldir::BundleRank& rank : bundle.ranks) {
    if (rank.rank < 0 || rank.rank >= bundle.world_size) continue;
    std::vector<std::string> files;
    if (!rank.startup.empty()) files.push_back(rank.startup);
    for (const auto& [type, file] : rank.programs) files.push_back(file);
    for (const std::string& file : files) {
      const std::string path = oldir::RankFile(dir, rank.rank, file);
      StatusOr<newir::Program> program =
          newir::LoadProgramFile(path, newir::FileFormat::kJson, read);
      if (!program.ok()) {
        check->findings.Add(program.status().diagnostic());
        check->usable = false;
        continue;
      }
      newir::VerifyOptions verify;
      verify.allow_unregistered = allow_unregistered;
      verify.file = path;
      check->findings.Append(newir::VerifyProgramAll(*program, verify));
    }
  }
}

// A bundle that cannot be used (bad layout, unreadable files) exits 2 like an unreadable program;
// one whose programs read fine but break IR rules exits 1.
int RunValidateBundle(const ValidateCommand& command, std::ostream& out, std::ostream& err) {
  // "dir/" and "dir" name the same bundle; the summary names it one way.
  std::string dir = command.input;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (command.format) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(dir),
                       "--from applies to a program file, not to a bundle directory"),
                err);
  }
  StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(dir);
  if (!bundle.ok()) {
    if (!command.json) return Fail(bundle.status(), err);
    nlohmann::json report = {{"bundle", dir},
                             {"readable", false},
                             {"valid", false},
                             {"diagnostics", {DiagnosticJson(bundle.status().diagnostic())}}};
    out << report.dump(2) << "\n";
    return ExitCodeFor(bundle.status());
  }

  oldir::BundleValidateOptions options;
  options.extra_feeds.insert(command.feeds.begin(), command.feeds.end());
  oldir::BundleCheck check = oldir::CheckBundle(*bundle, dir, options);
  if (bundle->ir == oldir::BundleIr::kPir) {
    CheckPirPrograms(*bundle, dir, command.allow_unregistered, &check);
  }
  const int errors = check.findings.CountOf(Severity::kError);
  const int warnings = check.findings.CountOf(Severity::kWarning);
  const bool valid = errors == 0 && !(command.warnings_as_errors && warnings > 0);

  if (command.json) {
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const Diagnostic& d : check.findings.items()) diagnostics.push_back(DiagnosticJson(d));
    nlohmann::json report = {{"bundle", dir},
                             {"readable", check.usable},
                             {"valid", valid},
                             {"ir", oldir::BundleIrName(bundle->ir)},
                             {"ranks", bundle->world_size},
                             {"programs", check.num_programs},
                             {"errors", errors},
                             {"warnings", warnings},
                             {"diagnostics", diagnostics}};
    out << report.dump(2) << "\n";
  } else {
    err << check.findings.Render();
    if (!command.quiet) {
      out << fmt::format("{}: {} bundle: {}, {}, {}, {}\n", dir, valid ? "valid" : "invalid",
                         Plural(bundle->world_size, "rank"), Plural(check.num_programs, "program"),
                         Plural(errors, "error"), Plural(warnings, "warning"));
    }
  }
  if (!check.usable) return kExitBadInput;
  return valid ? kExitOk : kExitCheckFailed;
}

// Prints the findings about one program (compiler-style diagnostics and a summary line, or a JSON
// report whose `facts` say what the program holds) and returns the exit code.
int ReportProgram(const ValidateCommand& command, const std::string& file,
                  const Diagnostics& findings, const nlohmann::json& facts,
                  const std::string& summary_facts, std::ostream& out, std::ostream& err) {
  const int errors = findings.CountOf(Severity::kError);
  const int warnings = findings.CountOf(Severity::kWarning);
  const bool valid = errors == 0 && !(command.warnings_as_errors && warnings > 0);
  if (command.json) {
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const Diagnostic& d : findings.items()) diagnostics.push_back(DiagnosticJson(d));
    nlohmann::json report = {{"file", file}, {"readable", true}, {"valid", valid}};
    report.update(facts);
    report["errors"] = errors;
    report["warnings"] = warnings;
    report["diagnostics"] = diagnostics;
    out << report.dump(2) << "\n";
  } else {
    err << findings.Render();
    if (!command.quiet) {
      out << fmt::format("{}: {}: {}, {}, {}\n", file, valid ? "valid" : "invalid", summary_facts,
                         Plural(errors, "error"), Plural(warnings, "warning"));
    }
  }
  return valid ? kExitOk : kExitCheckFailed;
}

int ReportUnreadable(const ValidateCommand& command, const std::string& file, const Status& status,
                     std::ostream& out, std::ostream& err) {
  if (!command.json) return Fail(status, err);
  nlohmann::json report = {{"file", file},
                           {"readable", false},
                           {"valid", false},
                           {"diagnostics", {DiagnosticJson(status.diagnostic())}}};
  out << report.dump(2) << "\n";
  return ExitCodeFor(status);
}

int ValidateNewIr(const ValidateCommand& command, std::string_view bytes, const std::string& file,
                  IrFormat format, std::ostream& out, std::ostream& err) {
  newir::ReadOptions read;
  read.allow_unregistered = command.allow_unregistered;
  StatusOr<newir::Program> program =
      newir::ParseProgramFile(bytes, file, ToNewIrFormat(format), read);
  if (!program.ok()) return ReportUnreadable(command, file, program.status(), out, err);
  newir::VerifyOptions options;
  options.file = file;
  options.allow_unregistered = command.allow_unregistered;
  const Diagnostics findings = newir::VerifyProgramAll(*program, options);
  const int ops = static_cast<int>(program->CountOps());
  return ReportProgram(command, file, findings, {{"ir", "new"}, {"ops", ops}}, Plural(ops, "op"),
                       out, err);
}

int ValidateLegacy(const ValidateCommand& command, std::string_view bytes, const std::string& file,
                   IrFormat format, std::ostream& out, std::ostream& err) {
  StatusOr<oldir::Program> program = oldir::ParseProgram(bytes, file, ToLegacyFormat(format));
  if (!program.ok()) return ReportUnreadable(command, file, program.status(), out, err);
  oldir::ValidateOptions options;
  options.file = file;
  options.extra_feeds.insert(command.feeds.begin(), command.feeds.end());
  // A lone program with no feed ops may be fed by a dataset reader (Paddle 1.x CTR jobs): its
  // read-never-written vars are inputs, not errors. Bundles keep the strict rule: their jobs
  // read what earlier jobs wrote.
  options.infer_program_inputs = true;
  const Diagnostics findings = oldir::ValidateProgram(*program, options);
  const int blocks = program->num_blocks();
  const int ops = static_cast<int>(program->num_ops());
  return ReportProgram(command, file, findings,
                       {{"ir", "legacy"}, {"blocks", blocks}, {"ops", ops}},
                       Plural(blocks, "block") + ", " + Plural(ops, "op"), out, err);
}

}  // namespace

int RunValidate(const ValidateCommand& command, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (command.input != "-" && std::filesystem::is_directory(command.input, ec)) {
    return RunValidateBundle(command, out, err);
  }
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<std::string> bytes = ReadFile(command.input);
  if (!bytes.ok()) return ReportUnreadable(command, file, bytes.status(), out, err);
  const IrFormat format = command.format.value_or(DetectIrFormat(*bytes));
  return IsNewIr(format) ? ValidateNewIr(command, *bytes, file, format, out, err)
                         : ValidateLegacy(command, *bytes, file, format, out, err);
}

RegisteredCommand AddValidateCommand(CLI::App& parent) {
  auto command = std::make_shared<ValidateCommand>();
  ValidateCommand& validate = *command;
  CLI::App* validate_app = parent.add_subcommand(
      "validate",
      "Check a program. Legacy: block tree, dataflow, var declarations, attribute encodings and "
      "the schema of known ops. New IR: the verifier (SSA scoping, op tables, dist attributes). "
      "Reports every finding.");
  validate_app->add_option("path", validate.input, "Program file ('-' = stdin) or bundle directory")
      ->required();
  AddFormatOption(validate_app, "--from", &validate.format, "Force the program format");
  validate_app->add_option(
      "--feed", validate.feeds,
      "A var fed from outside (repeatable; need_check_feed vars count already)");
  AddAllowUnregistered(validate_app, &validate.allow_unregistered);
  validate_app->add_flag("--json", validate.json, "Print a JSON report on stdout");
  validate_app->add_flag("--Werror", validate.warnings_as_errors, "Treat warnings as errors");
  validate_app->add_flag("-q,--quiet", validate.quiet, "No summary line");
  return {validate_app, [command](std::ostream& out, std::ostream& err) {
            return RunValidate(*command, out, err);
          }};
}

}  // namespace irm::tools
