// Command-line parsing for ir-migrate: one binary, one subcommand per job. Keeps CLI11 (slow to
// compile) in this one file; the commands themselves live in command_*.cc.
#include "tools/driver.h"

#include <CLI/CLI.hpp>

#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

constexpr const char* kVersion = "0.1.0";

// Adds --from/--to style format options whose values are "binary" or "text".
CLI::Option* AddFormatOption(CLI::App* app, const std::string& name,
                             std::optional<oldir::ProgramFormat>* target, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name,
          [target](const std::string& value) { *target = oldir::ProgramFormatFromName(value); },
          help)
      ->check(CLI::IsMember({"binary", "text"}))
      ->type_name("binary|text");
}

}  // namespace

int RunIrMigrate(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "ir-migrate: read, check and convert PaddlePaddle legacy programs (ProgramDesc) on the way "
      "to PIR.\nInputs are .pdmodel (binary) or protobuf text, detected from content; '-' is "
      "standard input.\nExit codes: 0 ok, 1 check failed, 2 bad usage or input, 3 runtime failure.",
      "ir-migrate"};
  app.set_version_flag("--version", std::string("ir-migrate ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();

  DumpCommand dump;
  CLI::App* dump_app = app.add_subcommand(
      "dump",
      "Print a program one line per var and op (like Paddle's Program.__str__), or "
      "summarise a tensor file (.npy, .pdiparams)");
  dump_app->add_option("file", dump.input, "Program, .npy or .pdiparams file ('-' = stdin)")
      ->required();
  AddFormatOption(dump_app, "--from", &dump.format, "Force the program format");
  dump_app->add_option("-o,--output", dump.output, "Write here (atomically) instead of stdout");
  dump_app->add_flag("--callstack", dump.show_callstack, "Show op_callstack attributes");
  dump_app->add_flag("--flat", dump.flat, "Print blocks one after another, not nested");
  dump_app->add_flag("--no-vars", dump.hide_vars, "Leave out variable declarations");
  dump_app->add_option("--program", dump.program_for_params,
                       "Program whose persistable vars name the tensors of a .pdiparams file");

  ValidateCommand validate;
  CLI::App* validate_app = app.add_subcommand(
      "validate",
      "Check a program: block tree, dataflow, var declarations, attribute encodings "
      "and the schema of known ops. Reports every finding.");
  validate_app->add_option("file", validate.input, "Program file ('-' = stdin)")->required();
  AddFormatOption(validate_app, "--from", &validate.format, "Force the program format");
  validate_app->add_option(
      "--feed", validate.feeds,
      "A var fed from outside (repeatable; need_check_feed vars count already)");
  validate_app->add_flag("--json", validate.json, "Print a JSON report on stdout");
  validate_app->add_flag("--Werror", validate.warnings_as_errors, "Treat warnings as errors");
  validate_app->add_flag("-q,--quiet", validate.quiet, "No summary line");

  ConvertCommand convert;
  CLI::App* convert_app = app.add_subcommand(
      "convert",
      "Convert a program between binary (.pdmodel) and protobuf text (.prototxt), "
      "losslessly.");
  convert_app->add_option("input", convert.input, "Program file ('-' = stdin)")->required();
  convert_app->add_option("-o,--output", convert.output, "Output file ('-' = stdout)")->required();
  AddFormatOption(convert_app, "--from", &convert.from, "Force the input format");
  AddFormatOption(convert_app, "--to", &convert.to,
                  "Output format (default: from the output's extension)");
  convert_app->add_flag("--drop-unknown", convert.drop_unknown_fields,
                        "Allow text output to drop fields the schema does not know");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }

  if (dump_app->parsed()) return RunDump(dump, out, err);
  if (validate_app->parsed()) return RunValidate(validate, out, err);
  if (convert_app->parsed()) return RunConvert(convert, out, err);
  return kExitBadInput;
}

}  // namespace irm::tools
