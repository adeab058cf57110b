// The bound on how many bytes one input file may hold, and the read that enforces it. ReadFile
// (file_io.h) reads at most MaxInputBytes(); a larger file, or an endless stream such as
// /dev/zero, fails with a diagnostic instead of exhausting memory.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace irm {

// The cap of ReadFile: 2 GiB, or a quarter of the machine's physical memory when that is less
// (file_io.cc says why).
uint64_t MaxInputBytes();

// ReadFile with an explicit cap: kIoError "input is larger than N bytes" for a longer input.
StatusOr<std::string> ReadFileUpTo(const std::string& path, uint64_t max_bytes);

}  // namespace irm
