// Entry point of the ir-migrate binary.
#include <iostream>

#include "tools/driver.h"

int main(int argc, char** argv) {
  return irm::tools::RunIrMigrate(argc, argv, std::cout, std::cerr);
}
