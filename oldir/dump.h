// The human-readable dump of a legacy program, one line per var and per op, close to Paddle's
// Program.__str__ (python/paddle/base/framework.py, _to_readable_code):
//
//   // ProgramDesc version 2006000, 2 blocks, 3 ops
//   { // block_idx:0  parent_idx:-1  forward_idx:-1
//       persist trainable param w : DENSE_TENSOR.shape(3, 2).dtype(float32).stop_gradient(False)
//       var x : DENSE_TENSOR.shape(-1, 3).dtype(float32).stop_gradient(True)
//
//       {Out=['y']} = matmul_v2(inputs={X=['x'], Y=['w']}, trans_x=False, trans_y=False, op_role=0)
//       {Out=['z']} = conditional_block(inputs={Cond=['c'], Input=['y']}, sub_block=block[1])
//           { // block_idx:1  parent_idx:0  forward_idx:-1
//           ...
//           }
//   }
//
// Slots in stored order; the op's own attrs sorted by name, then the common ones (op_role,
// op_role_var, op_namescope, op_device, ...) sorted by name. With nest_sub_blocks a sub-block is
// printed once, right after the op that refers to it; a reference to a block that does not exist
// prints "block[7] (missing)", one to a block already printed (a second reference, or a cycle)
// "block[1] (printed above)". Not a stable format: for people.
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
