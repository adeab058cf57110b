// The detection rows of the `pd_op` dialect (what a Faster R-CNN training program needs beyond the
// conv net, and the exponential learning-rate decay's floor; its elementwise_pow is in
// pd_op_elementwise.h), added to the table by AddConvolution (pd_op_dialect_conv.h). They replace
// the catalog's lines of the same names (pd_op_catalog.h): the catalog registers only what the hand
// rows did not.
#pragma once

#include "newir/pd_op_table.h"

namespace irm::newir {

void AddDetection(pd_op_table::Table& t);

}  // namespace irm::newir
