// The verifier of the new IR: checks that a program is well formed before anything reads it
// (after parsing, and after every pass by default). It checks SSA dominance within a block
// (use after def), region scoping (a nested region sees its own values and those of enclosing
// blocks, never a sibling's), each op against its table entry (operand and result counts, operand
// and result types, required attributes and their kinds, region counts, terminators), then the
// op's own verifier hook, and the consistency of dist attributes and dist types.
//
// What is checked, in program order (an op, then the ops nested in its regions):
// - Scoping. An operand reads a value defined earlier in its block, an argument of its block, or
//   a value visible in an enclosing block before the enclosing op; never a later op's result, a
//   result of an op that encloses it, a value of a sibling region (or of another block of the
//   same region: each block is its own scope), nor a value outside this program.
// - Registration. An op without a table entry (info() null) is an error unless allow_unregistered
//   is set; such ops (and the arguments of their blocks) are then checked for scoping only. An op
//   whose name the registry knows but that carries no entry is always an error (it was built
//   without the registry).
// - The table (op_info.h): operand and result counts (an any_count slot takes any number of
//   values), empty operand slots only where optional, a non-null type on every result (null only
//   for optional results) and every block argument, a vector value in every variadic slot that is
//   not any_count and in no plain slot (int_array operands take either), required attributes
//   present and non-null, declared kinds respected, region counts. Every block of every region of
//   a registered op other than builtin.module ends with a terminator (cf.yield); a terminator is
//   the last op of its block and is never in the top block.
// - Dist consistency (verify_dist.h): every pd_dist.tensor type of a result or block argument
//   (vector elements included), and every op_dist_attr, tensor dist and process mesh attribute.
// - The op's OpVerifyFn hook, when the checks above found nothing wrong with the op (so a
//   broken op gives one precise finding rather than a cascade).
//
// Where a finding is: Location::file is options.file; op / op_type are the op's index in its
// block and its name. For an op in a nested region, Location::detail is the path up to the top
// block, innermost first: "in region R of op I (name)" per level ("in block B of region R of op
// I (name)" when that region has several blocks), separated by spaces; past 16 levels the middle
// is elided ("... (N more levels) ..."). So a finding renders as
//   f.pir: op 3 (pd_op.relu): error: operand 0 ('x') reads ...
//   f.pir: op 0 (pd_op.relu), in region 1 of op 5 (pd_op.if): error: ...
// A finding about a block argument is located at the op owning the block and names the region
// in the message; arguments of the top block are located at builtin.module (op 0). Values are
// named in messages by where they are defined ("result 0 of op 7 (pd_op.matmul)", "argument 1
// of region 0 of op 4 (pd_op.while)") and types are printed with Type::ToString.
//
// Time and memory are linear in the size of the program (a hash set of the values in scope); the
// walk is iterative, so nesting depth is not limited by the stack.
#pragma once

#include <string>

#include "common/diagnostic.h"
#include "common/status.h"
#include "newir/op_info.h"
#include "newir/program.h"

namespace irm::newir {

struct VerifyOptions {
  // Accept ops the registry does not know (info() null), checking only their scoping.
  bool allow_unregistered = false;
  // Names the input in diagnostics ("f.pir: op 3 (pd_op.relu): error: ...").
  std::string file = {};
  // Where op names are looked up to tell "unregistered" from "built without its table entry".
  const OpRegistry* registry = &OpRegistry::Global();
};

// Every finding, in program order, each located at its op.
Diagnostics VerifyProgramAll(const Program& program, const VerifyOptions& options = {});

// One op of `program` on its own: its table entry, attributes, region count and terminators, and
// its verifier hook — everything but scoping, and nothing nested in its regions. For builders
// that create values before their uses and check each op as they emit it (the translator).
Diagnostics VerifyOp(const Program& program, const Operation& op,
                     const VerifyOptions& options = {});

// The first error as a Status (code kInvalid); ok when the program is well formed.
Status VerifyProgram(const Program& program, const VerifyOptions& options = {});

}  // namespace irm::newir
