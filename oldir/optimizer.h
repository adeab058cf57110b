// Legacy optimizers, appended to the main program with op_role Optimize (2) and op_role_var
// [param, grad], as Paddle's static optimizers (python/paddle/optimizer/*.py) write them:
//   sgd       Param, Grad, LearningRate -> ParamOut
//   momentum  Param, Grad, Velocity, LearningRate -> ParamOut, VelocityOut (mu, use_nesterov, ...)
//   adam      Param, Grad, LearningRate, Moment1, Moment2, Beta1Pow, Beta2Pow -> ParamOut,
//             Moment1Out, Moment2Out, Beta1PowOut, Beta2PowOut (beta1, beta2, epsilon, ...)
//   adamw     adam's slots plus coeff, lr_ratio, with_decay
// Accumulators are persistable vars named like Paddle's (`<param>_moment1_0`,
// `<param>_beta1_pow_acc_0`, `<param>_velocity_0`), initialised by fill_constant in the startup
// program; the learning rate is a persistable var `learning_rate_0` filled in startup. Optional
// global-norm gradient clipping (ClipGradByGlobalNorm) is inserted before the updates as Paddle
// builds it (squared_l2_norm / sum / sqrt / elementwise_max / elementwise_div / elementwise_mul).
#pragma once

#include <optional>
#include <string>
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
  float beta1 = 0.9f;  // adam, adamw
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.01f;             // adamw: coeff
  float lr_ratio = 1.0f;                  // adamw
  std::optional<float> clip_global_norm;  // ClipGradByGlobalNorm(clip_norm)
};

// Appends the updates of `params_grads` (from AppendBackward) to `main`'s root block and the
// accumulators' and learning rate's initialisers to `startup`.
Status AppendOptimizer(ProgramBuilder& main, ProgramBuilder& startup,
                       const std::vector<ParamGrad>& params_grads, const OptimizerOptions& options);

}  // namespace irm::oldir
