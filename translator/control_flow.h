// Control flow: conditional_block -> pd_op.if and while -> pd_op.while.
//
// The if's results are the block's Out vars plus every var declared outside it that its ops write
// (a legacy sub-block writes the enclosing scope; SSA needs those writes as results). The true
// region is the translated sub-block ending in cf.yield; the false region, which the legacy op
// does not have, yields each var's value from before the block — its parameter when it is
// persistable, a program input when the block reads it first — or, for a var that had none,
// zeros (fake_false_branch = true, as Paddle).
//
// The while's loop values are the vars declared outside the body that the body writes, the
// condition first: the body gets one block argument per other loop value and ends in
// cf.yield(new condition, new values...); the results re-bind the names after the loop. Unlike
// Paddle's translator this does not depend on the trailing `assign` ops of Paddle's while_loop.
#pragma once

#include "common/status.h"

namespace irm::translator {

class OpContext;

Status TranslateConditionalBlock(OpContext& ctx);
Status TranslateWhile(OpContext& ctx);

}  // namespace irm::translator
