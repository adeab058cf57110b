// _validate_schedule, step by step; the messages follow PyTorch's wording.
#include "schedules/action_validate.h"

#include <fmt/format.h>

#include <set>

namespace irm::schedules {
namespace {

struct StageCounts {
  std::set<int> f, b, i, w;
};

Location At(const std::string& file, int rank, int step) {
  Location loc = Location::File(file);
  loc.With(fmt::format("rank {}, step {}", rank, step));
  return loc;
}

}  // namespace

StatusOr<std::vector<int>> ValidateActionSchedule(const ActionSchedule& schedule, int pp,
                                                  int num_stages, int micro_batches,
                                                  const std::string& file) {
  if (static_cast<int>(schedule.ranks.size()) != pp) {
    return Status(StatusCode::kInvalid, Location::File(file),
                  fmt::format("schedule has incorrect number of ranks - expected {}, actual {}", pp,
                              schedule.ranks.size()));
  }
  if (num_stages < 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(file),
                  fmt::format("a schedule needs at least one stage, got {}", num_stages));
  }
  std::vector<StageCounts> counts(num_stages);
  std::vector<int> stage_to_rank(num_stages, -1);

  auto process = [&](const Action& a, int rank, int step) -> Status {
    const int s = a.stage;
    if (s < 0 || s >= num_stages) {
      return Status(StatusCode::kInvalid, At(file, rank, step),
                    fmt::format("{} names stage {}, outside the schedule's {} stages", a.ToString(),
                                s, num_stages));
    }
    const int mb = a.micro_batch;
    const bool compute = a.type == ActionType::kForward || a.type == ActionType::kFullBackward ||
                         a.type == ActionType::kBackwardInput ||
                         a.type == ActionType::kBackwardWeight;
    if (compute && (mb < 0 || mb >= micro_batches)) {
      return Status(StatusCode::kInvalid, At(file, rank, step),
                    fmt::format("{} names micro-batch {}, outside the {} micro-batches",
                                a.ToString(), mb, micro_batches));
    }
    StageCounts& c = counts[s];
    switch (a.type) {
      case ActionType::kForward:
        c.f.insert(mb);
        break;
      case ActionType::kFullBackward:
        if (!c.f.contains(mb)) {
          return Status(StatusCode::kInvalid, At(file, rank, step),
                        fmt::format("running full backward for stage {}, microbatch {} without "
                                    "first running forward",
                                    s, mb));
        }
        c.b.insert(mb);
        break;
      case ActionType::kBackwardInput:
        if (!c.f.contains(mb)) {
          return Status(StatusCode::kInvalid, At(file, rank, step),
                        fmt::format("running backward input for stage {}, microbatch {} without "
                                    "first running forward",
                                    s, mb));
        }
        c.i.insert(mb);
        break;
      case ActionType::kBackwardWeight:
        if (!c.i.contains(mb)) {
          return Status(StatusCode::kInvalid, At(file, rank, step),
                        fmt::format("running backward weight for stage {}, microbatch {} without "
                                    "first running backward input",
                                    s, mb));
        }
        c.w.insert(mb);
        break;
      default:
        break;
    }
    if (stage_to_rank[s] < 0) {
      stage_to_rank[s] = rank;
    } else if (stage_to_rank[s] != rank) {
      return Status(StatusCode::kInvalid, At(file, rank, step),
                    fmt::format("stage {} is assigned to both rank {} and rank {}", s, rank,
                                stage_to_rank[s]));
    }
    return Status::Ok();
  };

  for (int rank = 0; rank < pp; ++rank) {
    const auto& steps = schedule.ranks[rank];
    for (size_t step = 0; step < steps.size(); ++step) {
      if (!steps[step].has_value()) continue;
      const Action& action = *steps[step];
      if (action.sub_actions.empty()) {
        IRM_RETURN_IF_ERROR(process(action, rank, static_cast<int>(step)));
      } else {
        for (const Action& sub : action.sub_actions) {
          IRM_RETURN_IF_ERROR(process(sub, rank, static_cast<int>(step)));
        }
      }
    }
  }

  for (int s = 0; s < num_stages; ++s) {
    const StageCounts& c = counts[s];
    const Location loc = Location::File(file).With(fmt::format("stage {}", s));
    if (static_cast<int>(c.f.size()) != micro_batches) {
      return Status(StatusCode::kInvalid, loc,
                    fmt::format("got {} F microbatches for stage {}, expected {}", c.f.size(), s,
                                micro_batches));
    }
    if (c.i.size() != c.w.size()) {
      return Status(StatusCode::kInvalid, loc,
                    fmt::format("invalid backward microbatches for stage {}: I and W must have "
                                "equal counts, but got I={}, W={}",
                                s, c.i.size(), c.w.size()));
    }
    if (static_cast<int>(c.b.size() + (c.i.size() + c.w.size()) / 2) != micro_batches) {
      return Status(StatusCode::kInvalid, loc,
                    fmt::format("invalid backward microbatches for stage {}: expected {} total "
                                "backwards, but got B={}, I={}, W={}",
                                s, micro_batches, c.b.size(), c.i.size(), c.w.size()));
    }
  }
  return stage_to_rank;
}

}  // namespace irm::schedules
