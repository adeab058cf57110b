// Learning-rate schedules as Paddle's static graph writes them into a training program: the decay
// functions of python/paddle/fluid/layers/learning_rate_scheduler.py (Paddle 1.x to 2.2; the
// LRScheduler classes of python/paddle/optimizer/lr.py that replaced them compute the rate in
// Python and set the var before each run, so they write no ops). Every op is appended under
// `_lr_schedule_guard` (op_role LRSched, op_role_var empty).
//
// Both decays count steps with _decay_step_counter: the persistable int64 [1] var
// `@LR_DECAY_COUNTER@` (stop_gradient), initialised to -1 in startup by fill_constant with
// force_cpu (autoincreased_step_counter's Constant(begin - 1, force_cpu=True)), an `increment`
// (step 1.0) prepended to the main program's root block — after the executor's feed ops, which
// are prepended later — and a `cast` to float32 ("cast_N.tmp_0"). So the first step sees 0.
//
//  - piecewise_decay(boundaries, values): the persistable float32 [1] var `learning_rate`
//    (create_global_var(name="learning_rate"), 0.0 in startup), then a Switch: per boundary b_i a
//    fill_constant of b_i (force_cpu, "fill_constant_N.tmp_0"), `less_than(step, b_i)` ("tmp_N",
//    bool) and a `conditional_block` (is_scalar_condition) whose sub-block fill_constants v_i
//    into `learning_rate`; its condition is `step < b_0` for the first case and
//    `logical_and(not_prev, step < b_i)` after, where not_prev is `logical_not(step < b_0)`, then
//    `logical_and(not_prev, logical_not(step < b_i))` ("logical_not_N.tmp_0",
//    "logical_and_N.tmp_0"); the default case's block fills v_last under the last not_prev.
//    ConditionalBlock.complete lists what the sub-block reads (Input: nothing here) and writes
//    (Out: `learning_rate`), and a STEP_SCOPES var "_generated_var_N" as Scope.
//  - exponential_decay(learning_rate, decay_steps, decay_rate, staircase):
//    lr * decay_rate ** (step / decay_steps), with Variable's scalar operators of Paddle 1.x
//    (math_op_patch.py): `step / decay_steps` is scale(1 / decay_steps) ("tmp_N"), staircase
//    adds `floor` ("floor_N.tmp_0"), `decay_rate ** x` is a fill_constant of decay_rate
//    (create_scalar, "tmp_N", stop_gradient) and elementwise_pow(X=that, Y=x) ("tmp_N"), and `lr *
//    ...` is scale(lr) ("tmp_N"): that last var is the rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "oldir/models/model.h"

namespace irm::oldir::models {

enum class LrDecay { kConstant, kPiecewise, kExponential };

const char* LrDecayName(LrDecay decay);  // "constant", "piecewise", "exponential"
std::optional<LrDecay> LrDecayFromName(std::string_view name);

struct LrSchedule {
  LrDecay decay = LrDecay::kConstant;  // constant: the optimizer's own learning_rate_N
  // piecewise: boundaries in steps, ascending, and one more value than boundaries.
  std::vector<int64_t> boundaries = {2};
  std::vector<float> values = {0.1f, 0.01f};
  // exponential
  float learning_rate = 0.1f;
  int64_t decay_steps = 2;
  float decay_rate = 0.5f;
  bool staircase = false;
};

// The step counter's name (fluid's _decay_step_counter).
inline constexpr const char* kLrDecayCounter = "@LR_DECAY_COUNTER@";

// Appends `schedule` (not kConstant) to model->main (and its initialisers to model->startup) and
// returns the var holding the rate. kInvalidArgument for piecewise boundaries that are not
// ascending or values not one more than them, or a non-positive decay_steps; nothing is appended
// then. Call it once the feed ops are in place: the increment goes after them.
StatusOr<std::string> AppendLrSchedule(ModelPrograms* model, const LrSchedule& schedule);

}  // namespace irm::oldir::models
