// Structural equality of two new-IR programs: the same ops in the same order with the same names,
// attributes (floats compared by bits), result types, regions, blocks, block and keyword
// arguments (types and attributes), and the same dataflow — operand i of an op in one program
// reads the value that corresponds to what operand i of its twin reads. Op ids and value names
// play no part. Round-trip tests use it to prove a form lossless without trusting the printer.
#pragma once

#include <optional>
#include <string>

#include "newir/program.h"

namespace irm::newir {

struct StructuralCompareOptions {
  // Leave out the attributes (of ops and block arguments) the text form never carries (printer.h
  // IsHiddenAttribute), to compare a program with what its printed text parses back to.
  bool ignore_hidden_attributes = false;
};

// Nullopt when the programs are structurally equal; otherwise where and how they first differ:
// "op 2 (pd_op.matmul) > region 0 > block 0 > op 1 (cf.yield): operand 0 reads a different value".
std::optional<std::string> FindStructuralDifference(const Program& a, const Program& b,
                                                    const StructuralCompareOptions& options = {});

}  // namespace irm::newir
