// Reading whole files (or standard input, spelled "-") and writing outputs atomically: the bytes go
// to a temporary file in the destination's folder, which is flushed and renamed over the
// destination, so a crash or a full disk never leaves a half-written output behind.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace irm {

// The whole content of `path`; "-" reads standard input.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `bytes` to `path` atomically; "-" writes standard output (not atomic, by nature).
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace irm
