// Names, printing and parsing of PyTorch's pipeline actions, and PyTorch's stage placement.
#include "schedules/action.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace irm::schedules {
namespace {

struct TypeSpelling {
  ActionType type;
  const char* name;
};

// In the order of PyTorch's `_action_regex` alternation (no name is a prefix of a later one, so
// the first match is the only one); OVERLAP_F_B is not in the regex: it only names a container.
constexpr std::array<TypeSpelling, 12> kSpellings = {{
    {ActionType::kForward, "F"},
    {ActionType::kBackwardInput, "I"},
    {ActionType::kFullBackward, "B"},
    {ActionType::kBackwardWeight, "W"},
    {ActionType::kUnshard, "UNSHARD"},
    {ActionType::kReshard, "RESHARD"},
    {ActionType::kReduceGrad, "REDUCE_GRAD"},
    {ActionType::kSendF, "SEND_F"},
    {ActionType::kRecvF, "RECV_F"},
    {ActionType::kSendB, "SEND_B"},
    {ActionType::kRecvB, "RECV_B"},
    {ActionType::kOverlapFB, "OVERLAP_F_B"},
}};
constexpr size_t kPlainSpellings = kSpellings.size() - 1;

// Python's str.strip() on ASCII text: these are the ASCII characters str.isspace() accepts.
bool IsPySpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= '\x1c' && c <= '\x1f');
}

std::string_view Strip(std::string_view s) {
  while (!s.empty() && IsPySpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsPySpace(s.back())) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The text in single quotes, bytes outside printable ASCII as \xNN so a diagnostic stays one line.
std::string Quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '\\') {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "'";
}

Status Bad(std::string_view whole, const std::string& why) {
  return Status(StatusCode::kParseError, Location{},
                fmt::format("invalid action {}: {}", Quote(whole), why));
}

// Reads a run of digits at `pos` into `out`; false when the number does not fit an int.
bool ReadNumber(std::string_view s, size_t& pos, int& out, bool& any) {
  long long value = 0;
  any = false;
  while (pos < s.size() && IsDigit(s[pos])) {
    value = value * 10 + (s[pos] - '0');
    if (value > 2147483647LL) return false;
    ++pos;
    any = true;
  }
  out = static_cast<int>(value);
  return true;
}

// One "<stage><type><micro-batch>" action; `whole` is what the diagnostic quotes.
StatusOr<Action> ParsePlain(std::string_view s, std::string_view whole) {
  size_t pos = 0;
  int stage = 0;
  bool any = false;
  if (!ReadNumber(s, pos, stage, any)) return Bad(whole, "the stage number is too large");
  if (!any) {
    return Bad(whole, "expected [stage][action type][micro-batch], e.g. 2F0");
  }
  const TypeSpelling* spelling = nullptr;
  for (size_t i = 0; i < kPlainSpellings; ++i) {
    if (s.substr(pos).starts_with(kSpellings[i].name)) {
      spelling = &kSpellings[i];
      break;
    }
  }
  if (spelling == nullptr) {
    return Bad(whole,
               fmt::format("unknown action type {} after stage {} (expected F, I, B, W, "
                           "UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B or RECV_B)",
                           Quote(s.substr(pos)), stage));
  }
  pos += std::string_view(spelling->name).size();
  int micro_batch = 0;
  if (!ReadNumber(s, pos, micro_batch, any)) {
    return Bad(whole, "the micro-batch number is too large");
  }
  if (pos != s.size()) {
    return Bad(whole, fmt::format("unexpected {} after {}", Quote(s.substr(pos)),
                                  Quote(s.substr(0, pos))));
  }
  if (TakesNoMicroBatch(spelling->type)) {
    if (any) return Bad(whole, fmt::format("{} takes no micro-batch", spelling->name));
    return Action::Make(stage, spelling->type);
  }
  if (!any) return Bad(whole, fmt::format("{} needs a micro-batch", spelling->name));
  return Action::Make(stage, spelling->type, micro_batch);
}

}  // namespace

const char* ActionTypeName(ActionType type) {
  for (const TypeSpelling& s : kSpellings) {
    if (s.type == type) return s.name;
  }
  return "?";
}

std::optional<ActionType> ParseActionType(std::string_view name) {
  for (const TypeSpelling& s : kSpellings) {
    if (name == s.name) return s.type;
  }
  return std::nullopt;
}

bool IsComputeType(ActionType type) {
  return type == ActionType::kForward || type == ActionType::kBackwardInput ||
         type == ActionType::kBackwardWeight || type == ActionType::kFullBackward ||
         type == ActionType::kOverlapFB;
}

bool TakesNoMicroBatch(ActionType type) {
  return type == ActionType::kUnshard || type == ActionType::kReshard ||
         type == ActionType::kReduceGrad;
}

Action Action::Overlap(std::vector<Action> subs) {
  Action a;
  a.type = ActionType::kOverlapFB;
  a.stage = subs.empty() ? 0 : subs.front().stage;
  a.sub_actions = std::move(subs);
  return a;
}

std::string Action::ToString() const {
  if (!sub_actions.empty()) {
    std::string out = "(";
    for (size_t i = 0; i < sub_actions.size(); ++i) {
      if (i > 0) out += ';';
      out += sub_actions[i].ToString();
    }
    return out + ")" + ActionTypeName(type);
  }
  std::string out = std::to_string(stage) + ActionTypeName(type);
  if (micro_batch >= 0) out += std::to_string(micro_batch);
  return out;
}

StatusOr<Action> ParseAction(std::string_view text) {
  const std::string_view s = Strip(text);
  if (s.empty()) return Bad(text, "an empty action");
  const size_t close = s.find(')');
  if (s.front() != '(' || close == std::string_view::npos) return ParsePlain(s, text);

  // "(<a>;<b>...)<type>": PyTorch splits the text before the first ')' on ';' and skips empty
  // parts.
  const std::string_view type_name = s.substr(close + 1);
  const std::optional<ActionType> type = ParseActionType(type_name);
  if (!type.has_value()) {
    return Bad(text, fmt::format("unknown action type {} after the parenthesised group",
                                 Quote(type_name)));
  }
  if (*type != ActionType::kOverlapFB) {
    return Bad(text, fmt::format("a parenthesised group must be OVERLAP_F_B, not {}", type_name));
  }
  std::vector<Action> subs;
  std::string_view inner = s.substr(1, close - 1);
  while (true) {
    const size_t semi = inner.find(';');
    const std::string_view part = Strip(inner.substr(0, semi));
    if (!part.empty()) {
      StatusOr<Action> sub = ParsePlain(part, part);
      if (!sub.ok()) {
        return Bad(text, fmt::format("in part {}: {}", Quote(part), sub.status().message()));
      }
      subs.push_back(std::move(sub).value());
    }
    if (semi == std::string_view::npos) break;
    inner.remove_prefix(semi + 1);
  }
  if (subs.empty()) return Bad(text, "OVERLAP_F_B needs at least one action");
  return Action::Overlap(std::move(subs));
}

const char* StageStyleName(StageStyle style) { return style == StageStyle::kV ? "v" : "loop"; }

StatusOr<StageStyle> ParseStageStyle(std::string_view name) {
  if (name == "loop") return StageStyle::kLoop;
  if (name == "v") return StageStyle::kV;
  return Status(StatusCode::kInvalidArgument, Location{},
                fmt::format("unknown stage style '{}' (expected loop or v)", name));
}

StatusOr<std::vector<int>> StageToRankMapping(int pp, int num_stages, StageStyle style) {
  if (pp < 1 || num_stages < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("a stage mapping needs pp >= 1 and at least one stage, got pp {} "
                              "and {} stages",
                              pp, num_stages));
  }
  std::vector<int> mapping(num_stages);
  if (style == StageStyle::kLoop) {
    for (int s = 0; s < num_stages; ++s) mapping[s] = s % pp;
    return mapping;
  }
  if (num_stages % pp != 0) {
    return Status(
        StatusCode::kInvalidArgument, Location{},
        fmt::format("num_stages {} must be evenly divisible by pp_size {} for V schedules",
                    num_stages, pp));
  }
  // Climb one rank per stage, stay put at each border, then descend (the V), and so on.
  int rank = 0;
  for (int s = 0; s < num_stages; ++s) {
    mapping[s] = rank;
    if ((s + 1) % pp == 0) continue;
    rank += (s / pp) % 2 == 0 ? 1 : -1;
  }
  return mapping;
}

std::vector<std::vector<int>> RankToStages(const std::vector<int>& stage_to_rank, int pp) {
  std::vector<std::vector<int>> out(pp > 0 ? pp : 0);
  for (size_t s = 0; s < stage_to_rank.size(); ++s) {
    const int r = stage_to_rank[s];
    if (r >= 0 && r < pp) out[r].push_back(static_cast<int>(s));
  }
  return out;
}

}  // namespace irm::schedules
