// Special handlers: the legacy ops whose translation a table row cannot describe — feed and
// fetch, constants (fill_constant, assign_value), assign (assign_out_ onto an existing var),
// elementwise ops whose `axis` needs an explicit reshape, reduce_all, split by num or sections,
// tril_triu by `lower`, reshape2_grad rebuilt without XShape, and set_value (with or without a
// value tensor, its typed value lists). Each is listed in the table
// (op_compat.cc) as its row's handler.
#pragma once

#include "common/status.h"

namespace irm::translator {

class OpContext;

Status TranslateFeed(OpContext& ctx);
Status TranslateFetch(OpContext& ctx);
Status TranslateFillConstant(OpContext& ctx);
Status TranslateAssign(OpContext& ctx);
Status TranslateAssignValue(OpContext& ctx);
Status TranslateElementwise(OpContext& ctx);
Status TranslateElementwiseGrad(OpContext& ctx);
Status TranslateReduce(OpContext& ctx);
Status TranslateSplit(OpContext& ctx);
Status TranslateTrilTriu(OpContext& ctx);
Status TranslateReshapeGrad(OpContext& ctx);
Status TranslateSetValue(OpContext& ctx);

}  // namespace irm::translator
