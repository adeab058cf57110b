// Diagnostics: what every reader, validator and pass reports to the user — a severity, a location
// (a text position, or a place inside a program such as block 0 / op 12 (matmul_v2)), a message and
// optional notes — and the one way they are rendered on a terminal.
#pragma once

#include <string>
#include <vector>

namespace irm {

enum class Severity { kNote, kWarning, kError };

const char* SeverityName(Severity severity);

// Where a finding is. Every part is optional; Render() prints the parts that are set, most
// specific last: "f.prototxt:3:7", "f.pdmodel: block 0, op 12 (matmul_v2), var 'x'".
struct Location {
  std::string file;
  int line = 0;  // 1-based; 0 = not a text position
  int column = 0;
  int block = -1;  // block index inside a program
  int op = -1;     // op index inside the block
  std::string op_type;
  std::string var;     // variable name
  std::string attr;    // attribute name
  std::string detail;  // anything else: "byte 17", "tensor 3 ('fc_0.w_0')"

  static Location File(std::string file) {
    Location loc;
    loc.file = std::move(file);
    return loc;
  }
  static Location Text(std::string file, int line, int column) {
    Location loc = File(std::move(file));
    loc.line = line;
    loc.column = column;
    return loc;
  }
  Location& InBlock(int b) {
    block = b;
    return *this;
  }
  Location& AtOp(int index, std::string type) {
    op = index;
    op_type = std::move(type);
    return *this;
  }
  Location& AtVar(std::string name) {
    var = std::move(name);
    return *this;
  }
  Location& AtAttr(std::string name) {
    attr = std::move(name);
    return *this;
  }
  Location& With(std::string text) {
    detail = std::move(text);
    return *this;
  }

  bool empty() const;
  std::string Render() const;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  Location location;
  std::string message;
  std::vector<std::string> notes;

  // "file: block 0, op 12 (matmul_v2): error: message" followed by "  note: ..." lines.
  std::string Render() const;
};

Diagnostic Error(Location location, std::string message);
Diagnostic Warning(Location location, std::string message);

// A list of findings, for the checks that report everything rather than stop at the first.
class Diagnostics {
 public:
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  void Append(const Diagnostics& other);
  const std::vector<Diagnostic>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  int CountOf(Severity severity) const;
  bool HasErrors() const { return CountOf(Severity::kError) > 0; }
  // Every diagnostic rendered, one after another, each ending in a newline.
  std::string Render() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace irm
