// The Python front end of ir-deadcode: parses Python sources with tree-sitter (Debian's library and
// the tree-sitter-python 0.23 grammar) and fills the code model (code_model.h) for each file:
// classes, functions and methods with qualified names and ranges, references, imports, and the
// branches guarded by the configured new-IR predicates with their legacy and new-IR parts.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tools/deadcode/code_model.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

// The dotted module name of a file given relative to the folder that holds its top package:
// "paddle/base/executor.py" → "paddle.base.executor", "paddle/base/__init__.py" → "paddle.base".
std::string PythonModuleName(const std::string& relative_path);

// OK when the compiled-in grammar can be loaded by the tree-sitter library; else the error naming
// the grammar version needed. Checked once per process.
Status CheckPythonGrammar();

// Analyzes one source file. `file` is recorded in every record; `module` is the file's module name
// (relative imports resolve against it; a file named __init__.py is its own package). A file
// that does not parse gets one FileProblem ("syntax error" at the first error) and no other
// records: a partial tree would give false findings. Never fails otherwise.
//
// Function and class keys are qualified names; a name defined twice in one scope (a property's
// getter and setter, a conditional redefinition) keeps its qualname and gets the key
// "<qualname>#2", "#3"… from its second definition on, so that keys stay unique.
FileModel AnalyzePythonSource(std::string_view source, const std::string& file,
                              const std::string& module, const DeadcodeConfig& config);

// Analyzes every *.py file under each of `dirs` (following symbolic links; a link back to a folder
// being walked and an unreadable file each become a FileModel holding only a FileProblem).
// Files are named relative to `root`, modules relative to the parent of the dir they were found
// under ("--python x/paddle" gives modules "paddle.…"), or of the outermost package folder that
// holds that dir ("x/paddle/distributed" with an x/paddle/__init__.py gives
// "paddle.distributed.…"). Results are sorted by file whatever `threads`; `progress` (may be empty)
// is called with the files done so far, in order, from one thread at a time. Fails when a dir does
// not exist or the grammar cannot be loaded.
StatusOr<std::vector<FileModel>> AnalyzePythonTrees(
    const std::vector<std::string>& dirs, const std::string& root, const DeadcodeConfig& config,
    int threads, const std::function<void(int done, int total)>& progress);

}  // namespace irm::deadcode
