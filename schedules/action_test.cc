// Actions: PyTorch's spellings, printing, parsing (and its malformed-input diagnostics), and the
// stage -> rank placement.
#include "schedules/action.h"

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

using T = ActionType;

// Pins pytorch/pytorch test/distributed/pipelining/test_schedule.py,
// TestScheduleLowering.test_action_parse: each string parses to the action and prints back.
TEST(ActionTest, ParsesAndPrintsPyTorchExamples) {
  const std::vector<std::pair<std::string, Action>> cases = {
      {"1F0", Action::Make(1, T::kForward, 0)},
      {"2I1", Action::Make(2, T::kBackwardInput, 1)},
      {"0W3", Action::Make(0, T::kBackwardWeight, 3)},
      {"0B3", Action::Make(0, T::kFullBackward, 3)},
      {"1UNSHARD", Action::Make(1, T::kUnshard)},
      {"3RESHARD", Action::Make(3, T::kReshard)},
      {"2SEND_B2", Action::Make(2, T::kSendB, 2)},
      {"1RECV_F1", Action::Make(1, T::kRecvF, 1)},
  };
  for (const auto& [text, expected] : cases) {
    StatusOr<Action> action = ParseAction(text);
    ASSERT_TRUE(action.ok()) << text << ": " << action.status().ToString();
    EXPECT_EQ(*action, expected) << text;
    EXPECT_EQ(action->ToString(), text);
  }
}

TEST(ActionTest, ParsesOverlapAndIgnoresSurroundingSpace) {
  StatusOr<Action> action = ParseAction("  (0F7; 7B3)OVERLAP_F_B\t");
  ASSERT_TRUE(action.ok()) << action.status().ToString();
  EXPECT_EQ(action->type, T::kOverlapFB);
  EXPECT_EQ(action->stage, 0);
  ASSERT_EQ(action->sub_actions.size(), 2u);
  EXPECT_EQ(action->sub_actions[1], Action::Make(7, T::kFullBackward, 3));
  EXPECT_EQ(action->ToString(), "(0F7;7B3)OVERLAP_F_B");
  StatusOr<Action> reduce = ParseAction("4REDUCE_GRAD");
  ASSERT_TRUE(reduce.ok());
  EXPECT_EQ(*reduce, Action::Make(4, T::kReduceGrad));
}

TEST(ActionTest, TypeNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(T::kOverlapFB); ++i) {
    const auto type = static_cast<T>(i);
    EXPECT_EQ(ParseActionType(ActionTypeName(type)), type) << ActionTypeName(type);
  }
  EXPECT_FALSE(ParseActionType("f").has_value());
}

std::string ParseError(std::string_view text) {
  StatusOr<Action> action = ParseAction(text);
  EXPECT_FALSE(action.ok()) << text;
  if (action.ok()) return "";
  EXPECT_EQ(action.status().code(), StatusCode::kParseError);
  return action.status().message();
}

TEST(ActionTest, MalformedActionsHaveExactDiagnostics) {
  EXPECT_EQ(ParseError("F0"),
            "invalid action 'F0': expected [stage][action type][micro-batch], e.g. 2F0");
  EXPECT_EQ(ParseError("0X1"),
            "invalid action '0X1': unknown action type 'X1' after stage 0 (expected F, I, B, W, "
            "UNSHARD, RESHARD, REDUCE_GRAD, SEND_F, RECV_F, SEND_B or RECV_B)");
  // PyTorch's prefix match would read "1BW0" (the old full-backward spelling) as "1B".
  EXPECT_EQ(ParseError("1BW0"), "invalid action '1BW0': unexpected 'W0' after '1B'");
  EXPECT_EQ(ParseError("0F"), "invalid action '0F': F needs a micro-batch");
  EXPECT_EQ(ParseError("1UNSHARD3"), "invalid action '1UNSHARD3': UNSHARD takes no micro-batch");
  EXPECT_EQ(ParseError("99999999999F0"),
            "invalid action '99999999999F0': the stage number is too large");
  EXPECT_EQ(ParseError("(0F0)F"),
            "invalid action '(0F0)F': a parenthesised group must be OVERLAP_F_B, not F");
  EXPECT_EQ(ParseError("(0F0)OVERLAP"),
            "invalid action '(0F0)OVERLAP': unknown action type 'OVERLAP' after the parenthesised "
            "group");
  EXPECT_EQ(ParseError("( ; )OVERLAP_F_B"),
            "invalid action '( ; )OVERLAP_F_B': OVERLAP_F_B needs at least one action");
  EXPECT_EQ(ParseError("(0F0;x)OVERLAP_F_B"),
            "invalid action '(0F0;x)OVERLAP_F_B': in part 'x': invalid action 'x': expected "
            "[stage][action type][micro-batch], e.g. 2F0");
  EXPECT_EQ(ParseError("0F\x01"), "invalid action '0F\\x01': unexpected '\\x01' after '0F'");
  EXPECT_EQ(ParseError("   "), "invalid action '   ': an empty action");
}

// Pins test_schedule.py, ScheduleUtilTests.test_generate_stage_to_rank_mapping.
TEST(StageMappingTest, MatchesPyTorch) {
  EXPECT_EQ(*StageToRankMapping(2, 2, StageStyle::kLoop), (std::vector<int>{0, 1}));
  EXPECT_EQ(*StageToRankMapping(2, 4, StageStyle::kLoop), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(*StageToRankMapping(4, 8, StageStyle::kLoop),
            (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(*StageToRankMapping(2, 4, StageStyle::kV), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(*StageToRankMapping(4, 12, StageStyle::kV),
            (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3}));
  EXPECT_EQ(*StageToRankMapping(4, 16, StageStyle::kV),
            (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(RankToStages(*StageToRankMapping(4, 8, StageStyle::kV), 4),
            (std::vector<std::vector<int>>{{0, 7}, {1, 6}, {2, 5}, {3, 4}}));
}

TEST(StageMappingTest, RejectsWhatPyTorchRejects) {
  StatusOr<std::vector<int>> bad = StageToRankMapping(4, 6, StageStyle::kV);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "num_stages 6 must be evenly divisible by pp_size 4 for V schedules");
  EXPECT_FALSE(StageToRankMapping(0, 2, StageStyle::kLoop).ok());
  EXPECT_EQ(*ParseStageStyle("v"), StageStyle::kV);
  EXPECT_FALSE(ParseStageStyle("V").ok());
}

}  // namespace
}  // namespace irm::schedules
