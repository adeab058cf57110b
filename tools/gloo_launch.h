// `ir-migrate run BUNDLE --ranks N --backend gloo --launch processes`: the parent runs itself
// once per rank (hidden --rank-process R --store DIR), each child hosting one rank of a Gloo
// world that meets through a file store, printing its fetches to a file of its own; the parent
// waits for every child, then prints the fetches merged as a threads run prints them (step by
// step, rank by rank; --json: one document), or each failed child's error (exit 3). Once a child
// has failed, the others get the per-call timeout and a few seconds to end before they are
// killed: nothing waits forever.
#pragma once

#include <ostream>

#include "tools/commands.h"

namespace irm::tools {

int LaunchGlooProcesses(const RunCommand& command, std::ostream& out, std::ostream& err);

}  // namespace irm::tools
