// `ir-migrate translate`: a legacy program to a new-IR program (PIR text or JSON by the output's
// extension or --to), verified before it is written. Unknown op types fail the translation, all
// of them listed, unless --allow-unregistered keeps them as opaque ops; --coverage prints the
// per-op-type table on stderr.
#include <fmt/format.h>

#include "common/file_io.h"
#include "newir/verifier.h"
#include "tools/commands.h"
#include "tools/exit_code.h"
#include "translator/translate.h"

namespace irm::tools {

int RunTranslate(const TranslateCommand& command, std::ostream& out, std::ostream& err) {
  std::optional<IrFormat> to = command.to;
  if (!to) to = command.output == "-" ? IrFormat::kPir : IrFormatFromPath(command.output);
  if (!to || !IsNewIr(*to)) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.output),
                  "a translation is written as PIR text or PIR JSON");
    status.AddNote("use --to pir|json, or an output ending in .pir or .json");
    return Fail(status, err);
  }
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<std::string> input = ReadFile(command.input);
  if (!input.ok()) return Fail(input.status(), err);
  if (IsNewIr(command.from.value_or(DetectIrFormat(*input)))) {
    return Fail(Status(StatusCode::kInvalidArgument, Location::File(file),
                       "the input is already a new-IR program"),
                err);
  }
  StatusOr<oldir::Program> legacy = oldir::ParseProgram(
      *input, file, command.from ? std::optional(ToLegacyFormat(*command.from)) : std::nullopt);
  if (!legacy.ok()) return Fail(legacy.status(), err);

  translator::TranslateOptions options;
  options.file = file;
  options.comm_ops = command.comm_ops;
  options.allow_unregistered = command.newir.allow_unregistered;
  StatusOr<translator::Translation> t = translator::TranslateProgram(*legacy, options);
  if (!t.ok()) return Fail(t.status(), err);
  err << t->notes.Render();
  if (command.coverage) err << t->coverage.ToText();

  const Diagnostics findings = newir::VerifyProgramAll(
      t->program, {.allow_unregistered = command.newir.allow_unregistered, .file = file});
  if (findings.HasErrors()) {
    // The legacy program translated but its translation breaks the new IR's rules: a gap in the
    // translator, reported as such.
    err << findings.Render();
    return Fail(Status(StatusCode::kInternal, Location::File(file),
                       "the translation does not verify (a translator bug)"),
                err);
  }
  const std::string bytes =
      newir::SerializeProgramFile(t->program, ToNewIrFormat(*to), command.newir.ToPrintOptions());
  if (command.output == "-") {
    out << bytes;
    return kExitOk;
  }
  const Status written = WriteFileAtomically(command.output, bytes);
  return written.ok() ? kExitOk : Fail(written, err);
}

}  // namespace irm::tools
