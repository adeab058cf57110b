// The test affordances of `ir-migrate opt`, as mlir-opt has them: --split-input-file cuts a PIR
// text file into pieces at `// -----` lines, each run on its own; --verify-diagnostics matches
// the diagnostics a piece produces against the ones its comments expect,
//   // expected-error @+1 {{message}}     on the next line (@-2: two lines up)
//   ... op line ...  // expected-error {{message}}     on this line
// (expected-warning likewise). A message matches a diagnostic at that line whose message contains
// it. Verifier findings are located at ops, not lines; they are matched at the line where their op
// starts (newir::OpLines).
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "newir/parser.h"
#include "newir/program.h"

namespace irm::tools {

// One piece of a split file: its text, padded with the newlines before it so that lines and
// columns in diagnostics are those of the whole file.
struct InputPiece {
  std::string text;
  int first_line = 1;
};

// Pieces at lines holding only `// -----` (spaces around allowed); one piece without such lines.
std::vector<InputPiece> SplitInputFile(std::string_view text);

// What MLIR joins the outputs of the pieces with.
inline constexpr std::string_view kSplitMarker = "// -----\n";

struct ExpectedDiagnostic {
  Severity severity = Severity::kError;
  int line = 0;             // where the diagnostic is expected
  int annotation_line = 0;  // where the comment is
  std::string message;      // a substring of the diagnostic's message
};

// Every `expected-error` / `expected-warning` comment of `text`; a malformed one (no `{{…}}`, a
// line before the first) is an error at its line.
StatusOr<std::vector<ExpectedDiagnostic>> ParseExpectedDiagnostics(std::string_view text,
                                                                   const std::string& file);

// The line a diagnostic is about: its own text position, else the line of the op its location
// names in `program` (0 when neither is known).
int LineOfDiagnostic(const Diagnostic& d, const newir::Program* program,
                     const newir::OpLines& op_lines);

// A diagnostic that happened, at the line LineOfDiagnostic gives.
struct ProducedDiagnostic {
  int line = 0;
  Diagnostic diagnostic;
};

// Matches produced against expected, each used once; prints on `err` every produced diagnostic no
// comment expected and every expected one that did not occur. True when there are neither.
bool MatchDiagnostics(const std::vector<ExpectedDiagnostic>& expected,
                      const std::vector<ProducedDiagnostic>& produced, const std::string& file,
                      std::ostream& err);

}  // namespace irm::tools
