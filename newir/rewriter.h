// Rewriter helpers for passes and importers: erase an op (refused while its results are read),
// replace an op by values, and move ops between places. Replace-all-uses is Value's own
// ReplaceAllUsesWith.
#pragma once

#include <vector>

#include "common/status.h"
#include "newir/block.h"

namespace irm::newir {

// Erases `op` (and everything nested in it) from its block. Fails, changing nothing, when a
// result is still read, or when the op is not in a block.
Status EraseOp(Operation* op);

// Makes the readers of op's results read `values` instead (one per result), then erases op.
Status ReplaceOp(Operation* op, const std::vector<Value*>& values);

// Unlinks `op` from its block and links it before `before` (in any block), or after `after`, or
// at the end of `block`. The op's operands are unchanged: moving an op across programs leaves it
// reading the old program's values (clone with a mapping instead).
void MoveBefore(Operation* op, Operation* before);
void MoveAfter(Operation* op, Operation* after);
void MoveToEnd(Operation* op, Block& block);

}  // namespace irm::newir
