// The text parser of the new IR: reads back what the printer (printer.h) writes in its default,
// typed 3.0-beta style — generic op lines, nested regions with block and keyword arguments, every
// typed attribute form, the dist tensor type, and the custom forms of pd_op.if and pd_op.while.
// Values must be defined before they are read; op names must be in the op registry unless
// allow_unregistered is set. Every failure is a Status at `file:line:col` with a precise message;
// no input makes it crash (nesting deeper than kMaxParseDepth is rejected).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "newir/op_info.h"
#include "newir/program.h"

namespace irm::newir {

// Regions, attribute arrays and nested types together may nest this deep, no deeper.
inline constexpr int kMaxParseDepth = 64;

struct ParseOptions {
  // Keep ops the registry does not know, opaquely (info() null), instead of rejecting them.
  bool allow_unregistered = false;
  const OpRegistry* registry = &OpRegistry::Global();
};

// The text of a whole program (`{` ops `}`). `file` only names the input in diagnostics.
//
// What the text form cannot say is filled in as follows: a block argument belongs to the
// innermost block being parsed where it first appears (`%arg_N {attrs}`), and arguments are added
// in order of first appearance; block and keyword arguments take the type of the operand slot
// that first reads them (null until then); each `{ … }` after an op is one region of one block;
// pd_op.while results take the types of its loop inputs.
StatusOr<Program> ParseProgram(std::string_view text, const std::string& file = "<text>",
                               const ParseOptions& options = {});

// One attribute value as Attribute::ToString writes it (`(Int32)3`, `[true,"a"]`, …).
StatusOr<Attribute> ParseAttribute(std::string_view text, const std::string& file = "<text>");

// One type as Type::ToString writes it in typed style (`builtin.tensor<2x3xf32>`, `vec[…]`, …).
StatusOr<Type> ParseType(std::string_view text, const std::string& file = "<text>");

}  // namespace irm::newir
