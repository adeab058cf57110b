// The bound on one tensor's storage and what happens when an allocation fails. A program may ask
// for any shape (a fill_constant of shape [1e12], a batch size of 1e12); the runtime refuses a
// tensor larger than the machine's physical memory before allocating it, and an allocation that
// fails anyway (memory already taken) is reported as a runtime failure naming the op and the size
// rather than ending the process with an uncaught std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace irm::rt {

// The largest tensor storage, in bytes: the machine's physical memory (sysconf), read once.
size_t MaxTensorBytes();

// kInternal (a runtime failure, exit 3) when `bytes` exceeds MaxTensorBytes(); OK otherwise.
// `what` names the tensor in the message ("a float32 tensor of shape [1000000000000]").
Status CheckTensorBytes(uint64_t bytes, const std::string& what);

// The size of the last tensor allocation of this thread that failed (or was refused by the cap)
// and threw std::bad_alloc, then 0 again; 0 when none did. Read where std::bad_alloc is caught.
size_t TakeFailedAllocationBytes();

}  // namespace irm::rt
