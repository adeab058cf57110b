// Turns a model-zoo forward pass into a training step the way Paddle's static graph does:
// optionally a learning-rate schedule (lr_schedule.h, written before minimize, as the scripts call
// the decay function first), append_backward on the loss, the optimizer's updates (and its
// accumulators' initialisers in the startup program), then the fetch ops Paddle's executor
// inserts (fetch var + one `fetch` op per fetched var, `col` in order).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/models/lr_schedule.h"
#include "oldir/models/model.h"
#include "oldir/optimizer.h"

namespace irm::oldir::models {

struct TrainingOptions {
  OptimizerOptions optimizer;
  // kConstant (the default): the optimizer's own constant learning_rate_N. Otherwise the
  // schedule's var is the optimizer's LearningRate, as when a script passes the decayed
  // variable to the optimizer (Optimizer._create_global_learning_rate keeps a Variable as is).
  LrSchedule lr_schedule;
  // Fetched after the loss, in order (a ResNet's accuracies).
  std::vector<std::string> extra_fetches;
};

// Fetches the loss (col 0), then `extra_fetches`. Fails if the schedule, the backward pass or the
// optimizer cannot be built, or an extra fetch is not a var of main's root block.
Status AddTraining(ModelPrograms* model, const TrainingOptions& options);
// The constant learning rate and the loss alone.
Status AddTraining(ModelPrograms* model, const OptimizerOptions& optimizer);

}  // namespace irm::oldir::models
