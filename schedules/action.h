// PyTorch's pipeline actions (torch/distributed/pipelining/schedules.py, `_Action`): a stage
// index, a computation type and a micro-batch, printed as "2F0", "3SEND_F1", "1UNSHARD" and,
// for an overlapped pair, "(0F1;3B0)OVERLAP_F_B". A schedule is one list per rank, where an empty
// slot is an idle step. The CSV form (action_csv.h) is one row per rank, one cell per step.
// Also here: PyTorch's stage -> rank placement (`_utils.generate_stage_to_rank_mapping`), which
// the generators, the validator, the lowering and the simulator share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace irm::schedules {

enum class ActionType {
  kForward,         // F
  kBackwardInput,   // I
  kBackwardWeight,  // W
  kFullBackward,    // B
  kSendF,           // SEND_F
  kRecvF,           // RECV_F
  kSendB,           // SEND_B
  kRecvB,           // RECV_B
  kUnshard,         // UNSHARD
  kReshard,         // RESHARD
  kReduceGrad,      // REDUCE_GRAD
  kOverlapFB,       // OVERLAP_F_B: its sub_actions run together
};

// "F", "I", "W", "B", "SEND_F", ..., "OVERLAP_F_B".
const char* ActionTypeName(ActionType type);
// The inverse of ActionTypeName (exact spelling); nullopt for anything else.
std::optional<ActionType> ParseActionType(std::string_view name);
// F, I, W, B and OVERLAP_F_B (PyTorch's `is_compute_op`).
bool IsComputeType(ActionType type);
// UNSHARD, RESHARD and REDUCE_GRAD: the only types printed without a micro-batch.
bool TakesNoMicroBatch(ActionType type);

struct Action {
  int stage = 0;  // for OVERLAP_F_B, the first sub-action's stage
  ActionType type = ActionType::kForward;
  int micro_batch = -1;             // -1: none (UNSHARD, RESHARD, REDUCE_GRAD, OVERLAP_F_B)
  std::vector<Action> sub_actions;  // OVERLAP_F_B only

  // An action without sub-actions.
  static Action Make(int stage, ActionType type, int micro_batch = -1) {
    Action a;
    a.stage = stage;
    a.type = type;
    a.micro_batch = micro_batch;
    return a;
  }
  // OVERLAP_F_B of `subs` (at least one); its stage is the first sub-action's.
  static Action Overlap(std::vector<Action> subs);

  // PyTorch's repr: "2F0", "1UNSHARD", "(0F1;3B0)OVERLAP_F_B".
  std::string ToString() const;
  bool operator==(const Action&) const = default;
};

// PyTorch's `_Action.from_str` for one non-empty action: surrounding whitespace is ignored;
// "<stage><type><micro-batch>" with the types of its regex, or "(<a>;<b>...)OVERLAP_F_B" whose
// parts are plain actions. Stricter than PyTorch, which matches a prefix and ignores the rest
// ("1BW0" reads as "1B"): the whole text must be one action, F/I/W/B/SEND_*/RECV_* need a
// micro-batch, UNSHARD/RESHARD/REDUCE_GRAD take none, a container is OVERLAP_F_B with at least
// one part, and numbers fit an int. kParseError (no location: the caller knows where) otherwise.
StatusOr<Action> ParseAction(std::string_view text);

// One list per rank (index = rank); std::nullopt is an idle step.
struct ActionSchedule {
  std::vector<std::vector<std::optional<Action>>> ranks;
  bool operator==(const ActionSchedule&) const = default;
};

// How stages are placed on ranks (`generate_stage_to_rank_mapping`'s `style`).
enum class StageStyle {
  kLoop,  // stage s on rank s % pp (GPipe, 1F1B, Interleaved1F1B, LoopedBFS, ZB1P)
  kV,     // 0..pp-1 then back down pp-1..0, and so on (ZBVZeroBubble, DualPipeV)
};
const char* StageStyleName(StageStyle style);  // "loop", "v"
StatusOr<StageStyle> ParseStageStyle(std::string_view name);

// stage -> rank for `num_stages` stages on `pp` ranks, as PyTorch's
// `generate_stage_to_rank_mapping(pp, num_stages, style)`. kInvalidArgument when pp < 1,
// num_stages < 1, or (V style) num_stages is not a multiple of pp.
StatusOr<std::vector<int>> StageToRankMapping(int pp, int num_stages, StageStyle style);
// The inverse: each rank's stages in ascending order (`generate_rank_to_stage_mapping`).
std::vector<std::vector<int>> RankToStages(const std::vector<int>& stage_to_rank, int pp);

}  // namespace irm::schedules
