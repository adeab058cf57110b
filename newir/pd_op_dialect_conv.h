// The convolution-net ops of the `pd_op` dialect (conv2d and its grad; the pooling and batch_norm
// ops join them here), registered by RegisterPdOpDialect (pd_op_dialect.cc).
#pragma once

#include "common/status.h"
#include "newir/dialect.h"

namespace irm::newir {

Status RegisterPdOpConvolutionOps(OpRegistry& registry);

}  // namespace irm::newir
