// The conv-net rows of the `pd_op` dialect (conv2d, pool2d, batch_norm and their grads; topk,
// topk_v1, accuracy; logical_and / or / xor), added to the table RegisterPdOpDialect registers
// (pd_op_dialect.cc), followed by the detection rows (pd_op_dialect_detection.h).
#pragma once

#include "newir/pd_op_table.h"

namespace irm::newir {

void AddConvolution(pd_op_table::Table& t);

}  // namespace irm::newir
