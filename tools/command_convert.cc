// `ir-migrate convert`: binary <-> text, losslessly. The output format comes from --to, else from
// the output's extension; the write is atomic.
#include <fmt/format.h>

#include "common/file_io.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {

int RunConvert(const ConvertCommand& command, std::ostream& out, std::ostream& err) {
  std::optional<oldir::ProgramFormat> to = command.to;
  if (!to) to = oldir::ProgramFormatFromPath(command.output);
  if (!to) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.output),
                  "cannot tell the output format from the file name");
    status.AddNote("use --to binary or --to text, or an extension such as .pdmodel or .prototxt");
    return Fail(status, err);
  }
  StatusOr<oldir::Program> program = oldir::LoadProgram(command.input, command.from);
  if (!program.ok()) return Fail(program.status(), err);

  oldir::SerializeOptions options;
  options.drop_unknown_fields_in_text = command.drop_unknown_fields;
  StatusOr<std::string> bytes = oldir::SerializeProgram(*program, *to, options);
  if (!bytes.ok()) {
    Status status = bytes.status();
    status.InFile(command.input);
    if (status.code() == StatusCode::kInvalid) {
      // Refusing a lossy conversion is a usage problem, not an invalid program.
      status = Status(StatusCode::kInvalidArgument, status.diagnostic());
      status.AddNote("or pass --drop-unknown to convert without them");
    }
    return Fail(status, err);
  }
  if (command.output == "-") {
    out << *bytes;
    out.flush();
    return kExitOk;
  }
  Status written = WriteFileAtomically(command.output, *bytes);
  return written.ok() ? kExitOk : Fail(written, err);
}

}  // namespace irm::tools
