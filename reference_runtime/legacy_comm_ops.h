// The legacy communication ops (c_allreduce_*, c_broadcast, c_allgather, c_reducescatter,
// c_identity, c_split, c_concat, send_v2, recv_v2, barrier, and the vocabulary-parallel
// c_embedding, c_softmax_with_cross_entropy and their grads) as the legacy executor binds them:
// their slots and attributes, from Paddle's collective op makers (paddle/fluid/operators/
// collective/), written independently of the new-IR side (docs/architecture.md, invariant 1).
// Running them (LegacyExecutor::RunCommOp, legacy_comm_ops.cc) goes through the rank's Communicator
// in the ExecutorOptions' CommContext; use_calc_stream is a stream choice and means nothing here.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "oldir/program.h"
#include "reference_runtime/legacy_plan.h"

namespace irm::rt {

// Fills `planned` (kind kComm) for communication op `op`: its X (inputs[0], when the op reads
// one) and Out (outputs[0], when it writes one) resolved through `resolve`, and its attributes
// converted into `planned.attrs` (ring_id, root, nranks when the op carries it, rank, peer,
// out_shape, dtype, dynamic_shape). A vocabulary-parallel op's inputs and outputs are its own
// slots in its kernel's order (W, Ids -> Out; W, Ids, Out@GRAD -> W@GRAD; Logits, Label ->
// Softmax, Loss; Softmax, Label, Loss@GRAD -> Logits@GRAD) and its attributes start_index,
// vocab_size, ignore_index, ring_id, rank and nranks. Errors are unlocated kInvalid statuses
// naming the slot or attribute.
Status PlanLegacyCommOp(const oldir::Op& op,
                        const std::function<PlannedVar(const std::string&)>& resolve,
                        PlannedOp& planned);

}  // namespace irm::rt
