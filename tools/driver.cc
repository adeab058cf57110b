// Command-line parsing for ir-migrate: one binary, one subcommand per job. Each subcommand
// registers its own options beside its code (command_registry.h); this file holds the top-level
// app and picks the subcommand the command line names.
#include "tools/driver.h"

#include <CLI/CLI.hpp>

#include <vector>

#include "reference_runtime/device_fault.h"
#include "tools/command_registry.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

constexpr const char* kVersion = "0.1.0";

}  // namespace

int RunIrMigrate(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "ir-migrate: read, check, convert and transform PaddlePaddle programs on the way from the "
      "legacy IR (ProgramDesc) to PIR.\nInputs are legacy .pdmodel (binary) or protobuf text, or "
      "new-IR PIR text (.pir) or PIR JSON (.json),\ndetected from content; '-' is standard "
      "input.\nExit codes: 0 ok, 1 check failed, 2 bad usage or input, 3 runtime failure.",
      "ir-migrate"};
  app.set_version_flag("--version", std::string("ir-migrate ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();

  // The order here is the order of `ir-migrate --help`.
  const std::vector<RegisteredCommand> commands = {
      AddDumpCommand(app),  AddValidateCommand(app),    AddConvertCommand(app),
      AddOptCommand(app),   AddParallelizeCommand(app), AddTranslateCommand(app),
      AddRunCommand(app),   AddParityCommand(app),      AddBuildCommand(app),
      AddSuiteCommand(app), AddScheduleCommand(app),    AddEngineCommand(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }

  for (const RegisteredCommand& command : commands) {
    if (!command.app->parsed()) continue;
    const int rc = command.run(out, err);
    // A device fault that a host read met after the last GPU op (device_fault.h): the command's
    // results rest on zeros, so it is a runtime failure whatever the command concluded.
    if (const Status fault = rt::TakeDeviceFault(); !fault.ok()) {
      Fail(fault, err);
      return kExitRuntimeFailure;
    }
    return rc;
  }
  return kExitBadInput;
}

}  // namespace irm::tools
