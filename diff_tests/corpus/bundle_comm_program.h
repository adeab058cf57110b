// The point-to-point communication a bundle's ranks do in one step, in order, found without
// running a kernel: each rank's plan expanded into its job programs' send and receive ops
// (legacy send_v2 / recv_v2, new-IR pd_op.send_v2 / recv_v2 / p_send / p_recv), each on the
// channel its ring_id and peer name through the bundle's process groups, with the ops between
// them as compute. What `ir-migrate schedule check BUNDLE` simulates, so that a plan that would
// hang is named before anything runs, in the words the runtime's hang report uses.
#pragma once

#include <string>

#include "common/status.h"
#include "oldir/bundle.h"
#include "schedules/comm_program.h"

namespace irm::corpus {

// Every rank of `bundle` (read from `dir`), rank r at index r. A step's `message` is the
// micro-batch of the job it comes from ("micro-batch 1"), so a receive that would take another
// micro-batch's message is flagged; `op` is "send_v2, op 7" (the op's index in its job program).
// Errors: a program that does not load (its diagnostic); a send or receive whose ring names no
// process group, whose group does not hold the rank, or whose peer is outside the group
// (kInvalid, located at the op); one inside a control-flow block (kUnimplemented: its count
// depends on the data).
StatusOr<schedules::CommProgram> BundleCommProgram(const oldir::Bundle& bundle,
                                                   const std::string& dir);

}  // namespace irm::corpus
