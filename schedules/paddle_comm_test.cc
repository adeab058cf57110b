// The communication of Paddle job lists: which messages each rank sends and receives, in which
// order, on which process group.
#include "schedules/paddle_comm.h"

#include <map>

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

PaddleScheduleSpec Spec(PaddleMode mode, int pp, int m, JobListIr ir = JobListIr::kLegacy,
                        int vpp = 1) {
  PaddleScheduleSpec spec;
  spec.mode = mode;
  spec.pp = pp;
  spec.micro_batches = m;
  spec.ir = ir;
  spec.vpp = vpp;
  return spec;
}

// One rank's send/recv steps as "send <message>" / "recv <message>".
std::vector<std::string> P2p(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& step : steps) {
    if (step.kind == StepKind::kCompute) continue;
    out.push_back((step.kind == StepKind::kSend ? "send " : "recv ") + step.message);
  }
  return out;
}

std::vector<std::string> Labels(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& step : steps) out.push_back(step.label);
  return out;
}

// The textbook 2-stage legacy 1F1B (m = 4): rank 0 runs F0 F1 B0 F2 B1 F3 B2 B3, rank 1
// F0 B0 F1 B1 ...: rank 0's second forward sends before its first backward receives, while rank 1
// sends gradient 0 back before it receives activation 1 — both send first, the hang of PR #70360.
TEST(PaddleCommTest, Legacy1F1BTwoStagesSendsBeforeReceiving) {
  StatusOr<CommProgram> program = PaddleCommProgram(Spec(PaddleMode::k1F1B, 2, 4));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ(program->ranks.size(), 2u);
  EXPECT_EQ(P2p(program->ranks[0]), (std::vector<std::string>{
                                        "send activation stage 0 -> 1, micro-batch 0",
                                        "send activation stage 0 -> 1, micro-batch 1",
                                        "recv gradient stage 1 -> 0, micro-batch 0",
                                        "send activation stage 0 -> 1, micro-batch 2",
                                        "recv gradient stage 1 -> 0, micro-batch 1",
                                        "send activation stage 0 -> 1, micro-batch 3",
                                        "recv gradient stage 1 -> 0, micro-batch 2",
                                        "recv gradient stage 1 -> 0, micro-batch 3",
                                    }));
  EXPECT_EQ(P2p(program->ranks[1]), (std::vector<std::string>{
                                        "recv activation stage 0 -> 1, micro-batch 0",
                                        "send gradient stage 1 -> 0, micro-batch 0",
                                        "recv activation stage 0 -> 1, micro-batch 1",
                                        "send gradient stage 1 -> 0, micro-batch 1",
                                        "recv activation stage 0 -> 1, micro-batch 2",
                                        "send gradient stage 1 -> 0, micro-batch 2",
                                        "recv activation stage 0 -> 1, micro-batch 3",
                                        "send gradient stage 1 -> 0, micro-batch 3",
                                    }));
  EXPECT_EQ(Labels(program->ranks[0]),
            (std::vector<std::string>{"F0", "F0:send", "F1", "F1:send", "B0:recv", "B0", "F2",
                                      "F2:send", "B1:recv", "B1", "F3", "F3:send", "B2:recv", "B2",
                                      "B3:recv", "B3", "OPT"}));
  // A forward receives, computes, then sends; the steps carry the job they come from.
  const Step& recv = program->ranks[1][0];
  EXPECT_EQ(recv.kind, StepKind::kRecv);
  EXPECT_EQ(recv.channel, (Channel{0, 1, 1}));
  EXPECT_EQ(recv.job, "forward");
  EXPECT_EQ(recv.micro_batch, 0);
  EXPECT_EQ(recv.chunk, -1);
  EXPECT_EQ(recv.op, "recv_v2");
  EXPECT_EQ(recv.label, "F0:recv");
  EXPECT_EQ(program->ranks[1][2].kind, StepKind::kCompute);
  const Step& grad = program->ranks[1][3];
  EXPECT_EQ(grad.kind, StepKind::kSend);
  EXPECT_EQ(grad.channel, (Channel{1, 0, 2}));
  EXPECT_EQ(grad.label, "B0:send");
  EXPECT_EQ(program->ranks[1][1].kind, StepKind::kCompute);
  EXPECT_EQ(program->ranks[1][1].cost, 1);
}

// PIR 1F1B after PR #70360: rank 1 receives activation 1 (recv_forward) before it sends gradient 0
// (send_backward), matching rank 0's send-then-receive order pairwise.
TEST(PaddleCommTest, Pir1F1BReceivesBeforeSendingBack) {
  StatusOr<CommProgram> program = PaddleCommProgram(Spec(PaddleMode::k1F1B, 2, 4, JobListIr::kPir));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(P2p(program->ranks[1]), (std::vector<std::string>{
                                        "recv activation stage 0 -> 1, micro-batch 0",
                                        "recv activation stage 0 -> 1, micro-batch 1",
                                        "send gradient stage 1 -> 0, micro-batch 0",
                                        "recv activation stage 0 -> 1, micro-batch 2",
                                        "send gradient stage 1 -> 0, micro-batch 1",
                                        "recv activation stage 0 -> 1, micro-batch 3",
                                        "send gradient stage 1 -> 0, micro-batch 2",
                                        "send gradient stage 1 -> 0, micro-batch 3",
                                    }));
  EXPECT_EQ(Labels(program->ranks[1]),
            (std::vector<std::string>{"recv_forward0", "F0", "B0", "recv_forward1",
                                      "send_backward0", "F1", "B1", "recv_forward2",
                                      "send_backward1", "F2", "B2", "recv_forward3",
                                      "send_backward2", "F3", "B3", "send_backward3", "OPT"}));
  EXPECT_EQ(program->ranks[1][0].op, "pd_op.recv_v2");
  // Stage 0's recv_forward and the last stage's send_backward move nothing.
  for (const Step& step : program->ranks[0]) {
    EXPECT_NE(step.job, "recv_forward");
    EXPECT_NE(step.job, "send_backward") << step.label;
  }
}

// VPP chunks wrap around: stage 1 of chunk 0 feeds stage 0 of chunk 1, and gradients come back
// the same way.
TEST(PaddleCommTest, VppChunksWrapAround) {
  StatusOr<CommProgram> program =
      PaddleCommProgram(Spec(PaddleMode::kVpp, 2, 2, JobListIr::kLegacy, 2));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(P2p(program->ranks[1]),
            (std::vector<std::string>{
                "recv activation stage 0 chunk 0 -> stage 1 chunk 0, micro-batch 0",
                "send activation stage 1 chunk 0 -> stage 0 chunk 1, micro-batch 0",
                "recv activation stage 0 chunk 0 -> stage 1 chunk 0, micro-batch 1",
                "send activation stage 1 chunk 0 -> stage 0 chunk 1, micro-batch 1",
                "recv activation stage 0 chunk 1 -> stage 1 chunk 1, micro-batch 0",
                "recv activation stage 0 chunk 1 -> stage 1 chunk 1, micro-batch 1",
                "send gradient stage 1 chunk 1 -> stage 0 chunk 1, micro-batch 0",
                "send gradient stage 1 chunk 1 -> stage 0 chunk 1, micro-batch 1",
                "recv gradient stage 0 chunk 1 -> stage 1 chunk 0, micro-batch 0",
                "send gradient stage 1 chunk 0 -> stage 0 chunk 0, micro-batch 0",
                "recv gradient stage 0 chunk 1 -> stage 1 chunk 0, micro-batch 1",
                "send gradient stage 1 chunk 0 -> stage 0 chunk 0, micro-batch 1",
            }));
  EXPECT_EQ(program->ranks[1][1].label, "F0.0");
  EXPECT_EQ(program->ranks[1][1].chunk, 0);
}

// ZBVPP's V: the turn from chunk 0 to chunk 1 stays on stage p-1, so nothing travels there;
// chunk 1 runs back from stage p-1 to stage 0.
TEST(PaddleCommTest, ZbvppTurnsOnTheLastStage) {
  StatusOr<CommProgram> program =
      PaddleCommProgram(Spec(PaddleMode::kZbvpp, 2, 2, JobListIr::kLegacy, 2));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  for (const std::string& message : P2p(program->ranks[1])) {
    EXPECT_EQ(message.find("stage 1 chunk 0 -> stage 1 chunk 1"), std::string::npos) << message;
  }
  std::vector<std::string> rank0 = P2p(program->ranks[0]);
  EXPECT_NE(std::find(rank0.begin(), rank0.end(),
                      "recv activation stage 1 chunk 1 -> stage 0 chunk 1, micro-batch 0"),
            rank0.end());
  // backward_w only computes.
  for (const Step& step : program->ranks[0]) {
    if (step.job.starts_with("backward_w")) {
      EXPECT_EQ(step.kind, StepKind::kCompute);
    }
  }
}

TEST(PaddleCommTest, SharedGroupCarriesBothDirections) {
  PaddleCommOptions options;
  options.groups = PaddleCommGroups::kShared;
  options.shared_group = 7;
  StatusOr<CommProgram> program = PaddleCommProgram(Spec(PaddleMode::kFThenB, 2, 2), options);
  ASSERT_TRUE(program.ok());
  for (const auto& rank : program->ranks) {
    for (const Step& step : rank) {
      if (step.kind != StepKind::kCompute) {
        EXPECT_EQ(step.channel.group, 7);
      }
    }
  }
}

// Every generated schedule pairs its messages: on each channel the receiver takes exactly the
// messages the sender sends, in the same order.
TEST(PaddleCommTest, EverySendMeetsItsReceive) {
  int checked = 0;
  for (PaddleMode mode : {PaddleMode::kFThenB, PaddleMode::k1F1B, PaddleMode::kEager1F1B,
                          PaddleMode::kVpp, PaddleMode::kZbh1, PaddleMode::kZbvpp}) {
    for (JobListIr ir : {JobListIr::kLegacy, JobListIr::kPir}) {
      for (int p : {2, 4}) {
        for (int m : {p, 2 * p}) {
          const bool chunked = mode == PaddleMode::kVpp || mode == PaddleMode::kZbvpp;
          StatusOr<CommProgram> program = PaddleCommProgram(Spec(mode, p, m, ir, chunked ? 2 : 1));
          if (!program.ok()) continue;
          ++checked;
          std::map<Channel, std::vector<std::string>> sent;
          std::map<Channel, std::vector<std::string>> received;
          for (const auto& rank : program->ranks) {
            for (const Step& step : rank) {
              if (step.kind == StepKind::kSend) sent[step.channel].push_back(step.message);
              if (step.kind == StepKind::kRecv) received[step.channel].push_back(step.message);
            }
          }
          EXPECT_EQ(sent, received) << PaddleModeName(mode) << " p=" << p << " m=" << m;
          // Each micro-batch crosses each boundary of each chunk once per direction.
          size_t messages = 0;
          for (const auto& [channel, list] : sent) messages += list.size();
          const int crossings = (chunked ? 2 : 1) * p - 1 - (mode == PaddleMode::kZbvpp ? 1 : 0);
          EXPECT_EQ(messages, static_cast<size_t>(2 * crossings * m)) << PaddleModeName(mode);
        }
      }
    }
  }
  // FThenB, 1F1B, VPP: 2 IRs × 4; ZBH1: 4; Eager1F1B (m = 2p) and ZBVPP (m = p): 2 each.
  EXPECT_EQ(checked, 32);
}

TEST(PaddleCommTest, RefusesAChunkThePipelineLacks) {
  StatusOr<CommProgram> program = JobListsCommProgram(
      {{{"forward0", 0}, {"forward2", 0}}, {{"forward0", 0}}}, 2, false, JobListIr::kLegacy);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(program.status().ToString(),
            "stage 0, job 1 (forward2, micro-batch 0): error: chunk 2 is out of range: the "
            "pipeline has 2 chunks");
  StatusOr<CommProgram> unchunked =
      JobListsCommProgram({{{"forward", 0}}, {{"forward", 0}}}, 2, false, JobListIr::kLegacy);
  ASSERT_FALSE(unchunked.ok());
  EXPECT_EQ(unchunked.status().message(),
            "job type forward names no chunk, but the pipeline has 2");
}

}  // namespace
}  // namespace irm::schedules
