// `ir-migrate opt`: mlir-opt for the new IR — read a program (PIR text or JSON), verify it, run a
// textual pass pipeline with the pass manager's debugging affordances, verify after every pass,
// and write the result (atomically) as PIR text or JSON. For test files, --split-input-file and
// --verify-diagnostics (verify_diagnostics.h) run each `// -----` piece on its own and check the
// diagnostics its comments expect.
#include <fmt/format.h>

#include <memory>

#include "common/file_io.h"
#include "newir/pass_manager.h"
#include "newir/verifier.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"
#include "tools/verify_diagnostics.h"

namespace irm::tools {
namespace {

// A verifier that names the input file and honours --allow-unregistered.
newir::ProgramVerifier MakeVerifier(const std::string& file, bool allow_unregistered) {
  return [file, allow_unregistered](const newir::Program& program) {
    newir::VerifyOptions options;
    options.file = file;
    options.allow_unregistered = allow_unregistered;
    return newir::VerifyProgram(program, options);
  };
}

// The flags for test files; the plain RunOpt is the command without them.
struct OptTestFlags {
  bool split_input_file = false;
  bool verify_diagnostics = false;
};

// The pass manager of --pass-pipeline: verifying after each pass unless told not to, the IR
// printing flags writing to `err`. Fails when the pipeline does not parse.
StatusOr<std::unique_ptr<newir::PassManager>> MakePassManager(const OptCommand& command,
                                                              const std::string& file,
                                                              std::ostream& err) {
  newir::PassManagerOptions options = command.pass_manager;
  options.verifier = MakeVerifier(file, command.newir.allow_unregistered);
  options.ir_stream = &err;
  options.print_options = command.newir.ToPrintOptions();
  auto pm = std::make_unique<newir::PassManager>(std::move(options));
  IRM_RETURN_IF_ERROR(
      pm->AddPipeline(command.pass_pipeline, newir::PassRegistry::Global(), "--pass-pipeline"));
  return pm;
}

// One piece of a test file through parse, verify and the pipeline. Without --verify-diagnostics
// its diagnostics are printed and the first failure's exit code returned; with it, they are
// matched against the piece's expected-* comments (exit 1 on a mismatch). `output` gets the
// printed program when the piece made it through.
int RunOptPiece(const OptCommand& command, const InputPiece& piece, const std::string& file,
                bool verify_diagnostics, std::string* output, std::ostream& err) {
  std::vector<ExpectedDiagnostic> expected;
  if (verify_diagnostics) {
    StatusOr<std::vector<ExpectedDiagnostic>> parsed = ParseExpectedDiagnostics(piece.text, file);
    if (!parsed.ok()) return Fail(parsed.status(), err);
    expected = std::move(parsed).value();
  }
  std::vector<ProducedDiagnostic> produced;
  newir::OpLines op_lines;
  const newir::Program* located = nullptr;
  // Records a failure: printed at once, or kept for the matching.
  int failure = kExitOk;
  const auto report = [&](const Status& status) {
    if (!verify_diagnostics) {
      if (failure == kExitOk) failure = Fail(status, err);
      return;
    }
    produced.push_back(
        {LineOfDiagnostic(status.diagnostic(), located, op_lines), status.diagnostic()});
  };
  newir::ParseOptions parse;
  parse.allow_unregistered = command.newir.allow_unregistered;
  StatusOr<newir::Program> program = newir::ParseProgram(piece.text, file, parse, &op_lines);
  bool clean = program.ok();
  if (!program.ok()) report(program.status());
  if (clean && verify_diagnostics && command.pass_manager.verify_each) {
    // Every finding, as mlir-opt reports them, rather than the first.
    located = &*program;
    newir::VerifyOptions options;
    options.file = file;
    options.allow_unregistered = command.newir.allow_unregistered;
    const Diagnostics found = newir::VerifyProgramAll(*program, options);
    for (const Diagnostic& d : found.items()) {
      produced.push_back({LineOfDiagnostic(d, located, op_lines), d});
      if (d.severity == Severity::kError) clean = false;
    }
  }
  if (clean) {
    StatusOr<std::unique_ptr<newir::PassManager>> pm = MakePassManager(command, file, err);
    if (!pm.ok()) return Fail(pm.status(), err);
    StatusOr<newir::IrChange> ran = (*pm)->Run(*program);
    if (command.pass_timing) err << (*pm)->timing().ToString();
    if (!ran.ok()) {
      report(ran.status());
      clean = false;
    }
  }
  if (clean) {
    *output = newir::SerializeProgramFile(*program, newir::FileFormat::kText,
                                          command.newir.ToPrintOptions());
  }
  if (!verify_diagnostics) return failure;
  return MatchDiagnostics(expected, produced, file, err) ? kExitOk : kExitCheckFailed;
}

// opt over a test file: PIR text in, PIR text out, the pieces' outputs joined by `// -----`.
int RunOptTestFile(const OptCommand& command, const OptTestFlags& flags, std::ostream& out,
                   std::ostream& err) {
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  const bool pir_out =
      command.to ? *command.to == IrFormat::kPir
                 : command.output == "-" || IrFormatFromPath(command.output) == IrFormat::kPir;
  if (command.input.empty() || (command.from && *command.from != IrFormat::kPir) || !pir_out) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(file),
                       "--split-input-file and --verify-diagnostics read and write PIR text"),
                err);
  }
  StatusOr<std::string> bytes = ReadFile(command.input);
  if (!bytes.ok()) return Fail(bytes.status(), err);
  const std::vector<InputPiece> pieces =
      flags.split_input_file ? SplitInputFile(*bytes) : std::vector<InputPiece>{{*bytes, 1}};
  std::string result;
  int exit = kExitOk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) result += kSplitMarker;
    std::string output;
    const int code = RunOptPiece(command, pieces[i], file, flags.verify_diagnostics, &output, err);
    if (exit == kExitOk) exit = code;
    result += output;
  }
  if (exit != kExitOk) return exit;
  if (command.output == "-") {
    out << result;
    out.flush();
    return kExitOk;
  }
  Status written = WriteFileAtomically(command.output, result);
  return written.ok() ? kExitOk : Fail(written, err);
}

}  // namespace

int RunOpt(const OptCommand& command, std::ostream& out, std::ostream& err) {
  if (command.list_passes) {
    out << newir::PassRegistry::Global().ListPasses();
    return kExitOk;
  }
  if (command.input.empty()) {
    return Fail(Status(StatusCode::kInvalidArgument, Location{},
                       "an input program is required (or --list-passes)"),
                err);
  }
  // The output format is settled before any work, so a bad -o fails fast.
  std::optional<IrFormat> to = command.to;
  if (!to) to = command.output == "-" ? IrFormat::kPir : IrFormatFromPath(command.output);
  if (!to || !IsNewIr(*to)) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.output),
                  "opt writes new-IR programs: PIR text or PIR JSON");
    status.AddNote("use --to pir or --to json, or an output ending in .pir or .json");
    return Fail(status, err);
  }

  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<std::string> bytes = ReadFile(command.input);
  if (!bytes.ok()) return Fail(bytes.status(), err);
  const IrFormat from = command.from.value_or(DetectIrFormat(*bytes));
  if (!IsNewIr(from)) {
    Status status(StatusCode::kInvalidArgument, Location::File(file),
                  fmt::format("opt reads new-IR programs, and this is a legacy program ({})",
                              IrFormatName(from)));
    status.AddNote("translate it to the new IR first");
    return Fail(status, err);
  }
  StatusOr<newir::Program> program =
      newir::ParseProgramFile(*bytes, file, ToNewIrFormat(from), command.newir.ToReadOptions());
  if (!program.ok()) return Fail(program.status(), err);

  StatusOr<std::unique_ptr<newir::PassManager>> pm = MakePassManager(command, file, err);
  if (!pm.ok()) return Fail(pm.status(), err);
  StatusOr<newir::IrChange> ran = (*pm)->Run(*program);
  if (command.pass_timing) err << (*pm)->timing().ToString();
  if (!ran.ok()) return Fail(ran.status(), err);

  const std::string result =
      newir::SerializeProgramFile(*program, ToNewIrFormat(*to), command.newir.ToPrintOptions());
  if (command.output == "-") {
    out << result;
    out.flush();
    return kExitOk;
  }
  Status written = WriteFileAtomically(command.output, result);
  return written.ok() ? kExitOk : Fail(written, err);
}

RegisteredCommand AddOptCommand(CLI::App& parent) {
  auto command = std::make_shared<OptCommand>();
  auto test = std::make_shared<OptTestFlags>();
  OptCommand& opt = *command;
  CLI::App* opt_app = parent.add_subcommand(
      "opt",
      "Run a pass pipeline over a new-IR program (like mlir-opt): verify the input, run the "
      "passes, verify after each, write PIR text or JSON");
  opt_app->add_option("input", opt.input, "New-IR program: PIR text or JSON ('-' = stdin)");
  opt_app->add_option("-o,--output", opt.output, "Output file ('-' = stdout, the default)");
  AddFormatOption(opt_app, "--from", &opt.from, "Force the input format");
  AddFormatOption(opt_app, "--to", &opt.to,
                  "Output format, pir or json (default: from the output's extension)");
  opt_app->add_option("--pass-pipeline", opt.pass_pipeline,
                      "Passes to run, e.g. 'dce,canonicalize{max-iterations=3}'");
  opt_app->add_flag("--list-passes", opt.list_passes, "List the passes and their options");
  newir::PassManagerOptions& pm = opt.pass_manager;
  opt_app->add_flag("--verify-each,!--no-verify-each", pm.verify_each,
                    "Verify the input and the IR after every pass (default on)");
  opt_app
      ->add_option_function<std::vector<std::string>>(
          "--print-ir-before",
          [&pm](const std::vector<std::string>& names) {
            pm.print_ir_before.insert(names.begin(), names.end());
          },
          "Print the IR before these passes (comma-separated)")
      ->delimiter(',');
  opt_app
      ->add_option_function<std::vector<std::string>>(
          "--print-ir-after",
          [&pm](const std::vector<std::string>& names) {
            pm.print_ir_after.insert(names.begin(), names.end());
          },
          "Print the IR after these passes (comma-separated)")
      ->delimiter(',');
  opt_app->add_flag("--print-ir-before-all", pm.print_ir_before_all,
                    "Print the IR before every pass");
  opt_app->add_flag("--print-ir-after-all", pm.print_ir_after_all, "Print the IR after every pass");
  opt_app->add_flag("--print-ir-after-change", pm.print_ir_after_change,
                    "Print the IR after a pass only when it changed the IR");
  opt_app->add_flag("--print-ir-after-failure", pm.print_ir_after_failure,
                    "Print the IR after a pass that failed or broke the IR");
  opt_app->add_option("--dump-dir", pm.dump_dir,
                      "Write the input and the IR after each pass as numbered files here");
  opt_app->add_flag("--pass-timing", opt.pass_timing, "Print wall time per pass on stderr");
  opt_app->add_flag("--split-input-file", test->split_input_file,
                    "Test files: run each piece between '// -----' lines on its own, outputs "
                    "joined by '// -----'");
  opt_app->add_flag("--verify-diagnostics", test->verify_diagnostics,
                    "Test files: check the diagnostics against the input's "
                    "'// expected-error @+1 {{...}}' comments instead of printing them");
  AddNewIrOptions(opt_app, &opt.newir);
  return {opt_app, [command, test](std::ostream& out, std::ostream& err) {
            if (test->split_input_file || test->verify_diagnostics) {
              return RunOptTestFile(*command, *test, out, err);
            }
            return RunOpt(*command, out, err);
          }};
}

}  // namespace irm::tools
