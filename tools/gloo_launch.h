// `ir-migrate run BUNDLE --ranks N --backend gloo --launch processes`: the parent runs itself
// once per rank (hidden --rank-process R --store DIR), each child hosting one rank of a Gloo
// world that meets through a file store, printing its fetches to a file of its own; the parent
// waits for every child, then prints the fetches merged as a threads run prints them (step by
// step, rank by rank; --json: one document), or each failed child's error (exit 3). Once a child
// has failed, the others get the per-call timeout and a few seconds to end before they are
// killed: nothing waits forever. SIGINT, SIGTERM and SIGHUP to the launcher are forwarded to every
// rank process; the launcher reaps them (killing those that outlive a grace period), removes its
// temporary folder and the process's registered temporaries (common/temp_paths.h), then dies of
// the signal. A rank process ends with its launcher even when the launcher is killed outright.
#pragma once

#include <ostream>

#include "common/status.h"
#include "tools/commands.h"

namespace irm::tools {

int LaunchGlooProcesses(const RunCommand& command, std::ostream& out, std::ostream& err);

// In a rank process: asks the kernel to send it SIGTERM when its launcher dies, and fails
// (kInternal) when the launcher is already gone. OK in a process no launcher started.
Status TieToLauncher();

}  // namespace irm::tools
