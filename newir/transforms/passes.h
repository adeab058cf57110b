// The built-in passes of the new IR and how they are registered: `dce` (dce_pass.cc),
// `canonicalize` (canonicalize_pass.cc), and auto-parallel's `lower-reshard` and `dist-to-dense`
// (newir/auto_parallel/passes.h). Also the dead-code rules `dce` applies, which
// `canonicalize` reuses to erase what its folds left dead. A new built-in pass adds its Register
// function here and to RegisterBuiltinPasses.
#pragma once

#include <cstddef>
#include <unordered_set>

#include "common/status.h"
#include "newir/block.h"
#include "newir/pass_registry.h"

namespace irm::newir {

Status RegisterDcePass(PassRegistry& registry);
Status RegisterCanonicalizePass(PassRegistry& registry);
// Every built-in pass; PassRegistry::Global() holds them.
Status RegisterBuiltinPasses(PassRegistry& registry);

// Whether `op` must stay even when nothing reads what it defines: it is unregistered (unknown
// effects), a terminator, marked side_effect or inplace in its table entry, a program input
// (pd_op.data, pd_op.feed), or it has regions holding such an op other than a terminator.
bool MustKeepWhenUnused(const Operation& op);

// Erases, in one backward sweep over `block` (nested regions first, so that their reads of outer
// values are gone before the producers of those values are looked at), every op that nothing
// reads and that MustKeepWhenUnused lets go; erasing a reader can only make an earlier op dead, so
// one sweep reaches the fixpoint. With `only` set, just the ops in it are candidates, and erasing
// an op adds the producers of the values it (or an op nested in it) read: "erase what became
// dead". Returns how many ops were erased (nested ones of an erased op not counted).
StatusOr<size_t> EraseDeadOps(Block& block, std::unordered_set<const Operation*>* only = nullptr);

}  // namespace irm::newir
