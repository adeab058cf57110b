// append_backward for legacy programs, as Paddle's static `append_backward`
// (python/paddle/base/backward.py) writes it into the main program's root block:
//   - the loss-gradient seed: fill_constant of 1.0 into `loss@GRAD`, op_role Backward|Loss (257),
//     and the loss op itself marked Forward|Loss (256);
//   - one grad op per forward op on the path from the parameters to the loss, in reverse order,
//     with Paddle's grad-maker slot conventions (forward inputs/outputs re-fed under their own slot
//     names, `Out@GRAD` in, `X@GRAD` out) and the forward op's attributes, op_role Backward (1),
//     and op_role_var [param, param@GRAD] on the last op writing a parameter's gradient (pairs
//     prepended when one op writes several);
//   - a var whose gradient comes from several consumers gets partial gradients
//     `name@GRAD@RENAME@block0@N`, summed into `name@GRAD` by a `sum` op placed right before the
//     first grad op that reads `name@GRAD` (at the end of the pass for parameters);
//   - no gradient flows into stop_gradient vars, no_grad_vars, or ops not on a path to the loss:
//     a gradient output slot that would hold one is left empty (single slots) or holds @EMPTY@
//     (duplicable ones), and a grad op left with nothing to write is dropped;
//   - the pruning passes of backward.py run as they are (_remove_no_grad_branch_ with its zero
//     `fill_any_like`, _find_not_need_ops).
// Grad vars are declared with the forward var's dtype and shape. The result depends only on the
// builder's state and the arguments; names are deterministic.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "oldir/builder.h"

namespace irm::oldir {

struct ParamGrad {
  std::string param;
  std::string grad;
  bool operator==(const ParamGrad&) const = default;
};

struct BackwardOptions {
  std::unordered_set<std::string> no_grad_vars;
};

// Appends the backward pass of `loss` (a var of the root block) to the root block. Returns the
// (parameter, gradient) pairs of every trainable parameter (is_parameter, not stop_gradient) that
// received a gradient, in the order Paddle returns them (parameter order of the block). Errors
// (kInvalidArgument / kUnimplemented) name the op or var: an unknown loss var or one no op
// writes, a forward op with no grad rule on the loss path (or lacking a slot its grad maker
// needs), a program that already has backward ops (double grad), sparse embedding gradients.
// On error the program is left unchanged.
StatusOr<std::vector<ParamGrad>> AppendBackward(ProgramBuilder& program, const std::string& loss,
                                                const BackwardOptions& options = {});

}  // namespace irm::oldir
