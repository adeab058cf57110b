// Status and StatusOr<T>: how library code reports failure without exceptions or aborts. A failed
// Status carries a code (which the CLI maps to an exit code) and a Diagnostic saying what and
// where.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/diagnostic.h"

namespace irm {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // bad usage: a flag, an option, an API argument
  kNotFound,         // a file, block, var or attribute that does not exist
  kIoError,          // the operating system refused a read or a write
  kParseError,       // the bytes cannot be read as the format they claim to be
  kInvalid,          // read fine, but breaks a rule of the IR (a validation failure)
  kUnimplemented,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

// An OK status is one word and a code: the diagnostic of a failure lives behind a pointer, null
// while OK. Every fallible call returns one (a translation makes a few per op), so OK must cost
// nothing to make, move, copy and destroy; a Location alone holds six strings.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, Diagnostic diagnostic)
      : code_(code), diagnostic_(std::make_unique<Diagnostic>(std::move(diagnostic))) {}
  Status(StatusCode code, Location location, std::string message)
      : Status(code, Error(std::move(location), std::move(message))) {}
  Status(const Status& other)
      : code_(other.code_),
        diagnostic_(other.diagnostic_ ? std::make_unique<Diagnostic>(*other.diagnostic_)
                                      : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // An empty diagnostic for an OK status.
  const Diagnostic& diagnostic() const { return diagnostic_ ? *diagnostic_ : NoDiagnostic(); }
  const std::string& message() const { return diagnostic().message; }
  const Location& location() const { return diagnostic().location; }

  // Both leave an OK status as it is: it carries no diagnostic.
  Status& AddNote(std::string note) {
    if (diagnostic_) diagnostic_->notes.push_back(std::move(note));
    return *this;
  }
  // Fills in the file of the location when the code that failed did not know it.
  Status& InFile(const std::string& file) {
    if (diagnostic_ && diagnostic_->location.file.empty()) diagnostic_->location.file = file;
    return *this;
  }
  // The rendered diagnostic ("OK" when ok), without a trailing newline.
  std::string ToString() const;

 private:
  static const Diagnostic& NoDiagnostic();

  StatusCode code_ = StatusCode::kOk;
  std::unique_ptr<Diagnostic> diagnostic_;  // null while OK
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT: implicit like absl::StatusOr
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, Location{}, "StatusOr built from OK");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace irm

// Early return of a failed Status (or of a StatusOr's status).
#define IRM_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::irm::Status irm_status_ = (expr);        \
    if (!irm_status_.ok()) return irm_status_; \
  } while (0)

#define IRM_CONCAT_INNER_(a, b) a##b
#define IRM_CONCAT_(a, b) IRM_CONCAT_INNER_(a, b)
// `IRM_ASSIGN_OR_RETURN(auto x, F());` declares x from F()'s value or returns its error.
#define IRM_ASSIGN_OR_RETURN(lhs, expr) \
  IRM_ASSIGN_OR_RETURN_IMPL_(IRM_CONCAT_(irm_statusor_, __LINE__), lhs, expr)
#define IRM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
