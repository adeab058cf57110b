// Reading whole files (or standard input, spelled "-") up to the input cap (input_limit.h), and
// writing outputs atomically: the bytes go to a temporary file in the destination's folder, which
// is flushed and renamed over the destination, so a crash, a full disk or a signal (temp_paths.h)
// never leaves a half-written output or a stray temporary behind.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace irm {

// The whole content of `path`; "-" reads standard input. An input larger than MaxInputBytes() is
// refused (kIoError) before it exhausts memory.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `bytes` to `path` atomically; "-" writes standard output (not atomic, by nature). A
// symlink's target is replaced (the link and the target's mode kept); a device, FIFO or socket is
// written in place, never replaced; a new file gets 0666 under the umask.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace irm
