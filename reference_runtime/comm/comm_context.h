// CommContext: what an executor needs to run communication ops for one rank — the rank, its
// communicator in each process group, and the job, micro-batch and step the plan runner is in (the
// executor adds the op type and index to make each call's CallSite). ExecutorOptions points to
// one; without it, communication ops fail as needing the multi-rank runtime.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "reference_runtime/comm/communicator.h"

namespace irm::rt {

struct CommContext {
  int rank = 0;  // global rank
  // The rank's communicator in process group `ring_id`; an error names the ring.
  std::function<StatusOr<Communicator*>(int ring_id)> communicator;
  // Updated by the plan runner before each job; read when an op communicates.
  std::string job;
  int micro_batch = 0;
  int step = 0;

  // The call site of op `op_index` of type `op_type` in the current job.
  CallSite Site(std::string op_type, int op_index) const {
    return CallSite{std::move(op_type), job, micro_batch, step, op_index};
  }
};

}  // namespace irm::rt
