// The lowering passes of PyTorch's `_PipelineScheduleRuntime`, each following its Python
// function step by step (see action_lower.h for what each does).
#include "schedules/action_lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "schedules/action_validate.h"

namespace irm::schedules {
namespace {

using Steps = std::vector<std::optional<Action>>;
using T = ActionType;
// A plain action as PyTorch's sets hold it; an OVERLAP_F_B container is never looked up.
using Key = std::tuple<int, ActionType, int>;
Key KeyOf(const Action& a) { return {a.stage, a.type, a.micro_batch}; }

}  // namespace

StatusOr<ActionSchedule> AddSendRecv(const ActionSchedule& compute,
                                     const std::vector<int>& stage_to_rank) {
  const int num_stages = static_cast<int>(stage_to_rank.size());
  const int pp = static_cast<int>(compute.ranks.size());
  // Every stage named must map to a rank of this schedule, or a recv would have nowhere to go.
  for (int rank = 0; rank < pp; ++rank) {
    const Steps& steps = compute.ranks[rank];
    for (size_t step = 0; step < steps.size(); ++step) {
      if (!steps[step].has_value()) continue;
      const std::vector<Action> single = {*steps[step]};
      const std::vector<Action>& parts =
          steps[step]->sub_actions.empty() ? single : steps[step]->sub_actions;
      for (const Action& a : parts) {
        if (a.stage < 0 || a.stage >= num_stages || stage_to_rank[a.stage] < 0 ||
            stage_to_rank[a.stage] >= pp) {
          return Status(StatusCode::kInvalid,
                        Location{}.With(fmt::format("rank {}, step {}", rank, step)),
                        fmt::format("{} names stage {}, which maps to no rank of the {}-rank "
                                    "schedule",
                                    a.ToString(), a.stage, pp));
        }
      }
    }
  }
  auto rank_of = [&](int stage) { return stage_to_rank[stage]; };
  auto has_comms = [&](const Action& a) {
    if (a.type == T::kForward) {
      return a.stage != num_stages - 1 && rank_of(a.stage + 1) != rank_of(a.stage);
    }
    if (a.type == T::kBackwardInput || a.type == T::kFullBackward) {
      return a.stage != 0 && rank_of(a.stage - 1) != rank_of(a.stage);
    }
    return false;
  };
  // "We don't put our own recv ops in the schedule, we let a sender on another rank put our recv
  // ops in place": an action waits until its input is on this rank.
  auto ready = [&](const Action& a, const std::set<Key>& prev) {
    const int mb = a.micro_batch;
    if (a.type == T::kForward && a.stage != 0) {
      return prev.contains({a.stage, T::kRecvF, mb}) ||
             prev.contains({a.stage - 1, T::kForward, mb});
    }
    if ((a.type == T::kBackwardInput || a.type == T::kFullBackward) && a.stage != num_stages - 1) {
      return prev.contains({a.stage, T::kRecvB, mb}) ||
             prev.contains({a.stage + 1, T::kBackwardInput, mb}) ||
             prev.contains({a.stage + 1, T::kFullBackward, mb});
    }
    return true;
  };

  ActionSchedule out;
  out.ranks.resize(pp);
  std::vector<std::set<Key>> prev(pp);
  std::vector<size_t> head(pp, 0);
  auto done = [&](int rank) { return head[rank] >= compute.ranks[rank].size(); };
  while (true) {
    bool any_left = false;
    bool progress = false;
    for (int rank = 0; rank < pp; ++rank) {
      if (done(rank)) continue;
      any_left = true;
      const std::optional<Action>& action = compute.ranks[rank][head[rank]];
      if (action.has_value()) {
        const std::vector<Action> single = {*action};
        const std::vector<Action>& parts =
            action->sub_actions.empty() ? single : action->sub_actions;
        if (!std::all_of(parts.begin(), parts.end(),
                         [&](const Action& a) { return ready(a, prev[rank]); })) {
          continue;
        }
        out.ranks[rank].push_back(action);
        for (const Action& a : parts) {
          prev[rank].insert(KeyOf(a));
          if (!has_comms(a)) continue;
          const bool fwd = a.type == T::kForward;
          const Action send = Action::Make(a.stage, fwd ? T::kSendF : T::kSendB, a.micro_batch);
          const Action recv = Action::Make(fwd ? a.stage + 1 : a.stage - 1,
                                           fwd ? T::kRecvF : T::kRecvB, a.micro_batch);
          out.ranks[rank].push_back(send);
          prev[rank].insert(KeyOf(send));
          const int peer = rank_of(recv.stage);
          out.ranks[peer].push_back(recv);
          prev[peer].insert(KeyOf(recv));
        }
      }
      ++head[rank];
      progress = true;
    }
    if (!any_left) break;
    if (!progress) {
      Status status(StatusCode::kInvalid, Location{},
                    "malformed compute schedule, can't schedule sends/recvs: no rank can make "
                    "progress");
      for (int rank = 0; rank < pp; ++rank) {
        if (done(rank)) continue;
        const Action& a = *compute.ranks[rank][head[rank]];
        status.AddNote(fmt::format("rank {}, step {}: {} waits for an input that no rank sends",
                                   rank, head[rank], a.ToString()));
      }
      return status;
    }
  }
  return out;
}

Steps MergeBw(const Steps& actions) {
  Steps merged;
  std::vector<Action> rest;
  for (const std::optional<Action>& a : actions) {
    if (a.has_value()) rest.push_back(*a);
  }
  for (size_t i = 0; i < rest.size(); ++i) {
    const Action& a = rest[i];
    if (a.type == T::kBackwardInput && i + 1 < rest.size()) {
      const Action& next = rest[i + 1];
      if (next.type == T::kBackwardWeight && next.stage == a.stage &&
          next.micro_batch == a.micro_batch && next.sub_actions.empty() && a.sub_actions.empty()) {
        merged.emplace_back(Action::Make(a.stage, T::kFullBackward, a.micro_batch));
        ++i;
        continue;
      }
    }
    merged.emplace_back(a);
  }
  return merged;
}

ActionSchedule MergeBw(const ActionSchedule& schedule) {
  ActionSchedule out;
  for (const Steps& steps : schedule.ranks) out.ranks.push_back(MergeBw(steps));
  return out;
}

Steps AddReduceGrad(const Steps& actions, int micro_batches) {
  Steps out;
  std::vector<std::pair<int, int>> counts;  // (stage, B and W seen), in order of first sight
  auto count = [&](const Action& a, std::vector<int>& to_reduce) {
    if (a.type != T::kFullBackward && a.type != T::kBackwardWeight) return;
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first == a.stage; });
    if (it == counts.end()) it = counts.insert(counts.end(), {a.stage, 0});
    if (++it->second == micro_batches) to_reduce.push_back(a.stage);
  };
  for (const std::optional<Action>& a : actions) {
    if (!a.has_value()) continue;
    out.push_back(a);
    std::vector<int> to_reduce;
    if (a->type == T::kOverlapFB && !a->sub_actions.empty()) {
      for (const Action& sub : a->sub_actions) count(sub, to_reduce);
    } else {
      count(*a, to_reduce);
    }
    for (int stage : to_reduce) out.emplace_back(Action::Make(stage, T::kReduceGrad));
  }
  return out;
}

Steps AddUnshardReshard(const Steps& actions, int max_active_stages) {
  // The next `count` distinct stages from position `from` on; an overlapped pair adds all its
  // stages before the count is checked, as PyTorch's next_stage_indices does.
  auto next_stages = [&](size_t from, int count) {
    std::vector<int> ret;
    for (size_t i = from; i < actions.size(); ++i) {
      if (!actions[i].has_value()) continue;
      const Action& a = *actions[i];
      if (a.type == T::kOverlapFB && !a.sub_actions.empty()) {
        for (const Action& sub : a.sub_actions) {
          if (std::find(ret.begin(), ret.end(), sub.stage) == ret.end()) ret.push_back(sub.stage);
        }
        if (static_cast<int>(ret.size()) >= count) break;
      } else if (std::find(ret.begin(), ret.end(), a.stage) == ret.end()) {
        ret.push_back(a.stage);
        if (static_cast<int>(ret.size()) == count) break;
      }
    }
    return ret;
  };
  // PyTorch keeps the active stages in a Python set and evicts in its iteration order, which for
  // small non-negative ints is ascending; a sorted set gives the same order.
  std::set<int> active;
  Steps out;
  for (size_t i = 0; i < actions.size(); ++i) {
    if (!actions[i].has_value()) continue;
    const std::vector<int> next = next_stages(i, max_active_stages);
    std::vector<int> evict;
    for (int s : active) {
      if (std::find(next.begin(), next.end(), s) == next.end()) evict.push_back(s);
    }
    for (int s : evict) {
      active.erase(s);
      out.emplace_back(Action::Make(s, T::kReshard));
    }
    for (int s : next) {
      if (active.contains(s)) continue;
      active.insert(s);
      out.emplace_back(Action::Make(s, T::kUnshard));
    }
    out.push_back(actions[i]);
  }
  for (int s : std::vector<int>(active.begin(), active.end())) {
    out.emplace_back(Action::Make(s, T::kReshard));
  }
  return out;
}

StatusOr<ActionSchedule> LowerComputeSchedule(const ActionSchedule& compute, int pp, int num_stages,
                                              int micro_batches, const LowerOptions& options,
                                              const std::string& file) {
  IRM_ASSIGN_OR_RETURN(std::vector<int> stage_to_rank,
                       ValidateActionSchedule(compute, pp, num_stages, micro_batches, file));
  for (int rank = 0; rank < pp; ++rank) {
    const Steps& steps = compute.ranks[rank];
    for (size_t step = 0; step < steps.size(); ++step) {
      if (!steps[step].has_value()) continue;
      const ActionType type = steps[step]->type;
      if (!IsComputeType(type) && type != T::kReduceGrad) {
        return Status(StatusCode::kInvalid,
                      Location::File(file).With(fmt::format("rank {}, step {}", rank, step)),
                      fmt::format("expected compute-only schedule but found communication "
                                  "action '{}'",
                                  steps[step]->ToString()));
      }
    }
  }
  ActionSchedule passes = compute;
  for (Steps& steps : passes.ranks) {
    if (options.unshard_reshard) steps = AddUnshardReshard(steps, options.max_active_stages);
    if (options.reduce_grad) steps = AddReduceGrad(steps, micro_batches);
  }
  StatusOr<ActionSchedule> lowered = AddSendRecv(passes, stage_to_rank);
  if (!lowered.ok()) {
    Status status = lowered.status();
    return status.InFile(file);
  }
  return lowered;
}

}  // namespace irm::schedules
