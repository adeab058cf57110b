// The convolution-net rows of the `pd_op` dialect (conv2d and its grad; the pooling and batch_norm
// ops join them here), added to the table RegisterPdOpDialect registers (pd_op_dialect.cc).
#pragma once

#include "newir/pd_op_table.h"

namespace irm::newir {

void AddConvolution(pd_op_table::Table& t);

}  // namespace irm::newir
