// The one bound on how deep ops nest in regions, shared by every reader and writer of new-IR
// programs: the text parser and the JSON reader refuse a deeper program, and the writers (and the
// translator, before it builds one) refuse to produce it, so that every file written reads back.
// The walkers of regions (printer, verifier, executor) recurse once per level; the bound keeps
// that recursion small.
#pragma once

#include <string>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// The top block is at level 0; a block of a region of one of its ops at level 1, and so on.
// Paddle's programs nest a few levels (an if inside a while). The JSON form takes six levels of
// brackets per region level, so 48 levels stay well inside the JSON reader's bracket bound
// (pir_json_reader.cc) with room for nested attributes.
inline constexpr int kMaxRegionNesting = 48;

// The deepest level of any block of `program` (0 when no op has a region with a block).
// Iterative: O(ops).
int RegionNesting(const Program& program);

// kInvalid naming the first op (in program order) whose regions hold blocks deeper than
// kMaxRegionNesting; OK otherwise. What a writer checks before it writes. O(ops).
Status CheckRegionNesting(const Program& program, const std::string& file);

}  // namespace irm::newir
