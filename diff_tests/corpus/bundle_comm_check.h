// The check the Engine flow runs before it runs a bundle (issue: "engine checks the communication
// order before it runs"): the bundle's point-to-point order (bundle_comm_program.h), legacy or
// pir, simulated under the model the run will use (schedules/simulator.h). A plan that would
// hang is refused before a rank starts, with the wait-for cycle named in the words the runtime's
// hang report uses, and with the buffer depth that would let it complete.
#pragma once

#include <string>

#include "common/status.h"
#include "oldir/bundle.h"
#include "schedules/p2p_model.h"

namespace irm::corpus {

// OK when every rank of `bundle` (read from `dir`) completes under `model`. kInvalid, located at
// the bundle directory, when it does not: the simulator's diagnostic as the message ("deadlock
// under rendezvous at tick 4: rank 0 waits in send (...) for rank 1, which waits in send (...) for
// rank 0"), with a note saying the buffer depth the order needs ("needs buffer depth 2 (0: safe
// under rendezvous)", or that no depth lets it complete). Errors: BundleCommProgram's (a program
// that does not load, a send naming no process group, ...) and the simulator's (kInvalidArgument
// for a program that is not one).
Status CheckBundleCommunication(const oldir::Bundle& bundle, const std::string& dir,
                                const schedules::P2pModel& model);

}  // namespace irm::corpus
