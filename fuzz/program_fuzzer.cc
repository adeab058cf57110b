// Fuzzes the legacy-program reader (binary and text, detected from content) and everything that
// runs on what it accepts: the validator, the dump, and both serializers. Beyond "no crash, no UB,
// no leak", it checks two round-trip properties on every accepted input:
//   binary: serialize(parse(serialize(p))) == serialize(p)
//   text:   print(parse(print(p))) == print(p), when p has no unknown fields
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "oldir/dump.h"
#include "oldir/program_io.h"
#include "oldir/validator.h"

namespace {

using irm::oldir::ProgramFormat;

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto program = irm::oldir::ParseProgram(bytes, "fuzz-input");
  if (!program.ok()) {
    Require(!program.status().message().empty());
    return 0;
  }
  irm::oldir::ValidateOptions options;
  options.file = "fuzz-input";
  (void)irm::oldir::ValidateProgram(*program, options);
  (void)irm::oldir::DumpProgram(*program);

  auto binary = irm::oldir::SerializeProgram(*program, ProgramFormat::kBinary);
  Require(binary.ok());
  auto reparsed = irm::oldir::ParseProgram(*binary, "reparsed", ProgramFormat::kBinary);
  Require(reparsed.ok());
  auto binary_again = irm::oldir::SerializeProgram(*reparsed, ProgramFormat::kBinary);
  Require(binary_again.ok() && *binary_again == *binary);

  auto text = irm::oldir::SerializeProgram(*program, ProgramFormat::kText);
  if (text.ok()) {
    auto from_text = irm::oldir::ParseProgram(*text, "text", ProgramFormat::kText);
    Require(from_text.ok());
    auto text_again = irm::oldir::SerializeProgram(*from_text, ProgramFormat::kText);
    Require(text_again.ok() && *text_again == *text);
  }
  return 0;
}
