// Fold hooks (OpFoldFn) of pd_op ops that compute their input unchanged; the op table's rows
// name them (pd_op_dialect.cc) and `canonicalize` applies them. Each looks at the op alone (and
// at the producers of its operands); whether the fold may be applied where the op stands is the
// pass's question.
#pragma once

#include "newir/op_info.h"
#include "newir/operation.h"

namespace irm::newir {

// scale by 1 with bias 0 is x. The factor is operand 1 fed by pd_op.full (the pd_op table's
// form) or, in the older form, the attribute `scale`. x * 1 + 0 turns -0 into +0, which no parity
// comparison can see.
OpFoldResult FoldScaleOp(const Operation& op);
// cast to the dtype x already has is x.
OpFoldResult FoldCastOp(const Operation& op);
// reshape of a statically shaped x (no -1) is x, when its xshape result is unused. The result
// type equalling x's (which the pass checks) makes it a reshape to the same shape.
OpFoldResult FoldReshapeOp(const Operation& op);
// assign (a copy) is x: under SSA the copy and the original hold the same values as long as
// nothing writes either in place, which the pass checks. An assign of an assign reads the first
// one's input instead (a fold of the outer op, as MLIR folds a chain into its outer op).
OpFoldResult FoldAssignOp(const Operation& op);

}  // namespace irm::newir
