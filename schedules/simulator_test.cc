#include "schedules/simulator.h"

#include <gtest/gtest.h>

#include <string>

namespace irm::schedules {
namespace {

Step Compute(const std::string& job, int micro_batch, int cost = 1) {
  Step step;
  step.kind = StepKind::kCompute;
  step.label = job + std::to_string(micro_batch);
  step.job = job;
  step.micro_batch = micro_batch;
  step.cost = cost;
  return step;
}

Step Comm(StepKind kind, int from, int to, const std::string& message, const std::string& job,
          int micro_batch) {
  Step step;
  step.kind = kind;
  step.channel = {from, to, 0};
  step.message = message;
  step.label = (kind == StepKind::kSend ? "send_" : "recv_") + job + std::to_string(micro_batch);
  step.job = job;
  step.micro_batch = micro_batch;
  return step;
}

std::string Act(int mb) { return "activation stage 0 -> 1, micro-batch " + std::to_string(mb); }
std::string Grad(int mb) { return "gradient stage 1 -> 0, micro-batch " + std::to_string(mb); }

// Two stages whose forward ends by sending its activation and whose backward ends by sending its
// gradient: the legacy order of issue 19 (the hang Paddle fixed in PR #70360).
CommProgram Legacy1F1B() {
  CommProgram p;
  p.ranks = {
      {Compute("forward", 0), Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0),
       Compute("forward", 1), Comm(StepKind::kSend, 0, 1, Act(1), "forward", 1),
       Comm(StepKind::kRecv, 1, 0, Grad(0), "backward", 0), Compute("backward", 0),
       Comm(StepKind::kRecv, 1, 0, Grad(1), "backward", 1), Compute("backward", 1)},
      {Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0), Compute("forward", 0),
       Compute("backward", 0), Comm(StepKind::kSend, 1, 0, Grad(0), "backward", 0),
       Comm(StepKind::kRecv, 0, 1, Act(1), "forward", 1), Compute("forward", 1),
       Compute("backward", 1), Comm(StepKind::kSend, 1, 0, Grad(1), "backward", 1)},
  };
  return p;
}

CommProgram FThenB() {
  CommProgram p;
  p.ranks = {
      {Compute("forward", 0), Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0),
       Compute("forward", 1), Comm(StepKind::kSend, 0, 1, Act(1), "forward", 1),
       Comm(StepKind::kRecv, 1, 0, Grad(0), "backward", 0), Compute("backward", 0),
       Comm(StepKind::kRecv, 1, 0, Grad(1), "backward", 1), Compute("backward", 1)},
      {Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0), Compute("forward", 0),
       Comm(StepKind::kRecv, 0, 1, Act(1), "forward", 1), Compute("forward", 1),
       Compute("backward", 0), Comm(StepKind::kSend, 1, 0, Grad(0), "backward", 0),
       Compute("backward", 1), Comm(StepKind::kSend, 1, 0, Grad(1), "backward", 1)},
  };
  return p;
}

SimResult SimulateOk(const CommProgram& program, const P2pModel& model) {
  StatusOr<SimResult> result = Simulate(program, model);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SimResult{};
}

TEST(SimulatorTest, Legacy1F1BDeadlocksUnderRendezvousInTheNamedCycle) {
  const SimResult result = SimulateOk(Legacy1F1B(), P2pModel::Rendezvous());
  ASSERT_EQ(result.outcome, SimOutcome::kDeadlock);
  EXPECT_EQ(result.diagnostic,
            "deadlock under rendezvous at tick 4: rank 0 waits in send (activation stage 0 -> 1, "
            "micro-batch 1; forward, micro-batch 1) for rank 1, which waits in send "
            "(gradient stage 1 -> 0, micro-batch 0; backward, micro-batch 0) for rank 0");
  ASSERT_EQ(result.waits.size(), 2u);
  EXPECT_EQ(result.waits[0].rank, 0);
  EXPECT_EQ(result.waits[0].step_index, 3);
  EXPECT_EQ(result.waits[0].peer, 1);
  EXPECT_EQ(result.waits[1].rank, 1);
  EXPECT_EQ(result.waits[1].step.job, "backward");
  EXPECT_EQ(result.waits[1].step.micro_batch, 0);
  EXPECT_EQ(result.next_step, (std::vector<int>{3, 3}));
  EXPECT_EQ(result.ticks, 4);
}

TEST(SimulatorTest, Legacy1F1BCompletesWithOneBufferedMessageAndNeedsOne) {
  const SimResult result = SimulateOk(Legacy1F1B(), P2pModel::Buffered(1));
  EXPECT_TRUE(result.completed()) << result.diagnostic;
  EXPECT_EQ(result.diagnostic, "");
  EXPECT_EQ(result.next_step, (std::vector<int>{8, 8}));
  StatusOr<std::optional<int>> depth = MinBufferDepth(Legacy1F1B());
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(*depth, std::optional<int>(1));
  EXPECT_EQ(BufferDepthName(*depth), "1");
}

TEST(SimulatorTest, FThenBNeedsNoBuffer) {
  EXPECT_TRUE(SimulateOk(FThenB(), P2pModel::Rendezvous()).completed());
  StatusOr<std::optional<int>> depth = MinBufferDepth(FThenB());
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(*depth, std::optional<int>(0));
}

TEST(SimulatorTest, TimelineTicksAndBubbleRatio) {
  CommProgram p;
  p.ranks = {{Compute("forward", 0, /*cost=*/2), Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0)},
             {Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0), Compute("forward", 0)}};
  const SimResult result = SimulateOk(p, P2pModel::Rendezvous());
  ASSERT_TRUE(result.completed());
  EXPECT_EQ(result.ticks, 4);
  EXPECT_EQ(result.timeline[0], (std::vector<int>{0, 0, 1, -1}));
  EXPECT_EQ(result.timeline[1], (std::vector<int>{-1, -1, 0, 1}));
  EXPECT_EQ(result.compute_ticks, 3);
  EXPECT_DOUBLE_EQ(result.bubble_ratio, 1.0 - 3.0 / 8.0);
}

TEST(SimulatorTest, BufferedReceiveTakesAMessageSentInTheSameTickByAnyRank) {
  // The receiver sweeps before the sender (rank 0 < rank 1): the second sweep still lets it take
  // the message, as PyTorch's simulator does.
  CommProgram p;
  p.ranks = {{Comm(StepKind::kRecv, 1, 0, Grad(0), "backward", 0)},
             {Comm(StepKind::kSend, 1, 0, Grad(0), "backward", 0)}};
  const SimResult result = SimulateOk(p, P2pModel::Buffered(1));
  ASSERT_TRUE(result.completed());
  EXPECT_EQ(result.ticks, 1);
  EXPECT_EQ(SimulateOk(p, P2pModel::Rendezvous()).ticks, 1);
}

TEST(SimulatorTest, BufferedSendWaitsWhileItsChannelIsFull) {
  CommProgram p;
  p.ranks = {{Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0),
              Comm(StepKind::kSend, 0, 1, Act(1), "forward", 1)},
             {Compute("x", 0, /*cost=*/3), Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0),
              Comm(StepKind::kRecv, 0, 1, Act(1), "forward", 1)}};
  const SimResult result = SimulateOk(p, P2pModel::Buffered(1));
  ASSERT_TRUE(result.completed());
  // Rank 0's second send waits until rank 1 takes the first at tick 3 (the freed slot is used in
  // that same tick).
  EXPECT_EQ(result.timeline[0], (std::vector<int>{0, -1, -1, 1, -1}));
  EXPECT_EQ(result.timeline[1], (std::vector<int>{0, 0, 0, 1, 2}));
  EXPECT_EQ(SimulateOk(p, P2pModel::Buffered(2)).timeline[0], (std::vector<int>{0, 1, -1, -1, -1}));
}

TEST(SimulatorTest, AReceiveTakingAnotherMessageIsAnErrorNamingBoth) {
  CommProgram p;
  p.ranks = {{Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0),
              Comm(StepKind::kSend, 0, 1, Act(1), "forward", 1)},
             {Comm(StepKind::kRecv, 0, 1, Act(1), "forward", 1),
              Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0)}};
  for (const P2pModel& model : {P2pModel::Rendezvous(), P2pModel::Buffered(2)}) {
    const SimResult result = SimulateOk(p, model);
    ASSERT_EQ(result.outcome, SimOutcome::kWrongMatch) << P2pModelName(model);
    EXPECT_EQ(result.diagnostic,
              "wrong match under " + P2pModelName(model) +
                  " at tick 0: rank 1 step 0, recv (activation stage 0 -> 1, micro-batch 1; "
                  "forward, micro-batch 1), would take the message of rank 0 step 0, send "
                  "(activation stage 0 -> 1, micro-batch 0; forward, micro-batch 0) (messages on "
                  "a channel are received in the order they were sent)");
    ASSERT_TRUE(result.wrong_receive.has_value());
    EXPECT_EQ(result.wrong_receive->rank, 1);
    EXPECT_EQ(result.wrong_send->rank, 0);
    EXPECT_EQ(result.ticks, 1);
  }
  StatusOr<std::optional<int>> depth = MinBufferDepth(p);
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(BufferDepthName(*depth), "never");
}

TEST(SimulatorTest, EmptyMessagesAreNotChecked) {
  CommProgram p;
  p.ranks = {{Comm(StepKind::kSend, 0, 1, "", "forward", 0)},
             {Comm(StepKind::kRecv, 0, 1, Act(3), "forward", 3)}};
  EXPECT_TRUE(SimulateOk(p, P2pModel::Rendezvous()).completed());
}

TEST(SimulatorTest, ASendNoReceiveTakesIsUnmatched) {
  CommProgram p;
  p.ranks = {{Comm(StepKind::kSend, 0, 1, Act(0), "forward", 0),
              Comm(StepKind::kSend, 0, 1, Act(1), "forward", 1)},
             {Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0)}};
  const SimResult buffered = SimulateOk(p, P2pModel::Buffered(2));
  ASSERT_EQ(buffered.outcome, SimOutcome::kUnmatched);
  EXPECT_EQ(buffered.diagnostic,
            "unmatched send/recv under buffered=2: rank 0 step 1, send (activation stage 0 -> 1, "
            "micro-batch 1; forward, micro-batch 1), is never received: rank 1 has no receive "
            "left for it (1 message(s) left on the channel)");
  const SimResult rendezvous = SimulateOk(p, P2pModel::Rendezvous());
  ASSERT_EQ(rendezvous.outcome, SimOutcome::kUnmatched);
  EXPECT_EQ(rendezvous.diagnostic,
            "unmatched send/recv under rendezvous at tick 1: rank 0 waits in send (activation "
            "stage 0 -> 1, micro-batch 1; forward, micro-batch 1) for rank 1, which has finished: "
            "it has no receive left for it");
  StatusOr<std::optional<int>> depth = MinBufferDepth(p);
  ASSERT_TRUE(depth.ok());
  EXPECT_FALSE(depth->has_value());
}

TEST(SimulatorTest, AReceiveNoSendFeedsIsUnmatchedAndNeverCompletes) {
  CommProgram p;
  p.ranks = {{Compute("forward", 0)}, {Comm(StepKind::kRecv, 0, 1, Act(0), "forward", 0)}};
  for (const P2pModel& model : {P2pModel::Rendezvous(), P2pModel::Buffered(4)}) {
    const SimResult result = SimulateOk(p, model);
    ASSERT_EQ(result.outcome, SimOutcome::kUnmatched);
    EXPECT_EQ(result.diagnostic,
              "unmatched send/recv under " + P2pModelName(model) +
                  " at tick 1: rank 1 waits in recv (activation stage 0 -> 1, micro-batch 0; "
                  "forward, micro-batch 0) for rank 0, which has finished: it has no send left "
                  "for it");
  }
  StatusOr<std::optional<int>> depth = MinBufferDepth(p);
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(BufferDepthName(*depth), "never");
}

TEST(SimulatorTest, ThreeRankCycleStartsAtItsLowestRank) {
  // Rank 2 waits for rank 0 in a receive; the sends go around the ring first.
  CommProgram p;
  p.ranks = {
      {Comm(StepKind::kSend, 0, 1, "a", "x", -1)},
      {Comm(StepKind::kSend, 1, 2, "b", "y", -1), Comm(StepKind::kRecv, 0, 1, "a", "x", -1)},
      {Comm(StepKind::kSend, 2, 0, "c", "z", -1), Comm(StepKind::kRecv, 1, 2, "b", "y", -1)}};
  p.ranks[0].push_back(Comm(StepKind::kRecv, 2, 0, "c", "z", -1));
  const SimResult result = SimulateOk(p, P2pModel::Rendezvous());
  ASSERT_EQ(result.outcome, SimOutcome::kDeadlock);
  ASSERT_EQ(result.waits.size(), 3u);
  EXPECT_EQ(result.waits[0].rank, 0);
  EXPECT_EQ(result.waits[1].rank, 1);
  EXPECT_EQ(result.waits[2].rank, 2);
  EXPECT_EQ(result.diagnostic,
            "deadlock under rendezvous at tick 0: rank 0 waits in send (a; x) for rank 1, which "
            "waits in send (b; y) for rank 2, which waits in send (c; z) for rank 0");
  StatusOr<std::optional<int>> depth = MinBufferDepth(p);
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(*depth, std::optional<int>(1));
}

TEST(SimulatorTest, DescribeStepNamesGroupChunkAndOp) {
  Step step = Comm(StepKind::kRecv, 3, 2, "x", "backward", 4);
  step.channel.group = 7;
  step.chunk = 1;
  step.op = "recv_v2 #12";
  EXPECT_EQ(DescribeStep(step), "recv (x, ring 7; backward, micro-batch 4, chunk 1, recv_v2 #12)");
  Step bare;
  bare.kind = StepKind::kSend;
  EXPECT_EQ(DescribeStep(bare), "send");
  bare.label = "0SEND_F1";
  EXPECT_EQ(DescribeStep(bare), "send (0SEND_F1)");
}

TEST(SimulatorTest, RefusesProgramsThatAreNotOnes) {
  const auto expect_invalid = [](const CommProgram& p, const std::string& message) {
    StatusOr<SimResult> result = Simulate(p, P2pModel::Rendezvous());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(result.status().message(), message);
    EXPECT_FALSE(MinBufferDepth(p).ok());
  };
  CommProgram outside;
  outside.ranks = {{Comm(StepKind::kSend, 0, 2, "a", "x", 0)}, {}};
  expect_invalid(outside,
                 "send (a; x, micro-batch 0) names rank 0 -> 2, outside the program's 2 "
                 "ranks");
  CommProgram self;
  self.ranks = {{Comm(StepKind::kSend, 0, 0, "a", "x", 0)}};
  expect_invalid(self, "send (a; x, micro-batch 0) goes from rank 0 to itself");
  CommProgram foreign;
  foreign.ranks = {{}, {Comm(StepKind::kSend, 0, 1, "a", "x", 0)}};
  expect_invalid(foreign,
                 "send (a; x, micro-batch 0) on channel 0 -> 1 is held by rank 1, not "
                 "rank 0");
  CommProgram free_compute;
  free_compute.ranks = {{Compute("forward", 0, /*cost=*/0)}};
  expect_invalid(free_compute, "compute step 'forward0' costs 0 ticks (at least 1)");
  EXPECT_FALSE(Simulate(FThenB(), P2pModel{P2pMode::kBuffered, 0}).ok());
}

TEST(SimulatorTest, EmptyProgramCompletesAtOnce) {
  const SimResult result = SimulateOk(CommProgram{}, P2pModel::Rendezvous());
  EXPECT_TRUE(result.completed());
  EXPECT_EQ(result.ticks, 0);
  EXPECT_EQ(result.bubble_ratio, 0.0);
}

}  // namespace
}  // namespace irm::schedules
