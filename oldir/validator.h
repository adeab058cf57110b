// The legacy-program validator: structural checks (block tree, sub-block references), dataflow
// (every op input defined before use, every output declared), var declarations (types, dtypes,
// dims), attribute encodings (the value field matches the AttrType), and the schema of the ops
// ir-migrate supports (oldir/op_schema.h), as of the Paddle release that wrote the program. It
// reports every finding, each with a location. docs/validator.md describes the rules.
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
  // A var of the root block that the program reads but no op writes is a program input (a data
  // var fed by a dataset reader, or by the caller at run time), reported with a note rather than
  // as "not defined before use" — when nothing else says what is fed: the program has no feed
  // ops and extra_feeds is empty. Off by default: a bundle's jobs read what earlier jobs wrote,
  // and there an unwritten input is an error; `ir-migrate validate` of a single program sets it.
  bool infer_program_inputs = false;
};

// All findings, in program order (blocks, then vars, then ops), then the notes about the whole
// program (the writer era it was checked as, the parameter-server ops it holds). Errors make the
// program invalid; warnings and notes do not.
//
// Programs are checked as the Paddle that wrote them wrote them (oldir/schema_era.h): a required
// slot older writers did not emit, or an attribute stored in a type Paddle converts on reading
// (before 2.4), is not an error in a program of that era; one note counts them.
Diagnostics ValidateProgram(const Program& program, const ValidateOptions& options = {});

}  // namespace irm::oldir
