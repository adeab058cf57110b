// The ir-migrate command line: parses arguments (CLI11) and runs a subcommand. main() is a thin
// wrapper so the whole CLI can be driven from tests.
#pragma once

#include <ostream>

namespace irm::tools {

int RunIrMigrate(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace irm::tools
