// The training glue: learning-rate schedule, backward, optimizer, fetch ops.
#include "oldir/models/training.h"

#include <fmt/format.h>

#include <utility>

#include "oldir/backward.h"

namespace irm::oldir::models {
namespace {}  // namespace

Status AddTraining(ModelPrograms* model, const TrainingOptions& options) {
  BlockBuilder& root = model->main.root();
  for (const std::string& name : options.extra_fetches) {
    if (root.FindLocalVar(name) == nullptr) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                    fmt::format("fetch '{}' is not a var of the main program", name));
    }
  }
  OptimizerOptions optimizer = options.optimizer;
  if (options.lr_schedule.decay != LrDecay::kConstant) {
    IRM_ASSIGN_OR_RETURN(optimizer.learning_rate_var, AppendLrSchedule(model, options.lr_schedule));
  }
  IRM_ASSIGN_OR_RETURN(std::vector<ParamGrad> params_grads,
                       AppendBackward(model->main, model->loss));
  IRM_RETURN_IF_ERROR(AppendOptimizer(model->main, model->startup, params_grads, optimizer));

  // The executor's fetch ops come last: a persistable FETCH_LIST var and one op per fetch.
  model->fetches = {model->loss};
  model->fetches.insert(model->fetches.end(), options.extra_fetches.begin(),
                        options.extra_fetches.end());
  root.CreateTypedVar("fetch", proto::VarType::FETCH_LIST, /*persistable=*/true);
  ScopedOpRole role(model->main, kForward);
  for (size_t col = 0; col < model->fetches.size(); ++col) {
    root.AppendOp("fetch", {{"X", {model->fetches[col]}}}, {{"Out", {"fetch"}}},
                  {{"col", static_cast<int32_t>(col)}});
  }
  return Status::Ok();
}

Status AddTraining(ModelPrograms* model, const OptimizerOptions& optimizer) {
  TrainingOptions options;
  options.optimizer = optimizer;
  return AddTraining(model, options);
}

}  // namespace irm::oldir::models
