// A device failure that a host read could not report. Tensor::raw() returns a pointer, not a
// Status: when copying a device-resident tensor back fails (an asynchronous device fault surfacing
// there, never bad input), the read gets zeros, the tensor drops its device copy, and the failure
// is kept here — the first one, process-wide — until something that can report it takes it: the
// GPU kernel registry before its next op, the CLI when a command ends (exit 3). A CUDA error is a
// diagnostic, never an abort.
#pragma once

#include "common/status.h"

namespace irm::rt {

// Keeps `status` unless a fault is already pending (the first one is the cause).
void RecordDeviceFault(Status status);

// The pending fault, cleared; OK when there is none.
Status TakeDeviceFault();

}  // namespace irm::rt
