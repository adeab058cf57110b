// The human-readable dump of a legacy program, one line per var and per op, close to Paddle's
// Program.__str__:
//   { // block 0, parent -1
//       persist trainable param linear_0.w_0 : DENSE_TENSOR.shape(2,
//       3).dtype(float32).stop_gradient(False) {Out=['tmp_2']} = matmul_v2(inputs={X=['x'],
//       Y=['w']}, trans_x=False, trans_y=False, op_role=0)
//   }
// Sub-blocks are printed nested inside the op that owns them. Not a stable format: for people.
#pragma once

#include <string>

#include "oldir/program.h"

namespace irm::oldir {

struct DumpOptions {
  bool show_vars = true;
  bool show_callstack = false;  // op_callstack is long Python tracebacks: hidden by default
  bool nest_sub_blocks = true;  // false: print blocks one after another
};

std::string DumpProgram(const Program& program, const DumpOptions& options = {});
// One op on one line, without indentation or newline.
std::string DumpOp(const Op& op, const DumpOptions& options = {});
// A var's declaration on one line.
std::string DumpVar(const Var& var);

}  // namespace irm::oldir
