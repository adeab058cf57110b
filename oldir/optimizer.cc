// The legacy optimizers: what paddle.optimizer.{SGD,Momentum,Adam,AdamW}.minimize appends after
// append_backward in static mode (Optimizer.apply_gradients -> ClipGradByGlobalNorm._static_clip
// -> _create_optimization_pass: the global learning rate, the accumulators, one update op per
// parameter).
#include "oldir/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "oldir/editor.h"
#include "oldir/initializer.h"

namespace irm::oldir {
namespace {

// One (parameter, gradient) pair with what the optimizer needs to know about it.
struct Target {
  std::string param;
  std::string grad;
  proto::VarType::Type param_dtype = proto::VarType::FP32;
  std::vector<int64_t> param_dims;
  proto::VarType::Type grad_dtype = proto::VarType::FP32;
  // The op_device of the first main-program op reading the parameter (Paddle's
  // _update_param_device_map); unset when none reads it.
  std::optional<std::string> device;
  bool master = false;  // multi_precision and an fp16/bf16 parameter
  bool stop_gradient = false;
};

// The accumulator vars of one parameter; empty names for the ones its optimizer does not use.
struct Accumulators {
  std::string master, velocity, moment1, moment2, beta1_pow, beta2_pow;
};

bool IsLowPrecision(proto::VarType::Type dtype) {
  return dtype == proto::VarType::FP16 || dtype == proto::VarType::BF16;
}

std::string DtypeName(proto::VarType::Type dtype) { return proto::VarType::Type_Name(dtype); }

Status VarError(StatusCode code, const std::string& var, std::string message) {
  Location location;
  location.InBlock(0).AtVar(var);
  return Status(code, std::move(location), std::move(message));
}

// Sets the builder's op_device for a scope (Paddle's device_guard); nullopt leaves it as it is,
// as device_guard(None) does.
class ScopedDevice {
 public:
  ScopedDevice(ProgramBuilder& builder, const std::optional<std::string>& device)
      : builder_(builder), saved_(builder.device()) {
    if (device) builder_.set_device(*device);
  }
  ~ScopedDevice() { builder_.set_device(saved_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  ProgramBuilder& builder_;
  std::string saved_;
};

// The startup program's role, namescope and device for the duration of one AppendOptimizer call.
// Paddle's name scope and device guard are process-wide, so the initialisers take main's current
// namescope and device; the startup program's role is always Forward.
class ScopedStartupContext {
 public:
  ScopedStartupContext(ProgramBuilder& startup, const ProgramBuilder& main)
      : startup_(startup),
        role_(startup.role()),
        namescope_(startup.namescope()),
        device_(startup.device()) {
    startup_.set_role(kForward);
    startup_.set_namescope(main.namescope());
    startup_.set_device(main.device());
  }
  ~ScopedStartupContext() {
    startup_.set_role(role_);
    startup_.set_namescope(namescope_);
    startup_.set_device(device_);
  }
  ScopedStartupContext(const ScopedStartupContext&) = delete;
  ScopedStartupContext& operator=(const ScopedStartupContext&) = delete;

 private:
  ProgramBuilder& startup_;
  int role_;
  std::string namescope_;
  std::string device_;
};

// Paddle's NameScope.child(prefix): the first child of a scope is `prefix`, later ones
// `prefix_1`, `prefix_2`, ... The count is kept per parent scope in the builder's name generator
// under a key no var name can take.
std::string NextNamescope(ProgramBuilder& builder, const std::string& prefix) {
  const std::string key = "@name_scope@" + builder.namescope() + prefix;
  const std::string generated = builder.names().Generate(key);
  const std::string count = generated.substr(key.size() + 1);  // Generate writes "key_N"
  return count == "0" ? prefix : prefix + "_" + count;
}

// For every var the block reads, the op_device of the first op reading it: one pass over the
// block, so that resolving thousands of parameters stays linear.
std::unordered_map<std::string, std::string> DevicesOfFirstReaders(const proto::BlockDesc& block) {
  std::unordered_map<std::string, std::string> devices;
  for (const proto::OpDesc& op : block.ops()) {
    for (const proto::OpDesc::Var& slot : op.inputs()) {
      for (const std::string& arg : slot.arguments()) {
        if (!devices.count(arg))
          devices.emplace(arg, Op(&op).AttrOr<std::string>(kOpDeviceAttr, ""));
      }
    }
  }
  return devices;
}

Status CheckOptions(ProgramBuilder& main, const OptimizerOptions& options) {
  if (options.l2_decay && options.kind != OptimizerKind::kMomentum) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("{}: l2_decay is fused by momentum only; other optimizers append "
                              "their own regularization ops, which are not modelled",
                              OptimizerKindName(options.kind)));
  }
  if (!options.learning_rate_var.empty() &&
      main.root().FindLocalVar(options.learning_rate_var) == nullptr) {
    return VarError(StatusCode::kNotFound, options.learning_rate_var,
                    fmt::format("optimizer: learning rate '{}' is not declared in the main "
                                "program's root block",
                                options.learning_rate_var));
  }
  switch (options.kind) {
    case OptimizerKind::kSgd:
    case OptimizerKind::kMomentum:
      return Status::Ok();
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: {
      // The checks Adam.__init__ / AdamW.__init__ make (NaN fails them too).
      const char* name = OptimizerKindName(options.kind);
      if (!(options.beta1 >= 0.0f && options.beta1 < 1.0f)) {
        return Status(StatusCode::kInvalidArgument, Location{},
                      fmt::format("{}: beta1 must be in [0, 1), got {}", name, options.beta1));
      }
      if (!(options.beta2 >= 0.0f && options.beta2 < 1.0f)) {
        return Status(StatusCode::kInvalidArgument, Location{},
                      fmt::format("{}: beta2 must be in [0, 1), got {}", name, options.beta2));
      }
      if (!(options.epsilon >= 0.0f)) {
        return Status(StatusCode::kInvalidArgument, Location{},
                      fmt::format("{}: epsilon must be >= 0, got {}", name, options.epsilon));
      }
      return Status::Ok();
    }
  }
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("unknown optimizer kind {}", static_cast<int>(options.kind)));
}

// Looks every pair up before anything is written, so that a failure leaves both programs as they
// were. The result is sorted by parameter name, as apply_gradients sorts params_grads.
StatusOr<std::vector<Target>> Resolve(ProgramBuilder& main, ProgramBuilder& startup,
                                      const std::vector<ParamGrad>& params_grads,
                                      const OptimizerOptions& options) {
  BlockBuilder& root = main.root();
  const std::unordered_map<std::string, std::string> devices = DevicesOfFirstReaders(*root.desc());
  std::vector<Target> targets;
  std::set<std::string> seen;
  for (const ParamGrad& pg : params_grads) {
    if (!seen.insert(pg.param).second) {
      return VarError(StatusCode::kInvalidArgument, pg.param,
                      fmt::format("optimizer: parameter '{}' is listed twice", pg.param));
    }
    const proto::VarDesc* param = root.FindLocalVar(pg.param);
    if (param == nullptr) {
      return VarError(
          StatusCode::kNotFound, pg.param,
          fmt::format("optimizer: parameter '{}' is not declared in the main program's root block",
                      pg.param));
    }
    const Var param_var(param);
    if (param_var.type() != proto::VarType::DENSE_TENSOR || !param_var.dtype()) {
      return VarError(StatusCode::kInvalidArgument, pg.param,
                      fmt::format("optimizer: parameter '{}' is not a dense tensor", pg.param));
    }
    const proto::VarDesc* grad = root.FindLocalVar(pg.grad);
    if (grad == nullptr) {
      return VarError(StatusCode::kNotFound, pg.grad,
                      fmt::format("optimizer: gradient '{}' of parameter '{}' is not declared in "
                                  "the main program's root block",
                                  pg.grad, pg.param));
    }
    const Var grad_var(grad);
    Target target;
    target.param = pg.param;
    target.grad = pg.grad;
    target.param_dtype = *param_var.dtype();
    target.param_dims = param_var.dims();
    target.grad_dtype = grad_var.dtype().value_or(target.param_dtype);
    target.stop_gradient = param_var.stop_gradient();
    if (!target.stop_gradient) {
      auto reader = devices.find(pg.param);
      if (reader != devices.end()) target.device = reader->second;
    }
    target.master =
        options.multi_precision && IsLowPrecision(target.param_dtype) && !target.stop_gradient;
    if (target.master && startup.root().FindLocalVar(pg.param) == nullptr) {
      return VarError(StatusCode::kNotFound, pg.param,
                      fmt::format("optimizer: parameter '{}' is not declared in the startup "
                                  "program, where its fp32 master weight is cast from it",
                                  pg.param));
    }
    if (options.clip_global_norm) {
      // _static_clip also handles SELECTED_ROWS grads (merge_selected_rows) and fp16/bf16 or
      // mixed-dtype grads (extra sums and casts): not modelled.
      const bool dense = grad_var.type() == proto::VarType::DENSE_TENSOR;
      const bool supported = dense && (target.grad_dtype == proto::VarType::FP32 ||
                                       target.grad_dtype == proto::VarType::FP64);
      if (!supported) {
        return VarError(
            StatusCode::kUnimplemented, pg.grad,
            fmt::format(
                "optimizer: global-norm clipping of gradient '{}' ({}) is not supported: "
                "only dense FP32 or FP64 gradients",
                pg.grad,
                dense ? DtypeName(target.grad_dtype) : proto::VarType::Type_Name(grad_var.type())));
      }
      if (!targets.empty() && targets.front().grad_dtype != target.grad_dtype) {
        return VarError(
            StatusCode::kUnimplemented, pg.grad,
            fmt::format("optimizer: global-norm clipping of gradients of different dtypes ({} and "
                        "{}) is not supported",
                        DtypeName(targets.front().grad_dtype), DtypeName(target.grad_dtype)));
      }
    }
    targets.push_back(std::move(target));
  }
  std::stable_sort(targets.begin(), targets.end(),
                   [](const Target& a, const Target& b) { return a.param < b.param; });
  return targets;
}

std::pair<std::string, AttrValue> RoleVar(const Target& target) {
  return {kOpRoleVarAttr, std::vector<std::string>{target.param, target.grad}};
}

// LayerHelper(layer).create_variable_for_type_inference: `<layer>_N.tmp_0`.
std::string TempVar(ProgramBuilder& main, const std::string& layer, proto::VarType::Type dtype,
                    const std::vector<int64_t>& dims, bool stop_gradient = false) {
  const std::string name = main.names().Generate(main.names().Generate(layer) + ".tmp");
  main.root().CreateVar(name, dtype, dims, {.stop_gradient = stop_gradient});
  return name;
}

// ClipGradByGlobalNorm._static_clip for dense grads of one dtype:
//   s_i = squared_l2_norm(g_i); norm = sqrt(sum(s_i)); clip = fill_constant(clip_norm)
//   scale = clip / elementwise_max(clip, norm); g_i = g_i * scale (in place)
// All under name_scope('gradient_clip') and _optimized_guard([p, g]); the ops between the two
// loops carry the last pair's op_role_var, as Python leaves p and g bound to it.
void AppendGlobalNormClip(ProgramBuilder& main, const std::vector<Target>& targets,
                          float clip_norm) {
  // The name scope is entered (and its name taken) even when there is nothing to clip.
  ScopedNamescope scope(main, NextNamescope(main, "gradient_clip"));
  if (targets.empty()) return;
  BlockBuilder& root = main.root();
  const proto::VarType::Type dtype = targets.front().grad_dtype;
  ScopedOpRole role(main, kOptimize);

  std::vector<std::string> squares;
  for (const Target& t : targets) {
    const std::string square = TempVar(main, "squared_l2_norm", dtype, {1});
    root.AppendOp("squared_l2_norm", {{"X", {t.grad}}}, {{"Out", {square}}}, {RoleVar(t)});
    squares.push_back(square);
  }
  const Target& last = targets.back();
  // paddle.add_n writes a `sum` op; a single-dtype list needs no second add_n.
  const std::string sum = TempVar(main, "add_n", dtype, {1});
  root.AppendOp("sum", {{"X", squares}}, {{"Out", {sum}}}, {RoleVar(last)});
  const std::string norm = TempVar(main, "sqrt", dtype, {1});
  root.AppendOp("sqrt", {{"X", {sum}}}, {{"Out", {norm}}}, {RoleVar(last)});
  // paddle.full(shape=[1], fill_value=clip_norm): fill_constant marks its output stop_gradient.
  const std::string max_norm = TempVar(main, "fill_constant", dtype, {1}, /*stop_gradient=*/true);
  OpEditor(AppendFillConstant(root, max_norm, dtype, {1}, clip_norm))
      .SetAttr(kOpRoleVarAttr, std::vector<std::string>{last.param, last.grad});
  // paddle.maximum / paddle.divide (_elementwise_op) name their output after the LayerHelper
  // itself: `elementwise_max_N`, without ".tmp_M". maximum runs first: it is divide's argument.
  const std::string maximum = main.names().Generate("elementwise_max");
  root.CreateVar(maximum, dtype, {1});
  root.AppendOp("elementwise_max", {{"X", {max_norm}}, {"Y", {norm}}}, {{"Out", {maximum}}},
                {{"axis", -1}, RoleVar(last)});
  const std::string scale = main.names().Generate("elementwise_div");
  root.CreateVar(scale, dtype, {1});
  root.AppendOp("elementwise_div", {{"X", {max_norm}}, {"Y", {maximum}}}, {{"Out", {scale}}},
                {{"axis", -1}, RoleVar(last)});
  for (const Target& t : targets) {
    root.AppendOp("elementwise_mul", {{"X", {t.grad}}, {"Y", {scale}}}, {{"Out", {t.grad}}},
                  {{"axis", -1}, RoleVar(t)});
  }
}

// _create_global_learning_rate: paddle.static.create_global_var(name=unique_name("learning_rate"),
// shape=[1], value=lr, dtype=float32, persistable=True), stop_gradient in main.
std::string CreateLearningRate(ProgramBuilder& main, ProgramBuilder& startup, float value) {
  const std::string name = main.names().Generate("learning_rate");
  main.root().CreateVar(name, proto::VarType::FP32, {1},
                        {.persistable = true, .stop_gradient = true});
  AppendInitializer(startup, name, proto::VarType::FP32, {1}, Initializer::Constant(value));
  return name;
}

// _add_accumulator: `<param>_<acc>_N`, persistable in main, fill_constant in startup under
// device_guard(device).
std::string AddAccumulator(ProgramBuilder& main, ProgramBuilder& startup, const std::string& param,
                           const char* acc, proto::VarType::Type dtype,
                           const std::vector<int64_t>& dims, float fill,
                           const std::optional<std::string>& device) {
  const std::string name = main.names().Generate(param + "_" + acc);
  main.root().CreateVar(name, dtype, dims, {.persistable = true});
  ScopedDevice guard(startup, device);
  AppendInitializer(startup, name, dtype, dims, Initializer::Constant(fill));
  return name;
}

// _create_master_weight: an FP32 copy `<param>_fp32_master_N` made by create_global_var (value 0)
// and a cast from the parameter appended to the startup program.
std::string CreateMasterWeight(ProgramBuilder& main, ProgramBuilder& startup, const Target& t) {
  const std::string name = main.names().Generate(t.param + "_fp32_master");
  main.root().CreateVar(name, proto::VarType::FP32, t.param_dims,
                        {.persistable = true, .stop_gradient = true});
  AppendInitializer(startup, name, proto::VarType::FP32, t.param_dims, Initializer::Constant(0.0f));
  startup.root().AppendOp("cast", {{"X", {t.param}}}, {{"Out", {name}}},
                          {{"in_dtype", static_cast<int32_t>(t.param_dtype)},
                           {"out_dtype", static_cast<int32_t>(proto::VarType::FP32)}});
  return name;
}

// Each optimizer's _create_accumulators for one parameter.
Accumulators CreateAccumulators(ProgramBuilder& main, ProgramBuilder& startup, const Target& t,
                                const OptimizerOptions& options) {
  Accumulators accs;
  if (t.master) accs.master = CreateMasterWeight(main, startup, t);
  // The accumulators belong to the master weight when there is one; its name is in no device map,
  // so its accumulators get no device_guard.
  const std::string& owner = t.master ? accs.master : t.param;
  const proto::VarType::Type owner_dtype = t.master ? proto::VarType::FP32 : t.param_dtype;
  const std::optional<std::string> device = t.master ? std::nullopt : t.device;
  switch (options.kind) {
    case OptimizerKind::kSgd:
      break;
    case OptimizerKind::kMomentum:
      accs.velocity =
          AddAccumulator(main, startup, owner, "velocity", owner_dtype, t.param_dims, 0.0f, device);
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: {
      // _add_moments_pows: fp16/bf16 moments are kept in fp32; the beta pows live on the CPU.
      const proto::VarType::Type dtype =
          IsLowPrecision(owner_dtype) ? proto::VarType::FP32 : owner_dtype;
      accs.moment1 =
          AddAccumulator(main, startup, owner, "moment1", dtype, t.param_dims, 0.0f, device);
      accs.moment2 =
          AddAccumulator(main, startup, owner, "moment2", dtype, t.param_dims, 0.0f, device);
      accs.beta1_pow = AddAccumulator(main, startup, owner, "beta1_pow_acc", dtype, {1},
                                      options.beta1, std::string("cpu"));
      accs.beta2_pow = AddAccumulator(main, startup, owner, "beta2_pow_acc", dtype, {1},
                                      options.beta2, std::string("cpu"));
      break;
    }
  }
  return accs;
}

// Each optimizer's _append_optimize_op (static branch) for one parameter.
void AppendUpdate(ProgramBuilder& main, const Target& t, const Accumulators& accs,
                  const std::string& lr, const OptimizerOptions& options) {
  SlotArgs inputs = {{"Param", {t.param}}, {"Grad", {t.grad}}, {"LearningRate", {lr}}};
  SlotArgs outputs = {{"ParamOut", {t.param}}};
  AttrList attrs = {{"multi_precision", t.master}, RoleVar(t)};
  switch (options.kind) {
    case OptimizerKind::kSgd:
      break;
    case OptimizerKind::kMomentum:
      inputs.push_back({"Velocity", {accs.velocity}});
      outputs.push_back({"VelocityOut", {accs.velocity}});
      // momentum.py: an L2Decay weight_decay is fused ("l2_decay", its coeff); none: "" and 0.
      attrs.insert(attrs.end(),
                   {{"mu", options.momentum},
                    {"use_nesterov", options.use_nesterov},
                    {"regularization_method", std::string(options.l2_decay ? "l2_decay" : "")},
                    {"regularization_coeff", options.l2_decay.value_or(0.0f)},
                    {"rescale_grad", 1.0f}});
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      inputs.insert(inputs.end(), {{"Moment1", {accs.moment1}},
                                   {"Moment2", {accs.moment2}},
                                   {"Beta1Pow", {accs.beta1_pow}},
                                   {"Beta2Pow", {accs.beta2_pow}}});
      outputs.insert(outputs.end(), {{"Moment1Out", {accs.moment1}},
                                     {"Moment2Out", {accs.moment2}},
                                     {"Beta1PowOut", {accs.beta1_pow}},
                                     {"Beta2PowOut", {accs.beta2_pow}}});
      // use_global_beta_pow is not passed by Python; the attribute checker writes its default.
      attrs.insert(attrs.end(), {{"beta1", options.beta1},
                                 {"beta2", options.beta2},
                                 {"epsilon", options.epsilon},
                                 {"lazy_mode", false},
                                 {"min_row_size_to_use_multithread", int64_t{1000}},
                                 {"use_global_beta_pow", false}});
      if (options.kind == OptimizerKind::kAdamW) {
        attrs.insert(attrs.end(), {{"coeff", options.weight_decay},
                                   {"lr_ratio", options.lr_ratio},
                                   {"with_decay", true}});
      }
      break;
  }
  if (t.master) {
    inputs.push_back({"MasterParam", {accs.master}});
    outputs.push_back({"MasterParamOut", {accs.master}});
  }
  main.root().AppendOp(OptimizerKindName(options.kind), std::move(inputs), std::move(outputs),
                       std::move(attrs));
}

}  // namespace

std::vector<OptimizerOptions> EveryOptimizerConfiguration() {
  std::vector<OptimizerOptions> all;
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam,
                             OptimizerKind::kAdamW}) {
    for (bool clip : {false, true}) {
      OptimizerOptions options;
      options.kind = kind;
      if (clip) options.clip_global_norm = 1.0f;
      all.push_back(options);
    }
  }
  return all;
}

const char* OptimizerKindName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kMomentum:
      return "momentum";
    case OptimizerKind::kAdam:
      return "adam";
    case OptimizerKind::kAdamW:
      return "adamw";
  }
  return "unknown";
}

std::optional<OptimizerKind> OptimizerKindFromName(std::string_view name) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam,
                             OptimizerKind::kAdamW}) {
    if (name == OptimizerKindName(kind)) return kind;
  }
  return std::nullopt;
}

Status AppendOptimizer(ProgramBuilder& main, ProgramBuilder& startup,
                       const std::vector<ParamGrad>& params_grads,
                       const OptimizerOptions& options) {
  IRM_RETURN_IF_ERROR(CheckOptions(main, options));
  IRM_ASSIGN_OR_RETURN(const std::vector<Target> targets,
                       Resolve(main, startup, params_grads, options));

  if (options.clip_global_norm) AppendGlobalNormClip(main, targets, *options.clip_global_norm);

  // _create_optimization_pass: the learning rate, then every parameter's accumulators, then the
  // updates. Like Paddle it skips parameters marked stop_gradient (the clip above does not).
  ScopedStartupContext startup_context(startup, main);
  const std::string lr = options.learning_rate_var.empty()
                             ? CreateLearningRate(main, startup, options.learning_rate)
                             : options.learning_rate_var;
  std::vector<const Target*> trainable;
  std::vector<Accumulators> accumulators;
  for (const Target& t : targets) {
    if (t.stop_gradient) continue;
    trainable.push_back(&t);
    accumulators.push_back(CreateAccumulators(main, startup, t, options));
  }
  ScopedOpRole role(main, kOptimize);
  for (size_t i = 0; i < trainable.size(); ++i) {
    ScopedNamescope scope(main, NextNamescope(main, "optimizer"));
    ScopedDevice device(main, trainable[i]->device);
    AppendUpdate(main, *trainable[i], accumulators[i], lr, options);
  }
  return Status::Ok();
}

}  // namespace irm::oldir
