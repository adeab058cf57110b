// The exit codes of ir-migrate's commands (docs/architecture.md): 0 success, 1 a check failed
// (invalid program, parity mismatch), 2 bad usage or unreadable input, 3 runtime failure.
#pragma once

#include "common/status.h"

namespace irm::tools {

enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,
  kExitBadInput = 2,
  kExitRuntimeFailure = 3,
};

inline int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalid:
      return kExitCheckFailed;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kIoError:
    case StatusCode::kParseError:
    case StatusCode::kUnimplemented:
      return kExitBadInput;
    case StatusCode::kInternal:
      return kExitRuntimeFailure;
  }
  return kExitRuntimeFailure;
}

}  // namespace irm::tools
