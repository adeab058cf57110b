// How the subcommands of ir-migrate join the command line: each registers its own CLI11 options
// beside its code (AddXCommand in command_x.cc) and hands the driver back its app and a way to run
// it once the command line is parsed. The driver only lists them, in the order --help shows them.
#pragma once

#include <functional>
#include <memory>
#include <ostream>

namespace CLI {
class App;
}  // namespace CLI

namespace irm::tools {

struct RegisteredCommand {
  CLI::App* app = nullptr;  // owned by the parent app
  // Runs the command on the options the parse filled in; returns its exit code (exit_code.h).
  std::function<int(std::ostream& out, std::ostream& err)> run;
};

// Each adds one subcommand to `parent`; the options' storage lives as long as the returned run.
RegisteredCommand AddDumpCommand(CLI::App& parent);
RegisteredCommand AddValidateCommand(CLI::App& parent);
RegisteredCommand AddConvertCommand(CLI::App& parent);
RegisteredCommand AddOptCommand(CLI::App& parent);
RegisteredCommand AddParallelizeCommand(CLI::App& parent);
RegisteredCommand AddTranslateCommand(CLI::App& parent);
RegisteredCommand AddRunCommand(CLI::App& parent);
RegisteredCommand AddParityCommand(CLI::App& parent);
RegisteredCommand AddBuildCommand(CLI::App& parent);
RegisteredCommand AddSuiteCommand(CLI::App& parent);
RegisteredCommand AddScheduleCommand(CLI::App& parent);
RegisteredCommand AddEngineCommand(CLI::App& parent);

}  // namespace irm::tools
