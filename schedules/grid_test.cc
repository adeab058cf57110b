// The ASCII grids, against text written by hand in the layout of PyTorch's
// `_format_pipeline_order` (torch/distributed/pipelining/schedules.py).
#include "schedules/grid.h"

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

using T = ActionType;

std::optional<Action> A(int stage, ActionType type, int micro_batch) {
  Action action;
  action.stage = stage;
  action.type = type;
  action.micro_batch = micro_batch;
  return action;
}

ActionSchedule TwoStages() {
  ActionSchedule s;
  s.ranks = {
      {A(0, T::kForward, 0), A(0, T::kSendF, 0), std::nullopt, A(0, T::kRecvB, 0),
       A(0, T::kFullBackward, 0)},
      {A(1, T::kRecvF, 0), A(1, T::kForward, 0), A(1, T::kFullBackward, 0), A(1, T::kSendB, 0)}};
  return s;
}

TEST(GridTest, ActionScheduleLikePyTorch) {
  EXPECT_EQ(FormatActionGrid(TwoStages()),
            "        Rank 0   Rank 1  \n"
            "Step 0: 0F0      1RECV_F0\n"
            "Step 1: 0SEND_F0 1F0     \n"
            "Step 2:          1B0     \n"
            "Step 3: 0RECV_B0 1SEND_B0\n"
            "Step 4: 0B0              \n");
}

TEST(GridTest, ErrorRowIsMarked) {
  EXPECT_EQ(FormatActionGrid(TwoStages(), 2),
            "        Rank 0   Rank 1  \n"
            "Step 0: 0F0      1RECV_F0\n"
            "Step 1: 0SEND_F0 1F0     \n"
            "Step 2:          1B0      <-- ERROR HERE\n"
            "Step 3: 0RECV_B0 1SEND_B0\n"
            "Step 4: 0B0              \n");
}

TEST(GridTest, StepNumbersArePaddedToTheLastOne) {
  std::vector<std::vector<std::string>> cells = {{"0F0", "", "", "", "", "", "", "", "", "", "0B0"},
                                                 {"(0F1;3B0)OVERLAP_F_B"}};
  EXPECT_EQ(FormatGrid(cells),
            "         Rank 0  Rank 1              \n"
            "Step 00: 0F0     (0F1;3B0)OVERLAP_F_B\n"
            "Step 01:                             \n"
            "Step 02:                             \n"
            "Step 03:                             \n"
            "Step 04:                             \n"
            "Step 05:                             \n"
            "Step 06:                             \n"
            "Step 07:                             \n"
            "Step 08:                             \n"
            "Step 09:                             \n"
            "Step 10: 0B0                         \n");
}

TEST(GridTest, EdgeCases) {
  EXPECT_EQ(FormatGrid({}), "");
  EXPECT_EQ(FormatGrid({{}, {}}), "        Rank 0 Rank 1\n");
  // Rank labels wider than the step labels widen their columns.
  std::vector<std::vector<std::string>> eleven(11, std::vector<std::string>{"x"});
  const std::string grid = FormatGrid(eleven);
  EXPECT_EQ(grid.substr(grid.find("Step 0:")),
            "Step 0: x      x      x      x      x      x      x      x      x      x      x      "
            "\n");
}

Step Compute(const std::string& label) {
  Step step;
  step.label = label;
  return step;
}

Step Comm(StepKind kind, int from, int to, const std::string& label, const std::string& message) {
  Step step;
  step.kind = kind;
  step.channel = {from, to, 0};
  step.label = label;
  step.message = message;
  return step;
}

TEST(GridTest, DeadlockedTimelineEndsWithTheStepsTheRanksWaitIn) {
  CommProgram p;
  p.ranks = {{Compute("forward0"), Comm(StepKind::kSend, 0, 1, "send_fwd0", "a0"),
              Compute("forward1"), Comm(StepKind::kSend, 0, 1, "send_fwd1", "a1"),
              Comm(StepKind::kRecv, 1, 0, "recv_bwd0", "g0"), Compute("backward0")},
             {Comm(StepKind::kRecv, 0, 1, "recv_fwd0", "a0"), Compute("forward0"),
              Compute("backward0"), Comm(StepKind::kSend, 1, 0, "send_bwd0", "g0"),
              Comm(StepKind::kRecv, 0, 1, "recv_fwd1", "a1")}};
  StatusOr<SimResult> result = Simulate(p, P2pModel::Rendezvous());
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->outcome, SimOutcome::kDeadlock);
  EXPECT_EQ(FormatTimelineGrid(p, *result),
            "        Rank 0    Rank 1   \n"
            "Step 0: forward0           \n"
            "Step 1: send_fwd0 recv_fwd0\n"
            "Step 2: forward1  forward0 \n"
            "Step 3:           backward0\n"
            "Step 4: send_fwd1 send_bwd0 <-- ERROR HERE\n");

  // Buffered, the send of forward 1 goes at once, and rank 0 takes the gradient rank 1 sends in
  // the same tick.
  StatusOr<SimResult> buffered = Simulate(p, P2pModel::Buffered(1));
  ASSERT_TRUE(buffered.ok());
  ASSERT_TRUE(buffered->completed());
  EXPECT_EQ(FormatTimelineGrid(p, *buffered),
            "        Rank 0    Rank 1   \n"
            "Step 0: forward0           \n"
            "Step 1: send_fwd0 recv_fwd0\n"
            "Step 2: forward1  forward0 \n"
            "Step 3: send_fwd1 backward0\n"
            "Step 4: recv_bwd0 send_bwd0\n"
            "Step 5: backward0 recv_fwd1\n");
}

TEST(GridTest, WrongMatchMarksTheReceive) {
  CommProgram p;
  p.ranks = {{Compute("f"), Comm(StepKind::kSend, 0, 1, "s0", "a0")},
             {Comm(StepKind::kRecv, 0, 1, "r1", "a1")}};
  StatusOr<SimResult> result = Simulate(p, P2pModel::Buffered(1));
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->outcome, SimOutcome::kWrongMatch);
  EXPECT_EQ(FormatTimelineGrid(p, *result),
            "        Rank 0 Rank 1\n"
            "Step 0: f            \n"
            "Step 1: s0     r1     <-- ERROR HERE\n");
}

}  // namespace
}  // namespace irm::schedules
