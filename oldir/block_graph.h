// The graph of sub-block references of a legacy program: an op runs the blocks its BLOCK and
// BLOCKS attributes name (conditional_block, while, their grad ops, recurrent, pylayer). Every
// walker that follows those references — the executor, the translator — recurses once per level,
// so a cycle (a block that runs itself, directly or through its sub-blocks) would recurse without
// end and a very deep nesting would exhaust the stack. CheckBlockGraph finds both, without
// recursing itself; the validator reports its findings and the walkers refuse such a program
// before they start.
#pragma once

#include <string>

#include "common/diagnostic.h"
#include "common/status.h"
#include "oldir/program.h"

namespace irm::oldir {

// How deep sub-blocks may nest below the root block (whose ops are at level 0; a sub-block one of
// them runs is at level 1). Paddle's programs nest a few levels; this bound keeps the executor's
// recursion (four frames, about 1 KiB of stack per level) well inside a thread's 8 MiB stack.
// A new-IR program nests less (newir::kMaxRegionNesting): the translator checks that bound.
inline constexpr int kMaxBlockNesting = 1024;

// An error for each op whose BLOCK/BLOCKS attribute closes a cycle of sub-block references (at
// that op and attribute, naming the cycle), and one for the first block nested deeper than
// `max_depth` below the root block (at the op that runs it). Time and memory O(blocks + ops +
// block references).
Diagnostics CheckBlockGraph(const Program& program, const std::string& file,
                            int max_depth = kMaxBlockNesting);

// The first finding of CheckBlockGraph as a kInvalid status, OK when there is none: what a walker
// of sub-blocks checks before it starts.
Status RequireWellNestedBlocks(const Program& program, const std::string& file,
                               int max_depth = kMaxBlockNesting);

}  // namespace irm::oldir
