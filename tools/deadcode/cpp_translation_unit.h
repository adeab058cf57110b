// One C++ translation unit through Clang: the per-TU half of the C++ front end (cpp_frontend.h).
// Parses the TU with its compile command and returns what it found in files under the root, before
// the models of all TUs are merged. No Clang types here: the merging code keeps RTTI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

// A compile command as the compile database gives it.
struct TuCommand {
  std::string directory;                  // the working directory of the command
  std::string file;                       // the source file, absolute
  std::string relative;                   // the source file relative to the root
  std::vector<std::string> command_line;  // argv, compiler first
};

struct TuResult {
  // Models of the files under the root that the TU holds code of, the TU's own file first. A
  // reference's legacy_branches is left empty: it is computed after merging.
  std::vector<FileModel> files;
  std::optional<FileProblem> problem;  // the first error, when the TU does not compile
  double seconds = 0;
};

// `path` relative to `root` when it is inside it (both absolute, normalised).
std::optional<std::string> RelativeTo(const std::string& path, const std::string& root);

// `root`: absolute, symbolic links resolved, no trailing '/'.
TuResult AnalyzeTranslationUnit(const TuCommand& command, const std::string& root,
                                const DeadcodeConfig& config);

}  // namespace irm::deadcode
