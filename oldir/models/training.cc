// The training glue: backward, optimizer, fetch ops.
#include "oldir/models/training.h"

#include "oldir/backward.h"

namespace irm::oldir::models {

Status AddTraining(ModelPrograms* model, const OptimizerOptions& optimizer) {
  IRM_ASSIGN_OR_RETURN(std::vector<ParamGrad> params_grads,
                       AppendBackward(model->main, model->loss));
  IRM_RETURN_IF_ERROR(AppendOptimizer(model->main, model->startup, params_grads, optimizer));

  // The executor's fetch ops come last: a persistable FETCH_LIST var and one op per fetch.
  model->fetches = {model->loss};
  BlockBuilder& root = model->main.root();
  root.CreateTypedVar("fetch", proto::VarType::FETCH_LIST, /*persistable=*/true);
  ScopedOpRole role(model->main, kForward);
  for (size_t col = 0; col < model->fetches.size(); ++col) {
    root.AppendOp("fetch", {{"X", {model->fetches[col]}}}, {{"Out", {"fetch"}}},
                  {{"col", static_cast<int32_t>(col)}});
  }
  return Status::Ok();
}

}  // namespace irm::oldir::models
