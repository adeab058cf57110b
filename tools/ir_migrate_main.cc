// Entry point of the ir-migrate binary. Standard output is checked once, here, for every command:
// a report lost to a full disk or a closed stdout makes the exit non-zero (kIoError's code).
#include <iostream>

#include "common/std_streams.h"
#include "tools/driver.h"
#include "tools/exit_code.h"

int main(int argc, char** argv) {
  irm::GuardStandardDescriptors();
  int code = irm::tools::RunIrMigrate(argc, argv, std::cout, std::cerr);
  const irm::Status flushed = irm::FinishStandardOutput();
  if (!flushed.ok()) {
    std::cerr << flushed.diagnostic().Render();
    // A command that already failed keeps its own code; its diagnostics said why.
    if (code == irm::tools::kExitOk) code = irm::tools::ExitCodeFor(flushed);
  }
  return code;
}
