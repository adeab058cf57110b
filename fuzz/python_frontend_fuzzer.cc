// Fuzzes the Python front end of ir-deadcode: any bytes must give a file model without crashing,
// and the model must hold together (valid branch indices, ordered ranges, no records next to a
// syntax error).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/deadcode/python_frontend.h"

namespace {

bool Ordered(const irm::deadcode::SourceRange& r) {
  return r.start_line >= 1 && r.start_column >= 1 &&
         (r.end_line > r.start_line ||
          (r.end_line == r.start_line && r.end_column >= r.start_column));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const irm::deadcode::DeadcodeConfig config = irm::deadcode::DefaultConfig();
  std::string_view source(reinterpret_cast<const char*>(data), size);
  // The first byte's low bit picks a package __init__ (relative imports resolve differently).
  bool package = size > 0 && (data[0] & 1);
  irm::deadcode::FileModel model =
      irm::deadcode::AnalyzePythonSource(source, package ? "pkg/sub/__init__.py" : "pkg/sub/mod.py",
                                         package ? "pkg.sub" : "pkg.sub.mod", config);
  if (!model.problems.empty() &&
      (!model.functions.empty() || !model.references.empty() || !model.branches.empty())) {
    __builtin_trap();
  }
  for (const auto& function : model.functions) {
    if (!Ordered(function.range)) __builtin_trap();
  }
  for (const auto& branch : model.branches) {
    if (!Ordered(branch.legacy) || (branch.twin && !Ordered(*branch.twin))) __builtin_trap();
  }
  for (const auto& reference : model.references) {
    for (int index : reference.legacy_branches) {
      if (index < 0 || static_cast<size_t>(index) >= model.branches.size()) __builtin_trap();
    }
  }
  return 0;
}
