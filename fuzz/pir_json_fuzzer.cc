// Fuzzes the PIR JSON reader. What it accepts must write back, read back to the same program (the
// same printed text), and write to the same bytes: write(read(write(p))) == write(p). The writer
// prints JSON itself, so its text must also be exactly what nlohmann's dump makes of it.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "newir/pir_json.h"
#include "newir/printer.h"

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
  if (irm::newir::PrintProgram(*again) != irm::newir::PrintProgram(*program)) __builtin_trap();
  if (nlohmann::json::parse(written).dump() != written) __builtin_trap();
  const std::string pretty = irm::newir::WritePirJson(*program, {.trainable = true, .indent = 2});
  if (nlohmann::json::parse(pretty).dump(2) != pretty) __builtin_trap();
  return 0;
}
