// Translation of a legacy program (ProgramDesc) into a new-IR program that computes the same
// thing, op for op: the entry point of the translator. Beyond Paddle's own translator it keeps what
// parity and the passes need — every value records the legacy var it stands for
// (`legacy_var_names`, one entry per result; `legacy_var_name` on block arguments), every op keeps
// `op_role` and, when present, `chunk_id` — turns communication ops into the new IR's dist ops, and
// reports every op type it cannot translate at once instead of stopping at the first.
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "newir/program.h"
#include "oldir/bundle.h"
#include "oldir/program.h"
#include "translator/coverage.h"

namespace irm::translator {

// What communication ops become.
enum class CommOpStyle {
  kDist,    // the new IR's collectives: c_allreduce_sum -> pd_op.all_reduce {reduce_type: 0}, ...
  kLegacy,  // Paddle's translator: the legacy names under pd_op (pd_op.c_allreduce_sum_, ...)
};

// The attributes the translator records on values (see the file comment).
inline constexpr const char* kLegacyVarNamesAttr = "legacy_var_names";
inline constexpr const char* kLegacyVarNameAttr = "legacy_var_name";

struct TranslateOptions {
  std::string file = {};  // names the legacy program in diagnostics
  CommOpStyle comm_ops = CommOpStyle::kDist;
  // Ops of unknown types become opaque `pd_op.legacy.<type>` ops keeping slots and attributes,
  // instead of failing the translation.
  bool allow_unregistered = false;
  // A bundle's process groups and the rank this program runs on: every ring_id must name a group
  // holding the rank. Null: ring_ids are kept unchecked.
  const std::vector<oldir::ProcessGroup>* process_groups = nullptr;
  int rank = 0;
  // Vars the program hands on to later programs (a bundle's later jobs, fetches): each one's
  // final value is exposed with builtin.shadow_output {output_name}.
  std::vector<std::string> outputs = {};
};

struct Translation {
  newir::Program program;
  Coverage coverage;
  Diagnostics notes;  // what was dropped or approximated, as warnings and notes
};

// Fails with kUnimplemented listing every op type that cannot be translated (count and first
// location of each) unless allow_unregistered, and with kInvalid, located at the legacy op, when
// an op breaks what its translation needs (a missing required attribute, an undefined input).
StatusOr<Translation> TranslateProgram(const oldir::Program& legacy,
                                       const TranslateOptions& options = {});

}  // namespace irm::translator
