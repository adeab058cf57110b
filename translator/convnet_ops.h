// Special handlers of the conv-net ops a table row cannot describe: the legacy fc-style `mul` and
// its grad, which Paddle translates to pd_op.matmul / matmul_grad between reshapes, and
// batch_norm, whose MomentumTensor the new op cannot take; affine_channel_grad, whose legacy grad
// maker feeds no Bias. Listed in the table (op_compat.cc) as their rows' handlers.
#pragma once

#include "common/status.h"

namespace irm::translator {

class OpContext;

Status TranslateMul(OpContext& ctx);
Status TranslateMulGrad(OpContext& ctx);
Status TranslateBatchNorm(OpContext& ctx);
Status TranslateAffineChannelGrad(OpContext& ctx);

}  // namespace irm::translator
