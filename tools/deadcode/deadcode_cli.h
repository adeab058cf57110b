// The ir-deadcode command line as a function, so that tests can run it in-process.
#pragma once

#include <ostream>

namespace irm::deadcode {

// Parses the arguments, runs the front ends and the analysis, writes the report; returns the exit
// code (0 written, 1 problems with --fail-on-errors, 2 bad usage or unreadable configuration).
int RunIrDeadcode(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace irm::deadcode
