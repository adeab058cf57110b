// Names of status codes and the one-line rendering of a Status.
#include "common/status.h"

namespace irm {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kParseError:
      return "parse error";
    case StatusCode::kInvalid:
      return "invalid";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

const Diagnostic& Status::NoDiagnostic() {
  static const Diagnostic* const none = new Diagnostic;
  return *none;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string text = diagnostic().Render();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace irm
