// Fuzzes the new-IR text parser (every style it reads) and the printer. Whatever parses must print
// in the canonical form and parse back to the same program (compared structurally, not through
// the printer), which prints the same text: parse(print(p)) == p and
// print(parse(print(p))) == print(p). The generic form must round-trip the same way, and the
// current (lossy) style must at least print.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "newir/parser.h"
#include "newir/printer.h"
#include "newir/structural_equal.h"

namespace {

void CheckRoundTrip(const irm::newir::Program& program, const irm::newir::PrintOptions& print,
                    const irm::newir::ParseOptions& parse) {
  const std::string printed = irm::newir::PrintProgram(program, print);
  auto again = irm::newir::ParseProgram(printed, "printed", parse);
  if (!again.ok()) __builtin_trap();
  if (!irm::newir::FindStructuralDifference(program, *again, {.ignore_hidden_attributes = true})
           .value_or("")
           .empty())
    __builtin_trap();
  if (irm::newir::PrintProgram(*again, print) != printed) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  irm::newir::ParseOptions options;
  options.allow_unregistered = true;
  auto program = irm::newir::ParseProgram(text, "fuzz-input", options);
  if (!program.ok()) {
    if (program.status().message().empty()) __builtin_trap();
    return 0;
  }
  CheckRoundTrip(*program, {}, options);
  CheckRoundTrip(*program, {.generic = true}, options);
  (void)irm::newir::PrintProgram(*program, {.style = irm::newir::TypeStyle::kCurrent});
  return 0;
}
