// `ir-migrate validate`: every finding of the validator, as compiler-style diagnostics on stderr
// and a summary line on stdout, or as a JSON report on stdout (--json) for machines. A directory
// is checked as a bundle (docs/bundle.md): its layout, then every program in it.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "oldir/bundle.h"
#include "oldir/validator.h"
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

}  // namespace

int RunValidate(const ValidateCommand& command, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (command.input != "-" && std::filesystem::is_directory(command.input, ec)) {
    return RunValidateBundle(command, out, err);
  }
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<oldir::Program> program = oldir::LoadProgram(command.input, command.format);
  if (!program.ok()) {
    if (!command.json) return Fail(program.status(), err);
    nlohmann::json report = {{"file", file},
                             {"readable", false},
                             {"valid", false},
                             {"diagnostics", {DiagnosticJson(program.status().diagnostic())}}};
    out << report.dump(2) << "\n";
    return ExitCodeFor(program.status());
  }

  oldir::ValidateOptions options;
  options.file = file;
  options.extra_feeds.insert(command.feeds.begin(), command.feeds.end());
  Diagnostics findings = oldir::ValidateProgram(*program, options);

  const int errors = findings.CountOf(Severity::kError);
  const int warnings = findings.CountOf(Severity::kWarning);
  const bool valid = errors == 0 && !(command.warnings_as_errors && warnings > 0);

  if (command.json) {
    nlohmann::json diagnostics = nlohmann::json::array();
    for (const Diagnostic& d : findings.items()) diagnostics.push_back(DiagnosticJson(d));
    nlohmann::json report = {{"file", file},
                             {"readable", true},
                             {"valid", valid},
                             {"blocks", program->num_blocks()},
                             {"ops", program->num_ops()},
                             {"errors", errors},
                             {"warnings", warnings},
                             {"diagnostics", diagnostics}};
    out << report.dump(2) << "\n";
  } else {
    err << findings.Render();
    if (!command.quiet) {
      out << fmt::format("{}: {}: {}, {}, {}, {}\n", file, valid ? "valid" : "invalid",
                         Plural(program->num_blocks(), "block"),
                         Plural(static_cast<int>(program->num_ops()), "op"),
                         Plural(errors, "error"), Plural(warnings, "warning"));
    }
  }
  return valid ? kExitOk : kExitCheckFailed;
}

}  // namespace irm::tools
