// Textual pass pipelines in MLIR's syntax: passes separated by commas, each with optional options
// in braces, space-separated, `canonicalize{max-iterations=3 test-convergence}`. A bool option
// written alone means true; a value with spaces is quoted ('…' or "…"); whitespace may surround
// passes, commas and braces; the whole list may be wrapped as `builtin.module(…)` (what mlir-opt's
// --pass-pipeline expects; every pass here runs on the whole program anyway). An empty text is an
// empty pipeline. Each error is a Status at `<source>:line:col` of the offending text with a
// precise message (an unknown pass or option name suggests the closest known one).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/pass.h"
#include "newir/pass_registry.h"

namespace irm::newir {

// One pass of a parsed pipeline: its registry entry and its options (every declared option set,
// to its default unless the text gave a value).
struct PassPipelineElement {
  const PassInfo* info = nullptr;
  PassOptions options = {};
  int column = 0;  // where its name starts in the text (1-based, on its line)
};

// Parses `text` against `registry`. `source` names the text in diagnostics (the CLI passes the
// flag it came from: "--passes").
StatusOr<std::vector<PassPipelineElement>> ParsePassPipeline(
    std::string_view text, const PassRegistry& registry = PassRegistry::Global(),
    const std::string& source = "<pipeline>");

// The pipeline in its canonical text form: `dce,canonicalize{max-iterations=3}`, options in
// declaration order, only those differing from their default; string values are quoted when
// they hold whitespace, braces or quotes (a value holding both kinds of quotes cannot be written).
std::string PassPipelineToString(const std::vector<PassPipelineElement>& pipeline);

// The closest of `candidates` to `name` by edit distance, when it is close enough to be a typo
// (at most max(1, |name| / 3) edits); "" otherwise. Ties go to the earliest candidate.
std::string ClosestName(std::string_view name, const std::vector<std::string_view>& candidates);

}  // namespace irm::newir
