// The pipeline_order computations of PyTorch's schedule classes, one function per class, each
// following its `_get_pipeline_order` / `_calculate_single_rank_operations` step by step.
#include "schedules/action_generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "schedules/action_lower.h"

namespace irm::schedules {
namespace {

using Steps = std::vector<std::optional<Action>>;
using T = ActionType;

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
}

void Idle(Steps& steps, int count) {
  for (int i = 0; i < count; ++i) steps.emplace_back(std::nullopt);
}

void Push(Steps& steps, int stage, ActionType type, int micro_batch) {
  steps.emplace_back(Action::Make(stage, type, micro_batch));
}

// ScheduleGPipe._get_pipeline_order.
Steps GPipeRank(int pp, int m, int rank) {
  Steps steps;
  Idle(steps, rank);
  for (int mb = 0; mb < m; ++mb) Push(steps, rank, T::kForward, mb);
  Idle(steps, 3 * (pp - 1 - rank));
  for (int mb = 0; mb < m; ++mb) Push(steps, rank, T::kFullBackward, mb);
  return AddReduceGrad(steps, m);
}

// Schedule1F1B._get_pipeline_order.
Steps OneFOneBRank(int pp, int m, int rank, bool upstream_last_rank) {
  Steps steps;
  Idle(steps, rank);
  const int num_forward = pp - 1 - rank;
  int forward_mb = 0;
  for (int i = 0; i < num_forward; ++i) {
    Push(steps, rank, T::kForward, i);
    forward_mb = i;
  }
  // PyTorch bumps the counter before each steady forward, so a rank without warm-up forwards
  // starts at 1 (see GenerateOptions); starting at -1 gives forward 0 as its runtime does.
  if (num_forward == 0 && !upstream_last_rank) forward_mb = -1;
  Idle(steps, std::max(0, 2 * (pp - 1 - rank)));
  int backward_mb = 0;
  for (int remaining = m - num_forward; remaining > 0; --remaining) {
    Push(steps, rank, T::kForward, ++forward_mb);
    Push(steps, rank, T::kFullBackward, backward_mb++);
  }
  while (backward_mb < m) {
    Idle(steps, 1);
    Push(steps, rank, T::kFullBackward, backward_mb++);
  }
  return AddReduceGrad(steps, m);
}

// ScheduleLoopedBFS._calculate_single_rank_operations.
Steps LoopedBfsRank(int pp, int m, int n_local, int rank) {
  Steps steps;
  Idle(steps, rank);
  for (int local = 0; local < n_local; ++local) {
    for (int mb = 0; mb < m; ++mb) Push(steps, rank + local * pp, T::kForward, mb);
  }
  Idle(steps, 2 * (pp - 1 - rank));
  for (int local = n_local - 1; local >= 0; --local) {
    for (int mb = m - 1; mb >= 0; --mb) Push(steps, rank + local * pp, T::kFullBackward, mb);
  }
  return steps;
}

// _get_warmup_ops.
int WarmupOps(int rank, int n_local, int mb_per_round, int pp, int m, int multiply_factor) {
  const int warmup = (n_local - 1) * mb_per_round + multiply_factor * ((pp - 1) - rank);
  return std::min(warmup, m * n_local);
}

// _get_1f1b_rank_ops, shared by Interleaved1F1B and InterleavedZeroBubble.
Steps Interleaved1F1BRank(int pp, int m, int n_local, int rank, bool zero_bubble) {
  const int rounds = std::max(1, m / pp);
  const int mb_per_round = m / rounds;
  const int warmup = WarmupOps(rank, n_local, mb_per_round, pp, m, zero_bubble ? 1 : 2);
  const int microbatch_ops = n_local * m;
  const int fwd_bwd = microbatch_ops - warmup;
  const int cooldown = microbatch_ops - fwd_bwd;
  const int num_1f1b_microbatches = zero_bubble ? rank : 0;
  auto forward_stage = [&](int step) { return ((step / mb_per_round) % n_local) * pp + rank; };
  auto backward_stage = [&](int step) {
    return (n_local - 1 - ((step - warmup) / mb_per_round) % n_local) * pp + rank;
  };
  const ActionType backward_type = zero_bubble ? T::kBackwardInput : T::kFullBackward;

  std::map<int, int> fwd_mb, bwd_mb, weight_mb;  // stage -> next micro-batch
  Steps steps;
  Idle(steps, rank);
  const int post_warmup =
      zero_bubble ? pp - rank - 1 : (n_local * pp + 2 * (pp - 1 - rank)) - (warmup + rank);
  std::vector<int> backward_op_ids;
  size_t weight_op_count = 0;
  auto push_weight = [&]() {
    const int stage = backward_stage(backward_op_ids[weight_op_count]);
    Push(steps, stage, T::kBackwardWeight, weight_mb[stage]++);
    ++weight_op_count;
  };
  const int total = warmup + fwd_bwd + cooldown;
  for (int op = 0; op < total; ++op) {
    if (op < warmup) {
      const int stage = forward_stage(op);
      Push(steps, stage, T::kForward, fwd_mb[stage]++);
      if (op == warmup - 1) Idle(steps, post_warmup);
      continue;
    }
    if (op < warmup + fwd_bwd) {
      const int stage = forward_stage(op);
      Push(steps, stage, T::kForward, fwd_mb[stage]++);
    } else if (!zero_bubble) {
      Idle(steps, 1);
    }
    const int stage = backward_stage(op);
    Push(steps, stage, backward_type, bwd_mb[stage]++);
    backward_op_ids.push_back(op);
    if (zero_bubble && op - warmup >= num_1f1b_microbatches) push_weight();
  }
  while (zero_bubble && weight_op_count < backward_op_ids.size()) push_weight();
  return steps;
}

// ScheduleInterleavedZeroBubble._add_bubbles_to_actions: ranks step in lock-step; a forward whose
// previous stage's forward has not been seen in an earlier step waits one idle step.
StatusOr<ActionSchedule> AddBubbles(const ActionSchedule& order, int num_stages) {
  const int pp = static_cast<int>(order.ranks.size());
  using Key = std::tuple<int, ActionType, int>;
  std::set<Key> seen;
  ActionSchedule result;
  result.ranks.resize(pp);
  std::vector<size_t> next(pp, 0);
  size_t total = 0;
  for (const Steps& steps : order.ranks) total += steps.size();
  // Each round either advances a pointer or waits on a forward whose producer is still ahead; a
  // round budget far above any real schedule's length stops an order that could never finish.
  const size_t budget = 4 * (total + 1) * static_cast<size_t>(pp + 1);
  for (size_t round = 0;; ++round) {
    if (round > budget) {
      return Status(StatusCode::kInternal, Location{},
                    "zero-bubble bubble insertion does not terminate");
    }
    bool stop = true;
    std::set<Key> seen_now;
    for (int rank = 0; rank < pp; ++rank) {
      const Steps& steps = order.ranks[rank];
      if (next[rank] >= steps.size()) continue;
      stop = false;
      const std::optional<Action>& action = steps[next[rank]];
      if (!action.has_value()) {
        ++next[rank];
        result.ranks[rank].emplace_back(std::nullopt);
        continue;
      }
      bool bubble = false;
      if (action->type == T::kForward) {
        bubble = action->stage != 0 &&
                 !seen.contains(Key{action->stage - 1, T::kForward, action->micro_batch});
      } else if (action->type == T::kFullBackward) {
        bubble =
            action->stage == num_stages - 1
                ? !seen.contains(Key{action->stage, T::kForward, action->micro_batch})
                : !seen.contains(Key{action->stage + 1, T::kFullBackward, action->micro_batch});
      }
      if (bubble) {
        result.ranks[rank].emplace_back(std::nullopt);
      } else {
        result.ranks[rank].push_back(action);
        if (action->micro_batch >= 0) {
          seen_now.insert(Key{action->stage, action->type, action->micro_batch});
        }
        ++next[rank];
      }
    }
    seen.insert(seen_now.begin(), seen_now.end());
    if (stop) break;
  }
  return result;
}

// ScheduleZBVZeroBubble._calculate_single_rank_operations.
Steps ZbvRank(int pp, int m, int num_stages, int rank) {
  const int n_micro = std::max(2 * pp - 1, m);
  Steps steps;
  Idle(steps, rank);
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  const int chunk0 = rank;
  const int chunk1 = num_stages - 1 - rank;
  for (int i = 0; i < 2 * (pp - rank) - 1; ++i) Push(steps, chunk0, T::kForward, f0++);
  for (int i = 0; i < rank; ++i) {
    Push(steps, chunk1, T::kForward, f1++);
    Push(steps, chunk0, T::kForward, f0++);
  }
  for (int i = 0; i < pp - rank; ++i) {
    Push(steps, chunk1, T::kForward, f1++);
    Push(steps, chunk1, T::kBackwardInput, b1);
    Push(steps, chunk1, T::kBackwardWeight, b1);
    ++b1;
  }
  while (f1 < f0 || f0 < n_micro) {
    if (f0 < n_micro) Push(steps, chunk0, T::kForward, f0++);
    Push(steps, chunk0, T::kBackwardInput, b0);
    Push(steps, chunk0, T::kBackwardWeight, b0);
    ++b0;
    Push(steps, chunk1, T::kForward, f1++);
    Push(steps, chunk1, T::kBackwardInput, b1);
    Push(steps, chunk1, T::kBackwardWeight, b1);
    ++b1;
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < rank; ++i) {
    Push(steps, chunk0, T::kBackwardInput, b0++);
    Push(steps, chunk1, T::kBackwardInput, b1++);
  }
  for (int i = 0; i < pp - rank; ++i) {
    Push(steps, chunk0, T::kBackwardInput, b0++);
    Push(steps, chunk0, T::kBackwardWeight, w0++);
  }
  while (w1 < b1) Push(steps, chunk1, T::kBackwardWeight, w1++);
  while (w0 < b0) Push(steps, chunk0, T::kBackwardWeight, w0++);
  // n_micro may exceed m: the micro-batches beyond m become idle steps.
  for (std::optional<Action>& step : steps) {
    if (step.has_value() && step->micro_batch >= m) step.reset();
  }
  return steps;
}

// ScheduleDualPipeV._calculate_single_rank_operations.
Steps DualPipeVRank(int pp, int m, int rank) {
  Steps steps;
  const int stage0 = rank;
  const int stage1 = 2 * pp - 1 - rank;
  std::map<std::pair<int, ActionType>, int> counters;  // (stage, type) -> next micro-batch
  std::deque<std::pair<int, int>> weight_queue;        // (stage, micro-batch) awaiting W

  auto count_backward = [&](int stage) {
    ++counters[{stage, T::kBackwardInput}];
    ++counters[{stage, T::kBackwardWeight}];
  };
  // A full backward takes its micro-batch from the I counter and advances both I and W.
  auto add = [&](int stage, ActionType type) {
    const ActionType key_type = type == T::kFullBackward ? T::kBackwardInput : type;
    int& counter = counters[{stage, key_type}];
    const int mb = counter;
    Push(steps, stage, type, mb);
    if (type == T::kFullBackward) {
      count_backward(stage);
    } else {
      if (type == T::kBackwardInput) weight_queue.emplace_back(stage, mb);
      counter = mb + 1;
    }
  };
  auto add_overlap = [&](int forward_stage, int backward_stage) {
    const int forward_mb = counters[{forward_stage, T::kForward}];
    const int backward_mb = counters[{backward_stage, T::kBackwardInput}];
    steps.emplace_back(
        Action::Overlap({Action::Make(forward_stage, T::kForward, forward_mb),
                         Action::Make(backward_stage, T::kFullBackward, backward_mb)}));
    counters[{forward_stage, T::kForward}] = forward_mb + 1;
    count_backward(backward_stage);
  };
  auto add_pending_weight = [&]() {
    if (weight_queue.empty()) return;
    const auto [stage, mb] = weight_queue.front();
    weight_queue.pop_front();
    Push(steps, stage, T::kBackwardWeight, mb);
    ++counters[{stage, T::kBackwardWeight}];
  };

  for (int i = 0; i < (pp - rank - 1) * 2; ++i) add(stage0, T::kForward);  // 1: F0
  for (int i = 0; i < rank + 1; ++i) {                                     // 2: F0 F1
    add(stage0, T::kForward);
    add(stage1, T::kForward);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 3: I1 W F1
    add(stage1, T::kBackwardInput);
    add_pending_weight();
    add(stage1, T::kForward);
  }
  const int step4 = m - pp * 2 + rank + 1;  // 4: (F0;B1) (F1;B0)
  for (int i = 0; i < step4; ++i) {
    if (i == 0 && rank == pp - 1) {
      add(stage0, T::kForward);  // the last rank's first pair is not overlapped
      add(stage1, T::kFullBackward);
    } else {
      add_overlap(stage0, stage1);
    }
    add_overlap(stage1, stage0);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 5: B1 (F1;B0)
    add(stage1, T::kFullBackward);
    add_overlap(stage1, stage0);
  }
  const int step6 = rank + 1;  // 6: B1 B0, switching to I halfway by rank parity
  bool zero_bubble = false;
  for (int i = 0; i < step6; ++i) {
    if (i == step6 / 2 && rank % 2 == 1) zero_bubble = true;
    add(stage1, zero_bubble ? T::kBackwardInput : T::kFullBackward);
    if (i == step6 / 2 && rank % 2 == 0) zero_bubble = true;
    add(stage0, zero_bubble ? T::kBackwardInput : T::kFullBackward);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 7: W B0
    add_pending_weight();
    add(stage0, zero_bubble ? T::kBackwardInput : T::kFullBackward);
  }
  for (int i = 0; i < rank + 1; ++i) add_pending_weight();  // 8: W
  return steps;
}

struct Spelling {
  PyTorchSchedule schedule;
  const char* name;
};
constexpr Spelling kNames[] = {
    {PyTorchSchedule::kGPipe, "GPipe"},
    {PyTorchSchedule::k1F1B, "1F1B"},
    {PyTorchSchedule::kInterleaved1F1B, "Interleaved1F1B"},
    {PyTorchSchedule::kLoopedBFS, "LoopedBFS"},
    {PyTorchSchedule::kInterleavedZeroBubble, "InterleavedZeroBubble"},
    {PyTorchSchedule::kZBVZeroBubble, "ZBVZeroBubble"},
    {PyTorchSchedule::kDualPipeV, "DualPipeV"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const std::vector<PyTorchSchedule>& AllPyTorchSchedules() {
  static const std::vector<PyTorchSchedule> all = [] {
    std::vector<PyTorchSchedule> v;
    for (const Spelling& s : kNames) v.push_back(s.schedule);
    return v;
  }();
  return all;
}

const char* PyTorchScheduleName(PyTorchSchedule schedule) {
  for (const Spelling& s : kNames) {
    if (s.schedule == schedule) return s.name;
  }
  return "?";
}

StatusOr<PyTorchSchedule> ParsePyTorchSchedule(std::string_view name) {
  for (const Spelling& s : kNames) {
    if (Lower(name) == Lower(s.name)) return s.schedule;
  }
  std::string names;
  for (const Spelling& s : kNames) names += std::string(names.empty() ? "" : ", ") + s.name;
  return Invalid(fmt::format("unknown schedule name '{}'; the valid options are {}", name, names));
}

StageStyle PyTorchScheduleStageStyle(PyTorchSchedule schedule) {
  return schedule == PyTorchSchedule::kZBVZeroBubble || schedule == PyTorchSchedule::kDualPipeV
             ? StageStyle::kV
             : StageStyle::kLoop;
}

int DefaultStagesPerRank(PyTorchSchedule schedule) {
  return schedule == PyTorchSchedule::kGPipe || schedule == PyTorchSchedule::k1F1B ? 1 : 2;
}

StatusOr<GeneratedSchedule> GeneratePyTorchSchedule(PyTorchSchedule schedule, int pp,
                                                    int micro_batches, int stages_per_rank,
                                                    const GenerateOptions& options) {
  const char* name = PyTorchScheduleName(schedule);
  const int m = micro_batches;
  const int n_local = stages_per_rank;
  if (pp < 1 || m < 1 || n_local < 1) {
    return Invalid(
        fmt::format("{} needs pp, micro-batches and stages per rank >= 1, got pp {}, "
                    "{} micro-batches, {} stages per rank",
                    name, pp, m, n_local));
  }
  // Bounds that keep every count and index inside an int; far beyond any real pipeline.
  if (pp > 4096 || m > 65536 || n_local > 256) {
    return Invalid(fmt::format("{}: pp {}, {} micro-batches or {} stages per rank is too large",
                               name, pp, m, n_local));
  }
  const bool single = DefaultStagesPerRank(schedule) == 1;
  if (single && n_local != 1) {
    return Invalid(
        fmt::format("{} is a single-stage schedule: one stage per rank, got {}", name, n_local));
  }
  const int num_stages = pp * n_local;
  const StageStyle style = PyTorchScheduleStageStyle(schedule);
  if (style == StageStyle::kV && n_local != 2) {
    return Invalid(fmt::format("{} requires exactly 2 stages per rank, but got {}", name, n_local));
  }
  if (schedule == PyTorchSchedule::k1F1B && m < num_stages) {
    return Invalid(
        fmt::format("Number of microbatches ({}) must be greater than or equal to the "
                    "number of stages ({})",
                    m, num_stages));
  }
  if (schedule == PyTorchSchedule::kDualPipeV && m < num_stages) {
    return Invalid(
        fmt::format("DualPipeV requires at least as many microbatches as stages, but "
                    "got {} microbatches and {} stages",
                    m, num_stages));
  }
  if (schedule == PyTorchSchedule::kInterleaved1F1B ||
      schedule == PyTorchSchedule::kInterleavedZeroBubble) {
    const int rounds = std::max(1, m / pp);
    if (m % rounds != 0) {
      return Invalid(
          fmt::format("{} requires the number of microbatches to be a multiple of the "
                      "number of rounds ({}), but got {}",
                      name, rounds, m));
    }
  }
  GeneratedSchedule out;
  out.num_stages = num_stages;
  out.style = style;
  IRM_ASSIGN_OR_RETURN(out.stage_to_rank, StageToRankMapping(pp, num_stages, style));
  out.order.ranks.resize(pp);
  for (int rank = 0; rank < pp; ++rank) {
    Steps& steps = out.order.ranks[rank];
    switch (schedule) {
      case PyTorchSchedule::kGPipe:
        steps = GPipeRank(pp, m, rank);
        break;
      case PyTorchSchedule::k1F1B:
        steps = OneFOneBRank(pp, m, rank, options.upstream_1f1b_last_rank);
        break;
      case PyTorchSchedule::kInterleaved1F1B:
        steps = Interleaved1F1BRank(pp, m, n_local, rank, /*zero_bubble=*/false);
        break;
      case PyTorchSchedule::kLoopedBFS:
        steps = LoopedBfsRank(pp, m, n_local, rank);
        break;
      case PyTorchSchedule::kInterleavedZeroBubble:
        steps = Interleaved1F1BRank(pp, m, n_local, rank, /*zero_bubble=*/true);
        break;
      case PyTorchSchedule::kZBVZeroBubble:
        steps = ZbvRank(pp, m, num_stages, rank);
        break;
      case PyTorchSchedule::kDualPipeV:
        steps = DualPipeVRank(pp, m, rank);
        break;
    }
  }
  if (schedule == PyTorchSchedule::kInterleavedZeroBubble) {
    IRM_ASSIGN_OR_RETURN(out.order, AddBubbles(out.order, num_stages));
  }
  return out;
}

}  // namespace irm::schedules
