// The training glue: learning-rate schedule, backward, optimizer, fetch ops.
#include "oldir/models/training.h"

#include <fmt/format.h>

#include <utility>

#include "oldir/backward.h"

namespace irm::oldir::models {
namespace {

// Points every optimizer op's LearningRate at `lr` and drops the constant learning_rate_N the
// optimizer made (its var in both programs and its startup fill_constant): with a schedule, Paddle
// creates no such var.
void UseScheduledRate(ModelPrograms* model, const std::string& lr) {
  std::string constant;
  proto::BlockDesc* main = model->main.root().desc();
  for (proto::OpDesc& op : *main->mutable_ops()) {
    for (proto::OpDesc::Var& slot : *op.mutable_inputs()) {
      if (slot.parameter() != "LearningRate") continue;
      for (std::string& arg : *slot.mutable_arguments()) {
        if (arg == lr) continue;
        constant = arg;
        arg = lr;
      }
    }
  }
  if (constant.empty()) return;
  // DeleteSubrange, not std::remove_if: the builders keep pointers to the other elements, which
  // must keep their contents. The builders' own look-up of the dropped name is stale after this;
  // nothing declares learning_rate_N again.
  auto drop_var = [&constant](proto::BlockDesc* block) {
    for (int i = block->vars_size() - 1; i >= 0; --i) {
      if (block->vars(i).name() == constant) block->mutable_vars()->DeleteSubrange(i, 1);
    }
  };
  drop_var(main);
  proto::BlockDesc* startup = model->startup.root().desc();
  drop_var(startup);
  for (int i = startup->ops_size() - 1; i >= 0; --i) {
    const proto::OpDesc& op = startup->ops(i);
    if (op.type() == "fill_constant" && op.outputs_size() == 1 &&
        op.outputs(0).arguments_size() == 1 && op.outputs(0).arguments(0) == constant) {
      startup->mutable_ops()->DeleteSubrange(i, 1);
    }
  }
}

}  // namespace

Status AddTrainingWithOptions(ModelPrograms* model, const TrainingOptions& options) {
  BlockBuilder& root = model->main.root();
  for (const std::string& name : options.extra_fetches) {
    if (root.FindLocalVar(name) == nullptr) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                    fmt::format("fetch '{}' is not a var of the main program", name));
    }
  }
  std::string scheduled_lr;
  if (options.lr_schedule.decay != LrDecay::kConstant) {
    IRM_ASSIGN_OR_RETURN(scheduled_lr, AppendLrSchedule(model, options.lr_schedule));
  }
  IRM_ASSIGN_OR_RETURN(std::vector<ParamGrad> params_grads,
                       AppendBackward(model->main, model->loss));
  IRM_RETURN_IF_ERROR(
      AppendOptimizer(model->main, model->startup, params_grads, options.optimizer));
  if (!scheduled_lr.empty()) UseScheduledRate(model, scheduled_lr);

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
  return AddTrainingWithOptions(model, options);
}

}  // namespace irm::oldir::models
