// The text printer of the new IR: renders a Program or a single Operation in Paddle PIR's text
// form (paddle/pir/src/core/ir_printer.cc). The default is the typed, lossless 3.0-beta style
// (`builtin.tensor<4x8xf32>`, `(Int32)0`), which the parser reads back exactly; the current 3.0+
// style (`tensor<4x8xf32>`, `col:0`) is what today's Paddle prints and is lossy for attribute
// kinds. The printer never fails: invalid IR (empty operand slots, null types or attributes) prints
// with Paddle's placeholders so that broken programs can still be looked at.
#pragma once

#include <string>

#include "newir/attributes.h"
#include "newir/operation.h"
#include "newir/program.h"
#include "newir/types.h"

namespace irm::newir {

struct PrintOptions {
  // kTyped: the 3.0-beta form (attribute kind prefixes, `builtin.` on dense tensors);
  // kCurrent: the untyped 3.0+ form.
  TypeStyle style = TypeStyle::kTyped;
  // Print every op in the generic form, ignoring the custom forms of pd_op.if and pd_op.while.
  bool generic = false;
  // Print `[id:N]` after each op name (Operation::id()).
  bool debug_info = false;
};

// The program's top module region as `{` … `}` with four spaces of indentation per nesting level,
// ending with a newline. Results are named %0, %1, … and positional block arguments %arg_0, … in
// the order they are first printed; keyword arguments are %kwarg_<name>. A block argument's
// first appearance carries its attributes (` {stop_gradient:[true]}`, ` {}` when none); a block
// with keyword arguments starts with `^kw:` and one keyword argument per line.
std::string PrintProgram(const Program& program, const PrintOptions& options = {});

// One op (with its nested regions, at indentation level 0, no trailing newline). Value numbering
// starts afresh, so values defined outside the op are numbered where they are first read.
std::string PrintOperation(const Operation& op, const PrintOptions& options = {});

// An attribute value as it appears after `name:` in an op line. kTyped is Attribute::ToString();
// kCurrent drops the kind prefixes (`0`, `float32`, `[1,2]`, `Place(cpu)`) and prints nested types
// in the current style.
std::string PrintAttribute(const Attribute& attr, TypeStyle style = TypeStyle::kTyped);

}  // namespace irm::newir
