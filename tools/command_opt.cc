// `ir-migrate opt`: mlir-opt for the new IR — read a program (PIR text or JSON), verify it, run a
// textual pass pipeline with the pass manager's debugging affordances, verify after every pass,
// and write the result (atomically) as PIR text or JSON.
#include <fmt/format.h>

#include "common/file_io.h"
#include "newir/pass_manager.h"
#include "newir/verifier.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

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

  newir::PassManagerOptions options = command.pass_manager;
  options.verifier = MakeVerifier(file, command.newir.allow_unregistered);
  options.ir_stream = &err;
  options.print_options = command.newir.ToPrintOptions();
  newir::PassManager pm(std::move(options));
  Status added =
      pm.AddPipeline(command.pass_pipeline, newir::PassRegistry::Global(), "--pass-pipeline");
  if (!added.ok()) return Fail(added, err);

  StatusOr<newir::IrChange> ran = pm.Run(*program);
  if (command.pass_timing) err << pm.timing().ToString();
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

}  // namespace irm::tools
