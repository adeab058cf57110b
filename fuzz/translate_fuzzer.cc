// Fuzzes the translator on whatever the legacy-program reader accepts: translation must never
// crash, fail without a message, or produce a program the new-IR verifier rejects — a legacy op
// it cannot translate is an error, never a broken translation. Both communication styles, with
// and without opaque ops.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "translator/translate.h"

namespace {

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto program = irm::oldir::ParseProgram(bytes, "fuzz-input");
  if (!program.ok()) return 0;
  for (bool opaque : {false, true}) {
    irm::translator::TranslateOptions options;
    options.file = "fuzz-input";
    options.allow_unregistered = opaque;
    options.comm_ops =
        opaque ? irm::translator::CommOpStyle::kLegacy : irm::translator::CommOpStyle::kDist;
    auto translation = irm::translator::TranslateProgram(*program, options);
    if (!translation.ok()) {
      Require(!translation.status().message().empty());
      continue;
    }
    irm::newir::VerifyOptions verify;
    verify.allow_unregistered = opaque;
    auto problems = irm::newir::VerifyProgramAll(translation->program, verify);
    // Say what the verifier rejected before stopping, so a reproducer explains itself.
    if (!problems.empty()) std::fputs(problems.Render().c_str(), stderr);
    Require(problems.empty());
  }
  return 0;
}
