// A program file ready to run on one rank: a legacy program (.pdmodel or protobuf text) or a
// new-IR program (PIR JSON or PIR text), told apart by content, parsed, checked (the legacy
// validator, the new-IR verifier) and bound to its executor — LegacyExecutor or PirExecutor.
// What `ir-migrate run` and the parity engine load.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "newir/program.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"

namespace irm::rt {

struct LoadedProgram {
  std::string file;
  bool new_ir = false;
  // The program the executor runs (one of the two is set; the PirExecutor keeps a reference).
  std::unique_ptr<oldir::Program> legacy;
  std::unique_ptr<newir::Program> pir;
  std::unique_ptr<Executor> executor;
};

// Reads, detects, parses, checks and binds `path`. Errors: kNotFound/kIoError for the file,
// kParseError for bytes that are no program, kInvalid for a program its IR's checker rejects
// (the first error; the file's own diagnostics), kUnimplemented / kInvalid from the executor's
// planning (an op without a binding).
StatusOr<LoadedProgram> LoadProgramForRun(const std::string& path, ExecutorOptions options);

}  // namespace irm::rt
