// Legacy optimizers, appended to the main program with op_role Optimize (2) and op_role_var
// [param, grad], as Paddle's static optimizers (python/paddle/optimizer/*.py) write them:
//   sgd       Param, Grad, LearningRate -> ParamOut (multi_precision)
//   momentum  Param, Grad, Velocity, LearningRate -> ParamOut, VelocityOut (mu, use_nesterov,
//             regularization_method, regularization_coeff, multi_precision, rescale_grad)
//   adam      Param, Grad, LearningRate, Moment1, Moment2, Beta1Pow, Beta2Pow -> ParamOut,
//             Moment1Out, Moment2Out, Beta1PowOut, Beta2PowOut (beta1, beta2, epsilon, lazy_mode,
//             min_row_size_to_use_multithread, multi_precision, use_global_beta_pow)
//   adamw     adam's slots plus coeff, lr_ratio, with_decay
// The outputs are the inputs (in place); MasterParam/MasterParamOut are written only for an
// fp16/bf16 parameter under multi_precision, as Paddle does.
//
// Accumulators are persistable vars named like Paddle's _add_accumulator (`<param>_moment1_0`,
// `<param>_moment2_0`, `<param>_beta1_pow_acc_0`, `<param>_beta2_pow_acc_0`,
// `<param>_velocity_0`), declared in both programs and initialised by fill_constant in the
// startup program (beta pows with op_device "cpu"); the learning rate is a persistable FP32 [1]
// var `learning_rate_N` filled in startup. Optional global-norm gradient clipping
// (ClipGradByGlobalNorm._static_clip) is inserted before the updates, under namescope
// /gradient_clip/ with op_role Optimize: squared_l2_norm per grad, sum, sqrt, fill_constant,
// elementwise_max, elementwise_div, then an in-place elementwise_mul per grad (the clipped grad
// keeps its name, as in Paddle 2.x).
//
// As Optimizer.apply_gradients does, the pairs are handled in parameter-name order, each update
// under its own namescope (/optimizer/, /optimizer_1/, ...). Names (learning_rate_N, accumulators,
// clip temporaries) come from the main builder's UniqueNameGenerator, which stands in for Paddle's
// process-wide unique_name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "oldir/backward.h"
#include "oldir/builder.h"

namespace irm::oldir {

enum class OptimizerKind { kSgd, kMomentum, kAdam, kAdamW };

const char* OptimizerKindName(OptimizerKind kind);  // "sgd", "momentum", "adam", "adamw"
std::optional<OptimizerKind> OptimizerKindFromName(std::string_view name);

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  float learning_rate = 0.01f;
  float momentum = 0.9f;  // momentum: mu
  bool use_nesterov = false;
  // momentum: Momentum(weight_decay=L2Decay(coeff)), which Paddle fuses into the momentum op
  // (regularization_method "l2_decay", regularization_coeff) rather than appending its own ops.
  std::optional<float> l2_decay = std::nullopt;
  float beta1 = 0.9f;  // adam, adamw
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.01f;                            // adamw: coeff
  float lr_ratio = 1.0f;                                 // adamw
  std::optional<float> clip_global_norm = std::nullopt;  // ClipGradByGlobalNorm(clip_norm)
  // Paddle's multi_precision: fp16/bf16 parameters get an fp32 master weight
  // (`<param>_fp32_master_0`, cast from the parameter in startup) that the update reads and writes
  // and the accumulators follow.
  bool multi_precision = false;
  // A var of main's root block to read as the learning rate (a decayed rate an LR schedule
  // writes: Optimizer._create_global_learning_rate keeps a Variable as it is); empty: a constant
  // learning_rate_N made from `learning_rate`.
  std::string learning_rate_var = {};
};

// Every optimizer kind with its defaults, each without and with global-norm clipping (norm 1):
// the configurations the model-zoo tests sweep.
std::vector<OptimizerOptions> EveryOptimizerConfiguration();

// Appends the updates of `params_grads` (from AppendBackward) to `main`'s root block and the
// accumulators' and learning rate's initialisers to `startup`. Every parameter and gradient must be
// declared in main's root block (kNotFound); adam's beta1/beta2 must lie in [0, 1) and epsilon be
// >= 0, a parameter may be listed once and l2_decay is momentum's only (kInvalidArgument);
// learning_rate_var, when given, must be declared in main's root block (kNotFound); clipping
// supports dense fp32 or fp64 gradients of one dtype (kUnimplemented). On error neither program is
// changed.
Status AppendOptimizer(ProgramBuilder& main, ProgramBuilder& startup,
                       const std::vector<ParamGrad>& params_grads, const OptimizerOptions& options);

}  // namespace irm::oldir
