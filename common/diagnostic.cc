// Rendering of diagnostics in the compiler style engineers' editors and CI logs understand.
#include "common/diagnostic.h"

#include <fmt/format.h>

namespace irm {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "error";
}

bool Location::empty() const {
  return file.empty() && line == 0 && block < 0 && op < 0 && var.empty() && attr.empty() &&
         detail.empty();
}

std::string Location::Render() const {
  std::string out = file;
  if (line > 0) {
    out += fmt::format(":{}", line);
    if (column > 0) out += fmt::format(":{}", column);
  }
  std::vector<std::string> parts;
  if (block >= 0) parts.push_back(fmt::format("block {}", block));
  if (op >= 0) {
    parts.push_back(op_type.empty() ? fmt::format("op {}", op)
                                    : fmt::format("op {} ({})", op, op_type));
  }
  if (!var.empty()) parts.push_back(fmt::format("var '{}'", var));
  if (!attr.empty()) parts.push_back(fmt::format("attr '{}'", attr));
  if (!detail.empty()) parts.push_back(detail);
  if (!parts.empty()) {
    if (!out.empty()) out += ": ";
    out += fmt::format("{}", fmt::join(parts, ", "));
  }
  return out;
}

std::string Diagnostic::Render() const {
  std::string where = location.Render();
  std::string out = where.empty()
                        ? fmt::format("{}: {}\n", SeverityName(severity), message)
                        : fmt::format("{}: {}: {}\n", where, SeverityName(severity), message);
  for (const std::string& note : notes) out += fmt::format("  note: {}\n", note);
  return out;
}

Diagnostic Error(Location location, std::string message) {
  return Diagnostic{Severity::kError, std::move(location), std::move(message), {}};
}

Diagnostic Warning(Location location, std::string message) {
  return Diagnostic{Severity::kWarning, std::move(location), std::move(message), {}};
}

void Diagnostics::Append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

int Diagnostics::CountOf(Severity severity) const {
  int n = 0;
  for (const Diagnostic& d : items_) n += d.severity == severity;
  return n;
}

std::string Diagnostics::Render() const {
  std::string out;
  for (const Diagnostic& d : items_) out += d.Render();
  return out;
}

}  // namespace irm
