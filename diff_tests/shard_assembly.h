// Reassembling a distributed run's var from the ranks that hold it, so that it can be compared
// with the serial run's var of the same name (docs/parity.md, "Reassembly"): a rank holds either
// the whole var (a data-parallel replica, or a model-parallel rank of a replicated parameter) or
// one box of it (a shard: oldir::ShardSlice, the box [offsets, offsets + local dims) of the
// global shape). Every element must be held by some rank, and every rank holding an element must
// hold the same bits: a replica that drifted is a finding of its own, even when the tensor it
// helps assemble would pass against the serial run.
#pragma once

#include <string>
#include <vector>

#include "oldir/bundle.h"
#include "reference_runtime/tensor.h"

namespace irm::diff {

// One rank's tensor of a var.
struct VarPiece {
  int rank = 0;
  const rt::Tensor* tensor = nullptr;
  const oldir::ShardSlice* slice = nullptr;  // null: the rank holds the whole var
};

struct AssemblyFinding {
  enum class Kind {
    kLayout,     // a piece that does not fit: another dtype, global shape, or a box outside it
    kDisagree,   // two ranks hold different bits for the same elements
    kUncovered,  // elements no rank holds
  };
  Kind kind = Kind::kLayout;
  int rank = 0;  // the piece's rank (kLayout), the second of the two (kDisagree); else the first
  std::string message;
};

struct AssembledVar {
  // The global tensor: each element from the first piece (in the given order) that holds it,
  // zero where no piece does; undefined when no piece fits.
  rt::Tensor tensor;
  std::vector<AssemblyFinding> findings;
};

// Places every piece of the var `name` at its offsets. The global shape and dtype are those of
// the first piece that fits: its slice's global shape, or its own shape when it is whole.
AssembledVar AssembleVar(const std::string& name, const std::vector<VarPiece>& pieces);

}  // namespace irm::diff
