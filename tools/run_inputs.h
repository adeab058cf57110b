// What the commands that run programs (`run`, `parity`) share: `--feed NAME=FILE.npy` options read
// into tensors, and how a run's failure maps to an exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/executor.h"

namespace irm::tools {

// Each `NAME=FILE.npy` read into a tensor under NAME. kInvalidArgument for a malformed option and
// for a NAME given twice; the .npy reader's errors, located at the file. Whether the program feeds
// NAME is the run's check (rt::CheckFeedNames).
StatusOr<rt::FeedMap> ReadFeeds(const std::vector<std::string>& feeds);

// Prints a run's failure and returns its exit code: a kernel refusing what the program computed
// (kInvalid) or a hang or rank failure (kInternal) is a runtime failure (3); a missing feed or
// parameter, an op without a binding, is bad input (2).
int FailRun(const Status& status, std::ostream& err);

}  // namespace irm::tools
