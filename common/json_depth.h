// A bound on how deeply a JSON document nests, checked on the text before nlohmann parses it.
// nlohmann builds the document iteratively, but copying, comparing, dumping and every reader that
// walks the tree recurse once per level, so a document of a few hundred kilobytes of brackets
// would exhaust the stack later (and, dumped with indentation, grow quadratically). Every reader
// of a JSON file calls CheckJsonDepth first, with the bound its format needs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace irm {

// What the project's small JSON files (bundle.json, plan.json, the dead-code evidence and
// configuration) allow: their own structure takes four levels, and free-form members such as a
// bundle's strategy nest a few more in practice (Paddle's strategy dicts take three).
inline constexpr int kMaxSmallJsonDepth = 64;

// The byte offset of the bracket that opens level `max_depth` + 1 of `text`, if any. Brackets
// inside strings do not count. One pass over the text, O(1) memory.
std::optional<size_t> FindJsonTooDeep(std::string_view text, int max_depth);

// 1-based line and column of byte `offset` of `text`.
std::pair<int, int> TextLineColumn(std::string_view text, size_t offset);

// kParseError at file:line:col of the first bracket too deep ("JSON nested deeper than N
// levels"); OK when the document stays within `max_depth` levels.
Status CheckJsonDepth(std::string_view text, const std::string& file, int max_depth);

}  // namespace irm
