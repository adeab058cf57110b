// RegionNesting and CheckRegionNesting (nesting.h): one walk over the ops with an explicit stack
// of block cursors, so that the check itself cannot run out of stack on the programs it refuses.
#include "newir/nesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "newir/block.h"
#include "newir/operation.h"

namespace irm::newir {
namespace {

// Visits every op with its level, in program order (an op before the ops of its regions); stops
// when `visit` returns false. Returns false when stopped.
template <typename F>
bool WalkOps(const Program& program, F visit) {
  // Each cursor keeps its block's level: the stack also holds the blocks of sibling regions
  // waiting their turn (an if's else block below its then block), so its height is no level.
  struct Cursor {
    Block::iterator next;
    Block::iterator end;
    int level;
  };
  std::vector<Cursor> stack;
  const Block& top = program.block();
  stack.push_back({top.begin(), top.end(), 0});
  while (!stack.empty()) {
    Cursor& cursor = stack.back();
    if (cursor.next == cursor.end) {
      stack.pop_back();
      continue;
    }
    const Operation& op = *cursor.next;
    ++cursor.next;
    const int level = cursor.level;
    if (!visit(op, level)) return false;
    // The blocks of the op's regions, pushed last first so that they are walked in order.
    for (size_t r = op.num_regions(); r-- > 0;) {
      const Region& region = op.region(r);
      for (size_t b = region.num_blocks(); b-- > 0;) {
        const Block& block = region.block(b);
        stack.push_back({block.begin(), block.end(), level + 1});
      }
    }
  }
  return true;
}

// Whether some region of `op` holds a block: a block one level deeper than the op's.
bool OpensBlocks(const Operation& op) {
  for (size_t r = 0; r < op.num_regions(); ++r) {
    if (op.region(r).num_blocks() > 0) return true;
  }
  return false;
}

}  // namespace

int RegionNesting(const Program& program) {
  int deepest = 0;
  WalkOps(program, [&](const Operation& op, int level) {
    if (OpensBlocks(op)) deepest = std::max(deepest, level + 1);
    return true;
  });
  return deepest;
}

Status CheckRegionNesting(const Program& program, const std::string& file) {
  Status status;
  WalkOps(program, [&](const Operation& op, int level) {
    if (level < kMaxRegionNesting || !OpensBlocks(op)) return true;
    status =
        Status(StatusCode::kInvalid, Location::File(file).With(fmt::format("op '{}'", op.name())),
               fmt::format("op '{}' opens regions {} levels deep; programs may nest at most {} "
                           "levels of regions (deeper ones cannot be read back)",
                           op.name(), level + 1, kMaxRegionNesting));
    return false;
  });
  return status;
}

}  // namespace irm::newir
