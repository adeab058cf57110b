// Fuzzes the PIR JSON reader. What it accepts must write back, read back, and write to the same
// bytes: write(read(write(p))) == write(p).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "newir/pir_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = irm::newir::ReadPirJson(text, "fuzz-input");
  if (!program.ok()) {
    if (program.status().message().empty()) __builtin_trap();
    return 0;
  }
  const std::string written = irm::newir::WritePirJson(*program);
  auto again = irm::newir::ReadPirJson(written, "written");
  if (!again.ok() || irm::newir::WritePirJson(*again) != written) __builtin_trap();
  return 0;
}
