// The legacy-program validator: structural checks (block tree, sub-block references), dataflow
// (every op input defined before use, every output declared), var declarations (types, dtypes,
// dims), attribute encodings (the value field matches the AttrType), and the schema of the ops
// ir-migrate supports (oldir/op_schema.h). It reports every finding, each with a location.
#pragma once

#include <string>
#include <unordered_set>

#include "common/diagnostic.h"
#include "oldir/program.h"

namespace irm::oldir {

struct ValidateOptions {
  std::string file;  // names the program in locations
  // Names fed from outside besides those the program marks (need_check_feed vars, feed ops).
  std::unordered_set<std::string> extra_feeds;
  // Report unknown proto fields (kept from the input) as warnings.
  bool warn_unknown_fields = true;
  // Ops with no schema entry: a note each (off by default: programs carry many ops we do not
  // model).
  bool note_unknown_ops = false;
};

// All findings, in program order (blocks, then vars, then ops). Errors make the program invalid;
// warnings do not.
Diagnostics ValidateProgram(const Program& program, const ValidateOptions& options = {});

}  // namespace irm::oldir
