// Edits a parallelisation pass makes to a legacy block, for the corpus builders that write
// distributed programs the way Paddle's static auto-parallel passes leave them: an op inserted
// at a position (the block's ops are a sequence, and a communication op must sit right after the
// op whose output it reduces), the reads of a var redirected to another from a position on, and
// the op that writes a var. They work on the ProgramDesc a ProgramBuilder owns, so the inserted
// ops carry the builder's common attributes (op_role, namescope, ...).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "oldir/builder.h"

namespace irm::corpus {

// Appends the op with BlockBuilder::AppendOp, then moves it to position `index` (0 = first;
// num_ops() = last). Returns the op.
oldir::proto::OpDesc* InsertOp(oldir::BlockBuilder& block, int index, const std::string& type,
                               oldir::SlotArgs inputs, oldir::SlotArgs outputs,
                               oldir::AttrList attrs = {});

// The index of the first op at or after `from` that writes `var`; kNotFound when none does.
StatusOr<int> FindWriter(const oldir::BlockBuilder& block, std::string_view var, int from = 0);

// Renames every input argument `from` to `to` in the ops at positions >= `first`. Returns how many
// arguments it renamed.
int RenameInputs(oldir::BlockBuilder& block, int first, const std::string& from,
                 const std::string& to);

// Declares `name` in the block with the dtype and dims of `like` (a var of the block or an
// ancestor), not persistable; kNotFound when `like` is not declared.
Status DeclareLike(oldir::BlockBuilder& block, const std::string& name, std::string_view like);

}  // namespace irm::corpus
