// Entry point of the ir-deadcode binary. A report lost on its way to standard output (a full
// disk, a closed stdout) is an error: exit 2, as for an output file that cannot be written.
#include <iostream>

#include "common/std_streams.h"
#include "tools/deadcode/deadcode_cli.h"

int main(int argc, char** argv) {
  irm::GuardStandardDescriptors();
  int code = irm::deadcode::RunIrDeadcode(argc, argv, std::cout, std::cerr);
  const irm::Status flushed = irm::FinishStandardOutput();
  if (!flushed.ok()) {
    std::cerr << "ir-deadcode: " << flushed.ToString() << "\n";
    if (code == 0) code = 2;
  }
  return code;
}
