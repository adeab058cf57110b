// The verifier of the new IR: checks that a program is well formed before anything reads it
// (after parsing, and after every pass by default). It checks SSA dominance within a block
// (use after def), region scoping (a nested region sees its own values and those of enclosing
// blocks, never a sibling's), each op against its table entry (operand and result counts, operand
// and result types, required attributes and their kinds, region counts, terminators), then the
// op's own verifier hook, and the consistency of dist attributes and dist types.
#pragma once

#include <string>

#include "common/diagnostic.h"
#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

struct VerifyOptions {
  // Accept ops the registry does not know (info() null), checking only their scoping.
  bool allow_unregistered = false;
  // Names the input in diagnostics ("f.pir: op 3 (pd_op.relu): error: ...").
  std::string file = {};
};

// Every finding, in program order, each located at its op.
Diagnostics VerifyProgramAll(const Program& program, const VerifyOptions& options = {});

// The first error as a Status; ok when the program is well formed.
Status VerifyProgram(const Program& program, const VerifyOptions& options = {});

}  // namespace irm::newir
