// The learning-rate decays: the step counter, then the decay's ops (lr_schedule.h says which).
#include "oldir/models/lr_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "oldir/initializer.h"
#include "oldir/layers.h"

namespace irm::oldir::models {
namespace {

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, "LrSchedule: " + std::move(message));
}

Status Check(const LrSchedule& schedule) {
  if (schedule.decay == LrDecay::kPiecewise) {
    if (schedule.values.size() != schedule.boundaries.size() + 1) {
      return Invalid(fmt::format("piecewise needs one more value than boundaries, got {} and {}",
                                 schedule.values.size(), schedule.boundaries.size()));
    }
    if (!std::is_sorted(schedule.boundaries.begin(), schedule.boundaries.end())) {
      return Invalid("piecewise boundaries must be ascending");
    }
  }
  if (schedule.decay == LrDecay::kExponential && schedule.decay_steps < 1) {
    return Invalid(fmt::format("decay_steps {} must be positive", schedule.decay_steps));
  }
  return Status::Ok();
}

VarOptions StopGradient(bool persistable = false) {
  VarOptions options;
  options.persistable = persistable;
  options.stop_gradient = true;
  return options;
}

// create_global_var: the persistable var in main and startup, its fill_constant in startup.
proto::OpDesc* GlobalVar(ModelPrograms* model, const std::string& name, proto::VarType::Type dtype,
                         float value) {
  model->main.root().CreateVar(name, dtype, {1}, StopGradient(true));
  BlockBuilder& startup = model->startup.root();
  startup.CreateVar(name, dtype, {1}, StopGradient(true));
  return AppendFillConstant(startup, name, dtype, {1}, value);
}

void SetForceCpu(proto::OpDesc* op) {
  for (proto::OpDesc::Attr& attr : *op->mutable_attrs()) {
    if (attr.name() == "force_cpu") attr.set_b(true);
  }
}

// The counter (once per program), its increment after the feed ops, and its float32 cast.
StatusOr<std::string> DecayStepCounter(ModelPrograms* model) {
  BlockBuilder& root = model->main.root();
  if (root.FindLocalVar(kLrDecayCounter) == nullptr) {
    proto::OpDesc* init = GlobalVar(model, kLrDecayCounter, proto::VarType::INT64, -1.0f);
    SetForceCpu(init);
    root.AppendOp("increment", {{"X", {kLrDecayCounter}}}, {{"Out", {kLrDecayCounter}}},
                  {{"step", 1.0f}});
    auto* ops = root.desc()->mutable_ops();
    int position = 0;
    while (position < ops->size() && ops->Get(position).type() == "feed") ++position;
    for (int k = ops->size() - 1; k > position; --k) ops->SwapElements(k, k - 1);
  }
  return layers::Cast(root, kLrDecayCounter, proto::VarType::FP32);
}

// A bool [1] var no layer names: Variable's operators write "tmp_N".
std::string TempBool(BlockBuilder& block) {
  const std::string name = block.program().names().Temp();
  block.CreateVar(name, proto::VarType::BOOL, {1});
  return name;
}

// _logical_op: "logical_<op>_N.tmp_0", bool [1].
std::string Logical(BlockBuilder& block, const std::string& type, SlotArgs inputs) {
  const std::string name =
      block.program().names().Generate(block.program().names().Generate(type) + ".tmp");
  block.CreateVar(name, proto::VarType::BOOL, {1});
  block.AppendOp(type, std::move(inputs), {{"Out", {name}}});
  return name;
}

// One Switch case: a conditional_block on `cond` whose sub-block fills `value` into `lr`.
void FillCase(ProgramBuilder& main, const std::string& cond, const std::string& lr, float value) {
  BlockBuilder& parent = main.root();
  BlockBuilder& sub = main.CreateBlock(parent.index());
  AppendFillConstant(sub, lr, proto::VarType::FP32, {1}, value);
  const std::string scope = main.names().Generate("_generated_var");
  parent.CreateTypedVar(scope, proto::VarType::STEP_SCOPES);
  parent.AppendOp("conditional_block", {{"Cond", {cond}}, {"Input", {}}},
                  {{"Out", {lr}}, {"Scope", {scope}}},
                  {{"sub_block", BlockRef{sub.index()}}, {"is_scalar_condition", true}});
}

StatusOr<std::string> Piecewise(ModelPrograms* model, const LrSchedule& schedule) {
  IRM_ASSIGN_OR_RETURN(std::string step, DecayStepCounter(model));
  const std::string lr = "learning_rate";
  GlobalVar(model, lr, proto::VarType::FP32, 0.0f);
  BlockBuilder& root = model->main.root();
  std::string not_previous;
  for (size_t i = 0; i < schedule.boundaries.size(); ++i) {
    const std::string boundary =
        root.program().names().Generate(root.program().names().Generate("fill_constant") + ".tmp");
    root.CreateVar(boundary, proto::VarType::FP32, {1}, StopGradient());
    SetForceCpu(AppendFillConstant(root, boundary, proto::VarType::FP32, {1},
                                   static_cast<float>(schedule.boundaries[i])));
    const std::string below = TempBool(root);
    root.AppendOp("less_than", {{"X", {step}}, {"Y", {boundary}}}, {{"Out", {below}}},
                  {{"axis", int32_t{-1}}, {"force_cpu", false}});
    std::string cond = below;
    if (i == 0) {
      not_previous = Logical(root, "logical_not", {{"X", {below}}});
    } else {
      const std::string not_below = Logical(root, "logical_not", {{"X", {below}}});
      const std::string next_not =
          Logical(root, "logical_and", {{"X", {not_previous}}, {"Y", {not_below}}});
      cond = Logical(root, "logical_and", {{"X", {not_previous}}, {"Y", {below}}});
      not_previous = next_not;
    }
    FillCase(model->main, cond, lr, schedule.values[i]);
  }
  FillCase(model->main, not_previous, lr, schedule.values.back());
  return lr;
}

std::string TempFloat(BlockBuilder& block, bool stop_gradient = false) {
  const std::string name = block.program().names().Temp();
  VarOptions options;
  options.stop_gradient = stop_gradient;
  block.CreateVar(name, proto::VarType::FP32, {1}, options);
  return name;
}

// _scalar_op_: scale(X) -> "tmp_N".
std::string ScalarScale(BlockBuilder& block, const std::string& x, float scale) {
  const std::string out = TempFloat(block);
  block.AppendOp(
      "scale", {{"X", {x}}, {"ScaleTensor", {}}}, {{"Out", {out}}},
      {{"scale", scale}, {"bias", 0.0f}, {"bias_after_scale", true}, {"use_mkldnn", false}});
  return out;
}

StatusOr<std::string> Exponential(ModelPrograms* model, const LrSchedule& schedule) {
  IRM_ASSIGN_OR_RETURN(std::string step, DecayStepCounter(model));
  BlockBuilder& root = model->main.root();
  std::string exponent = ScalarScale(root, step, 1.0f / static_cast<float>(schedule.decay_steps));
  if (schedule.staircase) {
    const std::string floored =
        root.program().names().Generate(root.program().names().Generate("floor") + ".tmp");
    root.CreateVar(floored, proto::VarType::FP32, {1});
    root.AppendOp("floor", {{"X", {exponent}}}, {{"Out", {floored}}},
                  {{"use_mkldnn", false}, {"use_cudnn", false}});
    exponent = floored;
  }
  const std::string base = TempFloat(root, /*stop_gradient=*/true);
  AppendFillConstant(root, base, proto::VarType::FP32, {1}, schedule.decay_rate);
  const std::string power = TempFloat(root);
  root.AppendOp("elementwise_pow", {{"X", {base}}, {"Y", {exponent}}}, {{"Out", {power}}},
                {{"axis", int32_t{-1}}, {"use_mkldnn", false}});
  return ScalarScale(root, power, schedule.learning_rate);
}

}  // namespace

const char* LrDecayName(LrDecay decay) {
  switch (decay) {
    case LrDecay::kConstant:
      return "constant";
    case LrDecay::kPiecewise:
      return "piecewise";
    case LrDecay::kExponential:
      return "exponential";
  }
  return "unknown";
}

std::optional<LrDecay> LrDecayFromName(std::string_view name) {
  for (LrDecay d : {LrDecay::kConstant, LrDecay::kPiecewise, LrDecay::kExponential}) {
    if (name == LrDecayName(d)) return d;
  }
  return std::nullopt;
}

StatusOr<std::string> AppendLrSchedule(ModelPrograms* model, const LrSchedule& schedule) {
  IRM_RETURN_IF_ERROR(Check(schedule));
  ScopedOpRole role(model->main, kLRSched);
  switch (schedule.decay) {
    case LrDecay::kPiecewise:
      return Piecewise(model, schedule);
    case LrDecay::kExponential:
      return Exponential(model, schedule);
    case LrDecay::kConstant:
      break;
  }
  return Invalid(fmt::format("decay '{}' appends no ops", LrDecayName(schedule.decay)));
}

}  // namespace irm::oldir::models
