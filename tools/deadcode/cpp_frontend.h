// ir-deadcode's C++ front end: reads a compile_commands.json, parses each translation unit with
// Clang (LibTooling, LLVM 14) and fills the code model (code_model.h) for the code under the
// analysis root: function and method definitions keyed by USR, references between them (a
// cross-TU call graph), branches guarded by the configured flags and predicates, registrations by
// the configured macros, and records. A TU that does not compile is reported as a FileProblem and
// the others are still analysed. This header has no Clang types, so that its users keep RTTI.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

struct TranslationUnitTiming {
  std::string file;  // relative to the root
  double seconds = 0;
  bool ok = true;  // compiled without errors
};

struct CppAnalysis {
  // One model per file under the root that holds anything (TU main files and the project headers
  // they include), sorted by file. Units defined in a header included by several TUs appear once.
  std::vector<FileModel> files;
  std::vector<TranslationUnitTiming> units;  // in the order of `files`' TUs: sorted by file
  std::vector<FileProblem> problems;         // one per TU that failed, sorted
};

// Called after each TU: how many are done, of how many, and the TU just finished.
using CppProgress = std::function<void(int done, int total, const std::string& file)>;

// Analyses the TUs of `compile_commands` whose source file is under `root` and whose path relative
// to `root` matches one of `source_globs` (fnmatch, `*` crosses '/'; empty: every TU). Reports
// only code in files under `root`, with paths relative to it. `threads` TUs are parsed at once
// (< 1 counts as 1); the result is the same at any thread count. `progress` may be empty.
// Errors: a compile database that is missing (kNotFound), unreadable (kIoError) or not a compile
// database (kParseError, with the reader's message); a root that is not a directory (kNotFound).
StatusOr<CppAnalysis> AnalyzeCompileCommands(const std::string& compile_commands,
                                             const std::vector<std::string>& source_globs,
                                             const std::string& root, const DeadcodeConfig& config,
                                             int threads, const CppProgress& progress = {});

}  // namespace irm::deadcode
