// ActionScheduleToCommProgram (action_comm.h).
#include "schedules/action_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace irm::schedules {
namespace {

bool IsComm(ActionType type) {
  return type == ActionType::kSendF || type == ActionType::kRecvF || type == ActionType::kSendB ||
         type == ActionType::kRecvB;
}

class Converter {
 public:
  Converter(const ActionSchedule& schedule, const std::vector<int>& stage_to_rank,
            const std::string& file)
      : schedule_(schedule),
        stage_to_rank_(stage_to_rank),
        file_(file),
        num_stages_(static_cast<int>(stage_to_rank.size())),
        world_(static_cast<int>(schedule.ranks.size())) {}

  StatusOr<CommProgram> Run() {
    for (int s = 0; s < num_stages_; ++s) {
      const int rank = stage_to_rank_[static_cast<size_t>(s)];
      if (rank < 0 || rank >= world_) {
        return Status(StatusCode::kInvalidArgument, Location::File(file_),
                      fmt::format("the stage -> rank map puts stage {} on rank {}, but the "
                                  "schedule has {} ranks",
                                  s, rank, world_));
      }
    }
    // Each rank's stages in ascending order: a stage's chunk is its position there.
    std::vector<std::vector<int>> stages_of(static_cast<size_t>(world_));
    for (int s = 0; s < num_stages_; ++s) {
      stages_of[static_cast<size_t>(stage_to_rank_[static_cast<size_t>(s)])].push_back(s);
    }
    chunk_of_.assign(static_cast<size_t>(num_stages_), 0);
    for (const auto& stages : stages_of) {
      for (size_t i = 0; i < stages.size(); ++i) {
        chunk_of_[static_cast<size_t>(stages[i])] = static_cast<int>(i);
      }
    }

    CommProgram program;
    program.ranks.resize(static_cast<size_t>(world_));
    bool any_comm = false;
    for (int r = 0; r < world_; ++r) {
      const auto& actions = schedule_.ranks[static_cast<size_t>(r)];
      for (size_t i = 0; i < actions.size(); ++i) {
        if (!actions[i].has_value()) continue;
        const Action& action = *actions[i];
        any_comm = any_comm || IsComm(action.type);
        IRM_ASSIGN_OR_RETURN(Step step, Convert(action, r, static_cast<int>(i)));
        program.ranks[static_cast<size_t>(r)].push_back(std::move(step));
      }
    }
    if (!any_comm) IRM_RETURN_IF_ERROR(CheckNoCrossRankEdge());
    return program;
  }

 private:
  Location At(int rank, int index) const {
    return Location::File(file_).With(fmt::format("rank {}, step {}", rank, index));
  }

  // The stage is in the map and held by `rank`.
  Status CheckStage(const Action& action, int stage, int rank, int index) const {
    if (stage < 0 || stage >= num_stages_) {
      return Status(StatusCode::kInvalidArgument, At(rank, index),
                    fmt::format("action {} names stage {}, outside the {} stages",
                                action.ToString(), stage, num_stages_));
    }
    const int holder = stage_to_rank_[static_cast<size_t>(stage)];
    if (holder != rank) {
      return Status(StatusCode::kInvalidArgument, At(rank, index),
                    fmt::format("action {} is on rank {}, but stage {} is on rank {}",
                                action.ToString(), rank, stage, holder));
    }
    return Status::Ok();
  }

  StatusOr<Step> Convert(const Action& action, int rank, int index) const {
    Step step;
    step.label = action.ToString();
    step.job = ActionTypeName(action.type);
    step.micro_batch = action.micro_batch;
    if (action.type == ActionType::kOverlapFB) {
      for (const Action& part : action.sub_actions) {
        IRM_RETURN_IF_ERROR(CheckStage(part, part.stage, rank, index));
      }
      if (!action.sub_actions.empty()) {
        step.chunk = chunk_of_[static_cast<size_t>(action.sub_actions.front().stage)];
      }
      return step;  // one compute step: the pair runs together
    }
    IRM_RETURN_IF_ERROR(CheckStage(action, action.stage, rank, index));
    step.chunk = chunk_of_[static_cast<size_t>(action.stage)];
    if (!IsComm(action.type)) return step;

    const int s = action.stage;
    const bool forward = action.type == ActionType::kSendF || action.type == ActionType::kRecvF;
    const bool send = action.type == ActionType::kSendF || action.type == ActionType::kSendB;
    // The stages the message goes between: activations flow up the stages, gradients down.
    const int from = send ? s : (forward ? s - 1 : s + 1);
    const int to = send ? (forward ? s + 1 : s - 1) : s;
    const int peer = send ? to : from;
    if (peer < 0 || peer >= num_stages_) {
      return Status(StatusCode::kInvalidArgument, At(rank, index),
                    fmt::format("action {} has no peer: stage {} is outside the {} stages",
                                action.ToString(), peer, num_stages_));
    }
    const int peer_rank = stage_to_rank_[static_cast<size_t>(peer)];
    if (peer_rank == rank) {
      return Status(StatusCode::kInvalidArgument, At(rank, index),
                    fmt::format("action {} goes between stages {} and {}, both on rank {}: a "
                                "schedule hands that over locally, it does not send it",
                                action.ToString(), from, to, rank));
    }
    step.kind = send ? StepKind::kSend : StepKind::kRecv;
    step.channel = Channel{stage_to_rank_[static_cast<size_t>(from)],
                           stage_to_rank_[static_cast<size_t>(to)], 0};
    step.message = fmt::format("{} stage {} -> {}, micro-batch {}",
                               forward ? "activation" : "gradient", from, to, action.micro_batch);
    return step;
  }

  // A schedule without any send or receive: fine only if no data crosses ranks.
  Status CheckNoCrossRankEdge() const {
    for (int r = 0; r < world_; ++r) {
      const auto& actions = schedule_.ranks[static_cast<size_t>(r)];
      for (size_t i = 0; i < actions.size(); ++i) {
        if (!actions[i].has_value()) continue;
        std::vector<Action> parts = actions[i]->sub_actions;
        if (parts.empty()) parts.push_back(*actions[i]);
        for (const Action& a : parts) {
          int peer = -1;
          if (a.type == ActionType::kForward) peer = a.stage + 1;
          if (a.type == ActionType::kFullBackward || a.type == ActionType::kBackwardInput) {
            peer = a.stage - 1;
          }
          if (peer < 0 || peer >= num_stages_) continue;
          if (stage_to_rank_[static_cast<size_t>(peer)] == r) continue;
          return Status(
              StatusCode::kInvalidArgument, At(r, static_cast<int>(i)),
              fmt::format("compute-only schedule: {} feeds stage {} on rank {} and no send "
                          "carries it; lower the schedule first (PyTorch's _add_send_recv)",
                          a.ToString(), peer, stage_to_rank_[static_cast<size_t>(peer)]));
        }
      }
    }
    return Status::Ok();
  }

  const ActionSchedule& schedule_;
  const std::vector<int>& stage_to_rank_;
  const std::string& file_;
  int num_stages_ = 0;
  int world_ = 0;
  std::vector<int> chunk_of_;
};

}  // namespace

StatusOr<CommProgram> ActionScheduleToCommProgram(const ActionSchedule& schedule,
                                                  const std::vector<int>& stage_to_rank,
                                                  const std::string& file) {
  return Converter(schedule, stage_to_rank, file).Run();
}

}  // namespace irm::schedules
