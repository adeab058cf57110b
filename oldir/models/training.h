// Turns a model-zoo forward pass into a training step the way Paddle's static graph does:
// append_backward on the loss, the optimizer's updates (and its accumulators' initialisers in the
// startup program), then the fetch ops Paddle's executor inserts (fetch var + one `fetch` op per
// fetched var, `col` in order).
#pragma once

#include "common/status.h"
#include "oldir/models/model.h"
#include "oldir/optimizer.h"

namespace irm::oldir::models {

// Fetches the loss (col 0). Fails if the backward pass or the optimizer cannot be built.
Status AddTraining(ModelPrograms* model, const OptimizerOptions& optimizer);

}  // namespace irm::oldir::models
