// `ir-migrate convert`: between the two forms of one IR, losslessly — binary <-> text for legacy
// programs, PIR text <-> PIR JSON for new-IR ones. The output format comes from --to, else from
// the output's extension; the write is atomic.
#include <fmt/format.h>

#include "common/file_io.h"
#include "newir/nesting.h"
#include "tools/cli_options.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

int Emit(const std::string& bytes, const std::string& output, std::ostream& out,
         std::ostream& err) {
  if (output == "-") {
    out << bytes;
    out.flush();
    return kExitOk;
  }
  Status written = WriteFileAtomically(output, bytes);
  return written.ok() ? kExitOk : Fail(written, err);
}

int ConvertLegacy(const ConvertCommand& command, std::string_view input, const std::string& file,
                  IrFormat from, IrFormat to, std::ostream& out, std::ostream& err) {
  StatusOr<oldir::Program> program = oldir::ParseProgram(input, file, ToLegacyFormat(from));
  if (!program.ok()) return Fail(program.status(), err);
  oldir::SerializeOptions options;
  options.drop_unknown_fields_in_text = command.drop_unknown_fields;
  StatusOr<std::string> bytes = oldir::SerializeProgram(*program, ToLegacyFormat(to), options);
  if (!bytes.ok()) {
    Status status = bytes.status();
    status.InFile(file);
    if (status.code() == StatusCode::kInvalid) {
      // Refusing a lossy conversion is a usage problem, not an invalid program.
      status = Status(StatusCode::kInvalidArgument, status.diagnostic());
      status.AddNote("or pass --drop-unknown to convert without them");
    }
    return Fail(status, err);
  }
  return Emit(*bytes, command.output, out, err);
}

int ConvertNewIr(const ConvertCommand& command, std::string_view input, const std::string& file,
                 IrFormat from, IrFormat to, std::ostream& out, std::ostream& err) {
  StatusOr<newir::Program> program =
      newir::ParseProgramFile(input, file, ToNewIrFormat(from), command.newir.ToReadOptions());
  if (!program.ok()) return Fail(program.status(), err);
  // Nothing is written, to a file or to standard output, that the readers would refuse (they
  // refuse such a program on input too; the check keeps the rule in one place for writers).
  const Status nesting = newir::CheckRegionNesting(
      *program, command.output == "-" ? std::string("<stdout>") : command.output);
  if (!nesting.ok()) return Fail(nesting, err);
  return Emit(
      newir::SerializeProgramFile(*program, ToNewIrFormat(to), command.newir.ToPrintOptions()),
      command.output, out, err);
}

}  // namespace

int RunConvert(const ConvertCommand& command, std::ostream& out, std::ostream& err) {
  std::optional<IrFormat> to = command.to;
  if (!to) to = IrFormatFromPath(command.output);
  if (!to) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.output),
                  "cannot tell the output format from the file name");
    status.AddNote(
        "use --to binary|text|pir|json, or an extension such as .pdmodel, .prototxt, .pir or "
        ".json");
    return Fail(status, err);
  }
  const std::string file = command.input == "-" ? "<stdin>" : command.input;
  StatusOr<std::string> input = ReadFile(command.input);
  if (!input.ok()) return Fail(input.status(), err);
  const IrFormat from = command.from.value_or(DetectIrFormat(*input));
  if (IsNewIr(from) != IsNewIr(*to)) {
    Status status(StatusCode::kInvalidArgument, Location::File(file),
                  fmt::format("cannot convert a {} program to {}: convert stays within one IR",
                              IsNewIr(from) ? "new-IR" : "legacy", IrFormatName(*to)));
    status.AddNote(IsNewIr(from) ? "a new-IR program converts to pir or json"
                                 : "a legacy program converts to binary or text; translating it "
                                   "to the new IR is the translator's job");
    return Fail(status, err);
  }
  return IsNewIr(from) ? ConvertNewIr(command, *input, file, from, *to, out, err)
                       : ConvertLegacy(command, *input, file, from, *to, out, err);
}

RegisteredCommand AddConvertCommand(CLI::App& parent) {
  auto command = std::make_shared<ConvertCommand>();
  ConvertCommand& convert = *command;
  CLI::App* convert_app = parent.add_subcommand(
      "convert",
      "Convert a program between its two forms, losslessly: legacy binary (.pdmodel) <-> "
      "protobuf text (.prototxt), or new-IR PIR text (.pir) <-> PIR JSON (.json).");
  convert_app->add_option("input", convert.input, "Program file ('-' = stdin)")->required();
  convert_app->add_option("-o,--output", convert.output, "Output file ('-' = stdout)")->required();
  AddFormatOption(convert_app, "--from", &convert.from, "Force the input format");
  AddFormatOption(convert_app, "--to", &convert.to,
                  "Output format (default: from the output's extension)");
  convert_app->add_flag("--drop-unknown", convert.drop_unknown_fields,
                        "Allow text output to drop fields the schema does not know");
  AddNewIrOptions(convert_app, &convert.newir);
  return {convert_app, [command](std::ostream& out, std::ostream& err) {
            return RunConvert(*command, out, err);
          }};
}

}  // namespace irm::tools
