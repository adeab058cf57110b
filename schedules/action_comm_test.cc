// PyTorch action schedules as CommPrograms: the steps each action becomes, the schedules that
// are refused, and PyTorch's ZB1P artifact simulated to the step count PyTorch's test asserts.
#include "schedules/action_comm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"
#include "schedules/action_csv.h"
#include "schedules/action_lower.h"
#include "schedules/simulator.h"

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

std::string Artifact(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/schedules/testdata/pytorch/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString()
                         << " (run from the repository root or set IRM_SOURCE_DIR)";
  return text.ok() ? *text : std::string();
}

int Sends(const CommProgram& program) {
  int n = 0;
  for (const auto& steps : program.ranks) {
    for (const Step& step : steps) n += step.kind == StepKind::kSend ? 1 : 0;
  }
  return n;
}

// Two stages, one micro-batch, with PyTorch's communication.
ActionSchedule TwoStages() {
  ActionSchedule s;
  s.ranks = {
      {A(0, T::kForward, 0), A(0, T::kSendF, 0), std::nullopt, A(0, T::kRecvB, 0),
       A(0, T::kFullBackward, 0)},
      {A(1, T::kRecvF, 0), A(1, T::kForward, 0), A(1, T::kFullBackward, 0), A(1, T::kSendB, 0)}};
  return s;
}

TEST(ActionCommTest, EveryActionBecomesOneStepOfItsRank) {
  StatusOr<CommProgram> program = ActionScheduleToCommProgram(TwoStages(), {0, 1});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(program->ranks.size(), 2u);
  ASSERT_EQ(program->ranks[0].size(), 4u);  // the idle slot is dropped
  ASSERT_EQ(program->ranks[1].size(), 4u);

  const Step& f = program->ranks[0][0];
  EXPECT_EQ(f.kind, StepKind::kCompute);
  EXPECT_EQ(f.label, "0F0");
  EXPECT_EQ(f.job, "F");
  EXPECT_EQ(f.micro_batch, 0);
  EXPECT_EQ(f.chunk, 0);
  EXPECT_EQ(f.cost, 1);

  const Step& send = program->ranks[0][1];
  EXPECT_EQ(send.kind, StepKind::kSend);
  EXPECT_EQ(send.channel, (Channel{0, 1, 0}));
  EXPECT_EQ(send.message, "activation stage 0 -> 1, micro-batch 0");
  EXPECT_EQ(send.label, "0SEND_F0");
  EXPECT_EQ(send.job, "SEND_F");
  const Step& recv_f = program->ranks[1][0];
  EXPECT_EQ(recv_f.kind, StepKind::kRecv);
  EXPECT_EQ(recv_f.channel, (Channel{0, 1, 0}));
  EXPECT_EQ(recv_f.message, send.message);

  const Step& send_b = program->ranks[1][3];
  EXPECT_EQ(send_b.kind, StepKind::kSend);
  EXPECT_EQ(send_b.channel, (Channel{1, 0, 0}));
  EXPECT_EQ(send_b.message, "gradient stage 1 -> 0, micro-batch 0");
  const Step& recv_b = program->ranks[0][2];
  EXPECT_EQ(recv_b.kind, StepKind::kRecv);
  EXPECT_EQ(recv_b.channel, (Channel{1, 0, 0}));
  EXPECT_EQ(recv_b.message, send_b.message);

  StatusOr<SimResult> result = Simulate(*program, P2pModel::Rendezvous());
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->completed()) << result->diagnostic;
}

TEST(ActionCommTest, ChunksAreTheStagePositionOnItsRankAndOverlapIsOneStep) {
  // V placement, 2 ranks: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2.
  Action overlap;
  overlap.stage = 3;
  overlap.type = T::kOverlapFB;
  overlap.sub_actions = {*A(3, T::kForward, 1), *A(0, T::kFullBackward, 0)};
  ActionSchedule s;
  s.ranks = {{A(3, T::kForward, 0), overlap, A(0, T::kUnshard, -1)}, {}};
  StatusOr<CommProgram> program = ActionScheduleToCommProgram(s, {0, 1, 1, 0});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(program->ranks[0].size(), 3u);
  EXPECT_EQ(program->ranks[0][0].chunk, 1);
  EXPECT_EQ(program->ranks[0][1].kind, StepKind::kCompute);
  EXPECT_EQ(program->ranks[0][1].label, "(3F1;0B0)OVERLAP_F_B");
  EXPECT_EQ(program->ranks[0][1].job, "OVERLAP_F_B");
  EXPECT_EQ(program->ranks[0][1].chunk, 1);
  EXPECT_EQ(program->ranks[0][2].kind, StepKind::kCompute);
  EXPECT_EQ(program->ranks[0][2].label, "0UNSHARD");
}

void ExpectRefused(const ActionSchedule& s, const std::vector<int>& stage_to_rank,
                   const std::string& message) {
  StatusOr<CommProgram> program = ActionScheduleToCommProgram(s, stage_to_rank, "s.csv");
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(program.status().ToString(), message);
}

TEST(ActionCommTest, RefusesWhatCannotBeCommunication) {
  ExpectRefused(TwoStages(), {1, 0},
                "s.csv: rank 0, step 0: error: action 0F0 is on rank 0, but stage 0 is on rank 1");
  ExpectRefused(TwoStages(), {0},
                "s.csv: rank 0, step 1: error: action 0SEND_F0 has no peer: stage 1 is outside "
                "the 1 stages");
  ExpectRefused(TwoStages(), {0, 2},
                "s.csv: error: the stage -> rank map puts stage 1 on rank 2, but the schedule "
                "has 2 ranks");
  ActionSchedule last;
  last.ranks = {{A(0, T::kSendB, 0)}, {A(1, T::kSendF, 0)}};
  ExpectRefused(last, {0, 1},
                "s.csv: rank 0, step 0: error: action 0SEND_B0 has no peer: stage -1 is outside "
                "the 2 stages");
  ActionSchedule local;
  local.ranks = {{}, {A(1, T::kSendF, 0)}};
  ExpectRefused(local, {0, 1, 1, 0},
                "s.csv: rank 1, step 0: error: action 1SEND_F0 goes between stages 1 and 2, both "
                "on rank 1: a schedule hands that over locally, it does not send it");
  ActionSchedule compute_only;
  compute_only.ranks = {{A(0, T::kForward, 0), A(0, T::kFullBackward, 0)},
                        {std::nullopt, A(1, T::kForward, 0), A(1, T::kFullBackward, 0)}};
  ExpectRefused(compute_only, {0, 1},
                "s.csv: rank 0, step 0: error: compute-only schedule: 0F0 feeds stage 1 on rank "
                "1 and no send carries it; lower the schedule first (PyTorch's _add_send_recv)");
  // Compute-only with every stage on one rank needs no communication.
  ActionSchedule single;
  single.ranks = {{A(0, T::kForward, 0), A(1, T::kForward, 0), A(1, T::kFullBackward, 0),
                   A(0, T::kFullBackward, 0)}};
  EXPECT_TRUE(ActionScheduleToCommProgram(single, {0, 0}).ok());
}

// PyTorch's test_csv (test/distributed/pipelining/test_schedule.py, TestScheduleLowering,
// parametrized with csv_name "zb1p_2rank_2stagep"): the lowered schedule, whose reference is the
// artifact zb1p_2rank_2stagep_comms.csv (pp 2, 2 chunks, stage s on rank s % 2), simulated with
// `_simulate_comms_compute`, runs in `assertEqual(num_steps, 113)` steps. PyTorch's sends never
// wait: buffered with a depth no channel fills.
TEST(ActionCommTest, Zb1pArtifactSimulatesInPyTorchsStepCount) {
  StatusOr<ActionSchedule> schedule =
      ReadActionCsv(Artifact("zb1p_2rank_2stagep_comms.csv"), "zb1p_2rank_2stagep_comms.csv");
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  StatusOr<CommProgram> program = ActionScheduleToCommProgram(*schedule, {0, 1, 0, 1});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  StatusOr<SimResult> result = Simulate(*program, P2pModel::Buffered(Sends(*program)));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(result->completed()) << result->diagnostic;
  EXPECT_EQ(result->ticks, 113);

  // Our own facts about it: PyTorch's placement of sends and receives pairs them in order.
  StatusOr<std::optional<int>> depth = MinBufferDepth(*program);
  ASSERT_TRUE(depth.ok());
  EXPECT_EQ(BufferDepthName(*depth), "0");
}

// The same test's lowering: the compute artifact (zb1p_2rank_2stagep_compute.csv), merged and
// lowered as PyTorch does (`_merge_bw`, `_add_send_recv`), simulates in 113 steps too.
TEST(ActionCommTest, Zb1pLoweredFromComputeSimulatesInPyTorchsStepCount) {
  StatusOr<ActionSchedule> compute =
      ReadActionCsv(Artifact("zb1p_2rank_2stagep_compute.csv"), "zb1p_2rank_2stagep_compute.csv");
  ASSERT_TRUE(compute.ok()) << compute.status().ToString();
  StatusOr<ActionSchedule> lowered = AddSendRecv(MergeBw(*compute), {0, 1, 0, 1});
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  StatusOr<CommProgram> program = ActionScheduleToCommProgram(*lowered, {0, 1, 0, 1});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  StatusOr<SimResult> result = Simulate(*program, P2pModel::Buffered(Sends(*program)));
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->completed()) << result->diagnostic;
  EXPECT_EQ(result->ticks, 113);
}

}  // namespace
}  // namespace irm::schedules
