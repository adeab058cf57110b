// Entry point of the ir-deadcode binary.
#include <iostream>

#include "tools/deadcode/deadcode_cli.h"

int main(int argc, char** argv) {
  return irm::deadcode::RunIrDeadcode(argc, argv, std::cout, std::cerr);
}
