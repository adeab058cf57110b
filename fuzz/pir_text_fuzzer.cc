// Fuzzes the new-IR text parser (typed style). What it accepts must print, parse back, and print
// to the same text: print(parse(print(p))) == print(p).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "newir/parser.h"
#include "newir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  irm::newir::ParseOptions options;
  options.allow_unregistered = true;
  auto program = irm::newir::ParseProgram(text, "fuzz-input", options);
  if (!program.ok()) {
    if (program.status().message().empty()) __builtin_trap();
    return 0;
  }
  const std::string printed = irm::newir::PrintProgram(*program);
  auto again = irm::newir::ParseProgram(printed, "printed", options);
  if (!again.ok() || irm::newir::PrintProgram(*again) != printed) __builtin_trap();
  return 0;
}
